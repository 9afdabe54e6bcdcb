/**
 * The simulator's fault plan through HTTP with a controlled clock: a staged attack shows in the detailed metrics,
 * the overview, the event log and the triggered WAF rules alike, only from its start and only in whole minutes;
 * calm cuts it off without rewriting the past; app status timelines drive GET /mc/apps.
 */
import { describe, expect, it } from "vitest";
import { SIM_API_KEY, SIM_IDS, SimulatorPlanError } from "../../../tools/simulator/index.js";
import { MAX_ZONE_ATTACK_EVENTS } from "../../../tools/simulator/plan.js";
import { SIM_HEADERS, simJson, useClockedSimulator } from "./clocked-simulator.js";

const MIN = 60_000;
const NOW = Date.UTC(2026, 7, 20, 10, 0, 30);
/** A quiet zone with every feature on (WAF blocking, DDoS, two rate limits, bot detection, event logs). */
const zone = SIM_IDS.zoneEnterprise;

const s = useClockedSimulator(NOW);
const headers = SIM_HEADERS;
const getJson = <T>(path: string) => simJson<T>(s.sim, path);

type Totals = Record<string, Record<string, number>>;
/** Totals per feature of the detailed metrics over [from, to) at two-minute resolution. */
async function detailedTotals(from: number, to: number, id = zone): Promise<Totals> {
  const q = `StartDate=${new Date(from).toISOString()}&EndDate=${new Date(to).toISOString()}&Resolution=1`;
  const r = await getJson<{ data: Record<string, { totals: Record<string, number> }> }>(
    `/shield/metrics/overview/${id}/detailed?${q}`,
  );
  const out: Totals = {};
  for (const f of ["waf", "ddos", "rateLimit", "botDetection", "accessLists"])
    out[f] = r.data[f]?.totals ?? {};
  return out;
}
const acted = (t: Record<string, number> | undefined) =>
  Object.entries(t ?? {})
    .filter(([k]) => /block|challeng|logged/i.test(k))
    .reduce((n, [, v]) => n + v, 0);
const threats = (t: Totals) =>
  acted(t.waf) + acted(t.ddos) + acted(t.rateLimit) + acted(t.botDetection) + acted(t.accessLists);

async function eventsByFeature(from: number, to: number): Promise<Record<string, number>> {
  const res = await fetch(`${s.sim.url}/shield/event-logs/${zone}/search`, {
    method: "POST",
    headers,
    body: JSON.stringify({ from, to, groupBy: ["feature"], pageSize: 100 }),
  });
  expect(res.status).toBe(200);
  const body = (await res.json()) as { groups: Array<{ key: { feature: string }; count: number }> | null };
  return Object.fromEntries((body.groups ?? []).map((g) => [g.key.feature, g.count]));
}

async function appStatus(appId: string): Promise<string | undefined> {
  const r = await getJson<{ items: Array<{ id: string; status: string }> }>("/mc/apps?limit=1000");
  return r.items.find((a) => a.id === appId)?.status;
}

/** 10:06:00: two-minute buckets start at even minutes, so windows from here hold whole buckets. */
const startMinute = NOW - 30_000 + 6 * MIN;

