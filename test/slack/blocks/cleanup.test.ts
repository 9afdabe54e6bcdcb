import { describe, expect, it } from "vitest";
import type { InForceItem } from "../../../src/services/in-force.js";
import { cleanupChecklistMessage, undoHeadsUpMessage } from "../../../src/slack/blocks/cleanup.js";
import { ACTIONS } from "../../../src/slack/ids.js";
import { checkBlockKitLimits } from "../../support/block-kit-limits.js";
import { blocksText, findButtons } from "../../support/harness.js";

const AT = Date.UTC(2026, 7, 20, 10, 0, 0);

function item(i: number, o: Partial<InForceItem> = {}): InForceItem {
  return {
    requestId: `R${i}`,
    change: `Block IP 192.0.2.${i} on shield zone 77`,
    state: "applied",
    asked: { by: "U0002", channelId: "C0002" },
    appliedAt: AT,
    until: AT + 30 * 60_000,
    reviewOn: null,
    undoCommand: null,
    ...o,
  };
}

describe("the cleanup checklist's view", () => {
  it("stays within Slack's limits with many changes: 20 drawn, the rest counted, a cut read said", () => {
    // Temporary and permanent ones alternate: each is two blocks.
    const items = Array.from({ length: 45 }, (_, i) =>
      i % 2 ? item(i) : item(i, { until: null, reviewOn: AT, undoCommand: `/edge unblock 77 192.0.2.${i}` }),
    );
    const reply = cleanupChecklistMessage({ zoneId: 77, items, cut: true }, { label: "shop.example" });
    expect(checkBlockKitLimits("message", reply)).toEqual([]);
    const drawn = findButtons(reply.blocks);
    expect(drawn.filter((b) => b.action_id === ACTIONS.extend2h)).toHaveLength(10);
    expect(drawn.filter((b) => b.action_id === ACTIONS.cleanupUndoPermanent)).toHaveLength(10);
    expect(blocksText(reply.blocks)).toContain("25+ more in force not shown: see /edge timeline 77.");
    expect(reply.text).toContain("45 edgeops changes in force on shop.example (shield zone 77)");
  });

  it("escapes what the change says, and names no one for a change asked where the reader may not look", () => {
    const reply = cleanupChecklistMessage(
      {
        zoneId: 77,
        items: [
          item(1, {
            change: "Block <!channel> & co",
            asked: null,
            until: null,
            reviewOn: AT + 30 * 86_400_000,
            undoCommand: "/edge unblock 77 <x>",
          }),
          item(2, { state: "undoing" }),
        ],
        cut: false,
      },
      { label: null },
    );
    const text = blocksText(reply.blocks);
    expect(text).not.toContain("<!channel>");
    expect(text).toContain("&lt;!channel&gt; &amp; co");
    expect(text).toContain("asked in another channel");
    expect(text).toContain(
      `review on <!date^${Math.floor((AT + 30 * 86_400_000) / 1000)}^{date_short_pretty}`,
    );
    // Permanent: Undo…, which asks for its undoing command (said escaped); being undone: no buttons.
    expect(findButtons(reply.blocks).map((b) => [b.action_id, b.value])).toEqual([
      [ACTIONS.cleanupUndoPermanent, JSON.stringify({ requestId: "R1" })],
    ]);
    expect(text).toContain("Undo… asks for `/edge unblock 77 &lt;x&gt;`");
    expect(text).toContain("being undone now");
    expect(checkBlockKitLimits("message", reply)).toEqual([]);
  });

  it("the heads-up rounds up to whole minutes and offers Make permanent and Extend", () => {
    const reply = undoHeadsUpMessage(
      { requestId: "R1", change: "Block IP 192.0.2.1", undoAt: AT },
      AT - 150_000,
    );
    expect(blocksText(reply.blocks)).toContain("in 3 min, while this alert is still firing");
    expect(findButtons(reply.blocks).map((b) => [b.action_id, b.value])).toEqual([
      [ACTIONS.makePermanent, "R1"],
      [ACTIONS.extend30m, "R1"],
      [ACTIONS.extend2h, "R1"],
    ]);
    expect(checkBlockKitLimits("message", reply)).toEqual([]);
  });
});
