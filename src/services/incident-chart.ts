import { type IncidentRange, type Section, TRAFFIC_METRIC_LABELS, type TrafficMetric } from "./incident.js";
import type { Timeline } from "./timeline.js";

/**
 * What the incident chart shows, as data: the card's own traffic series (one point per sparkline bucket, as a
 * rate per minute), an alert's threshold and the moments mitigations took effect. Drawing it is someone else's
 * business (src/charts); this module only says what the picture holds and, in words, what it shows.
 */

const MINUTE = 60_000;

export interface ChartPoint {
  /** The bucket's start, Unix ms. */
  at: number;
  metric: TrafficMetric;
  /** The series' label, as the card names it. */
  label: string;
  /** The bucket's count (the card's sparkline value). */
  count: number;
  /** `count` spread over the bucket's minutes. */
  perMinute: number;
}

export interface ChartMitigation {
  /** When the change took effect (applied and read back), Unix ms. */
  at: number;
  /** What it did, in a few words ("block IP 203.0.113.7"). */
  what: string;
  /** Who approved it (a display name or id); null when not known to this audience. */
  approvedBy: string | null;
}

export interface ChartThreshold {
  /** Requests per minute at which the alert fires. */
  perMinute: number;
  label: string;
  /** The series (its label) this threshold belongs to, drawn in its colour; absent: one for the whole chart. */
  series?: string;
}

/** What a chart is drawn from: an incident picture, or an alert's own samples shaped like one. */
export interface ChartSource {
  zoneId: number;
  range: Pick<IncidentRange, "window" | "metricsFrom" | "metricsTo" | "to" | "bucketMs" | "words">;
  traffic: Section<{ rows: readonly { metric: TrafficMetric; series: readonly number[] }[] }>;
}

export interface ChartExtra {
  thresholds?: readonly ChartThreshold[];
  /** What the thresholds mean, in one sentence (the alt text says it). */
  thresholdRule?: string | null;
  mitigations?: readonly ChartMitigation[];
}

export interface IncidentChart {
  zoneId: number;
  /** The lines cover whole slots up to `metricsTo`; the time axis runs on to `to`, so a mark just made shows. */
  range: Pick<IncidentRange, "metricsFrom" | "metricsTo" | "to" | "bucketMs" | "words">;
  points: ChartPoint[];
  thresholds: ChartThreshold[];
  thresholdRule: string | null;
  /** Inside the chart's time span only (`metricsFrom` to `to`), oldest first. */
  mitigations: ChartMitigation[];
}

/**
 * The chart of an incident picture's traffic, or null when there is nothing to draw: the traffic section
 * failed, or every series is zero over the window (an empty chart says less than the card's text).
 */
export function incidentChart(picture: ChartSource, extra: ChartExtra = {}): IncidentChart | null {
  if ("error" in picture.traffic) return null;
  const { range } = picture;
  const minutes = range.bucketMs / MINUTE;
  const points: ChartPoint[] = [];
  for (const row of picture.traffic.ok.rows) {
    row.series.forEach((count, i) => {
      points.push({
        at: range.metricsFrom + i * range.bucketMs,
        metric: row.metric,
        label: TRAFFIC_METRIC_LABELS[row.metric],
        count,
        perMinute: count / minutes,
      });
    });
  }
  if (points.every((p) => p.count === 0)) return null;
  const mitigations = (extra.mitigations ?? [])
    .filter((m) => m.at >= range.metricsFrom && m.at <= range.to)
    .sort((a, b) => a.at - b.at);
  return {
    zoneId: picture.zoneId,
    range: {
      metricsFrom: range.metricsFrom,
      metricsTo: range.metricsTo,
      to: range.to,
      bucketMs: range.bucketMs,
      words: range.words,
    },
    points,
    thresholds: [...(extra.thresholds ?? [])],
    thresholdRule: extra.thresholdRule ?? null,
    mitigations,
  };
}

const round = (v: number) => (v >= 10 ? Math.round(v).toLocaleString("en-US") : String(+v.toFixed(1)));
const hhmm = (at: number) => `${new Date(at).toISOString().slice(11, 16)} UTC`;

/** The busiest bucket of the chart (highest rate; the earliest of equals). */
export function chartPeak(chart: IncidentChart): ChartPoint {
  return chart.points.reduce((best, p) => (p.perMinute > best.perMinute ? p : best));
}

/**
 * What the picture shows, in words, for readers who do not see it (Slack's alt_text, at most 2,000
 * characters): the peak, the threshold and when each mitigation took effect.
 */
export function chartAltText(chart: IncidentChart): string {
  const peak = chartPeak(chart);
  const parts = [
    `Chart of threats per minute by feature on shield zone ${chart.zoneId} over the last ${chart.range.words}.`,
    `Peak: ${round(peak.perMinute)} per minute (${peak.label}) in the slot from ${hhmm(peak.at)}.`,
    chart.thresholds.length === 0
      ? "No alert threshold drawn."
      : `Alert threshold: ${chart.thresholds
          .map((t) => `${round(t.perMinute)} per minute (${t.label})`)
          .join("; ")}.${chart.thresholdRule ? ` ${chart.thresholdRule}` : ""}`,
    chart.mitigations.length === 0
      ? "No mitigation took effect in this window."
      : `Mitigations took effect: ${chart.mitigations
          .map((m) => `${m.what} at ${hhmm(m.at)}${m.approvedBy ? ` (approved by ${m.approvedBy})` : ""}`)
          .join("; ")}.`,
  ];
  const text = parts.join(" ");
  return text.length <= 2000 ? text : `${text.slice(0, 1999)}…`;
}

/**
 * The changes of a timeline that took effect (applied, read back) as chart marks: what each did and who approved
 * it (`name` turns a user id into a name; "no approval needed" where the policy asked none). Its applied entries,
 * and the mitigations in force whose entries the audit no longer holds; a mitigation asked where the timeline's
 * readers are not (`asked` null) is left out, as its entries are.
 */
export function timelineMitigations(
  timeline: Pick<Timeline, "entries" | "mitigations">,
  name: (userId: string) => string,
): ChartMitigation[] {
  const approvers = new Map<string, Set<string>>();
  for (const e of timeline.entries)
    if (e.kind === "change" && (e.step === "approval" || e.step === "approved") && e.by)
      approvers.set(e.requestId, (approvers.get(e.requestId) ?? new Set()).add(e.by));
  const approvedBy = (requestId: string) => {
    const by = [...(approvers.get(requestId) ?? [])];
    return by.length === 0
      ? null
      : by.map((id) => (id === "system" ? "no approval needed" : name(id))).join(", ");
  };
  const marks: (ChartMitigation & { requestId: string })[] = timeline.entries.flatMap((e) =>
    e.kind === "change" && e.step === "applied"
      ? [{ requestId: e.requestId, at: e.at, what: e.change, approvedBy: approvedBy(e.requestId) }]
      : [],
  );
  const marked = new Set(marks.map((m) => m.requestId));
  for (const m of timeline.mitigations)
    if (m.appliedAt !== null && m.asked !== null && !marked.has(m.requestId))
      marks.push({
        requestId: m.requestId,
        at: m.appliedAt,
        what: m.change,
        approvedBy: approvedBy(m.requestId),
      });
  return marks.sort((a, b) => a.at - b.at).map(({ requestId: _, ...m }) => m);
}
