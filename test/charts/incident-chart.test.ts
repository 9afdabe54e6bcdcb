import { PNG } from "pngjs";
import { describe, expect, it } from "vitest";
import { chartData, incidentChartSpec } from "../../src/charts/incident-chart.js";
import { renderPng, specToSvg } from "../../src/charts/render.js";
import {
  type IncidentPicture,
  incidentRange,
  TRAFFIC_METRIC_LABELS,
  TRAFFIC_METRICS,
  type TrafficRow,
} from "../../src/services/incident.js";
import { chartAltText, incidentChart } from "../../src/services/incident-chart.js";
import { incidentCard } from "../../src/slack/blocks/incident.js";
import { newRequestId } from "../../src/slack/request-ids.js";
import { blocksText } from "../support/harness.js";

const NOW = Date.UTC(2024, 4, 10, 12, 15, 37);
const range = incidentRange("1h", NOW);

/** An attack ramping up on WAF and rate limits; the other series quiet. */
function traffic(): TrafficRow[] {
  return TRAFFIC_METRICS.map((metric, m) => {
    const series = Array.from({ length: range.buckets }, (_, i) =>
      metric === "waf" ? i * 600 : metric === "rateLimit" ? (i > 20 ? 4000 : 0) : m,
    );
    const count = series.reduce((a, b) => a + b, 0);
    return { metric, count, previous: null, change: { kind: "unknown" }, series };
  });
}

function picture(rows: TrafficRow[] = traffic()): Pick<IncidentPicture, "zoneId" | "range" | "traffic"> {
  return {
    zoneId: 18401,
    range,
    traffic: { ok: { rows, previousError: null, requests: { error: "not read" } } },
  };
}

const fullPicture = (p = picture()): IncidentPicture => ({
  ...p,
  zone: { error: "zone not read" },
  offenders: { error: "not read" },
  waf: { error: "not read" },
  rateLimits: { error: "not read" },
  apps: { error: "not read" },
  mitigated: new Map(),
  pendingAccess: new Map(),
});

const mitigation = {
  at: range.metricsFrom + 21 * range.bucketMs,
  what: "block IP 203.0.113.7",
  approvedBy: "ana",
};

/** Pixels that are not the white background. */
function inkedPixels(png: PNG): number {
  let inked = 0;
  for (let i = 0; i < png.data.length; i += 4) {
    const [r, g, b] = [png.data[i]!, png.data[i + 1]!, png.data[i + 2]!];
    if (r < 245 || g < 245 || b < 245) inked++;
  }
  return inked;
}

describe("the incident chart's data", () => {
  it("holds the card's series: each bucket's count, as the card's sparkline and total have it, per minute", () => {
    const p = picture();
    const chart = incidentChart(p)!;
    const minutes = range.bucketMs / 60_000;
    const data = chartData(chart);
    // The card's traffic rows, as incidentCard draws them.
    const cardText = blocksText(incidentCard(fullPicture(p), { isPublic: false, newRequestId }).blocks);
    for (const row of "ok" in p.traffic ? p.traffic.ok.rows : []) {
      const label = TRAFFIC_METRIC_LABELS[row.metric];
      const mine = data.filter((d) => d.series === label).sort((a, b) => a.at - b.at);
      expect(mine.map((d) => d.perMinute * minutes)).toEqual(row.series);
      expect(mine.map((d) => d.at)).toEqual(row.series.map((_, i) => range.metricsFrom + i * range.bucketMs));
      const total = mine.reduce((n, d) => n + d.perMinute * minutes, 0);
      expect(cardText).toContain(`${label.padEnd(14)}${total.toLocaleString("en-US").padStart(12)}`);
    }
  });

  it("is nothing to draw when the traffic failed or every series is zero", () => {
    const zero = traffic().map((r) => ({ ...r, count: 0, series: r.series.map(() => 0) }));
    expect(incidentChart(picture(zero))).toBeNull();
    expect(
      incidentChart({ ...picture(), traffic: { error: "The Edge API did not answer in time." } }),
    ).toBeNull();
  });

  it("keeps only the mitigations inside its time span, oldest first", () => {
    const before = { at: range.metricsFrom - 1, what: "older", approvedBy: null };
    const later = { ...mitigation, at: mitigation.at + range.bucketMs, what: "later" };
    const chart = incidentChart(picture(), { mitigations: [later, before, mitigation] })!;
    expect(chart.mitigations.map((m) => m.what)).toEqual([mitigation.what, "later"]);
  });

  it("says in words what it shows: the peak, the threshold and when each mitigation took effect", () => {
    const chart = incidentChart(picture(), {
      thresholds: [{ perMinute: 1000, label: "alert at 1,000/min" }],
      mitigations: [mitigation],
    })!;
    const peakBucket = range.buckets - 1;
    const peakAt = new Date(range.metricsFrom + peakBucket * range.bucketMs).toISOString().slice(11, 16);
    // WAF peaks in the last bucket: (buckets - 1) × 600 in 2 minutes, plus rate limits' 4,000.
    const wafPeak = Math.round((peakBucket * 600) / 2);
    const alt = chartAltText(chart);
    expect(alt).toContain(`shield zone 18401 over the last hour`);
    expect(alt).toContain(
      `Peak: ${wafPeak.toLocaleString("en-US")} per minute (WAF) in the slot from ${peakAt} UTC`,
    );
    expect(alt).toContain("Alert threshold: 1,000 per minute");
    const at = new Date(mitigation.at).toISOString().slice(11, 16);
    expect(alt).toContain(`block IP 203.0.113.7 at ${at} UTC (approved by ana)`);
    expect(chartAltText(incidentChart(picture())!)).toContain("No mitigation took effect in this window.");
  });
});

