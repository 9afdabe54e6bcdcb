/**
 * The simulator's side of `/edge incident`: the seeded attack's shape, quiet zones, the plan without event logs,
 * the size hook, event-log search semantics, detailed-metric resolutions and per-section fault injection, all
 * through HTTP against a fixed (or moving) clock.
 */
import { describe, expect, it } from "vitest";
import { exactPath, SIM_IDS } from "../../../tools/simulator/index.js";
import { SIM_HEADERS, simJson, useClockedSimulator } from "./clocked-simulator.js";

const NOW = Date.UTC(2026, 7, 20, 14, 0, 30);
const MIN = 60_000;
const H = 60 * MIN;
const zone = SIM_IDS.zoneUnderAttack;

const s = useClockedSimulator(NOW);
const headers = SIM_HEADERS;
const get = (path: string, init: RequestInit = {}) => fetch(`${s.sim.url}${path}`, { headers, ...init });
const getJson = <T>(path: string) => simJson<T>(s.sim, path);

interface Group {
  key: Record<string, string>;
  count: number;
  firstSeen: number;
  lastSeen: number;
  context: {
    country: string;
    asn: string;
    blocked: number;
    challenged: number;
    logged: number;
    features: string;
    ruleIds: string;
  };
  sparkline: number[] | null;
}
interface Row {
  logId: string;
  timestamp: number;
  log: Record<string, unknown>;
  fields: Record<string, string>;
}
interface SearchResult {
  rows: Row[] | null;
  groups: Group[] | null;
  total: number;
  totalPages: number;
  page: number;
  errorResponse: { errorKey: string; statusCode: number; success: boolean } | null;
}

const search = (body: unknown, id: number = zone) =>
  fetch(`${s.sim.url}/shield/event-logs/${id}/search`, {
    method: "POST",
    headers,
    body: JSON.stringify(body),
  });
async function searchOk(body: unknown, id: number = zone): Promise<SearchResult> {
  const res = await search(body, id);
  const text = await res.text();
  expect(res.status, text.slice(0, 300)).toBe(200);
  return JSON.parse(text) as SearchResult;
}
const sumCounts = (groups: Group[] | null) => (groups ?? []).reduce((n, g) => n + g.count, 0);

