/**
 * A zone watch under the date-key forms the documents leave open: with keys it can
 * read it sees the attack as with ISO keys; with keys it cannot read it says so instead of staying quiet.
 */
import { describe, expect, it } from "vitest";
import { type DateKeyFormat, SIM_IDS, startSimulator } from "../../tools/simulator/index.js";
import { steppedClock } from "../support/clock.js";
import { answerTo, blocksText, TEST_EDGE_KEY } from "../support/harness.js";
import { incidentCard } from "../support/incident-card.js";
import { T0, usePollerRig } from "./alert-poller-support.js";

const ZONE = SIM_IDS.zoneEnterprise;

const rig = usePollerRig();

/** The rig at T0 on a simulator that keys its metrics' dates in `dateKeyFormat`. */
async function setup(dateKeyFormat: DateKeyFormat) {
  rig.now = T0;
  const sim = await startSimulator({
    apiKeys: [TEST_EDGE_KEY],
    clock: steppedClock(() => rig.now),
    dateKeyFormat,
  });
  rig.defer(() => sim.close());
  return rig.start({ sim });
}

describe("zone watch and the metrics' date keys", () => {
  for (const format of ["us", "compact"] as const) {
    it(`sees an attack when the series are keyed "${format}"`, async () => {
      const { sim, h, poller } = await setup(format);
      await answerTo(h, `watch zone ${ZONE}`, "U0001");
      await poller.tick();
      sim.stageAttack(ZONE, {
        startsAt: T0 + 90_000,
        rampMinutes: 0,
        durationMinutes: 60,
        peakPerMinute: 800,
      });
      await rig.minutes(8, poller);
      const posted = h.slack.callsTo("chat.postMessage").filter((c) => c.args.channel === "C0001");
      expect(posted.length).toBeGreaterThan(0);
      expect(blocksText(posted[0]?.args.blocks)).toContain(String(ZONE));
    });
  }

  it("says it can't read the zone's metrics when their keys are no date it knows", async () => {
    const { h, poller } = await setup("unknown");
    await answerTo(h, `watch zone ${ZONE}`, "U0001");
    await poller.tick();
    const [watch] = await h.store.watches.list("T0001", "C0001");
    expect(watch?.lastError).toContain("edgeops can't read this zone's metrics");
    expect(watch?.lastError).toContain("this watch cannot see an attack on it");
    const list = await answerTo(h, "watch list", "U0001");
    expect(list.text).toContain("can't read this zone's metrics");
  });

  it("the incident card's traffic section says so too", async () => {
    const { h } = await setup("unknown");
    const { text } = await incidentCard(h, ZONE);
    expect(text).toContain("Traffic and threats");
    expect(text).toContain("edgeops can't read this zone's metrics");
    expect(text).toContain("the lines leave those times out");
  });

  it("/edge ratelimit shows days it cannot date as written, last, and says so", async () => {
    const { h, sim } = await setup("iso");
    sim.addFault({
      path: `/shield/metrics/rate-limit/${SIM_IDS.rateLimitIds[0]}`,
      status: 200,
      body: {
        data: {
          overview: { totalBreaches: 6 },
          ratelimitOverviewPastTwentyEightDays: {
            "8/10/2026": { totalBreaches: 1 },
            "Week 32": { totalBreaches: 2 },
            "7/28/2026": { totalBreaches: 3 },
          },
        },
        error: null,
      },
    });
    const { text } = await answerTo(h, `ratelimit ${SIM_IDS.rateLimitIds[0]}`, "U0001");
    expect(text).toContain("2026-07-28 → Week 32");
    expect(text).toContain("1 of these days came with a date edgeops could not read");
  });
});
