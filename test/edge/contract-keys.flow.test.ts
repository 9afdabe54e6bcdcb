import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { describeEdgeError } from "../../src/edge/errors.js";
import { parseDateKey } from "../../src/edge/schemas/date-key.js";
import { createLogger } from "../../src/log.js";
import {
  DATE_KEY_FORMATS,
  exactPath,
  SIM_API_KEY,
  SIM_IDS,
  startSimulator,
} from "../../tools/simulator/index.js";
import { steppedClock } from "../support/clock.js";
import { testEdgeApi } from "../support/edge-api.js";
import { rejection, useSimulatorClient } from "../support/sim-client.js";

const s = useSimulatorClient();

const counters = (n: number) => ({
  totalBreaches: n,
  loggedBreaches: n,
  challengedBreaches: 0,
  blockedBreaches: 0,
});

/** The next rate-limit metrics answer for the first rate limit: six breaches over the `days` given. */
const rateLimitDaysAnswer = (days: Record<string, ReturnType<typeof counters>>) =>
  s.sim.addFault({
    path: exactPath(`/shield/metrics/rate-limit/${SIM_IDS.rateLimitIds[0]}`),
    status: 200,
    body: { data: { overview: counters(6), ratelimitOverviewPastTwentyEightDays: days }, error: null },
  });

/** The client's read of a quiet zone's detailed metrics when the Edge API answers with `data`. */
async function detailedMetricsOf(data: Record<string, unknown>) {
  s.sim.addFault({
    path: exactPath(`/shield/metrics/overview/${SIM_IDS.zoneQuiet}/detailed`),
    status: 200,
    body: { data, error: null },
  });
  return s.client.getMetricsOverviewDetailed(SIM_IDS.zoneQuiet, { from: 0, to: 1 });
}

describe("ids beyond int32", () => {
  it("a shield zone or rate-limit id over 2^31-1 is refused with a sentence before any request", async () => {
    const big = 2_147_483_648;
    const calls = [
      s.client.getShieldZone(big),
      s.client.getBotDetection(big),
      s.client.getBotCategories(big),
      s.client.getRateLimits(big),
      s.client.getMetricsOverview(big),
      s.client.getMetricsOverviewDetailed(big, { from: 0, to: 1 }),
      s.client.searchEventLogs(big, { from: 0, to: 1 }),
      s.client.listCustomAccessLists(big),
      s.client.getRateLimitMetrics(big),
    ];
    for (const call of calls) {
      const e = await rejection(call);
      expect(e.kind).toBe("invalid_argument");
      expect(describeEdgeError(e)).toMatch(
        /must be a whole number from 1 to 2147483647 \(got 2147483648\)\.$/,
      );
    }
    expect(s.sim.requests).toEqual([]);
    // The WAF review paths are int64 in the document: such an id is sent.
    await s.client.getTriggeredWafRules(big).catch(() => undefined);
    expect(s.sim.requests.map((r) => r.path)).toEqual([`/shield/waf/rules/review-triggered/${big}`]);
  });
});

describe("page numbers beyond int32", () => {
  it("a page number the documents type int32 is refused with a sentence before any request", async () => {
    const big = 2_147_483_648;
    const window = { from: s.sim.now() - 60_000, to: s.sim.now() };
    const calls: Record<string, () => Promise<unknown>> = {
      listShieldZones: () => s.client.listShieldZones({ page: big }),
      listPullZones: () => s.client.listPullZones({ page: big }),
      listDnsZones: () => s.client.listDnsZones({ page: big }),
      listRateLimitRules: () => s.client.listRateLimitRules(SIM_IDS.zoneQuiet, { page: big }),
      searchEventLogs: () => s.client.searchEventLogs(SIM_IDS.zoneQuiet, { ...window, page: big }),
    };
    const seen: Record<string, string> = {};
    for (const [name, call] of Object.entries(calls)) {
      const e = await call().then(
        () => undefined,
        (err: unknown) => err,
      );
      seen[name] = `${(e as { kind?: string } | undefined)?.kind ?? "answered"}: ${describeEdgeError(e)}`;
    }
    expect(seen).toEqual({
      listShieldZones:
        "invalid_argument: The page number must be a whole number from 1 to 2147483647 (got 2147483648).",
      listPullZones:
        "invalid_argument: The page number must be a whole number from 1 to 2147483647 (got 2147483648).",
      listDnsZones:
        "invalid_argument: The page number must be a whole number from 1 to 2147483647 (got 2147483648).",
      listRateLimitRules:
        "invalid_argument: The page number must be a whole number from 1 to 2147483647 (got 2147483648).",
      searchEventLogs:
        "invalid_argument: The page index must be a whole number from 0 to 2147483647 (got 2147483648).",
    });
    expect(s.sim.requests).toEqual([]);
  });
});