describe("the zone under attack", () => {
  it("shows a rising attack in the last 15 minutes against a quiet previous window", async () => {
    const last = await searchOk({ from: NOW - 15 * MIN, to: NOW, groupBy: ["feature"], buckets: 15 });
    const before = await searchOk({ from: NOW - 30 * MIN, to: NOW - 15 * MIN, groupBy: ["feature"] });
    const total = sumCounts(last.groups);
    expect(total).toBeGreaterThan(20 * Math.max(1, sumCounts(before.groups)));
    expect(new Set(last.groups?.map((g) => g.key.feature))).toEqual(
      new Set(["ddos", "waf", "rateLimit", "botDetection", "accessLists"]),
    );
    // Minute by minute, the sum of the features' sparklines: quiet, then ramping up to the last bucket.
    const spark = Array.from({ length: 15 }, (_, i) =>
      (last.groups ?? []).reduce((n, g) => n + (g.sparkline?.[i] ?? 0), 0),
    );
    expect(spark.reduce((a, b) => a + b, 0)).toBe(total);
    expect(spark[0]).toBeLessThan(50);
    // Bucket 3 holds the attack's first minutes, bucket 13 its latest whole minute (14 ends at the clock).
    expect(spark[13]).toBeGreaterThan(4 * (spark[3] ?? 0));
    expect(spark[13]).toBeGreaterThan(spark[8] ?? 0);
    expect(spark[8]).toBeGreaterThan(spark[3] ?? 0);
  });

  it("has many offenders, each with counts, actions and context", async () => {
    const window = { from: NOW - 15 * MIN, to: NOW, pageSize: 5 };
    const minimum = { ip: 100, asn: 15, country: 10, ja4: 6 } as const;
    for (const [dimension, atLeast] of Object.entries(minimum)) {
      const r = await searchOk({ ...window, groupBy: [dimension] });
      expect(r.total, dimension).toBeGreaterThanOrEqual(atLeast);
      expect(r.groups).toHaveLength(5);
      expect(r.totalPages).toBe(Math.ceil(r.total / 5));
      const counts = r.groups?.map((g) => g.count) ?? [];
      expect([...counts].sort((a, b) => b - a)).toEqual(counts);
      for (const g of r.groups ?? []) {
        expect(Object.keys(g.key)).toEqual([dimension]);
        expect(g.context.blocked + g.context.challenged + g.context.logged).toBe(g.count);
        expect(g.firstSeen).toBeGreaterThanOrEqual(window.from);
        expect(g.lastSeen).toBeLessThan(window.to);
        expect(g.firstSeen).toBeLessThanOrEqual(g.lastSeen);
        expect(g.context.country).toMatch(/^[A-Z]{2}$/);
        expect(g.context.asn).toMatch(/^AS\d+$/);
      }
    }
    // Addresses come from the documentation ranges only.
    const ips = await searchOk({ ...window, groupBy: ["ip"], pageSize: 500 });
    for (const g of ips.groups ?? [])
      expect(g.key.ip).toMatch(/^(192\.0\.2|198\.51\.100|203\.0\.113)\.|^2001:db8:/);
  });

  it("agrees with its detailed metrics and overview", async () => {
    // Whole 2-minute buckets [13:46, 14:00): the current minute (14:00) has no events yet.
    const from = Date.UTC(2026, 7, 20, 13, 46);
    const to = Date.UTC(2026, 7, 20, 14, 0);
    const detailed = await getJson<{
      data: Record<
        string,
        { metrics: Record<string, Record<string, number>>; totals: Record<string, number> }
      > & {
        resolution: number;
      };
    }>(
      `/shield/metrics/overview/${zone}/detailed?StartDate=${new Date(from).toISOString()}&EndDate=${new Date(to).toISOString()}&Resolution=1`,
    );
    expect(detailed.data.resolution).toBe(1);
    expect(Object.keys(detailed.data.waf?.metrics ?? {})).toHaveLength(7);
    const byFeatureAction = await searchOk({ from, to, groupBy: ["feature", "action"], pageSize: 100 });
    const events = (feature: string, action: string) =>
      byFeatureAction.groups?.find((g) => g.key.feature === feature && g.key.action === action)?.count ?? 0;
    expect(detailed.data.ddos?.totals.blockedRequests).toBe(events("ddos", "block"));
    expect(detailed.data.ddos?.totals.challengedRequests).toBe(events("ddos", "challenge"));
    expect(detailed.data.waf?.totals.blockedRequests).toBe(events("waf", "block"));
    expect(detailed.data.waf?.totals.loggedRequests).toBe(events("waf", "log"));
    expect(detailed.data.rateLimit?.totals.blockedBreaches).toBe(events("rateLimit", "block"));
    expect(detailed.data.botDetection?.totals.challengedRequests).toBe(events("botDetection", "challenge"));
    expect(detailed.data.ddos?.totals.blockedRequests).toBeGreaterThan(1000);

    const overview = await getJson<{
      data: { overviewPastTwentyEightDays: Record<string, { dDoSMitigated: number }> };
      error: null;
    }>(`/shield/metrics/overview/${zone}`);
    const days = Object.keys(overview.data.overviewPastTwentyEightDays);
    expect(days).toHaveLength(28);
    expect(days.at(-1)).toBe("2026-08-20");
    const today = overview.data.overviewPastTwentyEightDays["2026-08-20"]?.dDoSMitigated ?? 0;
    const yesterday = overview.data.overviewPastTwentyEightDays["2026-08-19"]?.dDoSMitigated ?? 0;
    expect(today).toBeGreaterThan(20 * Math.max(1, yesterday));
  });

  it("has busy triggered WAF rules with AI recommendations and breached rate limits", async () => {
    const triggered = await getJson<{
      triggeredRules: Array<{
        ruleId: string;
        ruleDescription: string;
        totalTriggeredRequests: number;
        topTargetedUrls: Record<string, number>;
        ruleLogs: Array<{ timestamp: number; labels: { ruleId: string; country: string } }>;
      }>;
      totalTriggeredRules: number;
    }>(`/shield/waf/rules/review-triggered/${zone}`);
    const rules = triggered.triggeredRules;
    expect(triggered.totalTriggeredRules).toBe(rules.length);
    expect(rules.slice(0, 2).map((r) => r.ruleId)).toEqual([SIM_IDS.waf.ruleId, SIM_IDS.waf2.ruleId]);
    expect(rules[0]?.totalTriggeredRequests).toBeGreaterThan(500);
    for (const r of rules) {
      expect(Object.keys(r.topTargetedUrls).length).toBeGreaterThan(0);
      for (const log of r.ruleLogs) {
        expect(log.labels.ruleId).toBe(r.ruleId);
        expect(log.timestamp).toBeLessThan(NOW);
      }
    }
    // The busiest rules open a recommendation: seeded for 942100, generated for the others.
    for (const r of rules.slice(0, 4)) {
      const rec = await getJson<{ success: boolean; recommendation: string | null; ruleId: string }>(
        `/shield/waf/rules/review-triggered/ai-recommendation/${zone}/${r.ruleId}`,
      );
      expect(rec.ruleId).toBe(r.ruleId);
      expect(rec.success).toBe(true);
      expect(rec.recommendation).toContain(r.ruleId);
    }

    const rateLimits = await getJson<{
      data: Array<{
        ratelimitId: number;
        overview: { totalBreaches: number };
        ratelimitOverviewPastTwentyEightDays: Record<string, { totalBreaches: number }>;
      }>;
    }>(`/shield/metrics/rate-limits/${zone}`);
    expect(rateLimits.data.map((r) => r.ratelimitId)).toEqual([...SIM_IDS.rateLimitRulesUnderAttack]);
    const today = rateLimits.data.map(
      (r) => r.ratelimitOverviewPastTwentyEightDays["2026-08-20"]?.totalBreaches ?? 0,
    );
    expect(today[0]).toBe(Math.max(...today));
    expect(today[0]).toBeGreaterThan(1000);
    // The same rule by id agrees.
    const one = await getJson<{ data: { overview: { totalBreaches: number } } }>(
      `/shield/metrics/rate-limit/${SIM_IDS.rateLimitRulesUnderAttack[0]}`,
    );
    expect(one.data.overview.totalBreaches).toBe(rateLimits.data[0]?.overview.totalBreaches);
  });

  it("is found by its domain through the pull zones; an ambiguous name matches several", async () => {
    const pullZones = await getJson<Array<{ Id: number; Hostnames: Array<{ Value: string }> }>>(
      `/pullzone?search=${SIM_IDS.domainUnderAttack}`,
    );
    expect(pullZones).toHaveLength(1);
    const zoneDetail = await getJson<{ data: { pullZoneId: number; shieldZoneId: number } }>(
      `/shield/shield-zone/${zone}`,
    );
    expect(zoneDetail.data.pullZoneId).toBe(pullZones[0]?.Id);
    const ambiguous = await getJson<unknown[]>(`/pullzone?search=${SIM_IDS.ambiguousDomain}`);
    expect(ambiguous.length).toBeGreaterThan(1);
  });
});

