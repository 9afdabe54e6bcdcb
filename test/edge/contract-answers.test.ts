/**
 * Issue 30.9: each zod answer schema accepts what the documents allow. Answers are generated from each
 * operation's documented 200 response schema (../shared/reference/edge-api, read in place) by a small
 * seeded JSON-schema data generator, over many seeds: nullables null, optionals absent, enums at every
 * documented value, strings and integers at their limits, and random mixes of these.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import type { z } from "zod";
import {
  dnsScanSchema,
  dnsScanTriggerSchema,
  dnsZoneListSchema,
  pullZoneListSchema,
} from "../../src/edge/schemas/core.js";
import { listApplicationsResponseSchema } from "../../src/edge/schemas/mc.js";
import {
  accessListsResponseSchema,
  botCategorizationListResponseSchema,
  botDetectionResponseSchema,
  customAccessListResponseSchema,
  eventLogsSearchResponseSchema,
  getShieldZoneMetricsOverviewResponseSchema,
  getShieldZoneRateLimitMetricsResponseSchema,
  getShieldZoneResponseSchema,
  getShieldZonesResponseSchema,
  getTriggeredRulesResponseSchema,
  rateLimitMetricsResponseSchema,
  shieldOverviewMetricsResponseSchema,
  wafAiRecommendationSchema,
} from "../../src/edge/schemas/shield.js";

type Json = Record<string, unknown>;
const SPEC_DIR = new URL("../../../shared/reference/edge-api/", import.meta.url);
const doc = (file: string) => JSON.parse(readFileSync(new URL(file, SPEC_DIR), "utf8")) as Json;
const DOCS = {
  mc: doc("magic-containers-api-v1.0.0.json"),
  shield: doc("shield-api-v1.0.0.json"),
  core: doc("core-api-v1.0.0.json"),
};
type Family = keyof typeof DOCS;

/** How a sample fills what the document leaves open. */
type Mode = "random" | "nulls" | "absent" | "full" | "limits";

function rng(seed: number) {
  let t = seed >>> 0;
  return () => {
    t += 0x6d2b79f5;
    let r = Math.imul(t ^ (t >>> 15), 1 | t);
    r ^= r + Math.imul(r ^ (r >>> 7), 61 | r);
    return ((r ^ (r >>> 14)) >>> 0) / 4294967296;
  };
}

function sample(family: Family, schema: Json, mode: Mode, rand: () => number, depth = 0, pick = 0): unknown {
  const ref = schema.$ref;
  if (typeof ref === "string") {
    const name = ref.slice("#/components/schemas/".length);
    const target = (DOCS[family].components as { schemas: Record<string, Json> }).schemas[name];
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

function documented(family: Family, method: string, path: string): Json {
  const op = (DOCS[family].paths as Record<string, Record<string, Json>>)[path]?.[method];
  const content = (
    op?.responses as Record<string, { content?: Record<string, { schema?: Json }> }> | undefined
  )?.["200"]?.content;
  const schema = content?.["application/json"]?.schema;
  if (!schema) throw new Error(`${method} ${path}: no documented 200 JSON answer`);
  return schema;
}

const CASES: Array<[Family, string, string, z.ZodType]> = [
  ["mc", "get", "/apps", listApplicationsResponseSchema],
  ["shield", "get", "/shield/shield-zones", getShieldZonesResponseSchema],
  ["core", "get", "/pullzone", pullZoneListSchema],
  ["core", "get", "/dnszone", dnsZoneListSchema],
  ["shield", "get", "/shield/shield-zone/{shieldZoneId}", getShieldZoneResponseSchema],
  ["shield", "get", "/shield/metrics/overview/{shieldZoneId}", getShieldZoneMetricsOverviewResponseSchema],
  ["shield", "get", "/shield/metrics/overview/{shieldZoneId}/detailed", shieldOverviewMetricsResponseSchema],
  ["shield", "post", "/shield/event-logs/{shieldZoneId}/search", eventLogsSearchResponseSchema],
  ["shield", "get", "/shield/waf/rules/review-triggered/{shieldZoneId}", getTriggeredRulesResponseSchema],
  [
    "shield",
    "get",
    "/shield/metrics/rate-limits/{shieldZoneId}",
    getShieldZoneRateLimitMetricsResponseSchema,
  ],
  ["shield", "get", "/shield/shield-zone/{shieldZoneId}/bot-detection", botDetectionResponseSchema],
  [
    "shield",
    "get",
    "/shield/shield-zone/{shieldZoneId}/bot-categorization",
    botCategorizationListResponseSchema,
  ],
  ["shield", "get", "/shield/metrics/rate-limit/{id}", rateLimitMetricsResponseSchema],
  [
    "shield",
    "get",
    "/shield/waf/rules/review-triggered/ai-recommendation/{shieldZoneId}/{ruleId}",
    wafAiRecommendationSchema,
  ],
  ["core", "get", "/dnszone/{zoneId}/records/scan", dnsScanSchema],
  ["core", "post", "/dnszone/records/scan", dnsScanTriggerSchema],
  ["shield", "get", "/shield/shield-zone/{shieldZoneId}/access-lists", accessListsResponseSchema],
  ["shield", "get", "/shield/shield-zone/{shieldZoneId}/access-lists/{id}", customAccessListResponseSchema],
];

const MODES: Mode[] = ["nulls", "absent", "full", "limits", "random"];
const SEEDS = 60;

describe("zod answer schemas accept every answer the documents allow", () => {
  for (const [family, method, path, schema] of CASES) {
    it(`${method.toUpperCase()} ${path}`, () => {
      const failures: string[] = [];
      const response = documented(family, method, path);
      for (const mode of MODES)
        for (let seed = 1; seed <= SEEDS; seed++) {
          const answer = sample(family, response, mode, rng(seed), 0, seed);
          const r = schema.safeParse(answer);
          if (!r.success && failures.length < 3)
            failures.push(
              `${mode} seed ${seed}: ${r.error.issues
                .slice(0, 2)
                .map((i) => `${i.path.join(".")}: ${i.message}`)
                .join("; ")}`,
            );
        }
      expect(failures).toEqual([]);
    });
  }
});
