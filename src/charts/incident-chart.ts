import type { TopLevelSpec } from "vega-lite";
import type { IncidentChart } from "../services/incident-chart.js";

/**
 * The incident chart as a Vega-Lite spec (pure: data in, spec out): one line per traffic series in requests per
 * minute, a dashed rule at each of the alert's thresholds (in its series' colour when it has one), and a vertical
 * rule where each mitigation took effect, labelled with what it did and who approved it. `render.ts` draws it.
 */

export const CHART_WIDTH = 720;
export const CHART_HEIGHT = 260;
/** The font the renderer ships (src/charts/render.ts), so no system font is needed. */
export const CHART_FONT = "DejaVu Sans";

const MITIGATION_COLOR = "#6a1b9a";
const THRESHOLD_COLOR = "#c62828";

export interface ChartDatum {
  at: number;
  series: string;
  perMinute: number;
}

/** The rows the lines are drawn from (what a test compares with the card's numbers). */
export function chartData(chart: IncidentChart): ChartDatum[] {
  return chart.points.map((p) => ({ at: p.at, series: p.label, perMinute: p.perMinute }));
}

function mitigationLabel(m: IncidentChart["mitigations"][number]): string {
  const what = m.what.length > 40 ? `${m.what.slice(0, 39)}…` : m.what;
  return m.approvedBy ? `${what} (approved by ${m.approvedBy})` : what;
}

export function incidentChartSpec(chart: IncidentChart): TopLevelSpec {
  const x = {
    field: "at",
    type: "temporal" as const,
    scale: { type: "utc" as const, domain: [chart.range.metricsFrom, chart.range.to] },
    axis: { title: "UTC", format: "%H:%M", labelOverlap: true },
  };
  const layers: NonNullable<Extract<TopLevelSpec, { layer: unknown }>["layer"]> = [
    {
      data: { values: chartData(chart) },
      mark: { type: "line", point: chart.points.length <= 200, strokeWidth: 2 },
      encoding: {
        x,
        y: { field: "perMinute", type: "quantitative", axis: { title: "requests per minute" } },
        color: { field: "series", type: "nominal", legend: { title: null, orient: "top" } },
      },
    },
  ];
  if (chart.thresholds.length > 0) {
    // A threshold of one series is drawn in that series' colour (the lines' scale); one for the whole chart in red.
    const values = chart.thresholds.map((t) => ({
      perMinute: t.perMinute,
      label: t.label,
      ...(t.series ? { series: t.series } : {}),
    }));
    const color = chart.thresholds.every((t) => t.series)
      ? { color: { field: "series", type: "nominal" as const } }
      : {};
    layers.push({
      data: { values },
      mark: { type: "rule", color: THRESHOLD_COLOR, strokeDash: [6, 4], strokeWidth: 1.5 },
      encoding: { y: { field: "perMinute", type: "quantitative" }, ...color },
    });
    layers.push({
      data: { values },
      mark: { type: "text", color: THRESHOLD_COLOR, align: "left", dx: 4, dy: -6, baseline: "bottom" },
      encoding: {
        y: { field: "perMinute", type: "quantitative" },
        x: { value: 0 },
        text: { field: "label" },
        ...color,
      },
    });
  }
  if (chart.mitigations.length > 0) {
    const marks = chart.mitigations.map((m) => ({ at: m.at, label: mitigationLabel(m) }));
    layers.push({
      data: { values: marks },
      mark: { type: "rule", color: MITIGATION_COLOR, strokeWidth: 2 },
      encoding: { x },
    });
    layers.push({
      data: { values: marks },
      mark: { type: "text", color: MITIGATION_COLOR, align: "left", angle: 0, dx: 4, baseline: "top" },
      encoding: { x, y: { value: 4 }, text: { field: "label" } },
    });
  }
  return {
    $schema: "https://vega.github.io/schema/vega-lite/v6.json",
    width: CHART_WIDTH,
    height: CHART_HEIGHT,
    background: "white",
    padding: 12,
    title: {
      text: `Shield zone ${chart.zoneId}: threats per minute, last ${chart.range.words}`,
      anchor: "start",
    },
    config: { font: CHART_FONT, view: { stroke: null } },
    layer: layers,
  } as TopLevelSpec;
}