describe("other zones", () => {
  it("keeps quiet zones quiet", async () => {
    const r = await searchOk({ from: NOW - 15 * MIN, to: NOW, groupBy: ["ip"] }, SIM_IDS.zoneQuiet);
    expect(sumCounts(r.groups)).toBeLessThan(100);
    const triggered = await getJson<{ triggeredRules: Array<{ totalTriggeredRequests: number }> }>(
      `/shield/waf/rules/review-triggered/${SIM_IDS.zoneQuiet}`,
    );
    for (const rule of triggered.triggeredRules) expect(rule.totalTriggeredRequests).toBeLessThan(1000);
  });

  it("answers event-log searches on a plan without event logs as a plan error, other sections normally", async () => {
    const id = SIM_IDS.zoneWithoutEventLogs;
    const body = { from: NOW - 15 * MIN, to: NOW, groupBy: ["ip"] };
    const res = await search(body, id);
    expect(res.status).toBe(202);
    const json = (await res.json()) as SearchResult;
    expect(json).toMatchObject({ rows: null, groups: null, total: 0 });
    expect(json.errorResponse).toMatchObject({ success: false, errorKey: "invalid_plan_type.event_logs" });
    s.sim.state.planFeatureErrorStatus = 403;
    const forbidden = await search(body, id);
    expect(forbidden.status).toBe(403);
    expect(((await forbidden.json()) as SearchResult).errorResponse?.errorKey).toBe(
      "invalid_plan_type.event_logs",
    );
    for (const path of [
      `/shield/shield-zone/${id}`,
      `/shield/metrics/overview/${id}`,
      `/shield/waf/rules/review-triggered/${id}`,
      `/shield/metrics/rate-limits/${id}`,
    ]) {
      expect((await get(path)).status, path).toBe(200);
    }
  });

  it("answers unknown zones with 404 on every incident route", async () => {
    const id = SIM_IDS.unknownShieldZone;
    for (const path of [
      `/shield/shield-zone/${id}`,
      `/shield/metrics/overview/${id}`,
      `/shield/metrics/overview/${id}/detailed`,
      `/shield/waf/rules/review-triggered/${id}`,
      `/shield/metrics/rate-limits/${id}`,
    ]) {
      expect((await get(path)).status, path).toBe(404);
    }
    expect((await search({ from: NOW - MIN, to: NOW }, id)).status).toBe(404);
  });
});

