import { readFileSync } from "node:fs";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SIM_API_KEY, SIM_IDS, type Simulator, startSimulator } from "../../../tools/simulator/index.js";
import { createManualClock, type ManualClock } from "../../support/clock.js";

let sim: Simulator;
/** The simulator's clock: its scans complete and its latency passes when a test moves it. */
let clock: ManualClock;

beforeEach(async () => {
  clock = createManualClock(Date.now());
  // The simulator's own story, on its friendly readings whatever EDGE_SIMULATOR_SEED says.
  sim = await startSimulator({ scanDurationMs: 150, clock, adversary: {} });
});
afterEach(async () => {
  await sim.close();
});

const auth = { AccessKey: SIM_API_KEY };
const get = (path: string, headers: Record<string, string> = auth) => fetch(`${sim.url}${path}`, { headers });
const send = (method: string, path: string, body: unknown, headers: Record<string, string> = auth) =>
  fetch(`${sim.url}${path}`, {
    method,
    headers: { ...headers, "content-type": "application/json" },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });

interface AppsPage {
  items: Array<{ id: string; status: string; displayEndpoint: { address: string; type: string } }>;
  meta: { totalItems: number };
  cursor: string | null;
}

describe("Magic Containers apps", () => {
  it("pages across 3 pages at the default limit with all six statuses", async () => {
    const pages: AppsPage[] = [];
    let cursor: string | null = null;
    do {
      const q: string = cursor === null ? "" : `?nextCursor=${encodeURIComponent(cursor)}`;
      const res = await get(`/mc/apps${q}`);
      expect(res.status).toBe(200);
      const page = (await res.json()) as AppsPage;
      pages.push(page);
      cursor = page.cursor;
    } while (cursor !== null && pages.length < 10);

    expect(pages.map((p) => p.items.length)).toEqual([20, 20, 7]);
    const items = pages.flatMap((p) => p.items);
    expect(items).toHaveLength(SIM_IDS.appCount);
    expect(new Set(items.map((a) => a.id)).size).toBe(items.length);
    expect(pages[0]?.meta.totalItems).toBe(47);
    const statuses = new Set(items.map((a) => a.status.toLowerCase()));
    for (const s of ["unknown", "active", "progressing", "inactive", "failing", "suspended"]) {
      expect(statuses.has(s), s).toBe(true);
    }
    expect(items.filter((a) => a.status === "Active").map((a) => a.id)).toEqual([
      ...SIM_IDS.appsWithCapitalisedStatus,
    ]);
    expect(items.find((a) => a.id === SIM_IDS.appWithUnknownStatus)?.status).toBe("hibernating");
    for (const a of items) expect(a.displayEndpoint.address.length).toBeGreaterThan(0);
  });

  it("honours limit and rejects out-of-range limit with ErrorDetails", async () => {
    const page = (await (await get("/mc/apps?limit=1000")).json()) as AppsPage;
    expect(page.items).toHaveLength(47);
    expect(page.cursor).toBeNull();
    const bad = await get("/mc/apps?limit=0");
    expect(bad.status).toBe(400);
    const body = (await bad.json()) as { status: number; errors: Array<{ field: string }> };
    expect(body.status).toBe(400);
    expect(body.errors[0]?.field).toBe("limit");
  });
});

