/** The card's top offenders do not come from the first page alone (the API promises no order). */
import { describe, expect, it } from "vitest";
import { CARD_SEARCH_MAX_PAGES, offendersSearch } from "../../src/services/incident.js";
import { exactPath, SIM_IDS } from "../../tools/simulator/index.js";
import { pinReadings } from "../support/adversary.js";
import { useSimulatorClient } from "../support/sim-client.js";

const s = useSimulatorClient();
const ZONE = SIM_IDS.zoneQuiet;

const group = (ip: string, count: number) => ({ key: { ip }, count, context: { blocked: count } });

/** The zone's busiest IPs of the ten minutes before the simulator's now, as the card reads them. */
function ipsOfLastTenMinutes() {
  const now = s.sim.now();
  return offendersSearch(s.client, ZONE, { eventLogFrom: now - 600_000, eventLogTo: now }, "ip");
}

describe("top offenders", () => {
  it("read every page of groups: the busiest on a later page still comes first", async () => {
    const path = exactPath(`/shield/event-logs/${ZONE}/search`);
    const first = Array.from({ length: 500 }, (_, i) => group(`10.0.${i >> 8}.${i & 255}`, 1 + (i % 3)));
    s.sim.addFault({
      path,
      status: 200,
      times: 1,
      body: { groups: first, total: 502, totalPages: 2, page: 0 },
    });
    s.sim.addFault({
      path,
      status: 200,
      times: 1,
      body: {
        groups: [group("192.0.2.9", 999), { key: { ip: "192.0.2.10" } }],
        total: 502,
        totalPages: 2,
        page: 1,
      },
    });
    const top = await ipsOfLastTenMinutes();
    expect(top.offenders[0]).toMatchObject({ value: "192.0.2.9", count: 999 });
    expect(top.readGroups).toBeUndefined();
    expect(top.skippedGroups).toBe(1);
    expect(s.sim.requests.map((r) => (r.body as { page: number }).page)).toEqual([0, 1]);
  });

  it("stops after a bounded number of pages and says the top is of the groups read", async () => {
    s.sim.scaleIncident(ZONE, { eventLogGroups: 2_600 });
    try {
      const top = await ipsOfLastTenMinutes();
      const pages = s.sim.requests.map((r) => (r.body as { page: number }).page);
      expect([...new Set(pages)]).toEqual([0, 1, 2, 3].slice(0, CARD_SEARCH_MAX_PAGES));
      expect(top.readGroups).toBe(CARD_SEARCH_MAX_PAGES * 500);
      expect(top.total).toBeGreaterThan(top.readGroups ?? 0);
    } finally {
      s.sim.scaleIncident(ZONE, { eventLogGroups: 0 });
    }
  });

  it("without totalPages, judges the pages from total: reads on to the bound and says the top is of the groups read", async () => {
    s.sim.scaleIncident(ZONE, { eventLogGroups: 2_600 });
    const restore = pinReadings(s.sim, { "event-logs.total-pages": "absent" });
    try {
      const top = await ipsOfLastTenMinutes();
      const pages = s.sim.requests.map((r) => (r.body as { page: number }).page);
      expect(pages).toEqual([0, 1, 2, 3].slice(0, CARD_SEARCH_MAX_PAGES));
      expect(top.readGroups).toBe(CARD_SEARCH_MAX_PAGES * 500);
      expect(top.total).toBeGreaterThan(top.readGroups ?? 0);
    } finally {
      restore();
      s.sim.scaleIncident(ZONE, { eventLogGroups: 0 });
    }
  });
});

describe("the card's offender fields", () => {
  it('say "top of the first N groups" when not every group was read', async () => {
    const { incidentCard } = await import("../../src/slack/blocks/incident.js");
    const { incidentRange } = await import("../../src/services/incident.js");
    const { blocksText } = await import("../support/harness.js");
    const o = {
      value: "192.0.2.9",
      count: 9,
      action: null,
      actions: { blocked: 0, challenged: 0, logged: 0 },
      country: null,
      asn: null,
    };
    const field = (readGroups?: number) => ({
      ok: { dimension: "ip" as const, total: 10_000, offenders: [o], ...(readGroups ? { readGroups } : {}) },
    });
    const picture = (readGroups?: number) => ({
      zoneId: ZONE,
      range: incidentRange("1h", Date.UTC(2026, 7, 20, 12)),
      zone: { error: "z" },
      traffic: { error: "t" },
      offenders: {
        ok: { byDimension: { ip: field(readGroups), asn: field(), country: field(), ja4: field() } },
      },
      waf: { error: "w" },
      rateLimits: { error: "r" },
      apps: { error: "a" },
      mitigated: new Map(),
      pendingAccess: new Map(),
    });
    const text = (p: ReturnType<typeof picture>) =>
      blocksText(incidentCard(p as never, { isPublic: false, newRequestId: () => "r-0123456789" }).blocks);
    expect(text(picture(2000))).toContain("10,000 in all · top of the first 2,000 groups");
    expect(text(picture())).not.toContain("top of the first");
  });
});