describe("the clock", () => {
  it("moves the picture: later windows hold more attack, and never an event after now", async () => {
    const at = async () => {
      const r = await searchOk({ from: s.now - 15 * MIN, to: s.now, groupBy: ["ip"], pageSize: 500 });
      return { total: sumCounts(r.groups), lastSeen: Math.max(...(r.groups ?? []).map((g) => g.lastSeen)) };
    };
    const first = await at();
    s.now += 5 * MIN;
    const later = await at();
    expect(later.total).toBeGreaterThan(first.total);
    expect(later.lastSeen).toBeLessThan(Math.floor(s.now / MIN) * MIN);
    expect(later.lastSeen).toBeGreaterThan(first.lastSeen);
    // The window may end in the future by a minute of skew, not more.
    expect((await search({ from: s.now - MIN, to: s.now + 30_000 })).status).toBe(200);
    expect((await search({ from: s.now - MIN, to: s.now + 5 * MIN })).status).toBe(400);
  });

  it("keeps 72 hours: an older end is refused, an older start is clipped", async () => {
    const tooOld = await search({ from: NOW - 80 * H, to: NOW - 73 * H });
    expect(tooOld.status).toBe(400);
    expect(((await tooOld.json()) as { detail: string }).detail).toMatch(/72 hours/);
    const clipped = await searchOk({ from: NOW - 100 * H, to: NOW, groupBy: ["country"] });
    for (const g of clipped.groups ?? []) expect(g.firstSeen).toBeGreaterThanOrEqual(NOW - 72 * H);
  });
});

describe("at size", () => {
  it("serves 10,000 event-log groups and 500 triggered rules through the size hook, paged within limits", async () => {
    s.sim.scaleIncident(zone, { eventLogGroups: 10_000, triggeredRules: 500 });
    const window = { from: NOW - 15 * MIN, to: NOW };
    for (const dimension of ["ip", "asn", "ja4"]) {
      const r = await searchOk({ ...window, groupBy: [dimension], pageSize: 1000 });
      expect(r.total, dimension).toBeGreaterThanOrEqual(10_000);
      expect(r.groups).toHaveLength(500);
      expect(r.totalPages).toBe(Math.ceil(r.total / 500));
    }
    const beyond = await searchOk({ ...window, groupBy: ["ip"], page: 10_000 });
    expect(beyond.groups).toEqual([]);
    const triggered = await getJson<{ triggeredRules: unknown[]; totalTriggeredRules: number }>(
      `/shield/waf/rules/review-triggered/${zone}`,
    );
    expect(triggered.totalTriggeredRules).toBeGreaterThanOrEqual(500);
    expect(triggered.triggeredRules).toHaveLength(triggered.totalTriggeredRules);
    expect(() => s.sim.scaleIncident(SIM_IDS.unknownShieldZone, { eventLogGroups: 1 })).toThrow(
      /no shield zone/,
    );
  });
});

