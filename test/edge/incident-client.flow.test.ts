import { describe, expect, it, onTestFinished } from "vitest";
import { describeEdgeError } from "../../src/edge/errors.js";
import { METRICS_RESOLUTION } from "../../src/edge/schemas/shield.js";
import { SIM_IDS } from "../../tools/simulator/index.js";
import { rejection, useSimulatorClient } from "../support/sim-client.js";

const env = useSimulatorClient();
const ZONE = SIM_IDS.zoneUnderAttack;
const HOUR = 3_600_000;

describe("the incident operations against the simulator", () => {
  it("getShieldZone reads one zone; an unknown zone is not found", async () => {
    const zone = await env.client.getShieldZone(ZONE);
    expect(zone.shieldZoneId).toBe(ZONE);
    expect(env.sim.requests.map((r) => `${r.method} ${r.path}`)).toEqual([`GET /shield/shield-zone/${ZONE}`]);
    const e = await rejection(env.client.getShieldZone(SIM_IDS.unknownShieldZone));
    // Simulator deviation: GET /shield/shield-zone/{id} documents no 404; the simulator answers the
    // framework's NotFound problem details (UNDOCUMENTED in test/tools/simulator/openapi.flow.test.ts).
    expect(e.kind).toBe("not_found");
    expect(describeEdgeError(e)).toBe(
      `Shield zone ${SIM_IDS.unknownShieldZone} was not found: check the id. Find a zone by its domain with /edge zones and part of the name, e.g. /edge zones shop.example.com.`,
    );
  });

  it("getMetricsOverview and getMetricsOverviewDetailed (StartDate, EndDate, Resolution)", async () => {
    const overview = await env.client.getMetricsOverview(ZONE);
    expect(overview.totalBillableRequests).toBeGreaterThan(0);
    expect(overview.ddosMitigated).toBeGreaterThan(0);
    const to = Date.now();
    const d = await env.client.getMetricsOverviewDetailed(ZONE, {
      from: to - HOUR,
      to,
      resolution: METRICS_RESOLUTION.tenMinutes,
    });
    const r = env.sim.requests.at(-1)!;
    expect(r.path).toBe(`/shield/metrics/overview/${ZONE}/detailed`);
    expect(r.query).toEqual({
      StartDate: new Date(to - HOUR).toISOString(),
      EndDate: new Date(to).toISOString(),
      Resolution: "2",
    });
    expect(d.resolution).toBe(2);
    expect(d.features.ddos.points.length).toBeGreaterThanOrEqual(6);
    expect(d.features.ddos.points.every((p, i, all) => i === 0 || p.at > all[i - 1]!.at)).toBe(true);
    expect(Object.values(d.features.ddos.totals ?? {}).some((n) => n > 0)).toBe(true);
  });

  it("searchEventLogs posts the documented body and reads groups with their actions", async () => {
    const to = Date.now();
    const r = await env.client.searchEventLogs(ZONE, {
      from: to - 15 * 60_000,
      to,
      groupBy: ["ip"],
      page: 0,
      pageSize: 20,
    });
    const req = env.sim.requests.at(-1)!;
    expect(req.method).toBe("POST");
    expect(req.path).toBe(`/shield/event-logs/${ZONE}/search`);
    expect(req.headers["content-type"]).toBe("application/json");
    expect(req.body).toEqual({ from: to - 15 * 60_000, to, groupBy: ["ip"], page: 0, pageSize: 20 });
    expect(r.groups.length).toBeGreaterThan(0);
    expect(r.total).toBeGreaterThanOrEqual(r.groups.length);
    const g = r.groups[0]!;
    expect(g.key.ip).toEqual(expect.any(String));
    expect(g.actions.blocked + g.actions.challenged + g.actions.logged).toBe(g.count);
  });

  it("a plan without the event log is plan_not_eligible, and says so", async () => {
    const to = Date.now();
    const e = await rejection(
      env.client.searchEventLogs(SIM_IDS.zoneWithoutEventLogs, { from: to - 60_000, to, groupBy: ["ip"] }),
    );
    expect(e.kind).toBe("plan_not_eligible");
    expect(describeEdgeError(e)).toContain("plan does not include event logs");
  });

  it("getTriggeredWafRules and getRateLimits", async () => {
    const waf = await env.client.getTriggeredWafRules(ZONE);
    expect(waf.rules.length).toBeGreaterThan(0);
    expect(waf.totalTriggeredRules).toBeGreaterThanOrEqual(waf.rules.length);
    expect(waf.rules.map((x) => x.ruleId)).toContain(SIM_IDS.waf.ruleId);
    // Every rule keeps its metrics row on any seed ("rate-limits.metrics-missing" has its own test).
    env.sim.setAdversary({ seed: env.sim.adversary.seed, pin: { "rate-limits.metrics-missing": false } });
    const { rules: limits, skipped } = await env.client
      .getRateLimits(ZONE)
      .finally(() => env.sim.setAdversary({ seed: env.sim.adversary.seed }));
    expect(skipped).toBe(0);
    expect(limits.map((l) => l.rateLimitId).sort()).toEqual([...SIM_IDS.rateLimitRulesUnderAttack].sort());
    expect(limits[0]!.days.length).toBe(28);
    expect(env.sim.requests.map((r) => r.path)).toEqual([
      `/shield/waf/rules/review-triggered/${ZONE}`,
      `/shield/metrics/rate-limits/${ZONE}`,
    ]);
  });
});

