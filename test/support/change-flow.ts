import { expect } from "vitest";
import { ACTIONS } from "../../src/slack/ids.js";
import { answerTo, blocksText, cardUpdate, findButtons, type Harness } from "./harness.js";
import { BOB, CAROL } from "./users.js";

export { BOB, CAROL };

/** The harness's users: Bob (not an admin) asks for changes, Carol (the owner) approves them. */

export const inEffect = (text: string) => text.includes("is in effect");

/** `/edge <text>` typed by `userId` (Bob) in `channelId` and confirmed: the typed answer and the click. */
export async function askAndConfirm(
  h: Harness,
  text: string,
  { userId = BOB, channelId = "C0001" }: { userId?: string; channelId?: string } = {},
) {
  const typed = await answerTo(h, text, userId, channelId);
  const confirm = typed.buttons.find((b) => b.action_id === ACTIONS.changeConfirm);
  expect(confirm, typed.text).toBeDefined();
  const click = await h.click(confirm!, { userId, channelId });
  return { typed, click };
}

/** The card posted for approval that names `label`, with its Approve and Reject buttons. */
export async function pendingCard(h: Harness, label: string) {
  const post = await h.slack.waitForCall("chat.postMessage", (c) => {
    const t = blocksText(c.args.blocks);
    return t.includes("Approval needed") && t.includes(label);
  });
  const buttons = findButtons(post.args.blocks);
  return {
    post,
    approve: buttons.find((b) => b.action_id === ACTIONS.approve)!,
    reject: buttons.find((b) => b.action_id === ACTIONS.reject)!,
  };
}

/**
 * Carol approves the pending card that names `label` (`beforeApprove` runs just before her click): the
 * card's next update that names `label` and that `settled` accepts, its text and buttons.
 */
export async function approvePending(
  h: Harness,
  label: string,
  settled: (text: string) => boolean = inEffect,
  beforeApprove?: () => void,
) {
  const { approve } = await pendingCard(h, label);
  beforeApprove?.();
  await h.click(approve, { userId: CAROL });
  const card = await cardUpdate(h, (t) => t.includes(label) && settled(t));
  return { card, text: blocksText(card.args.blocks), buttons: findButtons(card.args.blocks) };
}

/** Bob types `/edge <text>` and confirms, Carol approves: the typed answer and the settled card. */
export async function askAndApprove(
  h: Harness,
  text: string,
  label: string,
  settled: (text: string) => boolean = inEffect,
  beforeApprove?: () => void,
) {
  const { typed } = await askAndConfirm(h, text);
  return { typed, ...(await approvePending(h, label, settled, beforeApprove)) };
}