describe("event-log search", () => {
  const window = { from: NOW - 15 * MIN, to: NOW };

  it("refuses malformed requests with problem details naming the field", async () => {
    const bad: Array<[unknown, string]> = [
      [undefined, "body"],
      ["not json", "body"],
      [{ to: NOW }, "from"],
      [{ from: NOW }, "to"],
      [{ from: NOW, to: NOW - 1 }, "to"],
      [{ from: "yesterday", to: NOW }, "from"],
      [{ ...window, groupby: ["ip"] }, "groupby"],
      [{ ...window, groupBy: ["ip", "ip"] }, "groupBy"],
      [{ ...window, groupBy: ["asn_name"] }, "groupBy"],
      [{ ...window, filters: [{ field: "ip", op: "regex", value: ["1"] }] }, "filters[0].op"],
      [{ ...window, filters: [{ field: "country", op: "cidr", value: ["10.0.0.0/8"] }] }, "filters[0].op"],
      [{ ...window, filters: [{ field: "ip", op: "cidr", value: ["10.0.0.0/33"] }] }, "filters[0].value"],
      [{ ...window, filters: [{ field: "ip", op: "eq", value: [] }] }, "filters[0].value"],
      [{ ...window, filters: [{ field: "nope", op: "eq", value: ["x"] }] }, "filters[0].field"],
      [{ ...window, page: -1 }, "page"],
    ];
    for (const [body, field] of bad) {
      const res = await fetch(`${s.sim.url}/shield/event-logs/${zone}/search`, {
        method: "POST",
        headers,
        ...(body === undefined ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) }),
      });
      expect(res.status, JSON.stringify(body)).toBe(400);
      const problem = (await res.json()) as {
        status: number;
        detail: string;
        errors: Record<string, string[]>;
      };
      expect(problem.status).toBe(400);
      expect(Object.keys(problem.errors), JSON.stringify(body)).toEqual([field]);
      expect(problem.detail.length).toBeGreaterThan(10);
    }
  });

  it("filters with eq, in, contains, wildcard, cidr and free text", async () => {
    const count = async (filters: unknown[], query?: string) =>
      sumCounts(
        (await searchOk({ ...window, groupBy: ["ip"], pageSize: 500, filters, ...(query ? { query } : {}) }))
          .groups,
      );
    const all = await count([]);
    const cn = await count([{ field: "country", op: "eq", value: ["cn"] }]);
    const cnRu = await count([{ field: "country", op: "in", value: ["CN", "RU"] }]);
    expect(cn).toBeGreaterThan(0);
    expect(cnRu).toBeGreaterThan(cn);
    expect(cnRu).toBeLessThan(all);
    // cidr: the /28 around the busiest IPv4 offender holds it and nothing outside.
    const top = (await searchOk({ ...window, groupBy: ["ip"], pageSize: 50 })).groups?.find((g) =>
      /^\d+\.\d+\.\d+\.\d+$/.test(g.key.ip ?? ""),
    );
    const [a, b, c, d] = (top?.key.ip ?? "").split(".").map(Number);
    const base = (d ?? 0) & 0xf0;
    const net = await searchOk({
      ...window,
      groupBy: ["ip"],
      pageSize: 500,
      filters: [{ field: "ip", op: "cidr", value: [`${a}.${b}.${c}.${base}/28`] }],
    });
    expect(net.groups?.map((g) => g.key.ip)).toContain(top?.key.ip);
    for (const g of net.groups ?? []) {
      const parts = (g.key.ip ?? "").split(".").map(Number);
      expect(parts.slice(0, 3)).toEqual([a, b, c]);
      expect((parts[3] ?? 0) & 0xf0).toBe(base);
    }
    const v6 = await searchOk({
      ...window,
      groupBy: ["ip"],
      pageSize: 500,
      filters: [{ field: "ip", op: "cidr", value: ["2001:db8::/32"] }],
    });
    for (const g of v6.groups ?? []) expect(g.key.ip).toMatch(/^2001:db8:/);
    expect(v6.total).toBeGreaterThan(0);
    const login = await searchOk({
      ...window,
      groupBy: ["url"],
      filters: [{ field: "url", op: "wildcard", value: ["/log*"] }],
    });
    expect(login.groups?.map((g) => g.key.url)).toEqual(["/login"]);
    const sqli = await searchOk({ ...window, groupBy: ["ruleId"], query: "sql injection" });
    expect(sqli.groups?.map((g) => g.key.ruleId)).toEqual(["942100"]);
    const scanners = await count([{ field: "ua", op: "contains", value: ["SQLMAP"] }]);
    expect(scanners).toBeGreaterThan(0);
    // Filters combine with AND.
    expect(
      await count([
        { field: "country", op: "eq", value: ["CN"] },
        { field: "feature", op: "eq", value: ["waf"] },
      ]),
    ).toBeLessThan(cn);
  });

  it("pages flat rows newest first, with the request context and resolved fields", async () => {
    const page0 = await searchOk({ ...window, pageSize: 50 });
    const page1 = await searchOk({ ...window, pageSize: 50, page: 1 });
    expect(page0.groups).toBeNull();
    expect(page0.rows).toHaveLength(50);
    expect(page0.total).toBeGreaterThan(1000);
    const rows = [...(page0.rows ?? []), ...(page1.rows ?? [])];
    const times = rows.map((r) => r.timestamp);
    expect([...times].sort((a, b) => b - a)).toEqual(times);
    expect(new Set(rows.map((r) => r.logId)).size).toBe(100);
    const row = rows[0];
    expect(Object.keys(row?.fields ?? {}).sort()).toEqual(
      ["action", "asn", "country", "feature", "ip", "ja4", "ruleId", "ua", "url"].sort(),
    );
    expect(row?.log).toMatchObject({ host: SIM_IDS.domainUnderAttack, remoteIp: row?.fields.ip });
    expect(row?.logId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    // The same search gives the same rows.
    expect((await searchOk({ ...window, pageSize: 50 })).rows).toEqual(page0.rows);
  });
});