describe("Shield", () => {
  it("pages shield zones until nextPage is null", async () => {
    const ids: number[] = [];
    let page: number | null = 1;
    let pagesSeen = 0;
    while (page !== null && pagesSeen < 10) {
      const res = await get(`/shield/shield-zones?page=${page}`);
      expect(res.status).toBe(200);
      const body = (await res.json()) as {
        data: Array<{ shieldZoneId: number; planType: number }>;
        page: { nextPage: number | null; totalCount: number; currentPage: number; pageSize: number };
      };
      expect(body.page.currentPage).toBe(page);
      expect(body.page.pageSize).toBe(10);
      ids.push(...body.data.map((z) => z.shieldZoneId));
      page = body.page.nextPage;
      pagesSeen++;
    }
    expect(pagesSeen).toBe(3);
    expect(ids).toHaveLength(SIM_IDS.shieldZoneCount);
    expect(ids).toContain(SIM_IDS.zoneWithUnknownEnum);
    const planTypes = new Set(sim.state.shieldZones.map((z) => z.planType));
    expect([...planTypes].sort()).toEqual([0, 1, 2, 3, 9]);
  });

  it("PUT of a bot category changes what the GET returns", async () => {
    const zone = SIM_IDS.zoneEnterprise;
    const before = (await (await get(`/shield/shield-zone/${zone}/bot-categorization`)).json()) as {
      categories: Array<{ category: number; categoryAction: number }>;
    };
    const seo = before.categories.find((c) => c.category === 1);
    expect(seo).toBeDefined();
    expect(before.categories.some((c) => c.category === 255)).toBe(true);
    const next = seo?.categoryAction === 1 ? 2 : 1;

    const put = await send("PUT", `/shield/shield-zone/${zone}/bot-categorization/categories/1`, {
      action: next,
    });
    expect(put.status).toBe(200);
    expect(await put.json()).toEqual({ data: { category: 1, action: next }, error: null });

    const after = (await (
      await get(`/shield/shield-zone/${zone}/bot-categorization`)
    ).json()) as typeof before;
    expect(after.categories.find((c) => c.category === 1)?.categoryAction).toBe(next);
  });

  it("rejects PUT bodies with extra fields, bad actions and the System category", async () => {
    const path = `/shield/shield-zone/${SIM_IDS.zoneEnterprise}/bot-categorization/categories`;
    for (const [url, body] of [
      [`${path}/1`, { action: 1, category: 1 }],
      [`${path}/1`, { action: 3 }],
      [`${path}/1`, "not json"],
      [`${path}/255`, { action: 1 }],
      [`${path}/8`, { action: 1 }],
    ] as const) {
      const res = await send("PUT", url, body);
      expect(res.status, `${url} ${JSON.stringify(body)}`).toBe(400);
      const json = (await res.json()) as { data: null; error: { statusCode: number; success: boolean } };
      expect(json.data).toBeNull();
      expect(json.error).toMatchObject({ statusCode: 400, success: false });
    }
  });

  it("answers a plan without bot categorization with invalid_plan_type", async () => {
    const zone = SIM_IDS.zoneWithoutBotPlan;
    const res = await send("PUT", `/shield/shield-zone/${zone}/bot-categorization/categories/2`, {
      action: 1,
    });
    expect(res.status).toBe(202);
    const body = (await res.json()) as { error: { errorKey: string } };
    expect(body.error.errorKey).toMatch(/^invalid_plan_type\./);
    const list = await get(`/shield/shield-zone/${zone}/bot-categorization`);
    expect(list.status).toBe(202);
    expect(((await list.json()) as { error: { errorKey: string } }).error.errorKey).toMatch(
      /^invalid_plan_type\./,
    );
  });

  it("returns bot detection and 404 for unknown zones", async () => {
    const ok = await get(`/shield/shield-zone/${SIM_IDS.zoneEnterprise}/bot-detection`);
    expect(await ok.json()).toMatchObject({
      data: { shieldZoneId: SIM_IDS.zoneEnterprise, executionMode: 1, requestIntegrity: { sensitivity: 3 } },
      error: null,
    });
    const missing = await get(`/shield/shield-zone/${SIM_IDS.unknownShieldZone}/bot-detection`);
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { error: { statusCode: number } }).error.statusCode).toBe(404);
  });

  it("returns 28 daily rate-limit entries summing to the overview", async () => {
    for (const id of SIM_IDS.rateLimitIds) {
      const body = (await (await get(`/shield/metrics/rate-limit/${id}`)).json()) as {
        data: {
          overview: Record<string, number>;
          ratelimitOverviewPastTwentyEightDays: Record<string, Record<string, number>>;
        };
      };
      const days = Object.entries(body.data.ratelimitOverviewPastTwentyEightDays);
      expect(days).toHaveLength(28);
      for (const [key] of days) expect(key).toMatch(/^\d{4}-\d{2}-\d{2}$/);
      const total = days.reduce((n, [, d]) => n + (d.blockedBreaches ?? 0), 0);
      expect(body.data.overview.blockedBreaches).toBe(total);
    }
  });

  it("serves AI recommendations unwrapped, including a failed one", async () => {
    const ok = (await (
      await get(
        `/shield/waf/rules/review-triggered/ai-recommendation/${SIM_IDS.waf.zoneId}/${SIM_IDS.waf.ruleId}`,
      )
    ).json()) as { success: boolean; recommendation: string; ruleId: string };
    expect(ok.success).toBe(true);
    expect(ok.ruleId).toBe(SIM_IDS.waf.ruleId);
    for (const ch of ["<", ">", "&", "*"]) expect(ok.recommendation).toContain(ch);
    const failed = (await (
      await get(
        `/shield/waf/rules/review-triggered/ai-recommendation/${SIM_IDS.wafFailed.zoneId}/${SIM_IDS.wafFailed.ruleId}`,
      )
    ).json()) as { success: boolean; recommendation: null; errorResponse: { errorKey: string } };
    expect(failed.success).toBe(false);
    expect(failed.recommendation).toBeNull();
    expect(failed.errorResponse.errorKey).toBeTruthy();
  });
});

