import { TRAFFIC_METRIC_LABELS, type TrafficMetric } from "../services/incident.js";
import {
  type ChartExtra,
  type ChartMitigation,
  type ChartSource,
  type ChartThreshold,
  type IncidentChart,
  incidentChart,
} from "../services/incident-chart.js";
import { alertLevel, SENSITIVITIES, type Sensitivity, ZONE_SIGNALS, type ZoneSignal } from "./detect.js";
import { BUCKET_MS, RECENT_MS, type ZoneState } from "./evaluate.js";

/**
 * The chart of a zone alert, as data: the samples the watch already read (its state's `recent`, so drawing costs
 * no Edge API call), one series per watched feature in events per minute, each feature's alert level at the
 * watch's sensitivity from the detector's own baseline (detect.ts alertLevel), and the mitigations that took
 * effect. The incident chart's modules draw it.
 */

const FEATURE_METRIC: Record<ZoneSignal, TrafficMetric> = {
  ddos: "ddos",
  waf: "waf",
  rateLimit: "rateLimit",
  bot: "botDetection",
};

const BUCKET_MINUTES = BUCKET_MS / 60_000;

/** The alert's chart over the hour before its latest evaluated bucket, or null when there is nothing to draw. */
export function alertChartInput(
  zoneId: number,
  state: ZoneState | null,
  sensitivity: Sensitivity,
  mitigations: readonly ChartMitigation[] = [],
): { source: ChartSource; extra: ChartExtra } | null {
  const recent = state?.recent ?? [];
  if (!state || state.lastBucketAt === null || recent.length === 0) return null;
  const metricsTo = state.lastBucketAt + BUCKET_MS;
  const metricsFrom = metricsTo - RECENT_MS;
  const buckets = RECENT_MS / BUCKET_MS;
  const rows = ZONE_SIGNALS.map((signal) => {
    const series = new Array<number>(buckets).fill(0);
    for (const s of recent) {
      const i = Math.floor((s.at - metricsFrom) / BUCKET_MS);
      if (i >= 0 && i < buckets) series[i] = (series[i] ?? 0) + (s.counts[signal] ?? 0);
    }
    return { signal, metric: FEATURE_METRIC[signal], series };
  });
  const thresholds: ChartThreshold[] = [];
  for (const row of rows) {
    // A feature that saw nothing in the hour has no line near its level: its rule would only crowd the picture.
    if (row.series.every((v) => v === 0)) continue;
    const level = alertLevel(state.samples, row.signal, sensitivity);
    if (level === null) continue;
    const series = TRAFFIC_METRIC_LABELS[row.metric];
    thresholds.push({ perMinute: level / BUCKET_MINUTES, label: `${series} alert level`, series });
  }
  const { z, minCount } = SENSITIVITIES[sensitivity];
  // The time axis runs on past the last whole bucket to a mitigation made since, so it shows at once.
  const lastMark = Math.max(metricsTo, ...mitigations.map((m) => m.at));
  return {
    source: {
      zoneId,
      range: { window: "1h", metricsFrom, metricsTo, to: lastMark, bucketMs: BUCKET_MS, words: "hour" },
      traffic: { ok: { rows: rows.map(({ metric, series }) => ({ metric, series })) } },
    },
    extra: {
      thresholds,
      thresholdRule: `An alert level is what a feature's two-minute count must reach to fire at sensitivity ${sensitivity}: ${z} standard deviations over its usual level (the watch's baseline), and at least ${minCount} events.`,
      mitigations,
    },
  };
}

/** The chart itself (what is drawn), or null when there is nothing to draw. */
export function alertChart(
  zoneId: number,
  state: ZoneState | null,
  sensitivity: Sensitivity,
  mitigations: readonly ChartMitigation[] = [],
): IncidentChart | null {
  const input = alertChartInput(zoneId, state, sensitivity, mitigations);
  return input ? incidentChart(input.source, input.extra) : null;
}
