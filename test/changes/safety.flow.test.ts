import { describe, expect, it } from "vitest";
import { createChangeSweeper, reconcileStale } from "../../src/jobs/change-sweeps.js";
import { ACTIONS } from "../../src/slack/ids.js";
import { SIM_IDS } from "../../tools/simulator/index.js";
import { describeOnBothStores } from "../support/both-stores.js";
import { askAndConfirm, BOB, CAROL, pendingCard } from "../support/change-flow.js";
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
import { ALICE } from "../support/users.js";
import { useWorld } from "../support/world.js";

/**
 * No false report of a change, no request stuck for ever, and no side door around
 * the two-person rule. Everything goes through the real receiver, the fake Slack and the simulator.
 */

const ZONE = SIM_IDS.firstShieldZone;

const PUT_PATH = /bot-categorization\/categories\//;

function puts(h: Harness) {
  return h.sim.requests.filter((r) => r.method === "PUT" && PUT_PATH.test(r.path));
}

function currentAction(h: Harness, category: number): number {
  return h.sim.state.botCategories.get(ZONE)!.find((g) => g.category === category)!.categoryAction;
}

function setCurrent(h: Harness, category: number, action: number) {
  h.sim.state.botCategories.get(ZONE)!.find((g) => g.category === category)!.categoryAction = action;
}

const command = (h: Harness, text: string, userId = BOB, channelId = "C0001") =>
  answerTo(h, text, userId, channelId);

/** `/edge bot <zone> <category> block` by Bob, then Confirm: the card for Carol (or the outcome). */
async function requestBlock(h: Harness, category: number, channelId = "C0001") {
  setCurrent(h, category, 0);
  const { click } = await askAndConfirm(h, `bot ${ZONE} ${category} block`, { channelId });
  return blocksText((await h.slack.waitForResponse(click.responseId)).body.blocks);
}

async function auditText(h: Harness) {
  return (await command(h, "audit 50", ALICE)).text;
}

