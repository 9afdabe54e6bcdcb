import { randomBytes } from "node:crypto";
import { z } from "zod";
import {
  evaluateZone,
  MIN_BASELINE_SAMPLES,
  type SignalReading,
  samplesFromDetailed,
  WATCHED_FEATURES,
  ZONE_SIGNALS,
  type ZoneSample,
} from "../alerts/detect.js";
import { BASELINE_FILL_MS, BUCKET_MS } from "../alerts/evaluate.js";
import type { Deps } from "../deps.js";
import { BUSY_SENTENCE } from "../edge/errors.js";
import { METRICS_RESOLUTION, type ShieldZonePage, unreadableMetricKeys } from "../edge/schemas/shield.js";
import { toUserSentence } from "../errors.js";
import type { ZoneReadingRow } from "../store/index.js";
import { type EdgeAccess, edgeAccessFor } from "./edge-access.js";
import { cachedFor, type KeyedList } from "./key-cache.js";
import { ZONE_DIRECTORY_TTL_MS } from "./zone-lookup.js";

/**
 * What the watches' detector says of one zone's last whole slot, read once (no baseline kept). `reading`: the
 * signal furthest from its usual (the one over, when one is); `series`: that signal's count per whole slot over
 * the last hour, oldest first (a sparkline's values).
 */
export type ZoneCheck =
  /** `watched`: a zone watch of this workspace already alerts on it (in whichever channel). */
  | { zoneId: number; state: "unusual"; reading: SignalReading; series: number[]; watched: boolean }
  | { zoneId: number; state: "usual"; reading: SignalReading; series: number[] }
  | { zoneId: number; state: "unknown"; why: string };

/** The check of a page's zones: at most this many (one metrics read each, in the key's queue). */
export const MAX_CHECKED_ZONES = 10;

/** How many zones `/edge status` and the App Home rank: the first the Edge API lists. */
export const RANKED_ZONES = 25;

const MINUTE_MS = 60_000;
/** How long a reader on another replica is waited for before the zone is shown as being read. */
export const OTHER_READER_WAIT_MS = 2_500;
const OTHER_READER_POLL_MS = 250;
/** Minutes of readings kept (older ones are pruned when a minute's reads are claimed). */
const KEPT_MINUTES = 10;

/** What a read found, as stored for its minute (who watches the zone is read each time, never stored). */
type Outcome =
  | { state: "unusual" | "usual"; reading: SignalReading; series: number[] }
  | { state: "unknown"; why: string };

const readingSchema = z.object({
  signal: z.enum(ZONE_SIGNALS),
  count: z.number(),
  mean: z.number(),
  std: z.number(),
  z: z.number(),
  over: z.boolean(),
});
const outcomeSchema = z.union([
  z.object({ state: z.enum(["unusual", "usual"]), reading: readingSchema, series: z.array(z.number()) }),
  z.object({ state: z.literal("unknown"), why: z.string() }),
]);

const BEING_READ = "being read now; ask again in a moment";

/** A check asked without reading (read: false) whose zone has no reading of this minute yet. */
export const awaitingRead = (c: ZoneCheck): boolean => c.state === "unknown" && c.why === BEING_READ;

function parseOutcome(text: string): Outcome {
  try {
    const parsed = outcomeSchema.safeParse(JSON.parse(text));
    if (parsed.success) return parsed.data;
  } catch {
    // An unreadable row is no reading: said below.
  }
  return { state: "unknown", why: "its stored reading could not be read" };
}

/**
 * Reads in flight in this process, by key, zone and minute: a second asker on the same replica waits for the
 * same promise instead of polling the store. One map per composed app (its Deps).
 */
const inFlightOf = new WeakMap<Deps, Map<string, Promise<Outcome>>>();
function inFlightFor(deps: Deps): Map<string, Promise<Outcome>> {
  let map = inFlightOf.get(deps);
  if (!map) {
    map = new Map();
    inFlightOf.set(deps, map);
  }
  return map;
}

/** Whether to read the zones no reading of this minute covers yet (else they are "being read"/unknown). */
export interface CheckOptions {
  /** At most this many zones (default MAX_CHECKED_ZONES). */
  limit?: number;
  /** Default true; false: only what the store already holds for this minute, no Edge call. */
  read?: boolean;
}

/**
 * Whether each zone's last whole two-minute slot is far above its last hour, as a new zone watch would judge
 * it (normal sensitivity). One detailed-metrics read per API key, zone and minute at most, shared by every
 * user and replica through the store (zone_readings): the first asker claims the minute's read and records
 * what it found; others wait for that (on this replica its promise; on another, the store, up to
 * OTHER_READER_WAIT_MS). The reads are background work in the key's queue. A zone whose metrics can't be
 * read or placed, with too short a history, or still being read elsewhere is "unknown", never "usual".
 */