describe("date keys", () => {
  it("reads every form the platform writes, and nothing else", () => {
    const aug9 = Date.UTC(2026, 7, 9);
    for (const key of [
      "2026-08-09",
      "2026-08-09T00:00:00",
      "2026-08-09T00:00:00Z",
      "2026-08-09T02:00:00+02:00",
      "2026-08-09 00:00:00.000",
      "8/9/2026",
      "8/9/2026 12:00:00 AM",
      "08/09/2026 00:00",
      "9.8.2026",
      "09.08.2026 00:00:00",
      "20260809000000",
      "1786233600",
      "1786233600000",
    ])
      expect([key, parseDateKey(key)]).toEqual([key, aug9]);
    expect(parseDateKey("8/9/2026 1:30:00 PM")).toBe(aug9 + 13.5 * 3_600_000);
    expect(parseDateKey("20260809143000")).toBe(Date.UTC(2026, 7, 9, 14, 30));
    for (const key of [
      "2/30/2026",
      "30.2.2026",
      "Aug 9 2026",
      "2026-13-01",
      "20261309000000",
      "13/13/2026 25:00",
    ])
      expect([key, parseDateKey(key)]).toEqual([key, null]);
  });

  it("rate-limit days are sorted by date, not as text", async () => {
    rateLimitDaysAnswer({ "8/9/2026": counters(1), "8/10/2026": counters(2), "7/28/2026": counters(3) });
    const m = await s.client.getRateLimitMetrics(SIM_IDS.rateLimitIds[0]);
    expect(m.days.map((d) => d.day)).toEqual(["2026-07-28", "2026-08-09", "2026-08-10"]);
    expect(m.days.map((d) => d.totalBreaches)).toEqual([3, 1, 2]);
    expect(m.unreadableDays).toEqual([]);
  });

  it("a map whose keys prove day-first (a first number over 12) is read day-first, all of it", async () => {
    rateLimitDaysAnswer({ "09/08/2026": counters(1), "13/08/2026": counters(2), "31/07/2026": counters(3) });
    const m = await s.client.getRateLimitMetrics(SIM_IDS.rateLimitIds[0]);
    expect(m.days.map((d) => d.day)).toEqual(["2026-07-31", "2026-08-09", "2026-08-13"]);
    expect(m.unreadableDays).toEqual([]);
  });

  it("a map whose keys prove month-first (a second number over 12) is read month-first", async () => {
    rateLimitDaysAnswer({ "8/9/2026": counters(1), "8/13/2026": counters(2) });
    const m = await s.client.getRateLimitMetrics(SIM_IDS.rateLimitIds[0]);
    expect(m.days.map((d) => d.day)).toEqual(["2026-08-09", "2026-08-13"]);
  });

  it("a map no key decides is not guessed: its days are unknown, named", async () => {
    rateLimitDaysAnswer({ "09/08/2026": counters(1), "10/08/2026": counters(2), "04/04/2026": counters(3) });
    const m = await s.client.getRateLimitMetrics(SIM_IDS.rateLimitIds[0]);
    expect(m.unreadableDays).toEqual(["09/08/2026", "10/08/2026"]);
    // 04/04/2026 is the same day either way round.
    expect(m.days.map((d) => [d.day, d.at])).toEqual([
      ["2026-04-04", Date.UTC(2026, 3, 4)],
      ["09/08/2026", null],
      ["10/08/2026", null],
    ]);
    // Where both readings name the same day, nothing is in doubt.
    s.sim.clearFaults();
    rateLimitDaysAnswer({ "01/01/2026": counters(1), "02/02/2026": counters(2) });
    const same = await s.client.getRateLimitMetrics(SIM_IDS.rateLimitIds[0]);
    expect(same.days.map((d) => d.day)).toEqual(["2026-01-01", "2026-02-02"]);
  });

  it("series keys no key decides day-first or month-first are not guessed", async () => {
    const d = await detailedMetricsOf({
      waf: {
        metrics: {
          "09/08/2026 10:00:00": { blockedRequests: 4 },
          "09/08/2026 10:02:00": { blockedRequests: 1 },
        },
      },
      ddos: { metrics: { "13/08/2026 10:00:00": { blockedRequests: 2 } } },
    });
    expect(d.features.waf.points).toEqual([]);
    expect(d.features.waf.unreadableKeys).toEqual(["09/08/2026 10:00:00", "09/08/2026 10:02:00"]);
    expect(d.features.ddos.points).toEqual([
      { at: Date.UTC(2026, 7, 13, 10), values: { blockedRequests: 2 } },
    ]);
  });

  it("an unreadable day key is kept as written, after the dated ones, and logged once", async () => {
    const lines: string[] = [];
    const logger = createLogger({
      level: "warn",
      destination: new Writable({
        write(chunk, _e, done) {
          lines.push(String(chunk));
          done();
        },
      }),
    });
    const api = testEdgeApi(s.sim.url, { concurrency: 4, logger });
    try {
      rateLimitDaysAnswer({ "Week 32": counters(1), "2026-08-10": counters(2), "2026-08-01": counters(3) });
      const client = api.forKey(SIM_API_KEY);
      const m = await client.getRateLimitMetrics(SIM_IDS.rateLimitIds[0]);
      await client.getRateLimitMetrics(SIM_IDS.rateLimitIds[0]);
      expect(m.days.map((d) => d.day)).toEqual(["2026-08-01", "2026-08-10", "Week 32"]);
      expect(m.unreadableDays).toEqual(["Week 32"]);
      const warned = lines.filter((l) => l.includes("date keys edgeops cannot read"));
      expect(warned).toHaveLength(1);
      expect(warned[0]).toContain("Week 32");
    } finally {
      await api.close();
    }
  });

  it("a 14-digit yyyyMMddHHmmss series key is a date, not Unix milliseconds", async () => {
    const d = await detailedMetricsOf({
      waf: { metrics: { "20260809143000": { blockedRequests: 4 } }, totals: { blockedRequests: 4 } },
    });
    expect(d.features.waf.points).toEqual([
      { at: Date.UTC(2026, 7, 9, 14, 30), values: { blockedRequests: 4 } },
    ]);
    expect(d.features.waf.unreadableKeys).toEqual([]);
  });

  it("series keys that are no date are named, not dropped silently", async () => {
    const d = await detailedMetricsOf({
      waf: {
        metrics: { "Aug 9 14:30": { blockedRequests: 4 }, "2026-08-09T14:32:00Z": { blockedRequests: 1 } },
      },
      ddos: { metrics: { blockedRequests: { "Aug 9 14:30": 7 } } },
    });
    expect(d.features.waf.unreadableKeys).toEqual(["Aug 9 14:30"]);
    expect(d.features.waf.points).toHaveLength(1);
    expect(d.features.ddos.unreadableKeys).toEqual(["Aug 9 14:30"]);
  });
});