describe("changes are reported as they are (SQLite)", () => {
  // A world: an Edge call outlasts its timeout when the test moves the one clock.
  const h = useWorld();

  it("a PUT answered 2xx with half a JSON text is applied (the read-back shows it); an error envelope is a refusal", async () => {
    for (const body of [
      { data: null, error: { success: false, statusCode: 400, message: "odd" } },
      "malformed" as const,
    ]) {
      h.slack.clear();
      await requestBlock(h, 1);
      const { approve } = await pendingCard(h, "SEO");
      h.sim.addFault({ method: "PUT", path: PUT_PATH, status: 200, body, times: 1 });
      const before = puts(h).length;
      await h.click(approve, { userId: CAROL });
      const done = await cardUpdate(
        h,
        (t) => t.includes("SEO") && (t.includes("is in effect") || t.includes("Failed")),
      );
      const text = blocksText(done.args.blocks);
      expect(puts(h).length - before).toBe(1);
      if (body !== "malformed") {
        // A 2xx whose body carries an error envelope is the API's refusal.
        expect(text).toContain("did not go through:* The Edge API refused the request: odd.");
        continue;
      }
      expect(text).toContain("is in effect");
      expect(text).not.toContain("did not go through");
      expect(findButtons(done.args.blocks)).toHaveLength(0);
    }
  });

  it("a timeout after the PUT was sent says 'not known yet, checking'; the reconciler settles it as applied", async () => {
    await requestBlock(h, 2);
    const { approve } = await pendingCard(h, "AI scraper");
    // The harness's Edge timeout is 2 s: every attempt is sent and applied by the simulator, but answered
    // 2.3 s later on the world's clock, too late.
    h.sim.addFault({ method: "PUT", path: PUT_PATH, latencyMs: 2_300, times: 3 });
    const before = puts(h).length;
    const card = cardUpdate(h, (t) => t.includes("Not known yet, checking"));
    await h.click(approve, { userId: CAROL });
    // Three attempts (a PUT is safe to repeat), each cut off when the clock passes its timeout.
    for (let attempt = 1; attempt <= 3; attempt++) {
      await h.sim.waitForRequest(() => puts(h).length - before >= attempt);
      await h.clock.advance(2_000);
    }
    const checking = await card;
    expect(puts(h).length - before).toBe(3);
    expect(findButtons(checking.args.blocks)).toHaveLength(0);
    await h.clock.advance(300); // the last late answer lands in the simulator
    expect(currentAction(h, 2)).toBe(1);

    const sweeper = createChangeSweeper(h.app.env);
    expect(await sweeper.sweep()).toBe(0); // not a minute old yet
    h.advanceClock(61_000);
    expect(await sweeper.sweep()).toBe(1);
    const settled = await cardUpdate(h, (t) => t.includes("AI scraper") && t.includes("is in effect"));
    expect(findButtons(settled.args.blocks)).toHaveLength(0);
    expect(await sweeper.sweep()).toBe(0);
    const audit = await auditText(h);
    expect(audit).toContain("bot_category.apply");
    expect(audit).toContain("unknown");
    expect(audit).toContain("bot_category.reconcile");
  });

  it("a request left approved (the process died before the PUT) becomes failed with Retry, and Retry applies it once", async () => {
    await requestBlock(h, 3);
    const { approve } = await pendingCard(h, "AI tool");
    const pending = (await h.store.changeRequests.listPending("T0001")).find((r) =>
      JSON.stringify(r.params).includes('"category":3'),
    )!;
    // What a crash right after the compare-and-set leaves behind: approved, no PUT, a card with buttons.
    await h.store.changeRequests.transition(pending.id, "pending", "approved", {
      decidedBy: CAROL,
      decidedAt: h.deps.clock.now(),
    });
    await h.store.changeRequests.setMessage(pending.id, "C0001", "1700000000.000100");
    h.advanceClock(61_000);
    const before = puts(h).length;
    expect(await createChangeSweeper(h.app.env).sweep()).toBe(1);
    const failed = await cardUpdate(h, (t) => t.includes("AI tool") && t.includes("was not in force"));
    expect(puts(h).length).toBe(before);
    const retry = findButtons(failed.args.blocks).find((b) => b.action_id === ACTIONS.retry)!;
    expect(retry).toBeDefined();
    // The stale Approve button on the old card can't apply it a second way.
    const late = await h.click(approve, { userId: ALICE });
    expect(blocksText((await h.slack.waitForResponse(late.responseId)).body.blocks)).toContain("failed");
    await h.click(retry, { userId: CAROL });
    await cardUpdate(h, (t) => t.includes("AI tool") && t.includes("is in effect"));
    expect(puts(h).length - before).toBe(1);
    expect(currentAction(h, 3)).toBe(1);
  });

  it("the reconciler settles an approved request whose change is in force as applied, with no PUT", async () => {
    await requestBlock(h, 4);
    await pendingCard(h, "Tool");
    const pending = (await h.store.changeRequests.listPending("T0001")).find((r) =>
      JSON.stringify(r.params).includes('"category":4'),
    )!;
    await h.store.changeRequests.transition(pending.id, "pending", "approved", {
      decidedBy: CAROL,
      decidedAt: h.deps.clock.now(),
    });
    setCurrent(h, 4, 1); // the PUT went through; only the `applied` write was lost
    h.advanceClock(61_000);
    const before = puts(h).length;
    expect(await reconcileStale(h.deps)).toEqual([
      expect.objectContaining({ id: pending.id, state: "applied" }),
    ]);
    expect(puts(h).length).toBe(before);
    expect(await reconcileStale(h.deps)).toEqual([]);
  });

  it("an approval whose approver lookup outlasts the expiry does not approve", async () => {
    h.slack.usergroups.set("SONCALL", [CAROL]);
    // Loosening the approvers needs another admin: Alice asks, Carol approves.
    await command(h, "policy approvers <!subteam^SONCALL|@oncall> here", ALICE, "C0SLOW");
    const policy = await pendingCard(h, "Approval policy");
    await h.click(policy.approve, { userId: CAROL, channelId: "C0SLOW" });
    await cardUpdate(h, (t) => t.includes("Approval policy") && t.includes("is in effect"));
    h.slack.clear();

    await requestBlock(h, 5, "C0SLOW");
    const { approve } = await pendingCard(h, "Ads");
    // The request expires while Slack answers the approver lookup: the clock moves as the fake Slack reads
    // the group's members, after the lookup was sent and before it is answered.
    const groups = h.slack.usergroups;
    const members = groups.get.bind(groups);
    groups.get = (id) => {
      if (id === "SONCALL") {
        h.advanceClock(31 * 60_000);
        groups.get = members;
      }
      return members(id);
    };
    const before = puts(h).length;
    const click = h.click(approve, { userId: CAROL, channelId: "C0SLOW" });
    await h.slack.waitForCall("usergroups.users.list");
    const res = await click;
    const answer = await h.slack.waitForResponse(res.responseId);
    expect(blocksText(answer.body.blocks)).toContain("expired before anyone approved it");
    expect(puts(h).length).toBe(before);
    expect(currentAction(h, 5)).toBe(0);
  });

  it("Retry is refused once its window is over, and when the setting changed since the request", async () => {
    const failOnce = async (category: number, label: string) => {
      h.slack.clear();
      await requestBlock(h, category);
      const { approve } = await pendingCard(h, label);
      h.sim.addFault({ method: "PUT", path: PUT_PATH, status: 500, body: "none", times: 3 });
      await h.click(approve, { userId: CAROL });
      const failed = await cardUpdate(h, (t) => t.includes(label) && t.includes("did not go through"));
      return findButtons(failed.args.blocks).find((b) => b.action_id === ACTIONS.retry)!;
    };

    const late = await failOnce(6, "Preview");
    h.advanceClock(31 * 60_000); // the request's window is 30 minutes, counted from the failure
    let before = puts(h).length;
    await h.click(late, { userId: CAROL });
    const closed = await cardUpdate(h, (t) => t.includes("Preview") && t.includes("time to retry"));
    expect(findButtons(closed.args.blocks)).toHaveLength(0);
    expect(blocksText(closed.args.blocks)).toContain("/edge bots");
    expect(puts(h).length).toBe(before);

    const stale = await failOnce(7, "Social");
    setCurrent(h, 7, 2); // someone set Allow meanwhile
    before = puts(h).length;
    await h.click(stale, { userId: CAROL });
    const changed = await cardUpdate(h, (t) => t.includes("Social") && t.includes("setting changed since"));
    expect(findButtons(changed.args.blocks)).toHaveLength(0);
    expect(puts(h).length).toBe(before);
    expect(currentAction(h, 7)).toBe(2);
  }, 30_000);
});

