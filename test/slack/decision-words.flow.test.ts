import { describe, expect, it } from "vitest";
import { createChangeSweeper } from "../../src/jobs/change-sweeps.js";
import { ACTIONS, VIEWS } from "../../src/slack/ids.js";
import { SIM_IDS } from "../../tools/simulator/index.js";
import { askAndApprove, askAndConfirm, BOB, CAROL, pendingCard } from "../support/change-flow.js";
import { blocksText, cardUpdate, findButtons, type Harness } from "../support/harness.js";
import { useHarness } from "../support/use-harness.js";
import { ALICE } from "../support/users.js";
import { viewSubmission } from "../support/view-submission.js";

/**
 * What a card says about who decided, who undid and why, and what the
 * requester and the channel are told.
 */

const ZONE = SIM_IDS.firstShieldZone;

const category = (h: Harness, c: number) =>
  h.sim.state.botCategories.get(ZONE)!.find((g) => g.category === c)!;

/** Bob blocks category `c` for 30 minutes, Carol approves: the applied card's Undo now. */
async function blockFor30m(h: Harness, c: number, label: string) {
  category(h, c).categoryAction = 2;
  const { buttons } = await askAndApprove(h, `bot ${ZONE} ${c} block for 30m`, label);
  return buttons.find((b) => b.action_id === ACTIONS.undo)!;
}

/** The 30 minutes of a temporary change pass and the sweeper runs: how many requests it moved. */
async function periodOver(h: Harness) {
  h.advanceClock(31 * 60_000);
  return createChangeSweeper(h.app.env).sweep();
}

