import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SIM_IDS } from "../../../tools/simulator/index.js";
import { answerTo, type Harness, startHarness } from "../../support/harness.js";
import { BOB } from "../../support/users.js";

/**
 * From a cold start (no watch), `/edge zones` says which zones on its page look under attack now, with the
 * commands that look closer or watch them, and that the zones beyond the page were not checked.
 */

let h: Harness;

beforeAll(async () => {
  h = await startHarness();
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
    expect(metricReads().length).toBeLessThanOrEqual(10);
    expect(h.slack.violations).toEqual([]);
  });
});