describe("Core pull zones", () => {
  interface PullZoneBody {
    Id: number;
    Name: string;
    Hostnames: Array<{ Value: string; IsSystemHostname: boolean; CertificateKey: string | null }>;
  }
  const spec = JSON.parse(
    readFileSync(
      new URL("../../../../shared/reference/edge-api/core-api-v1.0.0.json", import.meta.url),
      "utf8",
    ),
  ) as { components: { schemas: Record<string, { properties: Record<string, unknown> }> } };
  const specFields = (name: string) => Object.keys(spec.components.schemas[name]?.properties ?? {});

  it("lists every pull zone as a plain array by default, fields as the spec names them", async () => {
    const res = await get("/pullzone");
    expect(res.status).toBe(200);
    const zones = (await res.json()) as PullZoneBody[];
    expect(zones).toHaveLength(sim.state.pullZones.length);
    const pullZoneFields = specFields("PullZoneModel");
    const hostnameFields = specFields("HostnameModel");
    expect(pullZoneFields.length).toBeGreaterThan(100);
    for (const z of zones) {
      for (const k of Object.keys(z)) expect(pullZoneFields).toContain(k);
      for (const hn of z.Hostnames) for (const k of Object.keys(hn)) expect(hostnameFields).toContain(k);
      expect(z.Hostnames.filter((hn) => hn.IsSystemHostname).map((hn) => hn.Value)).toEqual([
        `${z.Name}.b-cdn.net`,
      ]);
      expect(z.Hostnames.every((hn) => hn.CertificateKey === null)).toBe(true);
    }
    // Every shield zone's pull zone exists, and a few pull zones have no shield zone.
    const ids = new Set(zones.map((z) => z.Id));
    for (const sz of sim.state.shieldZones) if (sz.pullZoneId !== null) expect(ids).toContain(sz.pullZoneId);
    const shielded = new Set(sim.state.shieldZones.map((sz) => sz.pullZoneId));
    expect(zones.filter((z) => !shielded.has(z.Id)).length).toBeGreaterThan(0);
  });

  it("pages with page >= 1, searches names and hostnames, refuses out-of-range values", async () => {
    const total = sim.state.pullZones.length;
    const first = (await (await get("/pullzone?page=1&perPage=5")).json()) as {
      Items: PullZoneBody[];
      CurrentPage: number;
      TotalItems: number;
      HasMoreItems: boolean;
    };
    expect(first).toMatchObject({ CurrentPage: 1, TotalItems: total, HasMoreItems: true });
    expect(first.Items).toHaveLength(5);
    const last = (await (await get(`/pullzone?page=${Math.ceil(total / 5)}&perPage=5`)).json()) as {
      HasMoreItems: boolean;
    };
    expect(last.HasMoreItems).toBe(false);

    const found = (await (await get("/pullzone?search=ACME-example")).json()) as PullZoneBody[];
    expect(found.map((z) => z.Name).sort()).toEqual(["acme-api", "acme-shop", "acme-staging", "acme-www"]);

    for (const q of ["perPage=4", "perPage=1001", "page=-1", "page=x"]) {
      const bad = await get(`/pullzone?${q}`);
      expect(bad.status).toBe(400);
      expect(await bad.json()).toMatchObject({ ErrorKey: expect.any(String), Field: q.split("=")[0] });
    }
    const withKeys = (await (await get("/pullzone?includeCertificate=true")).json()) as PullZoneBody[];
    expect(withKeys[0]?.Hostnames.some((hn) => hn.CertificateKey !== null)).toBe(true);
  });

  it("answers 401 with an empty body without a valid AccessKey", async () => {
    const res = await get("/pullzone", {});
    expect(res.status).toBe(401);
    expect(await res.text()).toBe("");
  });
});