describe("the two-person rule has no side door (SQLite)", () => {
  const h = useHarness();

  it("turning approvals off needs another admin; the requester and a non-admin can't approve it", async () => {
    const asked = await command(h, "policy approvals off", ALICE, "C0001");
    expect(asked.text).toContain("turns approvals off");
    expect(asked.text).toContain("another admin has to approve it");
    expect((await command(h, "policy", BOB)).text).toContain("Required");
    const { approve } = await pendingCard(h, "Approval policy for the workspace");

    const self = await h.click(approve, { userId: ALICE });
    expect(blocksText((await h.slack.waitForResponse(self.responseId)).body.blocks)).toContain(
      "someone else",
    );
    const notAdmin = await h.click(approve, { userId: BOB });
    expect(blocksText((await h.slack.waitForResponse(notAdmin.responseId)).body.blocks)).toContain(
      "approvers",
    );
    expect((await command(h, "policy", BOB)).text).toContain("Required");

    await h.click(approve, { userId: CAROL });
    await cardUpdate(h, (t) => t.includes("Approval policy") && t.includes("is in effect"));
    expect((await command(h, "policy", BOB)).text).toContain("Off");
    const audit = await auditText(h);
    expect(audit).toContain("policy.request");
    expect(audit).toContain("policy.approve");
    expect(audit).toContain("policy.apply");
  });

  it("with approvals off, tightening applies at once", async () => {
    const tightened = await command(h, "policy approvals required", ALICE);
    expect(tightened.text).toContain("Policy updated for the workspace");
    expect(tightened.text).toContain("Required");
    // Told to the channel, not put to a vote.
    expect(h.slack.callsTo("chat.postMessage").map((c) => blocksText(c.args.blocks))).toEqual([
      expect.stringContaining("changed the approval policy"),
    ]);
  });

  it("a shorter expiry and a narrower approver list apply at once; a longer expiry and a channel override that relaxes wait", async () => {
    expect((await command(h, "policy expiry 10m", ALICE)).text).toContain("Policy updated");
    expect((await command(h, "policy expiry 60m", ALICE)).text).toContain(
      "gives requests longer to be approved",
    );
    expect((await command(h, "policy approvals off here", ALICE, "C0WAR")).text).toContain(
      "turns approvals off",
    );
    expect((await command(h, "policy", BOB, "C0WAR")).text).toContain("Required");
    expect((await command(h, "policy approvers <@U0003|carol> <@U0001|alice>", ALICE)).text).toContain(
      "changes who can approve",
    );
    // Three cards, and the channel told of the shorter expiry.
    expect(h.slack.callsTo("chat.postMessage")).toHaveLength(4);
  });

  it("policy reset here that relaxes the channel waits for approval; one that tightens applies at once", async () => {
    // A channel stricter than the workspace (the workspace allows 10 minutes, the channel 5).
    expect((await command(h, "policy expiry 5m here", ALICE, "C0STRICT")).text).toContain("Policy updated");
    expect((await command(h, "policy reset here", ALICE, "C0STRICT")).text).toContain(
      "gives requests longer to be approved",
    );
    expect((await command(h, "policy", BOB, "C0STRICT")).text).toContain("5 minutes");
  });
});

