/**
 * Five minutes before a temporary mitigation's undo, while the zone's alert still fires, the alert's thread
 * says so, with Extend: once per change and undo time across replicas (two jobs tick side by side), again
 * after an Extend moved the undo, and not at all once the alert has resolved. Through the real receiver, an
 * attack staged in the Edge API simulator, and the jobs' ticks on the test's clock.
 */
import { describe, expect, it } from "vitest";
import { createUndoHeadsUp, type UndoHeadsUpJob } from "../../src/jobs/undo-heads-up.js";
import { ACTIONS } from "../../src/slack/ids.js";
import { SIM_IDS } from "../../tools/simulator/index.js";
import { postgresTests } from "../support/both-stores.js";
import { approvePending, askAndConfirm } from "../support/change-flow.js";
import { answerTo, blocksText, findButtons, type Harness } from "../support/harness.js";
import { ALICE, BOB } from "../support/users.js";
import { MIN, replies, T0, text, usePollerRig } from "./alert-poller-support.js";

const ZONE = SIM_IDS.zoneEnterprise;
const LABEL = `Block IP 192.0.2.9 on shield zone ${ZONE}`;

const rig = usePollerRig();

const headsUps = (h: Harness, ts: string) =>
  replies(h, ts).filter((m) => text(m).includes("while this alert is still firing"));

async function alertFiring(postgres = false) {
  rig.now = T0;
  const { sim, h, poller } = await rig.start({ postgres });
  await answerTo(h, `watch zone ${ZONE} sensitivity normal`, ALICE);
  await poller.tick();
  sim.stageAttack(ZONE, { startsAt: T0 + 90_000, rampMinutes: 1, durationMinutes: 90, peakPerMinute: 800 });
  await rig.minutes(10, poller, () => h.slack.callsTo("chat.postMessage").some((c) => !c.args.thread_ts));
  const ts = (await h.store.episodes.listOpen("T0001"))[0]?.messageTs as string;
  expect(ts).toBeTruthy();
  // Two replicas' heads-up jobs, ticked side by side.
  const jobs = [createUndoHeadsUp(h.app.env), createUndoHeadsUp(h.app.env)];
  rig.defer(async () => {
    for (const j of jobs) await j.stop();
  });
  return { sim, h, poller, ts, jobs };
}

/** Bob blocks the IP for `words` in the alert's channel, Carol approves: the request in force. */
async function temporaryBlock(h: Harness, words: string) {
  await askAndConfirm(h, `block ${ZONE} 192.0.2.9 ${words}`);
  await approvePending(h, LABEL);
  const r = (await h.store.timeline.inForceOnZone("T0001", ZONE, 10))[0];
  expect(r?.undoAt).not.toBeNull();
  return r!;
}

const tickAll = async (jobs: UndoHeadsUpJob[]) =>
  (await Promise.all(jobs.map((j) => j.tick()))).reduce((a, b) => a + b);

describe("the heads-up before a temporary mitigation's undo", () => {
  for (const postgres of [false, true])
    it.runIf(!postgres || postgresTests)(
      `is posted once, five minutes before, while the alert fires; Extend moves the undo and a later heads-up comes (${postgres ? "PostgreSQL" : "SQLite"})`,
      async () => {
        const { h, poller, ts, jobs } = await alertFiring(postgres);
        const r = await temporaryBlock(h, "for 20m");
        const undoAt = r.undoAt as number;

        // Just before the heads-up point (the watch evaluated meanwhile, the attack on): nothing.
        rig.now += 5 * MIN;
        await poller.tick();
        expect(await tickAll(jobs)).toBe(0);
        rig.now = undoAt - 5 * MIN - 1_000;
        await poller.tick();
        expect(await tickAll(jobs)).toBe(0);
        expect(headsUps(h, ts)).toHaveLength(0);
        rig.now = undoAt - 5 * MIN;
        await poller.tick();
        expect((await h.store.episodes.listOpen("T0001"))[0]?.status).toBe("firing");
        expect(await tickAll(jobs)).toBe(1);
        const posted = headsUps(h, ts);
        expect(posted).toHaveLength(1);
        expect(posted[0]?.args.channel).toBe("C0001");
        expect(text(posted[0])).toContain(`*${LABEL}* ends <!date^${Math.floor(undoAt / 1000)}^{time}`);
        expect(text(posted[0])).toContain("in 5 min, while this alert is still firing");
        const buttons = findButtons(posted[0]?.args.blocks);
        expect(buttons.map((b) => b.action_id)).toEqual([
          ACTIONS.makePermanent,
          ACTIONS.extend30m,
          ACTIONS.extend2h,
        ]);

        // Later ticks, on either replica, post it no more.
        for (let i = 0; i < 3; i++) {
          rig.now += MIN;
          expect(await tickAll(jobs)).toBe(0);
        }
        expect(headsUps(h, ts)).toHaveLength(1);

        // Extend 30 min from the heads-up: the undo moves, and its heads-up comes five minutes before the new time.
        const extend = buttons.find((b) => b.action_id === ACTIONS.extend30m)!;
        const res = await h.click(extend, { userId: BOB, channelId: "C0001", messageTs: ts });
        const answer = await h.slack.waitForResponse(res.responseId, () => true, 10_000);
        expect(blocksText(answer.body.blocks)).toContain("is now undone automatically");
        const moved = (await h.store.changeRequests.get(r.id))?.undoAt as number;
        expect(moved).toBe(undoAt + 30 * MIN);
        rig.now = moved - 5 * MIN - 1_000;
        await poller.tick();
        expect(await tickAll(jobs)).toBe(0);
        rig.now = moved - 4 * MIN;
        await poller.tick();
        expect((await h.store.episodes.listOpen("T0001"))[0]?.status).toBe("firing");
        expect(await tickAll(jobs)).toBe(1);
        const second = headsUps(h, ts);
        expect(second).toHaveLength(2);
        expect(text(second[1])).toContain(`ends <!date^${Math.floor(moved / 1000)}^{time}`);
        expect(text(second[1])).toContain("in 4 min");
        expect(await tickAll(jobs)).toBe(0);
        expect(h.slack.violations).toEqual([]);
      },
      90_000,
    );

  it("is not posted once the zone's alert has resolved", async () => {
    const { sim, h, poller, ts, jobs } = await alertFiring();
    const r = await temporaryBlock(h, "for 30m");
    sim.calm();
    await rig.minutes(20, poller, () => replies(h, ts).some((m) => text(m).includes("Resolved after")));
    expect((await h.store.episodes.listOpen("T0001")).length).toBe(0);
    rig.now = (r.undoAt as number) - 4 * MIN;
    expect(await tickAll(jobs)).toBe(0);
    expect(headsUps(h, ts)).toHaveLength(0);
    expect(h.slack.callsTo("chat.postMessage").filter((m) => text(m).includes("still firing"))).toHaveLength(
      0,
    );
  }, 90_000);
});
