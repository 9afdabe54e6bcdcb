/**
 * Detection, pure: no clock, no I/O. The poller feeds it what it read and keeps what it returns.
 *
 * Zones. Each signal (DDoS, WAF, rate limit, bot detection) is compared with its own baseline, the zone's recent
 * samples: z = (count − mean) / σ, where σ is the baseline's standard deviation but never less than the Poisson
 * noise of its mean (√max(mean, 1)): a zone that saw 0, 0, 1, 0 events has a σ near 0, and 3 events must not read
 * as an attack. A signal is over when its z reaches the sensitivity's z *and* its count reaches the sensitivity's
 * minimum count (so a jump from 0 to 4 is never an attack, however improbable). The zone is under attack when any
 * signal is over. With fewer than MIN_BASELINE_SAMPLES samples of baseline nothing is ever over: the poller should
 * fill the baseline at once from GET /shield/metrics/overview/{id}/detailed (2-minute buckets) rather than wait.
 *
 * Episodes. `zoneEpisodeStep` opens an episode on the first sample under attack and resolves it after
 * CALM_SAMPLES consecutive samples with no signal over (one quiet sample in a ramping attack is noise, not the
 * end). `nextBaseline` keeps attack samples out of the baseline, so a long attack never becomes the zone's normal
 * and calms itself: while an episode is open, or when a sample is over, the baseline stays as it was.
 *
 * Apps. `classifyApp` compares an app's stored status (and since when it has had it) with the status just read:
 * entering an alerting status is `failing`, Deploying (`progressing`) for `stuckAfterMs` or more is
 * `stuck_deploying`, leaving either for anything but another alerting status or Deploying is `recovered`.
 * `stuck_deploying` is answered on every poll while the app stays stuck (the function has no memory): the caller's
 * open episode keeps it to one alert.
 */

import { actedOnCount, type ShieldDetailedMetrics } from "../edge/schemas/shield.js";

export type Sensitivity = "low" | "normal" | "high";
export type ZoneSignal = "ddos" | "waf" | "rateLimit" | "bot";

/** Every signal, in the order readings are given. */
export const ZONE_SIGNALS: readonly ZoneSignal[] = ["ddos", "waf", "rateLimit", "bot"];

/** Threat counts of one window (one poll of /shield/metrics/overview/{id}/detailed). */
export interface ZoneSample {
  at: number;
  counts: Record<ZoneSignal, number>;
}

export interface SignalReading {
  signal: ZoneSignal;
  count: number;
  mean: number;
  std: number;
  z: number;
  over: boolean;
}

export interface ZoneVerdict {
  attack: boolean;
  readings: SignalReading[];
}

/** The thresholds of a sensitivity: z-score and minimum count. */
export const SENSITIVITIES: Record<Sensitivity, { z: number; minCount: number }> = {
  low: { z: 6, minCount: 100 },
  normal: { z: 4, minCount: 30 },
  high: { z: 3, minCount: 10 },
};

/** How many samples the poller keeps as the baseline. */
export const BASELINE_SAMPLES = 30;

/** Below this many baseline samples, nothing is over (the zone's normal is not known yet). */
export const MIN_BASELINE_SAMPLES = 5;

/** Consecutive samples with no signal over that resolve an open episode. */
export const CALM_SAMPLES = 3;

const countOf = (s: ZoneSample, signal: ZoneSignal): number => {
  const n = s.counts[signal];
  return Number.isFinite(n) && n > 0 ? n : 0;
};

function reading(
  history: readonly ZoneSample[],
  current: ZoneSample,
  signal: ZoneSignal,
  threshold: { z: number; minCount: number },
): SignalReading {
  const values = history.map((s) => countOf(s, signal));
  const mean = values.length === 0 ? 0 : values.reduce((a, b) => a + b, 0) / values.length;
  const variance = values.length === 0 ? 0 : values.reduce((a, v) => a + (v - mean) ** 2, 0) / values.length;
  const std = Math.sqrt(variance);
  const count = countOf(current, signal);
  const z = (count - mean) / Math.max(std, Math.sqrt(Math.max(mean, 1)));
  const over = history.length >= MIN_BASELINE_SAMPLES && count >= threshold.minCount && z >= threshold.z;
  return { signal, count, mean, std, z, over };
}

/** `history`: the zone's recent samples, oldest first (the baseline); `current`: the latest. */
export function evaluateZone(
  history: readonly ZoneSample[],
  current: ZoneSample,
  s: Sensitivity,
): ZoneVerdict {
  const threshold = SENSITIVITIES[s];
  const baseline = history.slice(-BASELINE_SAMPLES);
  const readings = ZONE_SIGNALS.map((signal) => reading(baseline, current, signal, threshold));
  return { attack: readings.some((r) => r.over), readings };
}

/**
 * The count a signal's next sample must reach to be over, from the same baseline and sensitivity `evaluateZone`
 * uses: the larger of the minimum count and mean + z × σ (σ floored at the Poisson noise, as above). Null while
 * the baseline is too short for anything to be over. A reading at this level is over; one below it is not.
 */
export function alertLevel(
  history: readonly ZoneSample[],
  signal: ZoneSignal,
  s: Sensitivity,
): number | null {
  const baseline = history.slice(-BASELINE_SAMPLES);
  if (baseline.length < MIN_BASELINE_SAMPLES) return null;
  const threshold = SENSITIVITIES[s];
  const values = baseline.map((x) => countOf(x, signal));
  const mean = values.reduce((a, b) => a + b, 0) / values.length;
  const std = Math.sqrt(values.reduce((a, v) => a + (v - mean) ** 2, 0) / values.length);
  const noise = Math.max(std, Math.sqrt(Math.max(mean, 1)));
  return Math.max(threshold.minCount, mean + threshold.z * noise);
}

