/**
 * A zone watch under the date-key forms the documents leave open: with keys it can
 * read it sees the attack as with ISO keys; with keys it cannot read it says so instead of staying quiet.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createPoller } from "../../src/jobs/alerts.js";
import { type DateKeyFormat, SIM_IDS, startSimulator } from "../../tools/simulator/index.js";
import { steppedClock } from "../support/clock.js";
import { answerTo, blocksText, startHarness, TEST_EDGE_KEY } from "../support/harness.js";

const MIN = 60_000;
const T0 = Date.UTC(2026, 7, 20, 10, 0, 30);
const ZONE = SIM_IDS.zoneEnterprise;

let clock = T0;
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function setup(dateKeyFormat: DateKeyFormat) {
  clock = T0;
  const sim = await startSimulator({
    apiKeys: [TEST_EDGE_KEY],
    clock: steppedClock(() => clock),
    dateKeyFormat,
  });
  cleanups.push(() => sim.close());
  const h = await startHarness({ sim, clock: steppedClock(() => clock) });
  cleanups.push(() => h.close());
  const poller = createPoller({
    deps: h.deps,
    clientFor: h.app.env.clientFor,
    clock: steppedClock(() => clock),
  });
  cleanups.push(() => poller.stop());
  return { sim, h, poller };
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
      for (let i = 0; i < 8; i++) {
        clock += MIN;
        await poller.tick();
      }
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
    const res = await h.command(`incident ${ZONE}`);
    const card = await h.slack.waitForResponse(
      res.responseId,
      (r) => r.body.replace_original === true,
      15_000,
    );
    const text = blocksText(card.body.blocks);
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