describe("auth", () => {
  it("answers 401 in each family's shape", async () => {
    const mc = await get("/mc/apps", {});
    expect(mc.status).toBe(401);
    expect(await mc.json()).toMatchObject({ status: 401, title: "Unauthorized" });

    const zones = await get("/shield/shield-zones", { AccessKey: "wrong" });
    expect(zones.status).toBe(401);
    expect(await zones.json()).toEqual({ statusCode: 401 });

    const bot = await get(`/shield/shield-zone/${SIM_IDS.zoneEnterprise}/bot-detection`, {});
    expect(bot.status).toBe(401);
    expect(await bot.json()).toMatchObject({ status: 401 });

    const core = await get(`/dnszone/${SIM_IDS.dnsZoneCompleted}/records/scan`, { AccessKey: "nope" });
    expect(core.status).toBe(401);
    expect(await core.text()).toBe("");
  });

  it("accepts any configured key", async () => {
    const other = await startSimulator({ apiKeys: ["k1", "k2"] });
    try {
      expect((await fetch(`${other.url}/mc/apps`, { headers: { AccessKey: "k2" } })).status).toBe(200);
      expect((await fetch(`${other.url}/mc/apps`, { headers: { AccessKey: SIM_API_KEY } })).status).toBe(401);
    } finally {
      await other.close();
    }
  });
});