async function reconcilersRace(options: HarnessOptions) {
  const h = await startHarness(options);
  try {
    await requestBlock(h, 2);
    await pendingCard(h, "AI scraper");
    const [pending] = await h.store.changeRequests.listPending("T0001");
    await h.store.changeRequests.transition(pending!.id, "pending", "approved", { decidedBy: CAROL });
    h.advanceClock(61_000);
    const results = await Promise.all(Array.from({ length: 5 }, () => reconcileStale(h.deps)));
    expect(results.flat()).toHaveLength(1);
    expect((await h.store.changeRequests.get(pending!.id))?.state).toBe("failed");
    expect(h.sim.requests.filter((r) => r.method === "PUT")).toHaveLength(0);
  } finally {
    await h.close();
  }
}

describeOnBothStores("five reconcilers at once settle a stale request once", reconcilersRace);

async function twoApproversRace(options: HarnessOptions) {
  const h = await startHarness(options);
  try {
    const approvers = Array.from({ length: 20 }, (_, i) => `UA${String(i).padStart(2, "0")}`);
    for (const id of approvers) h.slack.users.set(id, { id, is_admin: true });
    // More approvers per request is a tightening: it applies at once.
    expect((await command(h, "policy approvals 2", ALICE)).text).toContain("2 approvers");
    expect(h.slack.callsTo("chat.postMessage")).toHaveLength(1); // the channel is told
    await requestBlock(h, 5);
    const { approve } = await pendingCard(h, "Ads");
    const clicks = await Promise.all(approvers.map((userId) => h.click(approve, { userId })));
    expect(clicks.every((c) => c.status === 200)).toBe(true);
    await cardUpdate(h, (t) => t.includes("Ads") && t.includes("is in effect"));
    await h.settled();
    expect(puts(h)).toHaveLength(1);
    // Two distinct approvers made it applied (the policy change was the other applied request).
    expect(await h.store.changeRequests.listStaleApproved(Number.MAX_SAFE_INTEGER)).toEqual([]);
    expect((await h.store.changeRequests.countByState("T0001")).applied).toBe(2);
    const card = h.slack.callsTo("chat.update").map((c) => blocksText(c.args.blocks));
    // One applied card, drawn once, or twice where the impact preview was filled while the approvals landed
    // (fillCard redraws a request decided meanwhile).
    expect(new Set(card.filter((t) => t.includes("is in effect") && t.includes("Ads"))).size).toBe(1);
    // What the channel sees in the end is the applied card, in whatever order Slack answered the drawings.
    const request = await h.store.changeRequests.get(approve.value!);
    const shown = h.slack.messageAt(request!.messageChannel!, request!.messageTs!);
    expect(blocksText(shown?.blocks)).toContain("is in effect");
  } finally {
    await h.close();
  }
}

describe("N approvers", () => {
  const h = useHarness({}, { resetEach: false });

  it("the card counts distinct approvers; the same approver twice counts once; the Nth applies with one PUT", async () => {
    // A third admin: two approvals besides any one admin asking can come.
    h.slack.users.set("U0004", { id: "U0004", name: "dave", is_admin: true });
    await command(h, "policy approvals 2", ALICE);
    expect((await command(h, "policy", BOB)).text).toContain("Required (2 approvers");
    await requestBlock(h, 1);
    const { approve } = await pendingCard(h, "SEO");
    const first = await h.click(approve, { userId: CAROL });
    expect(blocksText((await h.slack.waitForResponse(first.responseId)).body.blocks)).toContain(
      "1 more approver is needed",
    );
    const counted = await cardUpdate(h, (t) => t.includes("Approved by 1 of 2"));
    expect(blocksText(counted.args.blocks)).toContain("<@U0003>");
    expect(findButtons(counted.args.blocks).some((b) => b.action_id === ACTIONS.approve)).toBe(true);
    const again = await h.click(approve, { userId: CAROL });
    expect(blocksText((await h.slack.waitForResponse(again.responseId)).body.blocks)).toContain(
      "already approved",
    );
    const self = await h.click(approve, { userId: BOB });
    expect(blocksText((await h.slack.waitForResponse(self.responseId)).body.blocks)).toContain(
      "someone else",
    );
    expect(puts(h)).toHaveLength(0);
    await h.click(approve, { userId: ALICE });
    const applied = await cardUpdate(h, (t) => t.includes("SEO") && t.includes("is in effect"));
    expect(blocksText(applied.args.blocks)).toContain("<@U0003>, <@U0001>");
    expect(puts(h)).toHaveLength(1);
  });

  it("fewer approvers per request is a loosening: another admin approves it", async () => {
    h.slack.clear();
    const asked = await command(h, "policy approvals 1", ALICE);
    expect(asked.text).toContain("needs fewer approvers");
    expect((await command(h, "policy", BOB)).text).toContain("Required (2 approvers");
  });
});

describeOnBothStores("twenty concurrent approvers with two needed: one PUT", twoApproversRace);