describe("a staged attack", () => {
  it("appears in the metrics only from its start, only for whole minutes, and ramps to its peak", async () => {
    const before = await detailedTotals(NOW - 60 * MIN, NOW);
    s.sim.stageAttack(zone, {
      startsAt: startMinute,
      rampMinutes: 2,
      durationMinutes: 20,
      peakPerMinute: 600,
    });
    // Staging changes nothing before it starts, and nothing is visible before its first whole minute ends.
    expect(await detailedTotals(NOW - 60 * MIN, NOW)).toEqual(before);
    s.now = startMinute + 30_000;
    expect(threats(await detailedTotals(startMinute, s.now))).toBe(0);

    s.now = startMinute + 10 * MIN + 30_000; // 10:16:30; whole minutes 10:06 … 10:15
    const quietHour = threats(await detailedTotals(startMinute - 60 * MIN, startMinute));
    const attacked = threats(await detailedTotals(startMinute, startMinute + 10 * MIN));
    expect(quietHour).toBeLessThan(200);
    // First minute at half strength (ramp), then nine at 600 ± 20 %.
    expect(attacked).toBeGreaterThan(0.8 * 600 * 9.5);
    expect(attacked).toBeLessThan(1.2 * 600 * 9.5 + 50);
    const first = threats(await detailedTotals(startMinute, startMinute + 2 * MIN));
    const later = threats(await detailedTotals(startMinute + 6 * MIN, startMinute + 8 * MIN));
    expect(later).toBeGreaterThan(first);
  });

  it("tells the same story in the detailed metrics, the overview, the event log and the triggered rules", async () => {
    const overviewDdos = async () => {
      const r = await getJson<{
        data: { overviewPastTwentyEightDays: Record<string, { dDoSMitigated: number }> };
      }>(`/shield/metrics/overview/${zone}`);
      return r.data.overviewPastTwentyEightDays["2026-08-20"]?.dDoSMitigated ?? 0;
    };
    const triggered = async () => {
      const r = await getJson<{ triggeredRules: Array<{ ruleId: string; totalTriggeredRequests: number }> }>(
        `/shield/waf/rules/review-triggered/${zone}`,
      );
      return r.triggeredRules;
    };
    s.sim.stageAttack(zone, {
      startsAt: startMinute,
      rampMinutes: 1,
      durationMinutes: 30,
      peakPerMinute: 1_000,
    });
    s.now = startMinute + 12 * MIN + 30_000;
    const ddosTodayDuring = await overviewDdos();
    const from = startMinute;
    const to = startMinute + 12 * MIN;
    const totals = await detailedTotals(from, to);
    const events = await eventsByFeature(from, to);
    expect(acted(totals.ddos)).toBeGreaterThan(3_000);
    expect(events.ddos).toBe(acted(totals.ddos));
    expect(events.waf).toBe(acted(totals.waf));
    expect(events.rateLimit ?? 0).toBe(acted(totals.rateLimit));
    expect(events.botDetection).toBe(acted(totals.botDetection));

    // The overview's day holds the attack's DDoS events (blocked + challenged) on top of the quiet morning.
    const quietMorning = await detailedTotals(Date.UTC(2026, 7, 20), from);
    const ddosMitigated = (t: Totals) => (t.ddos?.blockedRequests ?? 0) + (t.ddos?.challengedRequests ?? 0);
    expect(ddosTodayDuring).toBe(ddosMitigated(quietMorning) + ddosMitigated(totals));

    // The attack's signature WAF rules lead the triggered rules.
    const rules = await triggered();
    expect(rules[0]?.ruleId).toBe(SIM_IDS.waf.ruleId);
    expect(rules[0]?.totalTriggeredRequests).toBeGreaterThan(100);
  });

  it("adds to the zone's other attacks: the seeded attack stays", async () => {
    const attacked = SIM_IDS.zoneUnderAttack;
    s.now = NOW + 20 * MIN;
    const alone = threats(await detailedTotals(NOW + 10 * MIN, NOW + 20 * MIN, attacked));
    s.sim.stageAttack(attacked, {
      startsAt: NOW + 10 * MIN,
      rampMinutes: 0,
      durationMinutes: 60,
      peakPerMinute: 6_000,
    });
    const both = threats(await detailedTotals(NOW + 10 * MIN, NOW + 20 * MIN, attacked));
    expect(both).toBeGreaterThan(1.6 * alone);
  });

  it("calm cuts every attack off at the clock, keeps the past, and drops attacks to come", async () => {
    s.sim.stageAttack(zone, {
      startsAt: startMinute,
      rampMinutes: 2,
      durationMinutes: 60,
      peakPerMinute: 800,
    });
    s.sim.stageAttack(SIM_IDS.zoneQuiet, {
      startsAt: startMinute + 30 * MIN,
      durationMinutes: 10,
      peakPerMinute: 800,
    });
    s.now = startMinute + 10 * MIN + 20_000;
    const past = await detailedTotals(startMinute, startMinute + 10 * MIN);
    const result = s.sim.calm();
    // Two attacks were running (the seeded one and ours); the quiet zone's had not begun.
    expect(result).toEqual({
      attacksEnded: [zone, SIM_IDS.zoneUnderAttack].sort((a, b) => a - b),
      attacksDropped: [SIM_IDS.zoneQuiet],
      appsRestored: [],
    });
    expect(await detailedTotals(startMinute, startMinute + 10 * MIN)).toEqual(past);
    s.now = startMinute + 40 * MIN + 20_000;
    expect(threats(await detailedTotals(startMinute + 10 * MIN, startMinute + 40 * MIN))).toBeLessThan(100);
    const quiet = threats(
      await detailedTotals(startMinute + 30 * MIN, startMinute + 40 * MIN, SIM_IDS.zoneQuiet),
    );
    expect(quiet).toBeLessThan(100);
    // A second calm has nothing left to end.
    expect(s.sim.calm()).toEqual({ attacksEnded: [], attacksDropped: [], appsRestored: [] });
  });

  it("refuses an unknown zone and bad numbers with a sentence", () => {
    const ok = { startsAt: NOW, rampMinutes: 2, durationMinutes: 10, peakPerMinute: 100 };
    const refused = (id: number, a: typeof ok) => {
      try {
        s.sim.stageAttack(id, a);
      } catch (err) {
        expect(err).toBeInstanceOf(SimulatorPlanError);
        return (err as Error).message;
      }
      throw new Error("accepted");
    };
    expect(refused(SIM_IDS.unknownShieldZone, ok)).toBe(
      `There is no shield zone ${SIM_IDS.unknownShieldZone} in the simulator.`,
    );
    expect(refused(zone, { ...ok, peakPerMinute: 0 })).toMatch(/peakPerMinute must be more than 0/);
    expect(refused(zone, { ...ok, peakPerMinute: Number.NaN })).toMatch(/peakPerMinute/);
    expect(refused(zone, { ...ok, durationMinutes: 0 })).toMatch(/durationMinutes must be a whole number/);
    expect(refused(zone, { ...ok, rampMinutes: 1.5 })).toMatch(/rampMinutes must be a whole number/);
    expect(refused(zone, { ...ok, startsAt: Number.POSITIVE_INFINITY })).toMatch(/startsAt/);
    expect(s.sim.state.shieldTraffic.get(zone)?.attacks).toEqual([]);
  });

  it("refuses attacks that would overflow the API's 32-bit counters, counting the zone's other attacks", () => {
    // 100,000 a minute for 9,970 + 30 minutes: exactly the limit.
    const big = { startsAt: NOW, rampMinutes: 0, durationMinutes: 9_970, peakPerMinute: 100_000 };
    expect(100_000 * (9_970 + 30)).toBe(MAX_ZONE_ATTACK_EVENTS);
    s.sim.stageAttack(zone, big);
    expect(() => s.sim.stageAttack(zone, { ...big, durationMinutes: 1, peakPerMinute: 1 })).toThrow(
      /would add up to 1,000,000,031 threat events, more than the API's 32-bit counters hold/,
    );
    // The seeded attack counts too.
    expect(() => s.sim.stageAttack(SIM_IDS.zoneUnderAttack, big)).toThrow(SimulatorPlanError);
    expect(s.sim.state.shieldTraffic.get(zone)?.attacks).toHaveLength(1);
  });
});