describe("event-log search where the document is silent (the adversary's readings)", () => {
  const window = { from: NOW - 15 * MIN, to: NOW };
  const all = async (body: Record<string, unknown>) => {
    const groups: Group[] = [];
    for (let page = 0; ; page++) {
      const r = await searchOk({ ...window, ...body, page, pageSize: 50 });
      groups.push(...(r.groups ?? []));
      if ((page + 1) * 50 >= r.total) return groups;
    }
  };

  it('"event-logs.order": the same groups and rows across pages, in another order', async () => {
    const friendly = await all({ groupBy: ["ip"] });
    s.sim.setAdversary({ pin: { "event-logs.order": "reverse" } });
    const reversed = await all({ groupBy: ["ip"] });
    expect(reversed.map((g) => g.key.ip)).toEqual(friendly.map((g) => g.key.ip).reverse());
    const rows = await searchOk({ ...window, pageSize: 20 });
    const times = (rows.rows ?? []).map((r) => r.timestamp);
    expect(times).toEqual([...times].sort((a, b) => a - b));
    // A seed shuffles, and every page of one query follows the same order: no group twice, none lost.
    s.sim.setAdversary({ seed: 7 });
    const shuffled = await all({ groupBy: ["ip"] });
    expect(shuffled.map((g) => g.key.ip)).not.toEqual(friendly.map((g) => g.key.ip));
    expect(new Set(shuffled.map((g) => g.key.ip))).toEqual(new Set(friendly.map((g) => g.key.ip)));
    expect(shuffled).toHaveLength(friendly.length);
  });

  it('"event-logs.feature-spelling", "event-logs.action-spelling", "event-logs.asn-spelling": values spelled otherwise, filters matching them', async () => {
    s.sim.setAdversary({
      pin: {
        "event-logs.feature-spelling": "long",
        "event-logs.action-spelling": "past",
        "event-logs.asn-spelling": "number",
      },
    });
    const features = await searchOk({ ...window, groupBy: ["feature"] });
    expect(new Set(features.groups?.map((g) => g.key.feature))).toEqual(
      new Set([
        "ddos_protection",
        "web_application_firewall",
        "rate_limiting",
        "bot_detection",
        "access_lists",
      ]),
    );
    const actions = await searchOk({ ...window, groupBy: ["action"] });
    expect(actions.groups?.map((g) => g.key.action).sort()).toEqual(["blocked", "challenged", "logged"]);
    const asns = await searchOk({ ...window, groupBy: ["asn"], pageSize: 5 });
    for (const g of asns.groups ?? []) {
      expect(g.key.asn).toMatch(/^\d+$/);
      expect(g.context.asn).toMatch(/^\d+$/);
    }
    const waf = await searchOk({
      ...window,
      groupBy: ["feature"],
      filters: [{ field: "feature", op: "eq", value: ["waf"] }],
    });
    expect(waf.groups).toEqual([]);
    const spelled = await searchOk({
      ...window,
      groupBy: ["feature"],
      filters: [{ field: "feature", op: "eq", value: ["web_application_firewall"] }],
    });
    expect(sumCounts(spelled.groups)).toBeGreaterThan(0);
    // The per-action counts keep their documented names.
    const g = spelled.groups?.[0];
    expect((g?.context.blocked ?? 0) + (g?.context.challenged ?? 0) + (g?.context.logged ?? 0)).toBe(
      g?.count,
    );
  });

  it('"event-logs.eq-case": eq and in compare case-sensitively when strict', async () => {
    const body = (value: string) => ({
      ...window,
      groupBy: ["country"],
      filters: [{ field: "country", op: "eq", value: [value] }],
    });
    expect(sumCounts((await searchOk(body("cn"))).groups)).toBeGreaterThan(0);
    s.sim.setAdversary({ pin: { "event-logs.eq-case": "sensitive" } });
    expect((await searchOk(body("cn"))).groups).toEqual([]);
    expect(sumCounts((await searchOk(body("CN"))).groups)).toBeGreaterThan(0);
  });

  it('"event-logs.total-pages": an answer gives total without totalPages', async () => {
    s.sim.setAdversary({ pin: { "event-logs.total-pages": "absent" } });
    const r = await searchOk({ ...window, groupBy: ["ip"], pageSize: 5 });
    expect(r.total).toBeGreaterThan(5);
    expect(r).not.toHaveProperty("totalPages");
  });
});

