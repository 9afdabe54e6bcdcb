import type { Deps } from "../deps.js";
import type { EdgeClient } from "../edge/client.js";
import type { RateLimitRule } from "../edge/schemas/shield.js";
import { edgeClientFor } from "./edge-access.js";
import { zoneDirectory } from "./zone-lookup.js";

/** A zone has at most its plan's rule limit (100 on Enterprise); the API may answer fewer rows a page than asked. */
const RULES_PER_PAGE = 100;
const MAX_RULE_PAGES = 20;

/**
 * A zone's rate-limit rules (id, name), page after page until the API says there are no more, a page brings
 * nothing new, or MAX_RULE_PAGES were read (`complete` false: the list may go on). An answer without its page
 * member says nothing about more pages, so the next is read. `skipped`: rows without an id.
 */
export async function zoneRateLimitRules(
  client: EdgeClient,
  zoneId: number,
): Promise<{ rules: RateLimitRule[]; skipped: number; complete: boolean }> {
  const rules: RateLimitRule[] = [];
  const seen = new Set<number>();
  let skipped = 0;
  for (let page = 1; page <= MAX_RULE_PAGES; page++) {
    const read = await client.listRateLimitRules(zoneId, { page, perPage: RULES_PER_PAGE });
    const fresh = read.items.filter((r) => !seen.has(r.id));
    for (const r of fresh) seen.add(r.id);
    rules.push(...fresh);
    skipped += read.skipped ?? 0;
    if (read.hasNext === false || fresh.length === 0) return { rules, skipped, complete: true };
  }
  return { rules, skipped, complete: false };
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
  /**
   * Breaches over the 28 days of the rule's daily map (the overview's total has no documented period); null when
   * unknown: the zone's counters did not come, or came without this rule or without its days.
   */
  breaches: number | null;
}

export interface ZoneRateLimits {
  zoneId: number;
  /** The zone's domain (its first hostname), when the zone directory has it. */
  domain: string | null;
  rules: ZoneRateLimit[];
  /** Rules the list gave without an id, left out. */
  skipped: number;
  /** Whether the zone's breach counters came (false: every rule's breaches are unknown). */
  countersCame: boolean;
  /** False when the rule list may go on past the pages read. */
  complete: boolean;
}

/**
 * A zone's rate-limit rules by name with their 28-day breaches, busiest first (unknown last). The names are the
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
  const totals = new Map(
    metrics?.rules.flatMap((m) =>
      m.daysCame ? [[m.rateLimitId, m.days.reduce((n, d) => n + d.totalBreaches, 0)] as const] : [],
    ),
  );
  const rules = listed.rules.map((r) => ({ id: r.id, name: r.name, breaches: totals.get(r.id) ?? null }));
  rules.sort((a, b) => (b.breaches ?? -1) - (a.breaches ?? -1) || a.id - b.id);
  const named = directory?.zones.find((z) => z.zone.shieldZoneId === zoneId);
  return {
    zoneId,
    domain: named?.hostnames[0] ?? null,
    rules,
    skipped: listed.skipped,
    countersCame: metrics !== undefined,
    complete: listed.complete,
  };
}

/** A rate-limit rule as its answers name it: its name and zone (with the zone's domain, when known). */
export interface NamedRateLimitRule {
  id: number;
  name: string | null;
  zoneId: number | null;
  domain: string | null;
}

/**
 * Rule `id`'s name and zone (GET /shield/rate-limit/{id}), with the zone's domain from the zone directory;
 * null when the API does not say (the answer about the rule's counters does not wait on it).
 */
export async function rateLimitRuleNamed(
  deps: Deps,
  teamId: string,
  id: number,
): Promise<NamedRateLimitRule | null> {
  const client = await edgeClientFor(deps, teamId);
  const rule = await client.getRateLimitRule(id).catch((err: unknown) => {
    deps.logger.info({ err, rateLimitId: id }, "rate-limit rule's name unavailable");
    return undefined;
  });
  if (rule === undefined) return null;
  const directory = await zoneDirectory(deps, teamId).catch(() => undefined);
  const named = directory?.zones.find((z) => z.zone.shieldZoneId === rule.shieldZoneId);
  return { id, name: rule.name, zoneId: rule.shieldZoneId, domain: named?.hostnames[0] ?? null };
}

/** Zones whose rules a search by name reads at most (each is a call). */
export const MAX_ZONES_SEARCHED_FOR_RULES = 100;

export interface RuleSearch {
  /** Rules whose name is the text (any case); when none is, those whose name contains it. */
  matches: NamedRateLimitRule[];
  /** Whether `matches` are exact names (false: names containing the text). */
  exact: boolean;
  zonesSearched: number;
  /** Zones whose rules could not be read, or beyond the search's bound. */
  zonesNotSearched: number;
  /** False when the zone directory itself was cut short: more zones may exist. */
  complete: boolean;
}

/**
 * The rate-limit rules named `text` (any case) across the workspace's shield zones, or, when none has that
 * very name, those whose name contains it. There is no search by name in the API: each zone's rules are
 * read (at most MAX_ZONES_SEARCHED_FOR_RULES zones, the rest counted as not searched).
 */
export async function findRateLimitRules(deps: Deps, teamId: string, text: string): Promise<RuleSearch> {
  const client = await edgeClientFor(deps, teamId);
  const directory = await zoneDirectory(deps, teamId);
  const zones = directory.zones.slice(0, MAX_ZONES_SEARCHED_FOR_RULES);
  const read = await Promise.all(
    zones.map(async (z) => {
      const listed = await zoneRateLimitRules(client, z.zone.shieldZoneId).catch(() => undefined);
      return listed?.rules.map((r) => ({
        id: r.id,
        name: r.name,
        zoneId: z.zone.shieldZoneId,
        domain: z.hostnames[0] ?? null,
      }));
    }),
  );
  const rules = read.flatMap((r) => r ?? []);
  const wanted = text.toLowerCase();
  const exact = rules.filter((r) => r.name?.toLowerCase() === wanted);
  const partial = rules.filter((r) => r.name?.toLowerCase().includes(wanted));
  const unread = read.filter((r) => r === undefined).length;
  return {
    matches: exact.length > 0 ? exact : partial,
    exact: exact.length > 0,
    zonesSearched: zones.length - unread,
    zonesNotSearched: unread + (directory.zones.length - zones.length),
    complete: directory.complete,
  };
}
