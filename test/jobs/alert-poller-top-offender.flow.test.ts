/**
 * The attack alert's "Top offender" (and its Block button) is the busiest IP of the zone's event log in the 10
 * minutes before it fired, whatever order the Edge API gives the groups in: the search document promises none.
 * When not every group was read, the alert says the top is of the groups read.
 */
import { describe, expect, it } from "vitest";
import { SIM_IDS, type Simulator } from "../../tools/simulator/index.js";
import { pinReadings } from "../support/adversary.js";
import { answerTo, findButtons, TEST_EDGE_KEY } from "../support/harness.js";
import { MIN, parents, T0, text, usePollerRig } from "./alert-poller-support.js";

const ZONE = SIM_IDS.zoneEnterprise;
const rig = usePollerRig();

/** The IP groups of the zone's last 10 minutes on one page of `pageSize`, as the simulator answers now. */
async function ipGroups(sim: Simulator, pageSize: number): Promise<{ ip: string; count: number }[]> {
  const res = await fetch(`${sim.url}/shield/event-logs/${ZONE}/search`, {
    method: "POST",
    headers: { AccessKey: TEST_EDGE_KEY, "content-type": "application/json" },
    body: JSON.stringify({ from: rig.now - 10 * MIN, to: rig.now, groupBy: ["ip"], pageSize }),
  });
  const body = (await res.json()) as { groups: { key: { ip: string }; count: number }[] };
  return body.groups.map((g) => ({ ip: g.key.ip, count: g.count }));
}

/**
 * A zone watch, an attack on the zone, and the alert's parent message once it fired, the event log answering
 * with the readings `pin` chooses (and `extraGroups` more IPs with a few events each in the last 10 minutes).
 */
async function alerted(pin: Record<string, unknown>, extraGroups = 0) {
  rig.now = T0;
  const started = await rig.start();
  const { sim, h, poller } = started;
  pinReadings(sim, pin);
  expect((await answerTo(h, `watch zone ${ZONE}`, "U0001")).text).toContain(`Watching shield zone ${ZONE}`);
  await poller.tick();
  sim.stageAttack(ZONE, { startsAt: T0 + 90_000, rampMinutes: 0, durationMinutes: 60, peakPerMinute: 800 });
  if (extraGroups > 0) sim.scaleIncident(ZONE, { eventLogGroups: extraGroups });
  await rig.minutes(8, [poller], () => parents(h).length > 0);
  const parent = parents(h)[0];
  expect(parent, "an alert was posted").toBeDefined();
  return { ...started, parent };
}

describe("an attack alert's top offender", () => {
  it("is the busiest IP of the last 10 minutes even when the event log answers least busy first", async () => {
    const { sim, parent } = await alerted({ "event-logs.order": "reverse" });
    // The same search as the alert's, at the same time: the first group as answered is not the busiest.
    const answered = await ipGroups(sim, 500);
    const most = Math.max(...answered.map((g) => g.count));
    expect(answered[0]?.count).toBeLessThan(most);

    const shown = /Top offender when it fired: `([^`]+)`/.exec(text(parent))?.[1];
    expect(shown, text(parent)).toBeDefined();
    // The busiest (one of them, should several have as many events).
    expect(answered.find((g) => g.ip === shown)?.count, `${shown} in ${text(parent)}`).toBe(most);
    expect(text(parent)).not.toContain("top of the first");
    expect(findButtons(parent?.args.blocks).map((b) => b.text)).toContain(`Block ${shown}`);
  });

  it("says it is the top of the groups read when there were more than it reads, without totalPages too", async () => {
    const { parent } = await alerted(
      { "event-logs.order": "reverse", "event-logs.total-pages": "absent" },
      2_600,
    );
    expect(text(parent)).toMatch(/Top offender when it fired: `[^`]+` · top of the first 2,000 groups/);
    const block = findButtons(parent?.args.blocks).find((b) => b.text.startsWith("Block "));
    expect(JSON.stringify(block?.confirm)).toContain("the busiest of the first 2,000 groups read");
  });
});
