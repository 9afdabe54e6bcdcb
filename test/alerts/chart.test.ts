/**
 * A zone alert's chart as data: the watch's recent samples per minute by feature, each feature's alert level from
 * the detector's baseline at the watch's sensitivity, and the mitigations, in the incident chart's shape.
 */
import { describe, expect, it } from "vitest";
import { alertChart, alertChartInput } from "../../src/alerts/chart.js";
import { alertLevel, type ZoneSample } from "../../src/alerts/detect.js";
import { BUCKET_MS, RECENT_MS, type ZoneState } from "../../src/alerts/evaluate.js";
import { chartData } from "../../src/charts/incident-chart.js";
import { chartAltText } from "../../src/services/incident-chart.js";

const T = Date.UTC(2026, 7, 20, 10, 0, 0);
const sample = (at: number, counts: Partial<ZoneSample["counts"]> = {}): ZoneSample => ({
  at,
  counts: { ddos: 0, waf: 0, rateLimit: 0, bot: 0, ...counts },
});

/** A baseline of quiet buckets, then an attack on DDoS in the last five; WAF steady; rate limits and bots silent. */
function state(): ZoneState {
  const buckets = Array.from({ length: 30 }, (_, i) => T + i * BUCKET_MS);
  const recent = buckets.map((at, i) => sample(at, { ddos: i >= 25 ? 1600 + i : 3, waf: 10 + (i % 3) }));
  return { samples: recent.slice(0, 25), lastBucketAt: buckets.at(-1)!, episode: { calmSamples: 0 }, recent };
}

describe("the alert's chart", () => {
  it("draws the recent samples per minute by feature, in the hour up to the last evaluated bucket", () => {
    const s = state();
    const chart = alertChart(18401, s, "normal")!;
    expect(chart.range.metricsTo).toBe(s.lastBucketAt! + BUCKET_MS);
    expect(chart.range.metricsFrom).toBe(chart.range.metricsTo - RECENT_MS);
    const data = chartData(chart);
    for (const r of s.recent!) {
      expect(data).toContainEqual({ at: r.at, series: "DDoS", perMinute: r.counts.ddos / 2 });
      expect(data).toContainEqual({ at: r.at, series: "WAF", perMinute: r.counts.waf / 2 });
    }
    expect(new Set(data.map((d) => d.series))).toEqual(
      new Set(["DDoS", "WAF", "Rate limits", "Bot detection"]),
    );
  });

  it("draws each feature's alert level at the watch's sensitivity, the detector's, per minute; none for a silent feature", () => {
    const s = state();
    for (const sensitivity of ["low", "normal", "high"] as const) {
      const chart = alertChart(18401, s, sensitivity)!;
      expect(chart.thresholds).toEqual([
        {
          perMinute: alertLevel(s.samples, "ddos", sensitivity)! / 2,
          label: "DDoS alert level",
          series: "DDoS",
        },
        {
          perMinute: alertLevel(s.samples, "waf", sensitivity)! / 2,
          label: "WAF alert level",
          series: "WAF",
        },
      ]);
      expect(chart.thresholdRule).toContain(`sensitivity ${sensitivity}`);
    }
    const alt = chartAltText(alertChart(18401, s, "normal")!);
    expect(alt).toMatch(
      /Alert threshold: [\d,.]+ per minute \(DDoS alert level\); [\d,.]+ per minute \(WAF alert level\)\./,
    );
    expect(alt).toContain("4 standard deviations over its usual level");
  });

  it("runs its time axis on to a mitigation made since the last bucket, which it marks", () => {
    const s = state();
    const at = s.lastBucketAt! + BUCKET_MS + 30_000;
    const chart = alertChart(18401, s, "normal", [{ at, what: "block IP 203.0.113.7", approvedBy: "ana" }])!;
    expect(chart.range.to).toBe(at);
    expect(chart.mitigations.map((m) => m.at)).toEqual([at]);
  });

  it("has nothing to draw when every feature was at zero over the hour", () => {
    const quiet = state();
    quiet.recent = quiet.recent!.map((r) => sample(r.at));
    expect(alertChartInput(18401, quiet, "normal")?.extra.thresholds).toEqual([]);
    expect(alertChart(18401, quiet, "normal")).toBeNull();
  });

  it("has nothing to draw before the watch kept any sample", () => {
    expect(alertChartInput(18401, null, "normal")).toBeNull();
    expect(alertChartInput(18401, { samples: [], lastBucketAt: T, episode: null }, "normal")).toBeNull();
  });
});