describe("the simulator's alternative date-key formats", () => {
  for (const format of DATE_KEY_FORMATS.filter((f) => f !== "unknown")) {
    it(`rate-limit and metrics paths read the same under "${format}" keys`, async () => {
      const clock = Date.UTC(2026, 7, 20, 12, 0);
      const iso = await startSimulator({ clock: steppedClock(() => clock) });
      const other = await startSimulator({ clock: steppedClock(() => clock), dateKeyFormat: format });
      const api = (url: string) =>
        testEdgeApi(url, { concurrency: 4, logger: createLogger({ level: "silent" }) });
      const [a, b] = [api(iso.url), api(other.url)];
      try {
        const read = async (c: ReturnType<typeof a.forKey>) => ({
          seeded: await c.getRateLimitMetrics(SIM_IDS.rateLimitIds[0]),
          rule: await c.getRateLimitMetrics(SIM_IDS.rateLimitRulesUnderAttack[0]),
          zone: await c.getRateLimits(SIM_IDS.zoneUnderAttack),
          detailed: await c.getMetricsOverviewDetailed(SIM_IDS.zoneUnderAttack, {
            from: clock - 3_600_000,
            to: clock,
            resolution: 1,
          }),
        });
        const want = await read(a.forKey(SIM_API_KEY));
        const got = await read(b.forKey(SIM_API_KEY));
        // The raw keys differ (that is the point); what edgeops reads from them does not.
        const rawKeys = Object.keys(
          (
            (await fetch(`${other.url}/shield/metrics/rate-limit/${SIM_IDS.rateLimitIds[0]}`, {
              headers: { AccessKey: SIM_API_KEY },
            }).then((r) => r.json())) as { data: { ratelimitOverviewPastTwentyEightDays: object } }
          ).data.ratelimitOverviewPastTwentyEightDays,
        );
        if (format !== "iso") expect(rawKeys).not.toContain("2026-08-20");
        expect(got.seeded.unreadableDays).toEqual([]);
        expect(got.seeded.days).toEqual(want.seeded.days);
        expect(got.rule.days).toEqual(want.rule.days);
        expect(got.zone).toEqual(want.zone);
        expect(got.detailed.features.waf.points.length).toBeGreaterThan(20);
        expect(got.detailed).toEqual(want.detailed);
      } finally {
        await a.close();
        await b.close();
        await iso.close();
        await other.close();
      }
    });
  }

  it('"unknown" keys come out unreadable, named', async () => {
    s.sim.state.dateKeyFormat = "unknown";
    try {
      const m = await s.client.getRateLimitMetrics(SIM_IDS.rateLimitIds[0]);
      expect(m.unreadableDays).toHaveLength(28);
      const d = await s.client.getMetricsOverviewDetailed(SIM_IDS.zoneUnderAttack, {
        from: s.sim.now() - 3_600_000,
        to: s.sim.now(),
      });
      expect(d.features.waf.unreadableKeys.length).toBeGreaterThan(0);
      expect(d.features.waf.points).toEqual([]);
    } finally {
      s.sim.state.dateKeyFormat = "iso";
    }
  });
});