describe("detailed metrics", () => {
  const detailed = (query: string) => get(`/shield/metrics/overview/${zone}/detailed${query}`);

  it("picks a resolution that fits the range, or keeps the one asked for", async () => {
    const cases: Array<[string, number, number]> = [
      // 13:45:30 falls in the 13:44 bucket; the 14:00 bucket has begun.
      [`?StartDate=${new Date(NOW - 15 * MIN).toISOString()}`, 1, 9],
      [`?StartDate=${new Date(NOW - H).toISOString()}&Resolution=0`, 1, 31],
      [`?StartDate=${new Date(NOW - 6 * H).toISOString()}`, 2, 37],
      ["", 2, 145],
      [`?StartDate=${new Date(NOW - 72 * H).toISOString()}`, 3, 73],
      [`?StartDate=${new Date(NOW - 72 * H).toISOString()}&Resolution=2`, 2, 433],
    ];
    for (const [query, resolution, buckets] of cases) {
      const res = await detailed(query);
      expect(res.status, query).toBe(200);
      const body = (await res.json()) as {
        data: { resolution: number; waf: { metrics: Record<string, unknown> } };
      };
      expect(body.data.resolution, query).toBe(resolution);
      const keys = Object.keys(body.data.waf.metrics);
      expect(keys.length, query).toBe(buckets);
      for (const k of keys) expect(k).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:00Z$/);
      expect(Date.parse(keys.at(-1) ?? "")).toBeLessThanOrEqual(NOW);
    }
  });

  it("refuses bad dates, a reversed range, unknown resolutions and too many buckets", async () => {
    for (const query of [
      "?StartDate=yesterday",
      "?EndDate=2026-13-01T00:00:00Z",
      `?StartDate=${new Date(NOW).toISOString()}&EndDate=${new Date(NOW - H).toISOString()}`,
      "?Resolution=7",
      "?Resolution=Hourly",
      `?StartDate=${new Date(NOW - 30 * 24 * H).toISOString()}&Resolution=1`,
    ]) {
      const res = await detailed(query);
      expect(res.status, query).toBe(400);
      expect(((await res.json()) as { detail: string }).detail.length).toBeGreaterThan(10);
    }
  });
});