describe("the incident chart, drawn", () => {
  it("is a Vega-Lite spec with a line per series, the threshold rule and a labelled mark per mitigation", () => {
    const spec = incidentChartSpec(
      incidentChart(picture(), {
        thresholds: [{ perMinute: 1000, label: "threshold" }],
        mitigations: [mitigation],
      })!,
    ) as { layer: { mark: { type: string }; data: { values: Record<string, unknown>[] } }[] };
    expect(spec.layer.map((l) => l.mark.type)).toEqual(["line", "rule", "text", "rule", "text"]);
    expect(new Set(spec.layer[0]!.data.values.map((v) => v.series))).toEqual(
      new Set(Object.values(TRAFFIC_METRIC_LABELS)),
    );
    expect(spec.layer[4]!.data.values).toEqual([
      { at: mitigation.at, label: "block IP 203.0.113.7 (approved by ana)" },
    ]);
  });

  it("draws a threshold of one series in that series' colour, labelled, and says each in the alt text", async () => {
    const chart = incidentChart(picture(), {
      thresholds: [
        { perMinute: 700, label: "WAF alert level", series: "WAF" },
        { perMinute: 2500, label: "Rate limits alert level", series: "Rate limits" },
      ],
      thresholdRule: "An alert level is what a count must reach.",
    })!;
    const spec = incidentChartSpec(chart) as {
      layer: { mark: { type: string }; encoding: { color?: { field: string } } }[];
    };
    expect(spec.layer.map((l) => l.mark.type)).toEqual(["line", "rule", "text"]);
    expect(spec.layer[1]!.encoding.color).toEqual({ field: "series", type: "nominal" });
    const svg = await specToSvg(spec as Parameters<typeof specToSvg>[0]);
    expect(svg).toContain("WAF alert level");
    expect(svg).toContain("Rate limits alert level");
    expect(chartAltText(chart)).toContain(
      "Alert threshold: 700 per minute (WAF alert level); 2,500 per minute (Rate limits alert level). An alert level is what a count must reach.",
    );
  });

  it("renders to an SVG whose text is in the shipped font, with the mitigation's label in it", async () => {
    const svg = await specToSvg(incidentChartSpec(incidentChart(picture(), { mitigations: [mitigation] })!));
    expect(svg).toContain("DejaVu Sans");
    expect(svg).toContain("block IP 203.0.113.7 (approved by ana)");
  });

  it("renders to a PNG of the chart's size at twice the scale, not blank", async () => {
    const bytes = await renderPng(
      incidentChartSpec(incidentChart(picture(), { mitigations: [mitigation] })!),
    );
    const png = PNG.sync.read(bytes);
    expect(png.width).toBeGreaterThan(720 * 2);
    expect(png.height).toBeGreaterThan(260 * 2);
    const share = inkedPixels(png) / (png.width * png.height);
    expect(share).toBeGreaterThan(0.01);
    expect(share).toBeLessThan(0.6);
  }, 20_000);
});