describe("what cards say about decisions and undos", () => {
  const h = useHarness();

  it("a skipped undo has its own label, not 'Undone'", async () => {
    await blockFor30m(h, 2, "AI scraper");
    category(h, 2).categoryAction = 0; // changed in the dashboard meanwhile
    expect(await periodOver(h)).toBe(1);
    const card = await cardUpdate(h, (t) => t.includes("AI scraper") && t.includes("Not undone"));
    const text = blocksText(card.args.blocks);
    expect(text).toContain("Undo skipped");
    expect(text).not.toContain(":leftwards_arrow_with_hook: Undone");
    expect(text).not.toContain("someone else");
    expect(card.args.text).toContain("Undo skipped");
  });

  it("an undo says by whom: edgeops at the end of the period, the requester's or an approver's Undo now", async () => {
    await blockFor30m(h, 1, "SEO");
    await periodOver(h);
    const byEdgeops = await cardUpdate(h, (t) => t.includes("SEO") && t.includes("Undone"));
    expect(blocksText(byEdgeops.args.blocks)).toContain("Undone by edgeops at the end of its period");

    const undo = await blockFor30m(h, 3, "AI tool");
    await h.click(undo, { userId: BOB });
    const byRequester = await cardUpdate(h, (t) => t.includes("AI tool") && t.includes("Undone"));
    expect(blocksText(byRequester.args.blocks)).toContain(
      `Undone by <@${BOB}> (the requester) with Undo now`,
    );

    const again = await blockFor30m(h, 4, "Tool");
    await h.click(again, { userId: ALICE });
    const byApprover = await cardUpdate(h, (t) => t.includes("Tool") && t.includes("Undone"));
    expect(blocksText(byApprover.args.blocks)).toContain(`Undone by <@${ALICE}> (an approver) with Undo now`);
  });

  it("'Expired' keeps a recorded 1-of-2 approval", async () => {
    await h.store.policies.setChannel("T0001", "C0TWO", { approvalsNeeded: 2 });
    category(h, 5).categoryAction = 2;
    await askAndConfirm(h, `bot ${ZONE} 5 block`, { channelId: "C0TWO" });
    const { post } = await pendingCard(h, "Ads");
    await h.click(findButtons(post.args.blocks).find((b) => b.action_id === ACTIONS.approve)!, {
      userId: CAROL,
      channelId: "C0TWO",
    });
    await cardUpdate(h, (t) => t.includes("Ads") && t.includes("1 of 2"));
    h.advanceClock(25 * 60 * 60_000);
    await createChangeSweeper(h.app.env).sweep();
    const expired = await cardUpdate(h, (t) => t.includes("Ads") && t.includes("Expired"));
    const text = blocksText(expired.args.blocks);
    expect(text).toContain(`with 1 of 2 approvals (<@${CAROL}>)`);
    expect(text).not.toContain("without a decision");
  });

  it("with approvals off nobody is recorded as approver; the channel is told of a restart", async () => {
    await h.store.policies.setChannel("T0001", "C0FAST", { approvals: "off" });
    const app = SIM_IDS.appWithUnknownStatus;
    const { click } = await askAndConfirm(h, `restart ${app}`, { channelId: "C0FAST" });
    const done = await h.slack.waitForResponse(click.responseId, (r) => r.body.replace_original === true);
    expect(blocksText(done.body.blocks)).toContain("Done");
    const line = await h.slack.waitForCall("chat.postMessage", (x) => x.args.channel === "C0FAST");
    const text = blocksText(line.args.blocks);
    expect(text).toContain(`<@${BOB}> applied`);
    expect(text).toContain("without approval (approvals off in <#C0FAST>)");
    const audit = await h.store.audit.list("T0001", 10);
    const mine = audit.filter((a) => a.action.startsWith("restart_app."));
    expect(mine.some((a) => a.action === "restart_app.approve")).toBe(false);
    expect(mine.some((a) => a.action === "restart_app.no_approval" && a.outcome === "approvals off")).toBe(
      true,
    );
  });

  it("a temporary change with approvals off: its card says applied without approval, not 'Approved by'", async () => {
    await h.store.policies.setChannel("T0001", "C0FAST", { approvals: "off" });
    category(h, 6).categoryAction = 2;
    await askAndConfirm(h, `bot ${ZONE} 6 block for 30m`, { channelId: "C0FAST" });
    const card = await h.slack.waitForCall(
      "chat.postMessage",
      (x) => x.args.channel === "C0FAST" && blocksText(x.args.blocks).includes("Preview"),
    );
    const text = blocksText(card.args.blocks);
    expect(text).toContain("Applied without approval (approvals off in <#C0FAST>)");
    expect(text).not.toContain("Approved by");
  });

  it("the requester's Reject withdraws their own pending request", async () => {
    category(h, 7).categoryAction = 2;
    await askAndConfirm(h, `bot ${ZONE} 7 block`);
    const { post } = await pendingCard(h, "Social");
    expect(blocksText(post.args.blocks)).toContain("who can withdraw the request with Reject");
    const reject = findButtons(post.args.blocks).find((b) => b.action_id === ACTIONS.reject)!;
    const click = await h.click(reject, { userId: BOB });
    const answer = await h.slack.waitForResponse(click.responseId);
    expect(blocksText(answer.body.blocks)).toContain("You withdrew your request");
    const card = await cardUpdate(h, (t) => t.includes("Social") && t.includes("Withdrawn"));
    expect(findButtons(card.args.blocks)).toHaveLength(0);
    expect(blocksText(card.args.blocks)).toContain(`Withdrawn by <@${BOB}>`);
    expect(category(h, 7).categoryAction).toBe(2);
  });

  it("the requester is told the outcome in the card's thread: applied, rejected, expired", async () => {
    const thread = (label: string, words: string) =>
      h.slack.waitForCall(
        "chat.postMessage",
        (x) =>
          typeof x.args.thread_ts === "string" &&
          blocksText(x.args.blocks).includes(label) &&
          blocksText(x.args.blocks).includes(words),
      );
    category(h, 1).categoryAction = 2;
    await askAndConfirm(h, `bot ${ZONE} 1 block`);
    let { post } = await pendingCard(h, "SEO");
    await h.click(findButtons(post.args.blocks).find((b) => b.action_id === ACTIONS.approve)!, {
      userId: CAROL,
    });
    const applied = await thread("SEO", "applied");
    expect(applied.args.channel).toBe("C0001");
    expect(blocksText(applied.args.blocks)).toContain(`<@${BOB}> your request`);
    expect(blocksText(applied.args.blocks)).toContain(`approved by <@${CAROL}> and applied`);

    category(h, 3).categoryAction = 2;
    await askAndConfirm(h, `bot ${ZONE} 3 block`);
    ({ post } = await pendingCard(h, "AI tool"));
    await h.click(findButtons(post.args.blocks).find((b) => b.action_id === ACTIONS.reject)!, {
      userId: CAROL,
    });
    expect(blocksText((await thread("AI tool", "rejected")).args.blocks)).toContain(
      `rejected by <@${CAROL}>`,
    );

    category(h, 4).categoryAction = 2;
    const { click } = await askAndConfirm(h, `bot ${ZONE} 4 block`);
    await h.slack.waitForResponse(click.responseId); // the card is posted and recorded
    await pendingCard(h, "Tool");
    h.advanceClock(25 * 60 * 60_000);
    await createChangeSweeper(h.app.env).sweep();
    expect(blocksText((await thread("Tool", "expired")).args.blocks)).toContain("Ask again with");
  });

  it("the requester is told in the card's thread when an approved change fails", async () => {
    category(h, 4).categoryAction = 2;
    await askAndConfirm(h, `bot ${ZONE} 4 block`);
    const { post } = await pendingCard(h, "Tool");
    h.sim.addFault({ method: "PUT", path: /bot-categorization/, status: 500, body: "none", times: 3 });
    await h.click(findButtons(post.args.blocks).find((b) => b.action_id === ACTIONS.approve)!, {
      userId: CAROL,
    });
    const told = await h.slack.waitForCall(
      "chat.postMessage",
      (x) =>
        typeof x.args.thread_ts === "string" &&
        blocksText(x.args.blocks).includes("Tool") &&
        blocksText(x.args.blocks).includes("failed"),
    );
    expect(blocksText(told.args.blocks)).toContain(`<@${BOB}> your request`);
    expect(blocksText(told.args.blocks)).toContain(`approved by <@${CAROL}> but failed`);
  });

  it("the default card names the workspace admins, so they are notified", async () => {
    category(h, 6).categoryAction = 2;
    await askAndConfirm(h, `bot ${ZONE} 6 block`);
    const { post } = await pendingCard(h, "Preview");
    const text = blocksText(post.args.blocks);
    expect(text).toMatch(/Approvers: workspace admins, <@U0001>, <@U0003> \(not the requester/);
    expect(text).not.toMatch(/Approvers:[^\n]*<@U0002>/);
    // Block Kit's confirm is the same for every clicker: Approve has none, so nobody is asked before being refused.
    const approve = findButtons(post.args.blocks).find((b) => b.action_id === ACTIONS.approve) as {
      confirm?: { text?: { text?: string } };
    };
    expect(approve.confirm).toBeUndefined();
  });

  it("a non-approver's Approve is refused at the click, with no dialog first; an approver's applies", async () => {
    h.slack.users.set("U0009", { id: "U0009", name: "dave" });
    category(h, 5).categoryAction = 2;
    await askAndConfirm(h, `bot ${ZONE} 5 block`);
    const { post } = await pendingCard(h, "Ads");
    const approve = findButtons(post.args.blocks).find((b) => b.action_id === ACTIONS.approve) as {
      action_id: string;
      value?: string;
      confirm?: unknown;
    };
    expect(approve.confirm, "no 'Approve this change?' dialog before the refusal").toBeUndefined();
    const outsider = await h.click(approve, { userId: "U0009" });
    const refusal = blocksText((await h.slack.waitForResponse(outsider.responseId)).body.blocks);
    expect(refusal).toContain("Only this channel's approvers can approve");
    expect(refusal).toContain("named on the card");
    expect(category(h, 5).categoryAction).toBe(2);
    await h.click(approve, { userId: CAROL });
    await cardUpdate(h, (t) => t.includes("Ads") && t.includes("is in effect"));
    expect(category(h, 5).categoryAction).toBe(1);
  });

  it("a rejecter may add a reason: shown on the card and told to the requester", async () => {
    category(h, 2).categoryAction = 2;
    await askAndConfirm(h, `bot ${ZONE} 2 block`);
    const { post } = await pendingCard(h, "AI scraper");
    const reject = findButtons(post.args.blocks).find((b) => b.action_id === ACTIONS.reject)!;
    const rejected = await h.click(reject, { userId: CAROL });
    const answer = await h.slack.waitForResponse(rejected.responseId);
    const add = findButtons(answer.body.blocks).find((b) => b.action_id === ACTIONS.rejectReason);
    expect(add, "the rejecter is offered Add a reason").toBeDefined();
    const other = await h.click(add!, { userId: ALICE });
    expect(blocksText((await h.slack.waitForResponse(other.responseId)).body.blocks)).toContain(
      "Only the person who rejected",
    );
    await h.click(add!, { userId: CAROL });
    const opened = await h.slack.waitForCall("views.open", () => true);
    const view = opened.args.view as { callback_id: string; private_metadata: string };
    expect(view.callback_id).toBe(VIEWS.rejectReason);
    const reason = "not during the <!channel> sale";
    const submitted = await h.interact(
      viewSubmission({
        userId: CAROL,
        userName: "carol",
        callbackId: VIEWS.rejectReason,
        title: "Reason",
        privateMetadata: view.private_metadata,
        values: {
          [VIEWS.rejectReason]: { [VIEWS.rejectReason]: { type: "plain_text_input", value: reason } },
        },
      }),
    );
    expect(submitted.status).toBe(200);
    const card = await cardUpdate(h, (t) => t.includes("AI scraper") && t.includes("Reason:"));
    const text = blocksText(card.args.blocks);
    expect(text).toContain("not during the &lt;!channel&gt; sale");
    expect(text).not.toContain("<!channel>");
    const told = await h.slack.waitForCall(
      "chat.postMessage",
      (x) => typeof x.args.thread_ts === "string" && blocksText(x.args.blocks).includes("not during the"),
    );
    expect(blocksText(told.args.blocks)).toContain(`<@${BOB}> your request`);
  });
});
