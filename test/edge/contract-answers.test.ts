/**
 * Each zod answer schema accepts what the documents allow. Answers are generated from each
 * operation's documented 200 response schema (../shared/reference/edge-api, read in place) by a small
 * seeded JSON-schema data generator, over many seeds: nullables null, optionals absent, enums at every
 * documented value, strings and integers at their limits, and random mixes of these.
 */
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
import { documented, type Family, type Mode, rng, sample } from "../support/answer-generator.js";

const MODES: Mode[] = ["nulls", "absent", "full", "limits", "random"];
type Case = [Family, string, string, z.ZodType];
const shieldGet = (path: string, schema: z.ZodType): Case => ["shield", "get", path, schema];
const CASES: Case[] = [
  ["mc", "get", "/apps", listApplicationsResponseSchema],
  shieldGet("/shield/shield-zones", getShieldZonesResponseSchema),
  ["core", "get", "/pullzone", pullZoneListSchema],
  ["core", "get", "/dnszone", dnsZoneListSchema],
  shieldGet("/shield/shield-zone/{shieldZoneId}", getShieldZoneResponseSchema),
  shieldGet("/shield/metrics/overview/{shieldZoneId}", getShieldZoneMetricsOverviewResponseSchema),
  shieldGet("/shield/metrics/overview/{shieldZoneId}/detailed", shieldOverviewMetricsResponseSchema),
  ["shield", "post", "/shield/event-logs/{shieldZoneId}/search", eventLogsSearchResponseSchema],
  shieldGet("/shield/waf/rules/review-triggered/{shieldZoneId}", getTriggeredRulesResponseSchema),
  shieldGet("/shield/metrics/rate-limits/{shieldZoneId}", getShieldZoneRateLimitMetricsResponseSchema),
  shieldGet("/shield/shield-zone/{shieldZoneId}/bot-detection", botDetectionResponseSchema),
  shieldGet("/shield/shield-zone/{shieldZoneId}/bot-categorization", botCategorizationListResponseSchema),
  shieldGet("/shield/metrics/rate-limit/{id}", rateLimitMetricsResponseSchema),
  shieldGet(
    "/shield/waf/rules/review-triggered/ai-recommendation/{shieldZoneId}/{ruleId}",
    wafAiRecommendationSchema,
  ),
  ["core", "get", "/dnszone/{zoneId}/records/scan", dnsScanSchema],
  ["core", "post", "/dnszone/records/scan", dnsScanTriggerSchema],
  shieldGet("/shield/shield-zone/{shieldZoneId}/access-lists", accessListsResponseSchema),
  shieldGet("/shield/shield-zone/{shieldZoneId}/access-lists/{id}", customAccessListResponseSchema),
];

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