describe("DNS scans", () => {
  it("triggers a scan that goes from in-progress to completed", async () => {
    const zone = SIM_IDS.dnsZoneNoScan;
    expect((await get(`/dnszone/${zone}/records/scan`)).status).toBe(404);
    const trig = await send("POST", "/dnszone/records/scan", { ZoneId: zone });
    expect(trig.status).toBe(200);
    const { JobId, Status } = (await trig.json()) as { JobId: string; Status: number };
    expect(Status).toBe(1);
    const first = (await (await get(`/dnszone/${zone}/records/scan`)).json()) as {
      JobId: string;
      Status: number;
      Records: unknown[] | null;
    };
    expect(first).toMatchObject({ JobId, Status: 1, Records: null });
    await clock.advance(149);
    expect((await (await get(`/dnszone/${zone}/records/scan`)).json()) as typeof first).toMatchObject({
      Status: 1,
    });
    await clock.advance(1);
    const done = (await (await get(`/dnszone/${zone}/records/scan`)).json()) as typeof first & {
      CompletedAt: string | null;
    };
    expect(done.Status).toBe(2);
    expect(done.JobId).toBe(JobId);
    expect(done.CompletedAt).not.toBeNull();
    expect(done.Records?.length).toBeGreaterThan(10);
  });

  it("rejects both ZoneId and Domain with the Core error shape", async () => {
    const res = await send("POST", "/dnszone/records/scan", {
      ZoneId: SIM_IDS.dnsZoneCompleted,
      Domain: "a.com",
    });
    expect(res.status).toBe(400);
    const body = (await res.json()) as Record<string, unknown>;
    expect(Object.keys(body).sort()).toEqual(["ErrorKey", "Field", "Message"]);
    expect((await send("POST", "/dnszone/records/scan", {})).status).toBe(400);
    expect((await send("POST", "/dnszone/records/scan", { ZoneId: SIM_IDS.unknownDnsZone })).status).toBe(
      404,
    );
  });

  it("seeds every scan status, a large zone and many record types", async () => {
    const status = async (id: number) =>
      ((await (await get(`/dnszone/${id}/records/scan`)).json()) as { Status: number }).Status;
    expect(await status(SIM_IDS.dnsZonePendingScan)).toBe(0);
    expect(await status(SIM_IDS.dnsZoneInProgressScan)).toBe(1);
    expect(await status(SIM_IDS.dnsZoneCompleted)).toBe(2);
    expect(await status(SIM_IDS.dnsZoneFailedScan)).toBe(3);
    const large = (await (await get(`/dnszone/${SIM_IDS.dnsZoneLarge}/records/scan`)).json()) as {
      Records: Array<{ Type: number; Ttl: number; IsProxied: boolean }>;
    };
    expect(large.Records.length).toBeGreaterThanOrEqual(500);
    const types = new Set(large.Records.map((r) => r.Type));
    for (const t of [0, 1, 2, 3, 4, 8, 9, 12]) expect(types.has(t), `type ${t}`).toBe(true);
    expect(large.Records.some((r) => r.IsProxied)).toBe(true);
    const noScan = await get(`/dnszone/${SIM_IDS.dnsZoneNoScan}/records/scan`);
    expect(noScan.status).toBe(404);
    expect(await noScan.text()).toBe("");
  });
});

