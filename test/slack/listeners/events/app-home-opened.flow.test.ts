import { describe, expect, it } from "vitest";
import { RANKED_ZONES } from "../../../../src/services/unusual-zones.js";
import { SIM_IDS } from "../../../../tools/simulator/index.js";
import { openHome } from "../../../support/app-home.js";
import { askAndConfirm, pendingCard } from "../../../support/change-flow.js";
import { answerTo } from "../../../support/harness.js";
import { ALICE, BOB } from "../../../support/users.js";
import { useWorld } from "../../../support/world.js";

/**
 * From a cold start (no watch), the Home says which of the workspace's zones look under attack now and how
 * to be alerted on them, at a bounded Edge cost, and it still answers when the Edge API is slow.
 */

const h = useWorld();

const metricReads = () =>
  h.sim.requests.filter(
    (r) => r.method === "GET" && /^\/shield\/metrics\/overview\/\d+\/detailed/.test(r.path),
  );
const zoneLists = () => h.sim.requests.filter((r) => r.method === "GET" && r.path === "/shield/shield-zones");
const zone = SIM_IDS.zoneUnderAttack;

describe("the Home's zones that look unusual", () => {
  it("names the zone under attack with /edge watch zone, and says how many zones it ranked of how many", async () => {
    h.sim.clearRequests();
    const home = await openHome(h, BOB);
    expect(home).toContain("Zones that look unusual now, without a watch* (1)");
    expect(home).toContain(`Zone ${zone} looks unusual now`);
    expect(home).toContain(`/edge incident ${zone}`);
    expect(home).toContain(`/edge watch zone ${zone}`);
    expect(home).toContain(`Ranked ${RANKED_ZONES} of ${SIM_IDS.shieldZoneCount} zones`);
    expect(home).toContain("`/edge status` shows the whole ranking");
    const first = metricReads().length;
    expect(first).toBeGreaterThan(0);
    expect(first).toBeLessThanOrEqual(RANKED_ZONES);

    // Opened again within the slot (by anyone in the workspace): the verdicts and the zones are known, no
    // read is made.
    const lists = zoneLists().length;
    expect(await openHome(h, ALICE)).toContain(`Zone ${zone} looks unusual now`);
    expect(metricReads().length).toBe(first);
    expect(zoneLists().length).toBe(lists);
  });

  it("when the zones' traffic is slow to come, the Home is published on time and says it is unknown", async () => {
    await h.clock.advance(2 * 60_000); // a new slot: nothing known yet
    let release = () => {};
    h.sim.addFault({
      path: /^\/shield\/metrics\/overview\/\d+\/detailed/,
      holdUntil: new Promise<void>((resolve) => {
        release = resolve;
      }),
    });
    h.sim.clearRequests();
    const before = h.slack.callsTo("views.publish").length;
    const home = openHome(h, BOB);
    // The zones are listed once the Home's deadline for them is set; their traffic reads are held.
    await h.sim.waitForRequest((r) => r.path === "/shield/shield-zones");
    await h.sim.waitForRequest((r) => /^\/shield\/metrics\/overview\/\d+\/detailed/.test(r.path));
    await h.clock.advance(4_000);
    const text = await home;
    expect(h.slack.callsTo("views.publish").length).toBe(before + 1);
    expect(text).toContain("it is unknown which look unusual");
    expect(text).not.toContain(`Zone ${zone} looks unusual now`);
    release();
  });

  it("a zone a watch already alerts on is not offered a watch", async () => {
    expect((await answerTo(h, `watch zone ${zone}`, ALICE)).text).not.toMatch(/can't|cannot|refused/i);
    const home = await openHome(h, BOB);
    expect(home).toContain("Zones that look unusual now, without a watch* (0)");
    expect(home).not.toContain(`/edge watch zone ${zone}`);
    expect(home).toContain("1 more looks unusual; a zone watch already alerts on it.");
  });
});

describe("the Home's pending approvals", () => {
  it("each links to its approval card", async () => {
    h.slack.memberships.set(BOB, ["C0001"]);
    await askAndConfirm(h, `ddos ${SIM_IDS.firstShieldZone} high`);
    const { post } = await pendingCard(h, "DDoS");
    const home = await openHome(h, BOB);
    const line = home.split("\n").find((l) => l.includes(`<@${BOB}>: *`));
    expect(line, home).toBeDefined();
    expect(line).toMatch(
      new RegExp(`\\*<https://acme\\.slack\\.com/archives/${post.args.channel}/p\\d+\\|[^>]*DDoS[^>]*>\\*`),
    );
    expect(h.slack.callsTo("chat.getPermalink")[0]?.args.channel).toBe(post.args.channel);
  });
});