describe("per-section faults", () => {
  it("fails exactly one section at a time: 429, 500, malformed, timeout", async () => {
    const sections = {
      zone: `/shield/shield-zone/${zone}`,
      bots: `/shield/shield-zone/${zone}/bot-detection`,
      overview: `/shield/metrics/overview/${zone}`,
      detailed: `/shield/metrics/overview/${zone}/detailed`,
      triggered: `/shield/waf/rules/review-triggered/${zone}`,
      rateLimits: `/shield/metrics/rate-limits/${zone}`,
      apps: "/mc/apps",
    };
    const searchBody = JSON.stringify({ from: NOW - 15 * MIN, to: NOW, groupBy: ["ip"] });
    const okElsewhere = async (except: string) => {
      for (const [name, path] of Object.entries(sections)) {
        if (path === except) continue;
        const res = await get(path, { signal: AbortSignal.timeout(5_000) });
        expect(res.status, name).toBe(200);
        await res.json();
      }
    };

    s.sim.addFault({
      method: "POST",
      path: exactPath(`/shield/event-logs/${zone}/search`),
      status: 429,
      retryAfter: "7",
    });
    const limited = await fetch(`${s.sim.url}/shield/event-logs/${zone}/search`, {
      method: "POST",
      headers,
      body: searchBody,
    });
    expect(limited.status).toBe(429);
    expect(limited.headers.get("retry-after")).toBe("7");
    await okElsewhere("");
    s.sim.clearFaults();

    s.sim.addFault({ path: exactPath(sections.overview), status: 500 });
    expect((await get(sections.overview)).status).toBe(500);
    await okElsewhere(sections.overview);
    s.sim.clearFaults();

    s.sim.addFault({ path: exactPath(sections.triggered), body: "malformed" });
    const malformed = await get(sections.triggered);
    expect(malformed.status).toBe(200);
    await expect(malformed.json()).rejects.toThrow();
    await okElsewhere(sections.triggered);
    s.sim.clearFaults();

    // A section that does not answer: held until the end of the test; the client gives up on it once it
    // is in flight (its timeout, here the test's abort), and every other section still answers.
    let release = () => {};
    s.sim.addFault({ path: exactPath(sections.zone), holdUntil: new Promise<void>((r) => (release = r)) });
    const toZone = () => s.sim.requests.filter((r) => exactPath(sections.zone).test(r.path)).length;
    const before = toZone();
    const giveUp = new AbortController();
    const hanging = get(sections.zone, { signal: giveUp.signal });
    await s.sim.waitForRequest(() => toZone() > before);
    expect(s.sim.inFlight()).toBe(1);
    giveUp.abort(new Error("timed out"));
    await expect(hanging).rejects.toThrow();
    await okElsewhere(sections.zone);
    release();
  });
});