describe("a staged app status timeline", () => {
  const app = SIM_IDS.appsWithCapitalisedStatus[0];

  it("answers each step's status from its time on, and calm brings the app back to active", async () => {
    const seeded = await appStatus(app);
    expect(seeded).toBe("Active");
    s.sim.stageAppStatus(app, [
      { at: NOW + MIN, status: "failing" },
      { at: NOW + 3 * MIN, status: "progressing" },
    ]);
    expect(await appStatus(app)).toBe("Active");
    s.now = NOW + MIN;
    expect(await appStatus(app)).toBe("failing");
    s.now = NOW + 4 * MIN;
    expect(await appStatus(app)).toBe("progressing");
    // A later call adds steps; one at the same time replaces the earlier one.
    s.sim.stageAppStatus(app, [
      { at: NOW + 3 * MIN, status: "suspended" },
      { at: NOW + 10 * MIN, status: "active" },
    ]);
    expect(await appStatus(app)).toBe("suspended");
    s.now = NOW + 10 * MIN;
    expect(await appStatus(app)).toBe("active");

    s.sim.stageAppStatus(app, [{ at: NOW + 11 * MIN, status: "failing" }]);
    s.now = NOW + 12 * MIN;
    expect(await appStatus(app)).toBe("failing");
    expect(s.sim.calm().appsRestored).toEqual([app]);
    expect(await appStatus(app)).toBe("active");
    // Other apps are untouched.
    const other = SIM_IDS.appWithUnknownStatus;
    expect(await appStatus(other)).toBe("hibernating");
  });

  it("a restart deploys the app for 30 s, then it is active; a suspended or stopped app stays so", async () => {
    s.sim.stageAppStatus(app, [
      { at: NOW, status: "failing" },
      { at: NOW + 10 * MIN, status: "failing" },
    ]);
    const restart = (id: string) =>
      fetch(`${s.sim.url}/mc/apps/${id}/restart`, { method: "POST", headers: { AccessKey: SIM_API_KEY } });
    s.now = NOW + MIN;
    expect((await restart(app)).status).toBe(200);
    expect(await appStatus(app)).toBe("progressing");
    s.now = NOW + MIN + 29_999;
    expect(await appStatus(app)).toBe("progressing");
    s.now = NOW + MIN + 30_000;
    expect(await appStatus(app)).toBe("active");
    // The plan's later step still applies: it fails again at +10 min.
    s.now = NOW + 10 * MIN;
    expect(await appStatus(app)).toBe("failing");

    const suspended = s.sim.state.apps.find((a) => a.status === "suspended");
    const inactive = s.sim.state.apps.find((a) => a.status === "inactive");
    for (const a of [suspended, inactive]) {
      if (!a) throw new Error("the seed should have suspended and inactive apps");
      expect((await restart(a.id)).status).toBe(200);
      expect(await appStatus(a.id)).toBe(a.status);
    }
    expect(s.sim.state.appRestarts.get(app)).toEqual([NOW + MIN]);
  });

  it("refuses an unknown app and steps without a status or time", () => {
    expect(() => s.sim.stageAppStatus("mc-nope", [{ at: NOW, status: "failing" }])).toThrow(
      "There is no app mc-nope in the simulator.",
    );
    expect(() => s.sim.stageAppStatus(app, [{ at: NOW, status: " " }])).toThrow(/needs a status/);
    expect(() => s.sim.stageAppStatus(app, [{ at: Number.NaN, status: "failing" }])).toThrow(/Unix ms/);
    expect(s.sim.state.appStatusPlans.size).toBe(0);
  });
});

describe("finding what to stage", () => {
  it("finds zones by id or pull-zone hostname and apps by id or name, case-insensitively", () => {
    expect(s.sim.findShieldZone(String(zone))).toBe(zone);
    expect(s.sim.findShieldZone("SHOP.acme-example.com")).toBe(SIM_IDS.zoneUnderAttack);
    expect(s.sim.findShieldZone(SIM_IDS.unshieldedDomain)).toBeUndefined();
    expect(s.sim.findShieldZone(String(SIM_IDS.unknownShieldZone))).toBeUndefined();
    const app = s.sim.state.apps[3];
    expect(s.sim.findApp(app?.id.toUpperCase() ?? "")).toBe(app?.id);
    expect(s.sim.findApp(app?.name ?? "")).toBe(app?.id);
    expect(s.sim.findApp("no-such-app")).toBeUndefined();
  });
});
