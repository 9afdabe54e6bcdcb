import type { Deps } from "../deps.js";
import type { EdgeClient } from "../edge/client.js";
import type { RateLimitRule } from "../edge/schemas/shield.js";
import { edgeClientFor } from "./edge-access.js";
import { zoneDirectory } from "./zone-lookup.js";

/** A zone has at most its plan's rule limit (100 on Enterprise): a few pages of 100 read them all. */
const RULES_PER_PAGE = 100;
const MAX_RULE_PAGES = 5;

/** A zone's rate-limit rules (id, name), every page up to MAX_RULE_PAGES; `skipped`: rows without an id. */
export async function zoneRateLimitRules(
  client: EdgeClient,
  zoneId: number,
): Promise<{ rules: RateLimitRule[]; skipped: number }> {
  const rules: RateLimitRule[] = [];
  let skipped = 0;
  for (let page = 1; page <= MAX_RULE_PAGES; page++) {
    const read = await client.listRateLimitRules(zoneId, { page, perPage: RULES_PER_PAGE });
    rules.push(...read.items);
    skipped += read.skipped ?? 0;
    if (!read.hasNext || read.items.length === 0) break;
  }
  return { rules, skipped };
}

/** The names of a zone's rate-limit rules by rule id (rules the API gives without a name are left out). */
export async function rateLimitNames(
  client: EdgeClient,
  zoneId: number,
): Promise<ReadonlyMap<number, string>> {
  const { rules } = await zoneRateLimitRules(client, zoneId);
  return new Map(rules.flatMap((r) => (r.name ? [[r.id, r.name] as const] : [])));
}

export interface ZoneRateLimit {
  id: number;
  name: string | null;
  /** Breaches over the past 28 days; null when the zone's counters did not come. */
  breaches: number | null;
}

export interface ZoneRateLimits {
  zoneId: number;
  /** The zone's domain (its first hostname), when the zone directory has it. */
  domain: string | null;
  rules: ZoneRateLimit[];
  /** Rules the list gave without an id, left out. */
  skipped: number;
}

/**
 * A zone's rate-limit rules by name with their 28-day breaches, busiest first. The names are the
 * answer; the counters and the domain are added when they come.
 */
export async function readZoneRateLimits(
  deps: Deps,
  teamId: string,
  zoneId: number,
): Promise<ZoneRateLimits> {
  const client = await edgeClientFor(deps, teamId);
  const soft = <T>(work: Promise<T>, what: string) =>
    work.catch((err: unknown) => {
      deps.logger.info({ err, zoneId }, `${what} unavailable for the rate-limit list`);
      return undefined;
    });
  const [listed, metrics, directory] = await Promise.all([
    zoneRateLimitRules(client, zoneId),
    soft(client.getRateLimits(zoneId), "rate-limit counters"),
    soft(zoneDirectory(deps, teamId), "zone directory"),
  ]);
  const totals = new Map(metrics?.rules.map((m) => [m.rateLimitId, m.overview?.totalBreaches ?? 0]));
  const rules = listed.rules.map((r) => ({
    id: r.id,
    name: r.name,
    breaches: metrics === undefined ? null : (totals.get(r.id) ?? 0),
  }));
  rules.sort((a, b) => (b.breaches ?? 0) - (a.breaches ?? 0) || a.id - b.id);
  const named = directory?.zones.find((z) => z.zone.shieldZoneId === zoneId);
  return { zoneId, domain: named?.hostnames[0] ?? null, rules, skipped: listed.skipped };
}
