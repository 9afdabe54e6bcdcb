import { describe, expect, it } from "vitest";
import {
  EVENT_LOG_RETENTION_MS,
  METRICS_RESOLUTION,
  shieldDetailedMetricsSchema,
  zoneRateLimitMetricsSchema,
} from "../../src/edge/schemas/shield.js";
import { UserError } from "../../src/errors.js";
import {
  bucketSeries,
  changeAgainst,
  EVENT_LOG_MARGIN_MS,
  INCIDENT_WINDOWS,
  incidentRange,
  pageOf,
  parseIncidentWindow,
  rateLimitsInWindow,
  resolutionMs,
  toOffender,
  trafficRows,
} from "../../src/services/incident.js";
import { eventLogGroup } from "../support/event-log-group.js";

const MIN = 60_000;
const HOUR = 60 * MIN;
/** 2024-05-10 12:15:37 UTC: not on any bucket boundary. */
const NOW = Date.UTC(2024, 4, 10, 12, 15, 37);

describe("incident windows", () => {
  it("accepts 15m (the default), 1h, 6h, 24h and 72h, in any case", () => {
    expect(parseIncidentWindow(undefined)).toBe("15m");
    for (const w of INCIDENT_WINDOWS) expect(parseIncidentWindow(w.toUpperCase())).toBe(w);
  });

  it("refuses anything else with a sentence listing the windows", () => {
    for (const bad of ["2h", "15", "week", "-1h", "1h30m", "96h"]) {
      let err: unknown;
      try {
        parseIncidentWindow(bad);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(UserError);
      expect((err as UserError).kind).toBe("usage");
      expect((err as Error).message).toContain(`"${bad}" is not a window`);
      expect((err as Error).message).toContain("15m (the default), 1h, 6h, 24h or 72h");
    }
  });

  it("the window ends now; its metrics are whole buckets ending where the slot in progress begins, against as many just before", () => {
    const lengths = { "15m": 15 * MIN, "1h": HOUR, "6h": 6 * HOUR, "24h": 24 * HOUR, "72h": 72 * HOUR };
    for (const w of INCIDENT_WINDOWS) {
      const r = incidentRange(w, NOW);
      expect(r.to).toBe(NOW);
      expect(r.to - r.from).toBe(lengths[w]);
      expect(r.metricsTo).toBe(Math.floor(NOW / r.bucketMs) * r.bucketMs);
      expect(r.metricsTo - r.metricsFrom).toBe(r.buckets * r.bucketMs);
      expect(r.metricsTo - r.metricsFrom).toBeGreaterThanOrEqual(lengths[w]);
      expect(r.metricsTo - r.metricsFrom).toBeLessThan(lengths[w] + r.bucketMs);
      expect(r.previousTo).toBe(r.metricsFrom);
      expect(r.previousTo - r.previousFrom).toBe(r.metricsTo - r.metricsFrom);
    }
  });

  it("chooses a resolution that fits the window, and at most 37 sparkline buckets of whole resolution steps", () => {
    const expected = {
      "15m": METRICS_RESOLUTION.twoMinutes,
      "1h": METRICS_RESOLUTION.twoMinutes,
      "6h": METRICS_RESOLUTION.tenMinutes,
      "24h": METRICS_RESOLUTION.hourly,
      "72h": METRICS_RESOLUTION.hourly,
    };
    for (const w of INCIDENT_WINDOWS) {
      const r = incidentRange(w, NOW);
      expect(r.resolution).toBe(expected[w]);
      const step = resolutionMs(r.resolution)!;
      expect(r.bucketMs % step).toBe(0);
      expect(r.buckets).toBeLessThanOrEqual(37);
      expect(r.buckets).toBeGreaterThanOrEqual(8);
      // The buckets start on the API's own boundaries.
      expect(r.metricsFrom % step).toBe(0);
    }
    expect(incidentRange("15m", NOW).buckets).toBe(8);
    expect(incidentRange("72h", NOW).buckets).toBe(36);
  });

  it("event-log searches cover the metrics' whole slots, inside the log's 72 hours", () => {
    const hour = incidentRange("1h", NOW);
    expect([hour.eventLogFrom, hour.eventLogTo]).toEqual([hour.metricsFrom, hour.metricsTo]);
    const r = incidentRange("72h", NOW);
    expect(r.eventLogFrom).toBe(NOW - EVENT_LOG_RETENTION_MS + EVENT_LOG_MARGIN_MS);
    expect(r.eventLogFrom).toBeGreaterThan(r.from);
  });

  it("buckets a series by time, one point per bucket at the same step, dropping points outside", () => {
    const r = incidentRange("15m", NOW);
    const points = Array.from({ length: 8 }, (_, i) => ({ at: r.metricsFrom + i * 2 * MIN, value: i + 1 }));
    // The slot in progress (it holds NOW) and one before the window are dropped.
    const series = bucketSeries(
      [...points, { at: r.metricsTo, value: 1000 }, { at: r.to - 20 * MIN, value: 1000 }],
      r,
    );
    expect(series).toHaveLength(8);
    expect(series.reduce((a, b) => a + b, 0)).toBe(36);
    expect(Math.max(...series)).toBe(8);
    expect(series[series.length - 1]).toBe(8);
    // 72h: two hourly points per bucket.
    const r72 = incidentRange("72h", NOW);
    const hourly = Array.from({ length: 72 }, (_, i) => ({
      at: r72.metricsFrom + i * HOUR,
      value: 1,
    }));
    const s72 = bucketSeries(hourly, r72);
    expect(s72.reduce((a, b) => a + b, 0)).toBe(72);
    expect(Math.max(...s72)).toBe(2);
  });

  it("the change against the previous window", () => {
    expect(changeAgainst(150, 100)).toEqual({ kind: "up", percent: 50 });
    expect(changeAgainst(25, 100)).toEqual({ kind: "down", percent: 75 });
    expect(changeAgainst(7, 7)).toEqual({ kind: "same" });
    expect(changeAgainst(0, 0)).toEqual({ kind: "same" });
    expect(changeAgainst(12, 0)).toEqual({ kind: "new" });
    expect(changeAgainst(12, null)).toEqual({ kind: "unknown" });
  });

  it("pages a list, a page past the end being the last", () => {
    const items = Array.from({ length: 120 }, (_, i) => i);
    expect(pageOf(items, 1, 50)).toMatchObject({ page: 1, totalPages: 3, total: 120 });
    expect(pageOf(items, 3, 50).items).toEqual(items.slice(100));
    expect(pageOf(items, 9, 50).page).toBe(3);
    expect(pageOf([], 1, 50)).toMatchObject({ page: 1, totalPages: 1, total: 0, items: [] });
  });
});

describe("traffic rows from the detailed metrics", () => {
  const r = incidentRange("15m", NOW);
  const at = (i: number) => new Date(r.metricsFrom + i * 2 * MIN).toISOString();

  it("reads a time-keyed or a counter-keyed series alike; DDoS verified requests are not an action", () => {
    const timeKeyed = shieldDetailedMetricsSchema.parse({
      waf: {
        metrics: { [at(0)]: { blockedRequests: 5, loggedRequests: 1 }, [at(7)]: { blockedRequests: 50 } },
        totals: { blockedRequests: 55, loggedRequests: 1 },
      },
      ddos: {
        metrics: { [at(7)]: { blockedRequests: 900, challengedRequests: 100, verifiedRequests: 8 } },
        totals: { blockedRequests: 900, challengedRequests: 100, verifiedRequests: 8 },
      },
      botDetection: { metrics: { challengedRequests: { [at(3)]: 40 } }, totals: null },
      unknownFeature: { metrics: {}, totals: {} },
    });
    const previous = shieldDetailedMetricsSchema.parse({
      waf: { totals: { blockedRequests: 11 } },
      ddos: { totals: { blockedRequests: 0 } },
    });
    const rows = Object.fromEntries(trafficRows(timeKeyed, previous, r).map((x) => [x.metric, x]));
    expect(rows.waf?.count).toBe(56);
    expect(rows.waf?.series[0]).toBe(6);
    expect(rows.waf?.series[7]).toBe(50);
    expect(rows.waf?.change).toEqual({ kind: "up", percent: 409 });
    expect(rows.ddos?.count).toBe(1000);
    expect(rows.ddos?.change).toEqual({ kind: "new" });
    expect(rows.botDetection?.count).toBe(40);
    expect(rows.botDetection?.series[3]).toBe(40);
    expect(rows.blocked?.count).toBe(955);
    expect(rows.challenged?.count).toBe(140);
    expect(rows.rateLimit?.count).toBe(0);
    expect(rows.blocked?.previous).toBe(11);
  });

  it("without the previous window every change is unknown", () => {
    const d = shieldDetailedMetricsSchema.parse({ waf: { totals: { blockedRequests: 3 } } });
    for (const row of trafficRows(d, null, r)) expect(row.change).toEqual({ kind: "unknown" });
  });
});

describe("rate limits and offenders", () => {
  it("sums the breaches of the days the window touches, busiest first, leaving out rules without any", () => {
    const day = (d: number, total: number) => [
      `2024-05-${String(d).padStart(2, "0")}`,
      { totalBreaches: total, blockedBreaches: total, challengedBreaches: 0, loggedBreaches: 0 },
    ];
    const metrics = [
      { ratelimitId: 1, ratelimitOverviewPastTwentyEightDays: Object.fromEntries([day(9, 100), day(10, 7)]) },
      { ratelimitId: 2, ratelimitOverviewPastTwentyEightDays: Object.fromEntries([day(10, 40)]) },
      { ratelimitId: 3, ratelimitOverviewPastTwentyEightDays: Object.fromEntries([day(9, 500)]) },
      {
        ratelimitId: 4,
        overview: { totalBreaches: 3, blockedBreaches: 0, challengedBreaches: 3, loggedBreaches: 0 },
        ratelimitOverviewPastTwentyEightDays: { "not a day": { totalBreaches: 1 } },
      },
    ].map((m) => zoneRateLimitMetricsSchema.parse(m));
    const oneHour = rateLimitsInWindow(metrics, incidentRange("1h", NOW));
    expect(oneHour.map((x) => [x.rateLimitId, x.breaches.total, x.basis])).toEqual([
      [2, 40, "days"],
      [1, 7, "days"],
      [4, 3, "overview"],
    ]);
    const threeDays = rateLimitsInWindow(metrics, incidentRange("72h", NOW));
    expect(threeDays.map((x) => x.rateLimitId)).toEqual([3, 1, 2, 4]);
    expect(threeDays[1]?.breaches.total).toBe(107);
  });

  it("an offender's action is the one taken most often", () => {
    const o = toOffender(
      eventLogGroup({ ip: "203.0.113.9" }, 10, {
        actions: { blocked: 2, challenged: 7, logged: 1 },
        country: "DE",
        asn: "AS64500",
      }),
      "ip",
    );
    expect(o).toMatchObject({ value: "203.0.113.9", count: 10, action: "challenged", country: "DE" });
    expect(toOffender(eventLogGroup({}, 1), "ja4").action).toBeNull();
  });
});