const MINUTE_MS = 60_000;

/** Where each signal's counts are in the detailed metrics. */
const SIGNAL_FEATURE: Record<ZoneSignal, keyof ShieldDetailedMetrics["features"]> = {
  ddos: "ddos",
  waf: "waf",
  rateLimit: "rateLimit",
  bot: "botDetection",
};

/** The detailed-metrics features a zone watch reads. */
export const WATCHED_FEATURES = Object.values(SIGNAL_FEATURE);

/**
 * One sample per whole bucket of a detailed-metrics answer (oldest first): a bucket counts only once it has ended
 * before the clock's current minute (the API shows a minute's events after it is over), so the bucket still
 * filling is left out and read again next time. A signal's count is what its feature acted on (blocked +
 * challenged + logged, as the incident card counts). `bucketMs`: the answer's resolution, e.g. 120,000 for
 * Resolution 1 (two minutes).
 */
export function samplesFromDetailed(d: ShieldDetailedMetrics, now: number, bucketMs: number): ZoneSample[] {
  const ingested = Math.floor(now / MINUTE_MS) * MINUTE_MS;
  const byTime = new Map<number, Record<ZoneSignal, number>>();
  for (const signal of ZONE_SIGNALS) {
    for (const point of d.features[SIGNAL_FEATURE[signal]].points) {
      if (point.at + bucketMs > ingested) continue;
      const counts = byTime.get(point.at) ?? { ddos: 0, waf: 0, rateLimit: 0, bot: 0 };
      counts[signal] += actedOnCount(point.values);
      byTime.set(point.at, counts);
    }
  }
  return [...byTime].sort(([a], [b]) => a - b).map(([at, counts]) => ({ at, counts }));
}

/** An open zone episode: how many samples in a row have been calm. */
export interface ZoneEpisode {
  calmSamples: number;
}

/**
 * - `opened`: a new episode (post the alert);
 * - `firing`: still under attack (update the parent with the latest numbers);
 * - `calming`: no signal over, not yet for CALM_SAMPLES samples (keep the episode open);
 * - `resolved`: calm for CALM_SAMPLES samples (post the resolution);
 * - `quiet`: no episode and no attack.
 */
export type ZoneStep = "opened" | "firing" | "calming" | "resolved" | "quiet";

/** One sample's effect on a zone's episode (`null`: none open). */
export function zoneEpisodeStep(
  episode: ZoneEpisode | null,
  verdict: ZoneVerdict,
  calmAfter: number = CALM_SAMPLES,
): { episode: ZoneEpisode | null; step: ZoneStep } {
  if (verdict.attack) return { episode: { calmSamples: 0 }, step: episode === null ? "opened" : "firing" };
  if (episode === null) return { episode: null, step: "quiet" };
  const calmSamples = episode.calmSamples + 1;
  if (calmSamples >= Math.max(1, calmAfter)) return { episode: null, step: "resolved" };
  return { episode: { calmSamples }, step: "calming" };
}

/** The baseline after a sample: the sample joins it (oldest dropped) unless it is over or an episode is open. */
export function nextBaseline(
  history: readonly ZoneSample[],
  current: ZoneSample,
  verdict: ZoneVerdict,
  episodeOpen: boolean,
): ZoneSample[] {
  if (verdict.attack || episodeOpen) return history.slice(-BASELINE_SAMPLES);
  return [...history, current].slice(-BASELINE_SAMPLES);
}

// ---------------------------------------------------------------------------------------------------------------
// Apps

/** App status changes: which transitions alert, which resolve, Deploying for too long. */
export type AppTransition = "failing" | "recovered" | "stuck_deploying" | null;

/** The statuses that alert when a watch names none. */
export const DEFAULT_ALERT_STATUSES: readonly string[] = ["failing", "suspended"];

/** Lower case (older releases answer `Active`), and `deploying` (the dashboard's word) is `progressing`. */
export function normaliseAppStatus(status: string): string {
  const s = status.trim().toLowerCase();
  return s === "deploying" ? "progressing" : s;
}

/**
 * `previous`: the stored status and since when the app has had it (undefined the first time it is seen);
 * `watched`: the statuses that alert (`null`: DEFAULT_ALERT_STATUSES, Deploying watched for being stuck);
 * Deploying (`progressing`) among `watched` means "stuck in Deploying", never Deploying itself.
 */
export function classifyApp(
  previous: { status: string; since: number } | undefined,
  current: string,
  now: number,
  stuckAfterMs: number,
  watched: readonly string[] | null,
): AppTransition {
  const watchedStatuses = (watched ?? [...DEFAULT_ALERT_STATUSES, "progressing"]).map(normaliseAppStatus);
  const stuckWatched = watchedStatuses.includes("progressing");
  const alerting = (s: string) => s !== "progressing" && watchedStatuses.includes(s);
  const isStuck = (since: number) => stuckWatched && now - since >= stuckAfterMs;

  const cur = normaliseAppStatus(current);
  const prev = previous === undefined ? undefined : normaliseAppStatus(previous.status);
  const prevAlerting = prev !== undefined && alerting(prev);
  const prevStuck = prev === "progressing" && previous !== undefined && isStuck(previous.since);

  if (alerting(cur)) return prevAlerting ? null : "failing";
  if (cur === "progressing") {
    const since = prev === "progressing" && previous !== undefined ? previous.since : now;
    return isStuck(since) ? "stuck_deploying" : null;
  }
  return prevAlerting || prevStuck ? "recovered" : null;
}
