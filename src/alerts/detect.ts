/**
 * TEMPORARY stand-in with the agreed interface of src/alerts/detect.ts (ALERTS-SIM delivers the real
 * module on branch `alertsui`; this file is replaced by it at the merge).
 */
export type Sensitivity = "low" | "normal" | "high";
export type ZoneSignal = "ddos" | "waf" | "rateLimit" | "bot";
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
  low: { z: 6, minCount: 200 },
  normal: { z: 4, minCount: 50 },
  high: { z: 3, minCount: 20 },
};
/** How many samples the poller keeps as the baseline. */
export const BASELINE_SAMPLES = 30;

export function evaluateZone(
  history: readonly ZoneSample[],
  current: ZoneSample,
  s: Sensitivity,
): ZoneVerdict {
  const t = SENSITIVITIES[s];
  const readings = ZONE_SIGNALS.map((signal): SignalReading => {
    const values = history.map((h) => h.counts[signal] ?? 0);
    const mean = values.length ? values.reduce((a, b) => a + b, 0) / values.length : 0;
    const variance = values.length ? values.reduce((a, b) => a + (b - mean) ** 2, 0) / values.length : 0;
    const std = Math.sqrt(variance);
    const count = current.counts[signal] ?? 0;
    const z = (count - mean) / Math.max(std, 1, Math.sqrt(Math.max(mean, 0)));
    return { signal, count, mean, std, z, over: count >= t.minCount && z >= t.z };
  });
  return { attack: readings.some((r) => r.over), readings };
}

export type AppTransition = "failing" | "recovered" | "stuck_deploying" | null;

const BAD = new Set(["failing", "failed", "error"]);
const DEPLOYING = new Set(["deploying", "progressing"]);

export function classifyApp(
  previous: { status: string; since: number } | undefined,
  current: string,
  now: number,
  stuckAfterMs: number,
  watched: readonly string[] | null,
): AppTransition {
  const cur = current.toLowerCase();
  const prev = previous?.status.toLowerCase();
  const watching = (s: string) => watched === null || watched.includes(s);
  if (BAD.has(cur)) return prev !== undefined && BAD.has(prev) ? null : watching(cur) ? "failing" : null;
  if (DEPLOYING.has(cur)) {
    if (prev === cur && previous && now - previous.since >= stuckAfterMs && watching("deploying"))
      return "stuck_deploying";
    return null;
  }
  if (prev !== undefined && (BAD.has(prev) || DEPLOYING.has(prev))) return "recovered";
  return null;
}

/** Calm-down: an attack is over after this many consecutive samples with no signal over. */
export const CALM_SAMPLES = 2;
