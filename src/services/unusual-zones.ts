import {
  evaluateZone,
  MIN_BASELINE_SAMPLES,
  type SignalReading,
  samplesFromDetailed,
  WATCHED_FEATURES,
} from "../alerts/detect.js";
import { BASELINE_FILL_MS, BUCKET_MS } from "../alerts/evaluate.js";
import type { Deps } from "../deps.js";
import { METRICS_RESOLUTION, type ShieldZonePage, unreadableMetricKeys } from "../edge/schemas/shield.js";
import { toUserSentence } from "../errors.js";
import { LruCache } from "../lru.js";
import { edgeAccessFor } from "./edge-access.js";
import { cachedFor, type KeyedList } from "./key-cache.js";
import { ZONE_DIRECTORY_TTL_MS } from "./zone-lookup.js";

/** What the watches' detector says of one zone's last whole slot, read once (no baseline kept). */
export type ZoneCheck =
  /** `watched`: a zone watch of this workspace already alerts on it (in whichever channel). */
  | { zoneId: number; state: "unusual"; reading: SignalReading; watched: boolean }
  | { zoneId: number; state: "usual" }
  | { zoneId: number; state: "unknown"; why: string };

/** The check of a page's zones: at most this many (one metrics read each, in the key's queue). */
export const MAX_CHECKED_ZONES = 10;

/**
 * Verdicts by workspace, zone and slot: a verdict holds until the next slot is whole, so `/edge zones` asked
 * again (by anyone in the workspace, on this replica) costs no Edge call within the slot. "unknown" verdicts
 * (a failed read) are not kept.
 */
type Verdicts = LruCache<string, Exclude<ZoneCheck, { state: "unknown" }>>;
/** One cache per composed app (its Deps): a process's apps, or tests' harnesses, never share verdicts. */
const verdictsOf = new WeakMap<Deps, Verdicts>();
function verdictsFor(deps: Deps): Verdicts {
  let verdicts = verdictsOf.get(deps);
  if (!verdicts) {
    verdicts = new LruCache(5_000);
    verdictsOf.set(deps, verdicts);
  }
  return verdicts;
}

/**
 * Whether each zone's last whole two-minute slot is far above its last hour, as a new zone watch would judge
 * it (normal sensitivity): one detailed-metrics read per zone, at most MAX_CHECKED_ZONES. A zone whose
 * metrics can't be read or placed, or with too short a history, is "unknown", never "usual".
 */
export async function checkZones(
  deps: Deps,
  teamId: string,
  zoneIds: readonly number[],
): Promise<ZoneCheck[]> {
  const access = await edgeAccessFor(deps, teamId);
  const watched = new Set(
    (await deps.store.watches.list(teamId)).filter((w) => w.kind === "zone").map((w) => w.target),
  );
  const now = deps.clock.now();
  const from = Math.floor((now - BASELINE_FILL_MS) / BUCKET_MS) * BUCKET_MS;
  const slot = Math.floor(now / BUCKET_MS);
  const verdicts = verdictsFor(deps);
  return Promise.all(
    zoneIds.slice(0, MAX_CHECKED_ZONES).map(async (zoneId): Promise<ZoneCheck> => {
      const key = `${teamId}\u0000${zoneId}\u0000${slot}`;
      const known = verdicts.get(key);
      // Watched or not is read now: a watch started since changes the hint, not the verdict.
      if (known)
        return known.state === "unusual" ? { ...known, watched: watched.has(String(zoneId)) } : known;
      const verdict = await judge(zoneId);
      if (verdict.state !== "unknown") verdicts.set(key, verdict);
      return verdict;
    }),
  );

  async function judge(zoneId: number): Promise<ZoneCheck> {
    try {
      const detailed = await access.client.getMetricsOverviewDetailed(zoneId, {
        from,
        to: now,
        resolution: METRICS_RESOLUTION.twoMinutes,
      });
      if (unreadableMetricKeys(detailed, WATCHED_FEATURES).length > 0)
        return { zoneId, state: "unknown", why: "its metrics came with times edgeops cannot place" };
      const samples = samplesFromDetailed(detailed, now, BUCKET_MS);
      const current = samples.at(-1);
      if (!current || samples.length <= MIN_BASELINE_SAMPLES)
        return { zoneId, state: "unknown", why: "too little history to know its usual" };
      const verdict = evaluateZone(samples.slice(0, -1), current, "normal");
      const over = verdict.readings.filter((r) => r.over).sort((a, b) => b.z - a.z)[0];
      return over
        ? { zoneId, state: "unusual", reading: over, watched: watched.has(String(zoneId)) }
        : { zoneId, state: "usual" };
    } catch (err) {
      return { zoneId, state: "unknown", why: toUserSentence(err) };
    }
  }
}

/** The workspace's first zones, checked (the Home's "what is on fire" from a cold start). */
export interface FirstZonesCheck {
  checks: ZoneCheck[];
  /** How many shield zones the workspace has, when the Edge API says. */
  totalCount: number | undefined;
  /** Whether the workspace has zones that were not checked. */
  more: boolean;
}

/** The first page of MAX_CHECKED_ZONES shield zones, kept a minute per key (as the zone directory). */
const FIRST_ZONES: KeyedList<ShieldZonePage> = {
  name: "first-shield-zones",
  ttlMs: ZONE_DIRECTORY_TTL_MS,
  load: (client) => client.listShieldZones({ page: 1, perPage: MAX_CHECKED_ZONES }),
};

/**
 * The workspace's first MAX_CHECKED_ZONES shield zones checked as `/edge zones` checks its page: one list
 * read a minute, then at most MAX_CHECKED_ZONES metrics reads, none within a slot whose verdicts are already known.
 */
export async function checkFirstZones(deps: Deps, teamId: string): Promise<FirstZonesCheck> {
  const page = await cachedFor(deps, await edgeAccessFor(deps, teamId), FIRST_ZONES);
  const checks = await checkZones(
    deps,
    teamId,
    page.items.map((z) => z.shieldZoneId),
  );
  const more = page.nextPage !== null || checks.length < page.items.length || (page.skipped ?? 0) > 0;
  return { checks, totalCount: page.totalCount, more };
}
