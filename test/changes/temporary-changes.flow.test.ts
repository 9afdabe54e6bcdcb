import { beforeAll, describe, expect, it } from "vitest";
import { systemClock } from "../../src/clock.js";
import { createChangeSweeper, reconcileStaleUndos, undoDue } from "../../src/jobs/change-sweeps.js";
import { ACTIONS } from "../../src/slack/ids.js";
import { SIM_IDS } from "../../tools/simulator/index.js";
import { describeOnBothStores } from "../support/both-stores.js";
import {
  answerTo,
  blocksText,
  cardUpdate,
  findButtons,
  type Harness,
  type HarnessOptions,
  startHarness,
} from "../support/harness.js";
import { useHarness } from "../support/use-harness.js";
import { ALICE, BOB, CAROL } from "../support/users.js";

/**
 * Any change can be temporary (`for 30m`); at the end it is undone exactly once (across a
 * restart and across replicas), the card and audit log say so, and the card carries Undo now until
 * then. A value someone changed meanwhile is not overwritten.
 */

const ZONE = SIM_IDS.firstShieldZone;
const DAVE = "U0004"; // neither requester nor approver
const PUT_PATH = /bot-categorization\/categories\//;

const puts = (h: Harness) => h.sim.requests.filter((r) => r.method === "PUT" && PUT_PATH.test(r.path));
const category = (h: Harness, c: number) =>
  h.sim.state.botCategories.get(ZONE)!.find((g) => g.category === c)!;

const command = (h: Harness, text: string, userId = BOB) => answerTo(h, text, userId);

/** Bob asks to block category `c` for 30 minutes, Carol approves: the applied card with Undo now. */
async function blockFor30m(h: Harness, c: number, label: string) {
  category(h, c).categoryAction = 2; // Allow before
  const typed = await command(h, `bot ${ZONE} ${c} block for 30m`);
  expect(typed.text).toContain("for 30 min, then undone");
  await h.click(typed.buttons.find((b) => b.action_id === ACTIONS.changeConfirm)!, { userId: BOB });
  const post = await h.slack.waitForCall("chat.postMessage", (x) =>
    blocksText(x.args.blocks).includes(label),
  );
  expect(blocksText(post.args.blocks)).toContain("30 min, then undone");
  const approve = findButtons(post.args.blocks).find((b) => b.action_id === ACTIONS.approve)!;
  await h.click(approve, { userId: CAROL });
  const applied = await cardUpdate(h, (t) => t.includes(label) && t.includes("is in effect"));
  expect(category(h, c).categoryAction).toBe(1);
  const undo = findButtons(applied.args.blocks).find((b) => b.action_id === ACTIONS.undo);
  expect(undo, "the applied card carries Undo now").toBeDefined();
  expect(blocksText(applied.args.blocks)).toContain("undone automatically");
  return undo!;
}

