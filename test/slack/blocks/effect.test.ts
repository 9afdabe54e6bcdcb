import { describe, expect, it } from "vitest";
import type { MitigationEffect } from "../../../src/services/mitigation-effect.js";
import { whatWorkedMessage, withEffect } from "../../../src/slack/blocks/effect.js";
import { checkBlockKitLimits } from "../../support/block-kit-limits.js";
import { blocksText } from "../../support/harness.js";

const AT = Date.UTC(2026, 10, 28, 14, 56, 20);
const overlapping = (n: number): MitigationEffect => ({
  state: "cannot_say",
  target: { what: "entry", shieldZoneId: 7, type: "ip", value: "192.0.2.225" },
  appliedAt: AT,
  asOf: AT + 10 * 60_000,
  unsaid: {
    why: "overlapping",
    others: Array.from({ length: n }, (_, i) => ({
      change: `Block country <!here> *${i}* ${"x".repeat(200)}`,
      at: AT + i,
      step: "applied" as const,
    })),
  },
});

describe("the Effect section and the What worked reply", () => {
  it("goes before the card's buttons, replaces an earlier one, and escapes what it quotes", () => {
    const card = {
      text: "card",
      blocks: [
        { type: "section", text: { type: "mrkdwn", text: "Block IP" } },
        { type: "actions", elements: [] },
      ],
    } as unknown as Parameters<typeof withEffect>[0];
    const once = withEffect(card, overlapping(1), "block");
    const twice = withEffect(once, overlapping(2), "block");
    expect(twice.blocks.map((b) => b.type)).toEqual(["section", "section", "context", "actions"]);
    const text = blocksText(twice.blocks);
    expect(text).toContain("*Effect* (as of <!date^");
    expect(text).toContain(
      "Cannot say: another change on this zone in the same window (Block country &lt;!here&gt;",
    );
    expect(text).not.toContain("<!here>");
  });

  it("keeps a long What worked reply within Block Kit's limits", () => {
    const items = Array.from({ length: 8 }, (_, i) => ({
      change: `Block IP 192.0.2.${i} on shield zone 7`,
      effect: overlapping(6),
      state: "block" as const,
    }));
    const reply = whatWorkedMessage(items, AT, 3);
    expect(checkBlockKitLimits("message", reply)).toEqual([]);
    const text = blocksText(reply.blocks);
    expect(text).toContain("*What worked* (as of <!date^");
    expect(text).toContain("• *Block IP 192.0.2.7 on shield zone 7*: Cannot say:");
    expect(text).toContain("and 4 more), so a difference");
    expect(text).toContain("…and 3 more (the postmortem export lists every one).");
    expect(reply.text).toBe("What worked: 11 changes applied on this zone during the alert");
  });
});
