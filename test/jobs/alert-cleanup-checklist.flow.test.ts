/**
 * When a zone's alert resolves, its thread gets a cleanup checklist after the story: every edgeops change in
 * force on the zone from every channel (a private channel's by what it does alone), each temporary one with
 * Undo now, Make permanent and Extend, each permanent one with its review date and Undo… (its undoing command). The buttons are pressed as
 * Slack sends them (signed block_actions) and their effect read back from the store, the Edge API simulator
 * and the approval card's redraw.
 */
import { describe, expect, it } from "vitest";
import { createChangeSweeper } from "../../src/jobs/change-sweeps.js";
import { REVIEW_AFTER_MS } from "../../src/services/in-force.js";
import { ACTIONS } from "../../src/slack/ids.js";
import { SIM_IDS } from "../../tools/simulator/index.js";
import { approvePending, askAndConfirm } from "../support/change-flow.js";
import { answerTo, blocksText, cardUpdate, findButtons, type Harness } from "../support/harness.js";
import { ALICE, BOB, CAROL } from "../support/users.js";
import { MIN, replies, T0, text, usePollerRig } from "./alert-poller-support.js";

const ZONE = SIM_IDS.zoneEnterprise;
const DAVE = "U0004"; // neither a requester nor an approver
const PRIVATE = "G0PRIV";
const PUBLIC = "C0PUB";

const rig = usePollerRig();

/** A zone watch in C0001 and an attack on its zone: once the alert's parent is posted, its ts. */
async function alertFiring() {
  rig.now = T0;
  const { sim, h, poller } = await rig.start();
  h.slack.users.set(DAVE, { id: DAVE, name: "dave" });
  h.slack.memberships.set(BOB, [PRIVATE, PUBLIC]);
  h.slack.memberships.set(CAROL, [PRIVATE, PUBLIC]);
  await answerTo(h, `watch zone ${ZONE} sensitivity normal`, ALICE);
  await poller.tick();
  sim.stageAttack(ZONE, { startsAt: T0 + 90_000, rampMinutes: 1, durationMinutes: 60, peakPerMinute: 800 });
  await rig.minutes(10, poller, () => h.slack.callsTo("chat.postMessage").some((c) => !c.args.thread_ts));
  const ts = (await h.store.episodes.listOpen("T0001"))[0]?.messageTs as string;
  expect(ts).toBeTruthy();
  const resolve = async () => {
    sim.calm();
    await rig.minutes(20, poller, () => checklistOf(h, ts) !== undefined);
    const checklist = checklistOf(h, ts);
    expect(checklist, "the checklist is posted").toBeDefined();
    return checklist!;
  };
  return { sim, h, poller, ts, resolve };
}

const checklistOf = (h: Harness, ts: string) =>
  replies(h, ts).find((m) => /Cleanup|No edgeops changes in force/.test(text(m)));

/** Bob asks in `channelId`, Carol approves: the request id of the change now in force. */
async function blockApplied(h: Harness, words: string, label: string, channelId: string) {
  await askAndConfirm(h, words, { channelId });
  await approvePending(h, label);
  const all = await h.store.timeline.inForceOnZone("T0001", ZONE, 100);
  const r = all.find((x) => JSON.stringify(x.params).includes(label.split(" ")[2] ?? "?"));
  expect(r?.state).toBe("applied");
  return r!;
}

const blockedIps = (h: Harness) =>
  (h.sim.state.accessLists.get(ZONE) ?? [])
    .filter((l) => l.name === "edgeops: blocked IPs")
    .flatMap((l) => l.content.split("\n").filter(Boolean));

/** The section of the checklist that names `change`. */
function itemText(blocks: unknown, change: string): string {
  const sections = (blocks as { type: string; text?: { text: string } }[]).filter(
    (b) => b.type === "section",
  );
  return sections.find((b) => b.text?.text.includes(change))?.text?.text ?? "";
}

/** The buttons of the item that names `change` (the actions block right after its section). */
function itemButtons(blocks: unknown, change: string) {
  const list = blocks as { type: string; text?: { text: string } }[];
  const at = list.findIndex((b) => b.type === "section" && b.text?.text.includes(change));
  const next = list[at + 1];
  return next?.type === "actions" ? findButtons([next]) : [];
}

