import { describe, expect, it } from "vitest";
import { cancel } from "../../src/changes/engine.js";
import { SIM_IDS } from "../../tools/simulator/index.js";
import { answerTo, blocksText, cardUpdate, startHarness } from "../support/harness.js";
import { BOB } from "../support/users.js";

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