describe("temporary changes (SQLite)", () => {
  const h = useHarness();
  beforeAll(async () => {
    h.slack.users.set(DAVE, { id: DAVE, name: "dave" });
  });

  it("bad durations get a sentence with an example, and nothing is asked", async () => {
    for (const bad of ["for", "for 25h", "for 0m", "for soon", "for 30m extra", "for 30s"]) {
      const answer = await command(h, `bot ${ZONE} 1 block ${bad}`);
      expect(answer.text, bad).toContain("from 1m to 24h");
      expect(answer.text, bad).toContain("for 30m");
      expect(answer.buttons).toHaveLength(0);
    }
  });

  it("is undone once when its time is up: the previous value is back, the card and audit say so", async () => {
    await blockFor30m(h, 1, "SEO");
    const sweeper = createChangeSweeper(h.app.env);
    const before = puts(h).length;
    h.advanceClock(29 * 60_000);
    expect(await sweeper.sweep()).toBe(0);
    h.advanceClock(61_000);
    expect(await sweeper.sweep()).toBe(1);
    expect(category(h, 1).categoryAction).toBe(2);
    expect(puts(h).length - before).toBe(1);
    const undone = await cardUpdate(h, (t) => t.includes("SEO") && t.includes("Undone"));
    expect(findButtons(undone.args.blocks)).toHaveLength(0);
    expect(await sweeper.sweep()).toBe(0);
    expect(puts(h).length - before).toBe(1);
    const audit = (await command(h, "audit 20", ALICE)).text;
    expect(audit).toContain("bot_category.undo");
    expect(audit).toContain("undone");
  });

  it("a value someone changed meanwhile is left as it is, and the card says why", async () => {
    await blockFor30m(h, 2, "AI scraper");
    category(h, 2).categoryAction = 0; // someone cleared it in the dashboard
    const before = puts(h).length;
    h.advanceClock(31 * 60_000);
    expect(await undoDue(h.deps)).toHaveLength(1);
    expect(puts(h).length).toBe(before);
    expect(category(h, 2).categoryAction).toBe(0);
    expect((await h.store.audit.list("T0001", 5)).some((a) => a.outcome === "left")).toBe(true);
  });

  it("Undo now: refused to others, done once for twenty concurrent presses by the requester and approvers", async () => {
    const undo = await blockFor30m(h, 3, "AI tool");
    const refused = await h.click(undo, { userId: DAVE });
    expect(blocksText((await h.slack.waitForResponse(refused.responseId)).body.blocks)).toContain(
      "Only the requester or this channel's approvers",
    );
    const before = puts(h).length;
    const pressers = [BOB, CAROL, ALICE];
    const clicks = await Promise.all(
      Array.from({ length: 20 }, (_, i) => h.click(undo, { userId: pressers[i % 3]! })),
    );
    expect(clicks.every((c) => c.status === 200)).toBe(true);
    await cardUpdate(h, (t) => t.includes("AI tool") && t.includes("Undone"));
    // Every press's listener has ended and nothing more reaches the Edge API.
    await h.settled();
    expect(puts(h).length - before).toBe(1);
    expect(category(h, 3).categoryAction).toBe(2);
    // Later sweeps have nothing left to undo.
    h.advanceClock(31 * 60_000);
    expect(await undoDue(h.deps)).toHaveLength(0);
  });

  it("Undo now pressed by an approver tells the requester in the card's thread; the requester's own press does not", async () => {
    const undo = await blockFor30m(h, 6, "Preview");
    await h.click(undo, { userId: ALICE });
    const card = await cardUpdate(h, (t) => t.includes("Preview") && t.includes("Undone"));
    const told = await h.slack.waitForCall(
      "chat.postMessage",
      (x) => x.args.thread_ts === card.args.ts && blocksText(x.args.blocks).includes("undone early"),
    );
    expect(blocksText(told.args.blocks)).toContain(`<@${BOB}> your change`);
    expect(blocksText(told.args.blocks)).toContain(`undone early by <@${ALICE}>`);

    const own = await blockFor30m(h, 7, "Social");
    await h.click(own, { userId: BOB });
    await cardUpdate(h, (t) => t.includes("Social") && t.includes("Undone"));
    await h.settled();
    expect(
      h.slack
        .callsTo("chat.postMessage")
        .filter(
          (x) =>
            blocksText(x.args.blocks).includes("Social") &&
            blocksText(x.args.blocks).includes("undone early"),
        ),
    ).toHaveLength(0);
  });

  it("a failed undo is tried again a minute later; a lost answer is settled by the reconciler", async () => {
    await blockFor30m(h, 4, "Tool");
    h.sim.addFault({ method: "PUT", path: PUT_PATH, status: 500, body: "none", times: 3 });
    h.advanceClock(31 * 60_000);
    const [failed] = await undoDue(h.deps);
    expect(failed?.state).toBe("applied");
    expect(failed?.lastError?.message).toContain("tries again in a minute");
    expect(category(h, 4).categoryAction).toBe(1);
    expect(await undoDue(h.deps)).toHaveLength(0); // not yet
    h.advanceClock(61_000);
    expect((await undoDue(h.deps))[0]?.state).toBe("undone");
    expect(category(h, 4).categoryAction).toBe(2);

    // A process that died mid-undo leaves it `undoing`: a minute later the reconciler finishes it.
    await blockFor30m(h, 5, "Ads");
    const [r] = await h.store.changeRequests.listDueUndo(Number.MAX_SAFE_INTEGER);
    expect(r).toBeDefined();
    await h.store.changeRequests.transition(r!.id, "applied", "undoing", {});
    category(h, 5).categoryAction = 2; // the PUT went through before the crash
    h.advanceClock(61_000);
    const before = puts(h).length;
    expect((await reconcileStaleUndos(h.deps)).map((x) => x.state)).toEqual(["undone"]);
    expect(puts(h).length).toBe(before);
  });

  it("a change with approvals off and `for` still posts a card, so Undo now has a place", async () => {
    await h.store.policies.setChannel("T0001", "C0001", { approvals: "off" });
    try {
      category(h, 6).categoryAction = 0;
      const typed = await command(h, `bot ${ZONE} 6 block for 1h30m`);
      await h.click(typed.buttons.find((b) => b.action_id === ACTIONS.changeConfirm)!, { userId: BOB });
      const card = await h.slack.waitForCall("chat.postMessage", (x) =>
        blocksText(x.args.blocks).includes("Preview"),
      );
      expect(blocksText(card.args.blocks)).toContain("1 h 30 min, then undone");
      expect(findButtons(card.args.blocks).some((b) => b.action_id === ACTIONS.undo)).toBe(true);
    } finally {
      await h.store.policies.clearChannel("T0001", "C0001");
    }
  });
});

/** Three sweepers (replicas) at once, after a restart over the same store: one PUT back. */
async function undoAcrossRestartAndReplicas(options: HarnessOptions) {
  const first = await startHarness(options);
  let second: Harness | undefined;
  try {
    await blockFor30m(first, 7, "Social");
    second = await startHarness({
      ...options,
      sim: first.sim,
      seedKey: false,
      dataDir: first.dataDir,
      clock: { ...systemClock, now: () => systemClock.now() + 31 * 60_000 },
    });
    const before = puts(first).length;
    const sweepers = [second, second, second].map((x) => createChangeSweeper(x.app.env));
    const moved = await Promise.all([...sweepers.map((s) => s.sweep()), undoDue(second.deps)]);
    expect(moved.flat().reduce<number>((n, x) => n + (typeof x === "number" ? x : 1), 0)).toBe(1);
    expect(puts(first).length - before).toBe(1);
    expect(category(first, 7).categoryAction).toBe(2);
  } finally {
    await second?.close();
    await first.close();
  }
}

describeOnBothStores("undone exactly once across a restart and replicas", undoAcrossRestartAndReplicas);