/** `userId` presses `button` in the alert's thread; the private answer's text. */
async function press(h: Harness, button: { action_id: string; value?: string }, userId: string, ts: string) {
  const res = await h.click(button, { userId, channelId: "C0001", messageTs: ts });
  expect(res.status).toBe(200);
  const answer = await h.slack.waitForResponse(res.responseId, () => true, 10_000);
  expect(answer.body.replace_original).not.toBe(true);
  return blocksText(answer.body.blocks);
}

describe("a resolved zone alert's cleanup checklist", () => {
  it("lists every channel's change in force, a private channel's by what alone, and its buttons act on each", async () => {
    const { h, ts, resolve } = await alertFiring();
    const elsewhere = await blockApplied(
      h,
      `block ${ZONE} 192.0.2.1 for 30m`,
      `Block IP 192.0.2.1 on shield zone ${ZONE}`,
      PUBLIC,
    );
    const here = await blockApplied(
      h,
      `block ${ZONE} 192.0.2.3 for 1h`,
      `Block IP 192.0.2.3 on shield zone ${ZONE}`,
      "C0001",
    );
    const secret = await blockApplied(
      h,
      `block ${ZONE} 192.0.2.2`,
      `Block IP 192.0.2.2 on shield zone ${ZONE}`,
      PRIVATE,
    );
    expect(blockedIps(h).sort()).toEqual(["192.0.2.1", "192.0.2.2", "192.0.2.3"]);
    const hereUndoAt = here.undoAt as number;
    const elsewhereUndoAt = elsewhere.undoAt as number;

    const checklist = await resolve();
    const blocks = checklist.args.blocks;
    const all = text(checklist);
    // After the story, in the same thread.
    const thread = replies(h, ts).map(text);
    expect(thread.findIndex((t) => t.includes("Cleanup"))).toBeGreaterThan(
      thread.findIndex((t) => t.includes("Timeline of")),
    );
    expect(all).toContain(`Cleanup: 3 edgeops changes in force on shield zone ${ZONE}`);

    // Asked in another (public) channel: who and where are shown.
    const public1 = itemText(blocks, "Block IP 192.0.2.1");
    expect(public1).toContain(`asked by <@${BOB}> in <#${PUBLIC}>`);
    expect(public1).toContain("temporary: undone automatically");
    expect(itemButtons(blocks, "Block IP 192.0.2.1").map((b) => [b.action_id, b.value])).toEqual([
      [ACTIONS.cleanupUndo, elsewhere.id],
      [ACTIONS.makePermanent, elsewhere.id],
      [ACTIONS.extend30m, elsewhere.id],
      [ACTIONS.extend2h, elsewhere.id],
    ]);
    // Asked in a private channel: what, not who or where.
    const private2 = itemText(blocks, "Block IP 192.0.2.2");
    expect(private2).toContain("asked in another channel");
    expect(private2).not.toContain(BOB);
    expect(private2).not.toContain(PRIVATE);
    expect(all).not.toContain(PRIVATE);
    // Permanent: its review date (30 days after it was applied) and Undo…, which asks for the undoing command.
    const reviewOn = Math.floor(((secret.decidedAt as number) + REVIEW_AFTER_MS) / 1000);
    expect(private2).toContain(`permanent: review on <!date^${reviewOn}^{date_short_pretty}`);
    expect(itemButtons(blocks, "Block IP 192.0.2.2").map((b) => [b.action_id, b.value])).toEqual([
      [ACTIONS.cleanupUndoPermanent, JSON.stringify({ requestId: secret.id })],
    ]);
    expect(all).toContain(`/edge unblock ${ZONE} 192.0.2.2`);
    expect(itemText(blocks, "Block IP 192.0.2.3")).toContain(`asked by <@${BOB}> in <#C0001>`);

    // Dave is neither the requester nor an approver: refused, nothing moves.
    const extendHere = itemButtons(blocks, "Block IP 192.0.2.3").find(
      (b) => b.action_id === ACTIONS.extend30m,
    )!;
    const refused = await press(h, extendHere, DAVE, ts);
    expect(refused).toContain("Only the person who asked for this change, or an approver of the channel");
    expect(refused).toContain("Nothing changed.");
    expect((await h.store.changeRequests.get(here.id))?.undoAt).toBe(hereUndoAt);

    // Extend 30 min, by the requester: the undo comes 30 minutes later, and the card says so.
    h.slack.clear();
    expect(await press(h, extendHere, BOB, ts)).toContain("is now undone automatically");
    expect((await h.store.changeRequests.get(here.id))?.undoAt).toBe(hereUndoAt + 30 * MIN);
    const redrawn = await cardUpdate(h, (t) => t.includes("192.0.2.3") && t.includes("undone automatically"));
    expect(text(redrawn)).toContain(`<!date^${Math.floor((hereUndoAt + 30 * MIN) / 1000)}^`);
    const extendAudit = (await h.store.audit.list("T0001", 50)).find(
      (a) => a.action === "access_block.extend",
    );
    expect(extendAudit).toMatchObject({ userId: BOB, outcome: "extended" });

    // Make permanent, by an approver, on the change asked in another channel: its undo is cancelled.
    h.slack.clear();
    const keep = itemButtons(blocks, "Block IP 192.0.2.1").find(
      (b) => b.action_id === ACTIONS.makePermanent,
    )!;
    expect(await press(h, keep, CAROL, ts)).toContain("is permanent now");
    expect((await h.store.changeRequests.get(elsewhere.id))?.undoAt).toBeNull();
    const kept = await cardUpdate(h, (t) => t.includes("192.0.2.1") && t.includes("is in effect"));
    expect(text(kept)).not.toContain("undone automatically");
    expect(findButtons(kept.args.blocks).map((b) => b.action_id)).not.toContain(ACTIONS.undo);
    // A second press decided on the old undo time: nothing to do.
    expect(await press(h, keep, BOB, ts)).toContain("is no longer temporary");

    // Undo now, by the requester: the simulator's list loses the entry and the card says Undone.
    h.slack.clear();
    const undo = itemButtons(blocks, "Block IP 192.0.2.3").find((b) => b.action_id === ACTIONS.cleanupUndo)!;
    expect(await press(h, undo, BOB, ts)).toContain("is undone: the previous setting is back");
    expect((await h.store.changeRequests.get(here.id))?.state).toBe("undone");
    expect(blockedIps(h).sort()).toEqual(["192.0.2.1", "192.0.2.2"]);
    await cardUpdate(h, (t) => t.includes("192.0.2.3") && t.includes("Undone"));

    // Undo… on the permanent change: the unblock's confirmation, as if typed here; nothing changes until confirmed.
    h.slack.clear();
    const undoPermanent = itemButtons(blocks, "Block IP 192.0.2.2")[0]!;
    const asked = await press(h, undoPermanent, BOB, ts);
    expect(asked).toContain(`Unblock IP 192.0.2.2 on shield zone ${ZONE}?`);
    expect(blockedIps(h).sort()).toEqual(["192.0.2.1", "192.0.2.2"]);
    // A forged request id: refused with a sentence.
    const forged = await press(
      h,
      { ...undoPermanent, value: JSON.stringify({ requestId: "nope" }) },
      BOB,
      ts,
    );
    expect(forged).toContain("no longer known here");

    // Past the time the kept change was to be undone: the sweeper leaves it in force.
    rig.now = Math.max(elsewhereUndoAt, hereUndoAt + 30 * MIN) + MIN;
    await createChangeSweeper(h.app.env).sweep();
    expect((await h.store.changeRequests.get(elsewhere.id))?.state).toBe("applied");
    expect(blockedIps(h).sort()).toEqual(["192.0.2.1", "192.0.2.2"]);
    expect(h.slack.violations).toEqual([]);
  }, 90_000);

  it("says nothing of edgeops is in force when nothing is", async () => {
    const { h, ts, resolve } = await alertFiring();
    const checklist = await resolve();
    expect(text(checklist)).toContain(`No edgeops changes in force on shield zone ${ZONE}`);
    expect(findButtons(checklist.args.blocks)).toEqual([]);
    expect(replies(h, ts).filter((m) => text(m).includes("No edgeops changes in force"))).toHaveLength(1);
  }, 60_000);
});
