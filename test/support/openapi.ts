/**
 * The provider's OpenAPI documents (../shared/reference/edge-api, read in place, never copied) for the
 * contract tests: the documents themselves, their operations, and an Ajv that judges values against them.
 */
import { readFileSync } from "node:fs";
import { Ajv } from "ajv";

export type Json = Record<string, unknown>;
export type Family = "mc" | "shield" | "core";

const SPEC_DIR = new URL("../../../shared/reference/edge-api/", import.meta.url);
const FAMILIES: Record<Family, { file: string; prefix: string }> = {
  mc: { file: "magic-containers-api-v1.0.0.json", prefix: "/mc" },
  shield: { file: "shield-api-v1.0.0.json", prefix: "" },
  core: { file: "core-api-v1.0.0.json", prefix: "" },
};
const families = Object.keys(FAMILIES) as Family[];

export const docs = Object.fromEntries(
  families.map((f) => [f, JSON.parse(readFileSync(new URL(FAMILIES[f].file, SPEC_DIR), "utf8")) as Json]),
) as Record<Family, Json>;

export const schemasOf = (family: Family) =>
  (docs[family].components as { schemas: Record<string, Json> }).schemas;

const docId = (family: Family) => `https://edge-api.invalid/${family}.json`;

export interface ConvertOptions {
  /**
   * A property that is a bare `$ref` to an object schema may be null. Swashbuckle cannot mark a `$ref`
   * nullable and .NET writes a null reference as `null` (the Shield envelopes' `"error": null` on success):
   * true for judging the API's answers, false for judging what we send.
   */
  nullReferences: boolean;
}

/** OpenAPI 3.0 -> JSON Schema: `nullable` becomes a null type; `$ref`s point into the document's own id. */
function toJsonSchema(node: unknown, family: Family, options: ConvertOptions): unknown {
  if (Array.isArray(node)) return node.map((n) => toJsonSchema(n, family, options));
  if (node === null || typeof node !== "object") return node;
  const src = node as Json;
  const out: Json = {};
  for (const [k, v] of Object.entries(src)) {
    if (k === "$ref" && typeof v === "string" && v.startsWith("#/")) out.$ref = `${docId(family)}${v}`;
    else if (k === "properties" && options.nullReferences && v !== null && typeof v === "object") {
      out.properties = Object.fromEntries(
        Object.entries(v as Json).map(([name, prop]) => [name, nullableRef(prop, family, options)]),
      );
    } else if (k !== "nullable") out[k] = toJsonSchema(v, family, options);
  }
  if (src.nullable === true) {
    if (typeof out.type === "string") {
      out.type = [out.type, "null"];
      if (Array.isArray(out.enum)) out.enum = [...out.enum, null];
    } else if (out.oneOf !== undefined || out.allOf !== undefined || out.anyOf !== undefined) {
      return { anyOf: [out, { type: "null" }] };
    }
  }
  return out;
}

function nullableRef(prop: unknown, family: Family, options: ConvertOptions): unknown {
  const converted = toJsonSchema(prop, family, options);
  const ref = (prop as Json | null)?.$ref;
  if (typeof ref !== "string" || !ref.startsWith("#/components/schemas/")) return converted;
  const target = schemasOf(family)[ref.slice("#/components/schemas/".length)];
  if (target?.type !== "object") return converted;
  return { anyOf: [converted, { type: "null" }] };
}

/** An Ajv that knows the documents' formats and schemas, and the converter its schemas must go through. */
export function documentsAjv(options: ConvertOptions): {
  ajv: Ajv;
  toJsonSchema: (node: unknown, family: Family) => unknown;
} {
  const ajv = new Ajv({ strict: false, allErrors: true, logger: false });
  const bits = (n: number) => (v: number) => Number.isInteger(v) && v >= -(2 ** (n - 1)) && v < 2 ** (n - 1);
  ajv.addFormat("int32", { type: "number", validate: bits(32) });
  ajv.addFormat("int64", { type: "number", validate: (v: number) => Number.isSafeInteger(v) });
  ajv.addFormat("double", { type: "number", validate: () => true });
  ajv.addFormat("float", { type: "number", validate: () => true });
  ajv.addFormat("date-time", (s: string) =>
    /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(s),
  );
  ajv.addFormat("date", (s: string) => /^\d{4}-\d{2}-\d{2}$/.test(s));
  const guid = (s: string) => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(s);
  ajv.addFormat("guid", guid);
  ajv.addFormat("uuid", guid);
  const convert = (node: unknown, family: Family) => toJsonSchema(node, family, options);
  for (const family of families) {
    ajv.addSchema(
      { $id: docId(family), components: { schemas: convert(schemasOf(family), family) } },
      docId(family),
    );
  }
  return { ajv, toJsonSchema: convert };
}

/** One documented operation; `pattern` captures the path parameters in the template's order. */
export interface DocumentedOperation {
  family: Family;
  method: string;
  template: string;
  pattern: RegExp;
  literalSegments: number;
  doc: Json;
}

export const operations: DocumentedOperation[] = families.flatMap((family) =>
  Object.entries(docs[family].paths as Record<string, Record<string, Json>>).flatMap(([template, ops]) => {
    const full = `${FAMILIES[family].prefix}${template}`;
    return Object.entries(ops)
      .filter(([method]) => ["get", "post", "put", "patch", "delete"].includes(method))
      .map(([method, doc]) => ({
        family,
        method: method.toUpperCase(),
        template: full,
        pattern: new RegExp(`^${full.replace(/\{[^}]+\}/g, "([^/]+)")}/?$`),
        literalSegments: full.split("/").filter((s) => s !== "" && !s.startsWith("{")).length,
        doc,
      }));
  }),
);

/** The documented operation for a request (a literal segment beats a parameter: /shield-zone/defaults). */
export function operationFor(method: string, path: string): DocumentedOperation | undefined {
  return operations
    .filter((o) => o.method === method && o.pattern.test(path))
    .sort((a, b) => b.literalSegments - a.literalSegments)[0];
}
