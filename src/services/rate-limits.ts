import type { EdgeClient } from "../edge/client.js";
import type { RateLimitRule } from "../edge/schemas/shield.js";
import { allPages } from "./key-cache.js";

/** A zone has at most its plan's rule limit (100 on Enterprise): a few pages of 100 read them all. */
const RULES_PER_PAGE = 100;
const MAX_RULE_PAGES = 5;

/** A zone's rate-limit rules (id, name), every page up to MAX_RULE_PAGES. */
export async function zoneRateLimitRules(client: EdgeClient, zoneId: number): Promise<RateLimitRule[]> {
  const read = await allPages(
    (page) => client.listRateLimitRules(zoneId, { page, perPage: RULES_PER_PAGE }),
    MAX_RULE_PAGES,
  );
  return read.items;
}

/** The names of a zone's rate-limit rules by rule id (rules the API gives without a name are left out). */
export async function rateLimitNames(
  client: EdgeClient,
  zoneId: number,
): Promise<ReadonlyMap<number, string>> {
  const rules = await zoneRateLimitRules(client, zoneId);
  return new Map(rules.flatMap((r) => (r.name ? [[r.id, r.name] as const] : [])));
}
