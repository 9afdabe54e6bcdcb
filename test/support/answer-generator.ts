/**
 * A small seeded JSON-schema data generator over the provider's OpenAPI documents (read in place):
 * answers as the documents allow them, for the contract tests.
 */
import { docs, type Family, type Json } from "./openapi.js";

export type { Family };

/** How a sample fills what the document leaves open. */
export type Mode = "random" | "nulls" | "absent" | "full" | "limits";

export function rng(seed: number) {
  let t = seed >>> 0;
  return () => {
    t += 0x6d2b79f5;
    let r = Math.imul(t ^ (t >>> 15), 1 | t);
    r ^= r + Math.imul(r ^ (r >>> 7), 61 | r);
    return ((r ^ (r >>> 14)) >>> 0) / 4294967296;
  };
}

export function sample(
  family: Family,
  schema: Json,
  mode: Mode,
  rand: () => number,
  depth = 0,
  pick = 0,
): unknown {
  const ref = schema.$ref;
  if (typeof ref === "string") {
    const name = ref.slice("#/components/schemas/".length);
    const target = (docs[family].components as { schemas: Record<string, Json> }).schemas[name];
    if (!target) throw new Error(`no schema ${name}`);
    return sample(family, target, mode, rand, depth + 1, pick);
  }
  for (const k of ["allOf", "oneOf", "anyOf"] as const) {
    const list = schema[k] as Json[] | undefined;
    if (list?.[0])
      return sample(family, list[Math.floor(rand() * list.length)] ?? list[0], mode, rand, depth, pick);
  }
  const nullable = schema.nullable === true;
  if (nullable && (mode === "nulls" || (mode === "random" && rand() < 0.2) || depth > 8)) return null;
  const enumValues = schema.enum as unknown[] | undefined;
  if (enumValues && enumValues.length > 0)
    return enumValues[(pick + Math.floor(rand() * 1000)) % enumValues.length];
  const type = schema.type as string | undefined;
  const limits = mode === "limits";
  switch (type) {
    case "integer": {
      const int32 = schema.format === "int32";
      const min = typeof schema.minimum === "number" ? schema.minimum : int32 ? -(2 ** 31) : -(2 ** 53) + 1;
      const max = typeof schema.maximum === "number" ? schema.maximum : int32 ? 2 ** 31 - 1 : 2 ** 53 - 1;
      if (limits) return rand() < 0.5 ? min : max;
      return Math.floor(Math.max(min, 0) + rand() * Math.min(1000, max - Math.max(min, 0) + 1));
    }
    case "number":
      return limits ? Number.MAX_VALUE : rand() * 1000;
    case "boolean":
      return rand() < 0.5;
    case "string": {
      if (schema.format === "date-time")
        return new Date(Date.UTC(2026, 0, 1) + Math.floor(rand() * 1e10)).toISOString();
      if (schema.format === "uuid") return "3f2504e0-4f89-41d3-9a0c-0305e82c3301";
      const maxLen = typeof schema.maxLength === "number" ? schema.maxLength : limits ? 5000 : 12;
      const minLen = typeof schema.minLength === "number" ? schema.minLength : 0;
      const len = limits
        ? rand() < 0.5
          ? minLen
          : maxLen
        : minLen + Math.floor(rand() * (maxLen - minLen + 1));
      return Array.from({ length: len }, () => "ab<&>*_`é/ 9"[Math.floor(rand() * 12)]).join("");
    }
    case "array": {
      const n = depth > 6 ? 0 : limits ? 3 : Math.floor(rand() * 4);
      return Array.from({ length: n }, (_, i) =>
        sample(family, schema.items as Json, mode, rand, depth + 1, pick + i),
      );
    }
    default: {
      const props = (schema.properties as Record<string, Json> | undefined) ?? {};
      const required = new Set((schema.required as string[] | undefined) ?? []);
      const out: Json = {};
      for (const [name, prop] of Object.entries(props)) {
        const skip = !required.has(name) && (mode === "absent" || (mode === "random" && rand() < 0.25));
        if (!skip) out[name] = sample(family, prop, mode, rand, depth + 1, pick);
      }
      const extra = schema.additionalProperties;
      if (extra && typeof extra === "object" && depth <= 6) {
        const n = limits ? 3 : Math.floor(rand() * 3);
        for (let i = 0; i < n; i++)
          out[`k${i}-${Math.floor(rand() * 1e6)}`] = sample(
            family,
            extra as Json,
            mode,
            rand,
            depth + 1,
            pick + i,
          );
      }
      return out;
    }
  }
}

export function documented(family: Family, method: string, path: string): Json {
  const op = (docs[family].paths as Record<string, Record<string, Json>>)[path]?.[method];
  const content = (
    op?.responses as Record<string, { content?: Record<string, { schema?: Json }> }> | undefined
  )?.["200"]?.content;
  const schema = content?.["application/json"]?.schema;
  if (!schema) throw new Error(`${method} ${path}: no documented 200 JSON answer`);
  return schema;
}