describe("listRateLimitRules (GET /shield/rate-limits/{shieldZoneId})", () => {
  it("sends page and perPage, names each rule, and reports the next page", async () => {
    // The rules in the simulator's order, as many a page as asked, with the page member, on any seed.
    const seed = env.sim.adversary.seed;
    env.sim.setAdversary({
      seed,
      pin: {
        "rate-limits.order": "as-is",
        "rate-limits.page-size": "as-asked",
        "rate-limits.page-info-missing": false,
      },
    });
    onTestFinished(() => env.sim.setAdversary({ seed }));
    const first = await env.client.listRateLimitRules(ZONE, { page: 1, perPage: 2 });
    expect(env.sim.requests.map((r) => `${r.path} ${JSON.stringify(r.query)}`)).toEqual([
      `/shield/rate-limits/${ZONE} {"page":"1","perPage":"2"}`,
    ]);
    expect(first.items.map((r) => r.id)).toEqual(SIM_IDS.rateLimitRulesUnderAttack.slice(0, 2));
    expect(first.items[0]).toMatchObject({ shieldZoneId: ZONE, name: "Login <burst> & retries" });
    expect(first).toMatchObject({ page: 1, nextPage: 2, hasNext: true });
    const last = await env.client.listRateLimitRules(ZONE, { page: 3, perPage: 2 });
    expect(last).toMatchObject({ page: 3, nextPage: null, hasNext: false });
    expect(last.items).toHaveLength(1);
  });

  it("a rule without an id is left out and counted; an unknown zone is not found", async () => {
    env.sim.addFault({
      path: "/shield/rate-limits/",
      body: { data: [{ ruleName: "no id" }, { id: 9, ruleName: null, extra: 1 }], page: null, error: null },
    });
    expect(await env.client.listRateLimitRules(ZONE)).toEqual({
      items: [{ id: 9, shieldZoneId: null, name: null, description: null }],
      skipped: 1,
      page: 1,
      nextPage: null,
      // Without its page member the answer does not say whether more pages follow.
      hasNext: null,
    });
    env.sim.clearFaults();
    expect((await rejection(env.client.listRateLimitRules(SIM_IDS.unknownShieldZone))).kind).toBe(
      "not_found",
    );
    expect((await rejection(env.client.listRateLimitRules(0))).kind).toBe("invalid_argument");
  });
});

describe("bad arguments and bad answers", () => {
  it("bad arguments are refused before any request", async () => {
    const to = Date.now();
    const calls = [
      env.client.searchEventLogs(ZONE, { from: to, to }),
      env.client.searchEventLogs(ZONE, { from: to - 1, to, pageSize: 501 }),
      env.client.searchEventLogs(ZONE, { from: to - 1, to, groupBy: ["password" as never] }),
      env.client.searchEventLogs(ZONE, { from: -5, to }),
      env.client.getMetricsOverviewDetailed(ZONE, { from: to - 1, to, resolution: 9 as never }),
      env.client.getMetricsOverviewDetailed(ZONE, { from: to, to: to - 1 }),
      env.client.getShieldZone(0),
      env.client.getRateLimits(1.5),
    ];
    for (const c of calls) expect((await rejection(c)).kind).toBe("invalid_argument");
    expect(env.sim.requests).toEqual([]);
  });

  it("a malformed or misshapen answer is invalid_response; unknown fields are tolerated", async () => {
    env.sim.addFault({ path: `/shield/shield-zone/${ZONE}`, body: "malformed", times: 3 });
    expect((await rejection(env.client.getShieldZone(ZONE))).kind).toBe("invalid_response");
    env.sim.clearFaults();
    env.sim.addFault({
      path: "/shield/waf/rules/review-triggered/",
      body: { triggeredRules: [{ totalTriggeredRequests: "many" }] },
    });
    expect((await rejection(env.client.getTriggeredWafRules(ZONE))).kind).toBe("invalid_response");
    env.sim.clearFaults();
    env.sim.addFault({
      path: "/shield/metrics/rate-limits/",
      body: {
        data: [{ ratelimitId: 5, overview: { totalBreaches: 3, somethingNew: true }, extra: [1] }],
        more: {},
      },
    });
    expect((await env.client.getRateLimits(ZONE)).rules).toEqual([
      {
        rateLimitId: 5,
        overview: { totalBreaches: 3, loggedBreaches: 0, challengedBreaches: 0, blockedBreaches: 0 },
        // No 28-day map came: the rule's 28 days are unknown, not quiet.
        daysCame: false,
        days: [],
        unreadableDays: [],
      },
    ]);
  });

  it("an error carried in a 200 answer is that error", async () => {
    env.sim.addFault({
      path: "/shield/waf/rules/review-triggered/",
      body: {
        errorResponse: { statusCode: 403, success: false, message: "Not yours", errorKey: null },
        triggeredRules: null,
      },
    });
    const e = await rejection(env.client.getTriggeredWafRules(ZONE));
    expect(e.kind).toBe("forbidden");
    expect(describeEdgeError(e)).toContain("not allowed to review triggered WAF rules");
  });
});