export async function checkZones(
  deps: Deps,
  teamId: string,
  zoneIds: readonly number[],
  options: CheckOptions = {},
): Promise<ZoneCheck[]> {
  // Best-effort: when too much background work waits, a zone is "not known" at once rather than queued.
  const access = await edgeAccessFor(deps, teamId, { background: "optional" });
  const watched = new Set(
    (await deps.store.watches.list(teamId)).filter((w) => w.kind === "zone").map((w) => w.target),
  );
  const ids = zoneIds.slice(0, options.limit ?? MAX_CHECKED_ZONES);
  const outcomes = await readZones(deps, access, ids, options.read ?? true);
  return ids.map((zoneId, i): ZoneCheck => {
    const o = outcomes[i] ?? { state: "unknown", why: BEING_READ };
    if (o.state === "unknown") return { zoneId, state: "unknown", why: o.why };
    const { reading, series } = o;
    return o.state === "usual"
      ? { zoneId, state: "usual", reading, series }
      : { zoneId, state: "unusual", reading, series, watched: watched.has(String(zoneId)) };
  });
}

async function readZones(
  deps: Deps,
  access: EdgeAccess,
  ids: readonly number[],
  read: boolean,
): Promise<Outcome[]> {
  const { store, clock } = deps;
  const now = clock.now();
  // Each key's minute starts at its own second (from its hash): the replicas' readings of many workspaces
  // fall due spread over the minute, not all at its turn (a burst that held people's answers behind it).
  const phase = Number.parseInt(access.keyId.slice(0, 8), 16) % MINUTE_MS || 0;
  const minute = Math.floor((now - phase) / MINUTE_MS) * MINUTE_MS + phase;
  const rowKey = (zoneId: number) => `${access.keyId}\u0000${zoneId}\u0000${minute}`;
  const inFlight = inFlightFor(deps);
  const rowsOf = async (zoneIds: readonly number[]) =>
    new Map(
      (await store.zoneReadings.list(access.keyId, zoneIds, minute)).map((r): [number, ZoneReadingRow] => [
        r.zoneId,
        r,
      ]),
    );
  let rows: Map<number, ZoneReadingRow>;
  try {
    rows = await rowsOf(ids);
  } catch (err) {
    const why = toUserSentence(err);
    return ids.map(() => ({ state: "unknown", why }));
  }
  if (read && ids.some((id) => !rows.has(id)))
    await store.zoneReadings
      .prune(access.keyId, minute - KEPT_MINUTES * MINUTE_MS)
      .catch((err: unknown) => deps.logger.debug({ err }, "pruning old zone readings failed"));
  const reader = randomBytes(9).toString("base64url");

  return Promise.all(
    ids.map((zoneId): Promise<Outcome> | Outcome => {
      const row = rows.get(zoneId);
      if (row?.reading) return parseOutcome(row.reading);
      const key = rowKey(zoneId);
      const here = inFlight.get(key);
      if (!read) return { state: "unknown", why: BEING_READ };
      if (here) return here;
      // Registered before anything is awaited, so a second asker on this replica always finds it.
      const reading = claimOrWait(zoneId, row === undefined).finally(() => inFlight.delete(key));
      inFlight.set(key, reading);
      return reading;
    }),
  );

  /** This minute's read of the zone: made here when this replica wins its claim, else the winner's. */
  async function claimOrWait(zoneId: number, unclaimed: boolean): Promise<Outcome> {
    try {
      // Not claimed while the replica refuses best-effort reads: the minute stays free for the next asker.
      if (unclaimed && deps.edge.backgroundFull()) return { state: "unknown", why: BUSY_SENTENCE };
      if (unclaimed && (await store.zoneReadings.claim(access.keyId, zoneId, minute, reader, now))) {
        const outcome = await judge(deps, access, zoneId, now);
        await store.zoneReadings.record(
          access.keyId,
          zoneId,
          minute,
          reader,
          JSON.stringify(outcome),
          clock.now(),
        );
        return outcome;
      }
      return await otherReader(zoneId);
    } catch (err) {
      return { state: "unknown", why: toUserSentence(err) };
    }
  }

  /** Another replica claimed this minute's read: its row, for a while. */
  async function otherReader(zoneId: number): Promise<Outcome> {
    // Looked at first without waiting: the claim may have been lost to a read that has just been recorded.
    for (let waited = 0; ; waited += OTHER_READER_POLL_MS) {
      const reading = (await rowsOf([zoneId])).get(zoneId)?.reading;
      if (reading) return parseOutcome(reading);
      if (waited >= OTHER_READER_WAIT_MS) break;
      await clock.sleep(OTHER_READER_POLL_MS);
    }
    return { state: "unknown", why: BEING_READ };
  }
}

