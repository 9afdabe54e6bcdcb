import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SIM_IDS } from "../../tools/simulator/index.js";
import { blocksText, type Harness, startHarness } from "../support/harness.js";

/**
 * The names a zones page shows are kept per key in a compact form (one string a pull zone); what the
 * page says of a pull zone without a name, without hostnames, or with long ones is what the API said.
 */
describe("/edge zones names a pull zone as the API lists it", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
    const pullZones = h.sim.state.pullZones as { Id: number; Name: string | null; Hostnames: unknown[] }[];
    const shop = pullZones.find((p) => p.Id === 2310037);
    if (!shop) throw new Error("the simulator's acme-shop pull zone is missing");
    shop.Name = null;
    // Two other pull zones that have shield zones (so a page shows them).
    const shielded = new Set(h.sim.state.shieldZones.map((z) => z.pullZoneId));
    const [second, third] = pullZones.filter((p) => p.Id !== 2310037 && shielded.has(p.Id));
    if (!second || !third) throw new Error("the simulator has too few shielded pull zones");
    second.Hostnames = [];
    third.Hostnames = [
      { Id: 1, Value: `${"a".repeat(60)}.${"b".repeat(60)}.example.com`, IsSystemHostname: false },
      { Id: 2, Value: "12:34.example.com", IsSystemHostname: false },
    ];
  });
  afterAll(async () => {
    await h?.close();
  });

  async function namedPages(): Promise<string> {
    const first = await h.command("zones");
    await h.slack.waitForResponse(first.responseId);
    await h.settled();
    const pages: string[] = [];
    for (const page of ["zones", "zones 2", "zones 3"]) {
      const res = await h.command(page);
      pages.push(blocksText((await h.slack.waitForResponse(res.responseId)).body.blocks));
    }
    return pages.join("\n");
  }

  it("no name, no hostnames, and hostnames with digits and colons, each as read", async () => {
    const text = await namedPages();
    // No name: the id, and its hostnames still shown.
    expect(text).toContain(
      `*Zone ${SIM_IDS.firstShieldZone}* · shop.acme-example.com, acme-shop.b-cdn.net\n      pull zone 2310037 ·`,
    );
    expect(text).toContain("no hostname");
    expect(text).toContain(`${"a".repeat(60)}.${"b".repeat(60)}.example.com, 12:34.example.com`);
    expect(h.slack.violations).toEqual([]);
  });
});
