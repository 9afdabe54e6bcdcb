/**
 * /edge timeline's peaks say when their busiest bucket ended, through the receiver and the simulator on one
 * controlled clock: a peak is never dated before the attack that made it began.
 */
import { afterEach, describe, expect, it } from "vitest";
import { SIM_IDS, startSimulator } from "../../../tools/simulator/index.js";
import { steppedClock } from "../../support/clock.js";
import { blocksText, type Harness, startHarness, TEST_EDGE_KEY } from "../../support/harness.js";

const ZONE = SIM_IDS.zoneEnterprise;
const MIN = 60_000;
// Mid-bucket: the attack starts a minute into a two-minute bucket.
const T0 = Date.UTC(2026, 7, 20, 10, 0, 0);
const ATTACK_AT = T0 + 3 * MIN;

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
});

/** One minute of attack from ATTACK_AT, cut off there (no fade), then the clock at T0 + 20 min. */
async function attackedZone(): Promise<Harness> {
  const at = { now: T0 };
  const clock = steppedClock(() => at.now);
  const sim = await startSimulator({ apiKeys: [TEST_EDGE_KEY], clock });
  closers.push(() => sim.close());
  const h = await startHarness({ sim, clock });
  closers.push(() => h.close());
  sim.stageAttack(ZONE, { startsAt: ATTACK_AT, rampMinutes: 0, durationMinutes: 1, peakPerMinute: 50_000 });
  at.now = ATTACK_AT + MIN;
  sim.calm();
  at.now = T0 + 20 * MIN;
  return h;
}

/** The epoch seconds of every date token on the line that starts with `prefix`. */
function datesOn(text: string, prefix: string): number[] {
  const line = text.split("\n").find((l) => l.includes(prefix)) ?? "";
  return [...line.matchAll(/<!date\^(\d+)\^/g)].map((m) => Number(m[1]));
}

describe("/edge timeline's peaks", () => {
  it("are dated at the end of their busiest bucket, never before the attack began", async () => {
    const h = await attackedZone();
    const res = await h.command(`timeline ${ZONE} 1h`, { userId: "U0001", channelId: "C0001" });
    const answer = await h.slack.waitForResponse(
      res.responseId,
      (r) => r.body.replace_original === true,
      10_000,
    );
    const text = blocksText(answer.body.blocks);
    const dates = datesOn(text, "*Peaks*");
    expect(dates.length, text).toBeGreaterThan(0);
    for (const d of dates) expect(d * 1000, text).toBeGreaterThan(ATTACK_AT);
    expect(text).toMatch(/DDoS [\d,]+ in the 2 min to <!date/);
  });
});