/** One zone's detailed metrics over the last hour, judged as a new zone watch would judge its last whole slot. */
async function judge(deps: Deps, access: EdgeAccess, zoneId: number, now: number): Promise<Outcome> {
  const from = Math.floor((now - BASELINE_FILL_MS) / BUCKET_MS) * BUCKET_MS;
  try {
    const detailed = await access.client.getMetricsOverviewDetailed(zoneId, {
      from,
      to: now,
      resolution: METRICS_RESOLUTION.twoMinutes,
    });
    if (unreadableMetricKeys(detailed, WATCHED_FEATURES).length > 0)
      return { state: "unknown", why: "its metrics came with times edgeops cannot place" };
    const samples = samplesFromDetailed(detailed, now, BUCKET_MS);
    const current = samples.at(-1);
    if (!current || samples.length <= MIN_BASELINE_SAMPLES)
      return { state: "unknown", why: "too little history to know its usual" };
    const verdict = evaluateZone(samples.slice(0, -1), current, "normal");
    const over = verdict.readings.filter((r) => r.over).sort((a, b) => b.z - a.z)[0];
    const furthest = over ?? [...verdict.readings].sort((a, b) => b.z - a.z)[0];
    if (!furthest) return { state: "unknown", why: "its metrics named no signal" };
    return {
      state: over ? "unusual" : "usual",
      reading: furthest,
      series: seriesOf(samples, furthest.signal),
    };
  } catch (err) {
    deps.logger.debug({ err, zoneId }, "a zone's metrics could not be read for its check");
    return { state: "unknown", why: toUserSentence(err) };
  }
}

const seriesOf = (samples: readonly ZoneSample[], signal: SignalReading["signal"]): number[] =>
  samples.slice(-30).map((s) => {
    const n = s.counts[signal];
    return Number.isFinite(n) && n > 0 ? n : 0;
  });

/** How far a check's last whole slot is from its usual, for ranking: unusual first, then by z; unknown last. */
function rank(a: ZoneCheck, b: ZoneCheck): number {
  const tier = (c: ZoneCheck) => (c.state === "unusual" ? 0 : c.state === "usual" ? 1 : 2);
  if (tier(a) !== tier(b)) return tier(a) - tier(b);
  if (a.state === "unknown" || b.state === "unknown") return 0;
  return b.reading.z - a.reading.z;
}

/** The account's first zones ranked by how far their last whole slot is from normal. */
export interface ZoneRanking {
  /** Ranked: unusual ones (furthest first), then usual ones (furthest first), then unknown ones. */
  checks: ZoneCheck[];
  /** How many shield zones the workspace has, when the Edge API says. */
  totalCount: number | undefined;
  /** Whether the account has zones that were not ranked. */
  more: boolean;
  /** Zones with no reading of this minute yet, when asked without reading (read: false); else 0. */
  pending: number;
  /** When the ranking was made. */
  at: number;
}

/** The first page of RANKED_ZONES shield zones, kept a minute per key (as the zone directory). */
const RANKED_ZONE_LIST: KeyedList<ShieldZonePage> = {
  name: "ranked-shield-zones",
  ttlMs: ZONE_DIRECTORY_TTL_MS,
  load: (client) => client.listShieldZones({ page: 1, perPage: RANKED_ZONES }),
};

/**
 * The first RANKED_ZONES shield zones the Edge API lists, ranked by how far their last whole slot is from
 * their usual (`/edge status` and the App Home): one list read a minute per key on this replica, then the
 * zones' readings of this minute (checkZones), read where none is known unless `read` is false.
 */
export async function rankZones(
  deps: Deps,
  teamId: string,
  options: { read?: boolean } = {},
): Promise<ZoneRanking> {
  const read = options.read ?? true;
  const page = await cachedFor(deps, await edgeAccessFor(deps, teamId), RANKED_ZONE_LIST);
  const checks = await checkZones(
    deps,
    teamId,
    page.items.map((z) => z.shieldZoneId),
    { limit: RANKED_ZONES, read },
  );
  const more = page.nextPage !== null || checks.length < page.items.length || (page.skipped ?? 0) > 0;
  return {
    checks: [...checks].sort(rank),
    totalCount: page.totalCount,
    more,
    // After reading, a zone another replica still reads is unknown ("being read now"), not pending: nothing
    // would replace the answer when it is in.
    pending: read ? 0 : checks.filter(awaitingRead).length,
    at: deps.clock.now(),
  };
}