describe("faults", () => {
  it("resets the connection so fetch rejects", async () => {
    sim.addFault({ path: "/mc/apps", reset: true, times: 1 });
    await expect(get("/mc/apps")).rejects.toThrow();
    expect((await get("/mc/apps")).status).toBe(200);
  });

  it("pads the real answer to a huge, still valid JSON body streamed without Content-Length", async () => {
    sim.addFault({ path: "/shield/shield-zones", padToBytes: 2 * 1024 * 1024, times: 1 });
    const res = await get("/shield/shield-zones");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-length")).toBeNull();
    const text = await res.text();
    expect(Math.abs(Buffer.byteLength(text) - 2 * 1024 * 1024)).toBeLessThan(16);
    const body = JSON.parse(text) as { padding: string; data: unknown[] };
    expect(body.data.length).toBeGreaterThan(0);
  });

  it("sends malformed JSON that fails to parse", async () => {
    sim.addFault({ path: "/shield/shield-zones", body: "malformed" });
    const res = await get("/shield/shield-zones");
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text.startsWith('{"data":[')).toBe(true);
    expect(() => JSON.parse(text)).toThrow();
  });

  it("sends 429 with Retry-After seconds, HTTP date, or no header", async () => {
    const date = new Date(Date.now() + 5000).toUTCString();
    sim.addFault({ method: "GET", path: /^\/mc\//, status: 429, retryAfter: "2", times: 1 });
    sim.addFault({ path: "/shield/", status: 429, retryAfter: date, times: 1 });
    sim.addFault({ path: "/dnszone/", status: 429, times: 1 });
    const a = await get("/mc/apps");
    expect(a.status).toBe(429);
    expect(a.headers.get("retry-after")).toBe("2");
    const b = await get("/shield/shield-zones");
    expect(b.status).toBe(429);
    expect(b.headers.get("retry-after")).toBe(date);
    const c = await get(`/dnszone/${SIM_IDS.dnsZoneCompleted}/records/scan`);
    expect(c.status).toBe(429);
    expect(c.headers.has("retry-after")).toBe(false);
    // each had times: 1
    expect((await get("/mc/apps")).status).toBe(200);
    expect((await get("/shield/shield-zones")).status).toBe(200);
  });

  it("sends 500 with no body, stopping after `times`", async () => {
    sim.addFault({ path: "/shield/metrics", status: 500, times: 2 });
    const path = `/shield/metrics/rate-limit/${SIM_IDS.rateLimitIds[0]}`;
    for (let i = 0; i < 2; i++) {
      const r = await get(path);
      expect(r.status).toBe(500);
      expect(await r.text()).toBe("");
    }
    expect((await get(path)).status).toBe(200);
  });

  it("adds per-path and global latency", async () => {
    /** A request's answer, and whether it came before the simulator's clock moved `ms` past its arrival. */
    const answeredAfter = async (path: string, ms: number) => {
      const count = sim.requests.length;
      let answered = false;
      const res = get(path).then((r) => {
        answered = true;
        return r;
      });
      await sim.waitForRequest(() => sim.requests.length > count);
      await clock.advance(ms - 1);
      const early = answered;
      await clock.advance(1);
      return { early, res: await res };
    };
    sim.addFault({ path: "/mc/apps", latencyMs: 120 });
    const perPath = await answeredAfter("/mc/apps", 120);
    expect(perPath.early).toBe(false);
    expect(perPath.res.status).toBe(200);
    sim.clearFaults();
    sim.setLatency(100);
    const global = await answeredAfter("/shield/shield-zones", 100);
    expect(global.early).toBe(false);
    expect(global.res.status).toBe(200);
    sim.setLatency(0);
    // Without latency the answer comes while the clock stands still.
    const t = clock.now();
    expect((await get("/shield/shield-zones")).status).toBe(200);
    expect(clock.now()).toBe(t);
  });
});

describe("recording and state", () => {
  it("records method, path, query, lowercased headers and parsed body", async () => {
    sim.clearRequests();
    await get("/mc/apps?limit=5", { AccessKey: SIM_API_KEY, "X-Trace": "abc" });
    await send("POST", "/dnszone/records/scan", { ZoneId: SIM_IDS.dnsZoneCompleted });
    await send(
      "PUT",
      `/shield/shield-zone/${SIM_IDS.zoneEnterprise}/bot-categorization/categories/3`,
      "{oops",
    );
    expect(sim.requests).toHaveLength(3);
    const [a, b, c] = sim.requests;
    expect(a).toMatchObject({ method: "GET", path: "/mc/apps", query: { limit: "5" }, body: undefined });
    expect(a?.headers.accesskey).toBe(SIM_API_KEY);
    expect(a?.headers["x-trace"]).toBe("abc");
    expect(b).toMatchObject({ method: "POST", body: { ZoneId: SIM_IDS.dnsZoneCompleted } });
    expect(c?.body).toBe("{oops");
    expect(a?.at).toBeLessThanOrEqual(b?.at ?? 0);
    sim.clearRequests();
    expect(sim.requests).toHaveLength(0);
  });

  it("gives each simulator its own deterministic state", async () => {
    const other = await startSimulator();
    try {
      expect(other.state.apps).toEqual(sim.state.apps);
      expect(other.state.apps).not.toBe(sim.state.apps);
      sim.state.apps.length = 0;
      const page = (await (await fetch(`${other.url}/mc/apps`, { headers: auth })).json()) as AppsPage;
      expect(page.items).toHaveLength(20);
    } finally {
      await other.close();
    }
  });
});
