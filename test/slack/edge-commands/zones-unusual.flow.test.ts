import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SIM_IDS } from "../../../tools/simulator/index.js";
import { steppedClock } from "../../support/clock.js";
import { answerTo, blocksText, type Harness, startHarness } from "../../support/harness.js";
import { ALICE, BOB } from "../../support/users.js";

/**
 * From a cold start (no watch), `/edge zones` says which zones on its page look under attack now, with the
 * commands that look closer or watch them, and that the zones beyond the page were not checked. The page goes
 * out at once; the checks a minute has not read yet replace it when they are in.
 */

let h: Harness;
/** A fixed time of day (the simulator's too): both commands fall in one two-minute slot. */
let now = Date.UTC(2026, 10, 27, 12, 0, 30);

beforeAll(async () => {
  // Reads are counted at the simulator: a long timeout, so a read slowed by a loaded machine is not sent twice.
  h = await startHarness({ clock: steppedClock(() => now), simulatorOnClock: true, edgeTimeoutMs: 60_000 });
});
afterAll(async () => {
  await h?.close();
});

const metricReads = () =>
  h.sim.requests.filter(
    (r) => r.method === "GET" && /^\/shield\/metrics\/overview\/\d+\/detailed/.test(r.path),
  );

describe("/edge zones without any watch", () => {
  it("marks the zone under attack with /edge incident and /edge watch zone, and says the other pages were not checked", async () => {
    const zone = SIM_IDS.zoneUnderAttack;
    h.sim.clearRequests();
    const answer = await answerTo(h, "zones", BOB);
    expect(answer.text).toContain(`Zone ${zone} looks unusual now`);
    expect(answer.text).toContain(`/edge incident ${zone}`);
    expect(answer.text).toContain(`/edge watch zone ${zone}`);
    expect(answer.text).toMatch(/Zones on other pages were not checked/);
    // Bounded: at most one metrics read per zone on the page.
    const first = metricReads().length;
    expect(first).toBeGreaterThan(0);
    expect(first).toBeLessThanOrEqual(10);
    expect(h.slack.violations).toEqual([]);

    // Asked again within the slot (by anyone in the workspace): the verdicts are known, no read is made.
    const again = await answerTo(h, "zones", ALICE);
    expect(again.text).toContain(`Zone ${zone} looks unusual now`);
    expect(metricReads().length).toBe(first);
  });

  it("answers with the page at once while the zones' metrics are read, then replaces it with the checks; a known minute answers once", async () => {
    const zone = SIM_IDS.zoneUnderAttack;
    // A new minute: nothing read for it yet.
    now += 60_000;
    const res = await h.command("zones", { userId: BOB });
    expect(res.status).toBe(200);
    const placeholder = await h.slack.waitForResponse(res.responseId);
    const first = blocksText(placeholder.body.blocks);
    expect(first).toContain(`Zone ${zone}`);
    expect(first).toMatch(
      /Checking 10 zones' traffic against their last hour…; this message is replaced when they are in/,
    );
    expect(first).not.toContain("looks unusual now");
    expect(first).not.toContain("No zone on this page looks unusual");
    const replaced = await h.slack.waitForResponse(res.responseId, (r) => r !== placeholder);
    expect(replaced.body.replace_original).toBe(true);
    expect(blocksText(replaced.body.blocks)).toContain(`Zone ${zone} looks unusual now`);
    expect(blocksText(replaced.body.blocks)).not.toContain("Checking");

    const again = await h.command("zones", { userId: ALICE });
    const once = await h.slack.waitForResponse(again.responseId);
    expect(blocksText(once.body.blocks)).toContain(`Zone ${zone} looks unusual now`);
    await h.settled();
    expect(h.slack.responsesTo(again.responseId)).toHaveLength(1);
  });

  it("reads a key's zones once in its own minute, which starts at the key's second, so many workspaces' reads spread over the clock's minute", async () => {
    // TEST_EDGE_KEY's minute starts 21.653 s past the clock's (from its hash): 12:01:21.653 to 12:02:21.653.
    now = Date.UTC(2026, 10, 27, 12, 2, 20);
    const before = metricReads().length;
    const known = await answerTo(h, "zones", BOB);
    expect(known.text).toContain("looks unusual now");
    // A new clock minute (12:01:30 → 12:02:20), but the same key minute: nothing read.
    expect(metricReads().length).toBe(before);
    now = Date.UTC(2026, 10, 27, 12, 2, 23);
    const read = await answerTo(h, "zones", ALICE);
    expect(read.text).toContain("looks unusual now");
    // The same clock minute, the key's next: read again.
    expect(metricReads().length).toBeGreaterThan(before);
  });
});
