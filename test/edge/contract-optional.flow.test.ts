/** Fields the document leaves optional skip their row (counted), and a 202 AcceptedResult says what it is. */
import { describe, expect, it } from "vitest";
import { describeEdgeError } from "../../src/edge/errors.js";
import { exactPath, SIM_IDS } from "../../tools/simulator/index.js";
import { rejection, useSimulatorClient } from "../support/sim-client.js";

const s = useSimulatorClient();
const answer = (path: string, body: unknown) => s.sim.addFault({ path: exactPath(path), status: 200, body });

describe("a 202 AcceptedResult from GET /shield/shield-zone/{id}", () => {
  it("is read as a zone not ready yet, not as an answer edgeops could not understand", async () => {
    s.sim.addFault({
      path: exactPath(`/shield/shield-zone/${SIM_IDS.zoneQuiet}`),
      status: 202,
      body: {
        location: null,
        value: null,
        formatters: null,
        contentTypes: null,
        declaredType: null,
        statusCode: 202,
      },
    });
    const e = await rejection(s.client.getShieldZone(SIM_IDS.zoneQuiet));
    expect(e.kind).toBe("not_ready");
    expect(describeEdgeError(e)).toBe(
      `The Edge API accepted Shield zone ${SIM_IDS.zoneQuiet} but has not finished setting it up (HTTP 202), so there is nothing to show yet; try again in a minute.`,
    );
  });
});

describe("a read answered 202 without its answer", () => {
  it("is not ready, whether the body is an AcceptedResult without fields or the envelope without data", async () => {
    const zone = SIM_IDS.zoneQuiet;
    s.sim.addFault({ path: exactPath(`/shield/shield-zone/${zone}`), status: 202, body: {} });
    s.sim.addFault({
      path: exactPath(`/shield/shield-zone/${zone}/access-lists/1`),
      status: 202,
      body: { data: null, error: null },
    });
    const zoneRead = await rejection(s.client.getShieldZone(zone));
    const listRead = await rejection(s.client.getCustomAccessList(zone, 1));
    expect([zoneRead.kind, listRead.kind]).toEqual(["not_ready", "not_ready"]);
    expect(describeEdgeError(listRead)).toBe(
      `The Edge API accepted Access list 1 of shield zone ${zone} but has not finished setting it up (HTTP 202), so there is nothing to show yet; try again in a minute.`,
    );
  });
});

describe("rows without a field the document leaves optional", () => {
  it("shield zones without shieldZoneId", async () => {
    answer("/shield/shield-zones", {
      data: [{ shieldZoneId: 5, planType: 1 }, { pullZoneId: 9 }, { shieldZoneId: null }],
      page: { currentPage: 1, totalCount: 3 },
    });
    const page = await s.client.listShieldZones();
    expect(page.items.map((z) => z.shieldZoneId)).toEqual([5]);
    expect(page.skipped).toBe(2);
  });

  it("event-log groups without count", async () => {
    answer(`/shield/event-logs/${SIM_IDS.zoneQuiet}/search`, {
      groups: [{ key: { ip: "192.0.2.1" }, count: 4 }, { key: { ip: "192.0.2.2" } }],
      total: 2,
    });
    const r = await s.client.searchEventLogs(SIM_IDS.zoneQuiet, {
      from: s.sim.now() - 60_000,
      to: s.sim.now(),
    });
    expect(r.groups.map((g) => g.key.ip)).toEqual(["192.0.2.1"]);
    expect(r.skippedGroups).toBe(1);
  });

  it("rate limits without ratelimitId", async () => {
    answer(`/shield/metrics/rate-limits/${SIM_IDS.zoneQuiet}`, {
      data: [{ ratelimitId: 3, overview: { totalBreaches: 1 } }, { overview: { totalBreaches: 2 } }],
      error: null,
    });
    const { rules, skipped } = await s.client.getRateLimits(SIM_IDS.zoneQuiet);
    expect(rules.map((r) => r.rateLimitId)).toEqual([3]);
    expect(skipped).toBe(1);
  });

  it("pull zones and DNS zones without Id, apps without id", async () => {
    answer("/pullzone", {
      Items: [{ Id: 1, Name: "a" }, { Name: "b" }],
      CurrentPage: 1,
      HasMoreItems: false,
    });
    const pulls = await s.client.listPullZones();
    expect(pulls.items.map((p) => p.id)).toEqual([1]);
    expect(pulls.skipped).toBe(1);
    answer("/dnszone", {
      Items: [{ Domain: "x.example" }, { Id: 2, Domain: "y.example" }],
      HasMoreItems: false,
    });
    const dns = await s.client.listDnsZones();
    expect(dns.items.map((d) => d.id)).toEqual([2]);
    expect(dns.skipped).toBe(1);
    answer("/mc/apps", {
      items: [
        { name: "no id", status: "active" },
        { id: "a1", name: "ok" },
      ],
      cursor: null,
    });
    const apps = await s.client.listApps();
    expect(apps.items.map((a) => a.id)).toEqual(["a1"]);
    expect(apps.skipped).toBe(1);
  });

  it("a zone read by its id without shieldZoneId is that zone; an app with an empty id is left out", async () => {
    answer(`/shield/shield-zone/${SIM_IDS.zoneQuiet}`, { data: { planType: 2 } });
    expect(await s.client.getShieldZone(SIM_IDS.zoneQuiet)).toMatchObject({
      shieldZoneId: SIM_IDS.zoneQuiet,
      planType: 2,
    });
    answer("/mc/apps", { items: [{ id: "", name: "blank" }, { id: "a2" }] });
    expect(await s.client.listApps()).toMatchObject({ items: [{ id: "a2" }], skipped: 1 });
  });

  it("any other fault in a row still fails the answer", async () => {
    answer("/shield/shield-zones", { data: [{ shieldZoneId: "five" }] });
    expect((await rejection(s.client.listShieldZones())).kind).toBe("invalid_response");
  });
});
