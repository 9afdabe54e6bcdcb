import { describe, expect, it } from "vitest";
import { cancel } from "../../src/changes/engine.js";
import { approvalCard } from "../../src/slack/blocks/approvals.js";
import { SIM_IDS } from "../../tools/simulator/index.js";
import { onBothStores } from "../support/both-stores.js";
import { askAndConfirm, pendingCard } from "../support/change-flow.js";
import type { FakeSlack, HeldMessage } from "../support/fake-slack.js";
import {
  answerTo,
  blocksText,
  cardUpdate,
  findButtons,
  type Harness,
  type HarnessOptions,
  startHarness,
} from "../support/harness.js";
import { ALICE, BOB, CAROL } from "../support/users.js";

/**
 * Approval cards are redrawn in one place, the Slack side's observer of the change engine
 * (src/slack/change-requests.ts redrawCardsOnChange), whatever moved the request: here the engine alone,
 * with no click, sweep or listener of its own to redraw it.
 */

const ZONE = SIM_IDS.firstShieldZone;

describe("the card observer", () => {
  it("redraws the card of a request the engine moved without any Slack path", async () => {
    const h = await startHarness();
    try {
      const group = h.sim.state.botCategories.get(ZONE)!.find((g) => g.category === 2)!;
      group.categoryAction = 0;
      const bots = await answerTo(h, `bots ${ZONE}`, BOB);
      const block = bots.buttons.find((b) => b.text === "Block" && JSON.parse(b.value!).c === 2)!;
      const click = await h.click(block, { userId: BOB, channelId: "C0001" });
      await h.slack.waitForResponse(click.responseId);
      const card = await h.slack.waitForCall("chat.postMessage", (c) =>
        blocksText(c.args.blocks).includes("Approval needed"),
      );
      const [request] = await h.store.changeRequests.listPending("T0001");
      expect(request?.messageTs).toBeDefined();

      await cancel(h.deps, request!, "test", "Cancelled while testing the card observer.");

      const update = await cardUpdate(h, (t) => t.includes("Cancelled while testing the card observer."));
      expect(update.args.channel).toBe(card.args.channel);
      expect(update.args.ts).toBe(request!.messageTs);
      expect(blocksText(update.args.blocks)).not.toContain("Approval needed");
    } finally {
      await h.close();
    }
  });
});

/** Admins who may approve, besides Alice and Carol. */
const APPROVERS = Array.from({ length: 6 }, (_, i) => `UA0${i}`);

/** Bob asks to block Ads with two approvals needed (policy by Alice): the card's Approve and where it is. */
async function cardNeedingTwo(h: Harness) {
  for (const id of APPROVERS) h.slack.users.set(id, { id, is_admin: true });
  await answerTo(h, "policy approvals 2", ALICE);
  expect((await answerTo(h, "policy", BOB)).text).toContain("Required (2 approvers");
  h.sim.state.botCategories.get(ZONE)!.find((g) => g.category === 5)!.categoryAction = 0;
  const { click } = await askAndConfirm(h, `bot ${ZONE} 5 block`);
  await h.slack.waitForResponse(click.responseId);
  const { approve } = await pendingCard(h, "Ads");
  const request = await h.store.changeRequests.get(approve.value!);
  return { approve, requestId: request!.id, channel: request!.messageChannel!, ts: request!.messageTs! };
}

const appliedCard = (m: HeldMessage) => blocksText(m.blocks).includes("is in effect");

/**
 * Slack answers the card's drawing of the first approval ("Approved by 1 of 2") late, and so it lands late:
 * once the applied card has landed, or `atMostMs` on if that never comes while it is held.
 */
function firstApprovalLandsLate(slack: FakeSlack, card: { channel: string; ts: string }, atMostMs: number) {
  const released = slack.waitForMessage(card.channel, card.ts, appliedCard, atMostMs).catch(() => undefined);
  slack.addFault({
    method: "chat.update",
    when: (args) => blocksText(args.blocks).includes("Approved by 1 of 2"),
    holdUntil: released,
    times: 1,
  });
  return released;
}

/** The card as the channel sees it once every drawing is answered is the card of the request as stored. */
async function expectCardShowsStoredRequest(slack: FakeSlack, h: Harness, requestId: string) {
  const request = await h.store.changeRequests.get(requestId);
  expect(request?.state).toBe("applied");
  const shown = slack.messageAt(request!.messageChannel!, request!.messageTs!);
  expect(blocksText(shown?.blocks)).toContain("is in effect");
  expect(findButtons(shown?.blocks).map((b) => b.text)).not.toContain("Approve");
  expect(shown?.blocks).toEqual(approvalCard(request!).blocks);
}

describe("the card's last drawing", () => {
  it("is the request's latest state when Slack answers an older drawing late, under concurrent approvals", async () => {
    const h = await startHarness();
    try {
      const card = await cardNeedingTwo(h);
      firstApprovalLandsLate(h.slack, card, 2_000);
      const clicks = await Promise.all(APPROVERS.map((userId) => h.click(card.approve, { userId })));
      expect(clicks.every((c) => c.status === 200)).toBe(true);
      await cardUpdate(h, (t) => t.includes("Ads") && t.includes("is in effect"));
      await h.settled();
      await expectCardShowsStoredRequest(h.slack, h, card.requestId);
    } finally {
      await h.close();
    }
  });

  onBothStores(
    "is the request's latest state when another replica's older drawing lands after the newer one",
    async (options: HarnessOptions) => {
      const a = await startHarness(options);
      let b: Harness | undefined;
      try {
        b = await startHarness({
          ...options,
          dataDir: a.dataDir,
          sim: a.sim,
          slack: a.slack,
          seedKey: false,
        });
        const card = await cardNeedingTwo(a);
        const released = firstApprovalLandsLate(a.slack, card, 30_000);
        // Carol's approval on replica A: A draws "1 of 2", which Slack holds.
        await a.click(card.approve, { userId: CAROL });
        await cardUpdate(a, (t) => t.includes("Approved by 1 of 2"));
        // Alice's on replica B applies the change and draws the applied card, which lands first.
        await b.click(card.approve, { userId: ALICE });
        await released;
        await a.settled();
        await b.settled();
        await expectCardShowsStoredRequest(a.slack, a, card.requestId);
      } finally {
        await b?.close();
        await a.close();
      }
    },
    60_000,
  );
});
