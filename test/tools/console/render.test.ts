import { describe, expect, it } from "vitest";
import {
  actions,
  button,
  context,
  divider,
  fields,
  header,
  section,
} from "../../../src/slack/blocks/block-kit.js";
import { keyModal } from "../../../src/slack/blocks/key-modal.js";
import { channel, dateToken, mention, mrkdwn } from "../../../src/slack/blocks/mrkdwn.js";
import type { ApiKeyInfo } from "../../../src/store/index.js";
import {
  mrkdwnToPlain,
  PLAIN,
  type RenderContext,
  renderBlocks,
  renderMessageBody,
  renderModal,
} from "../../../tools/console/render.js";

const names = {
  userName: (id: string) => ({ U0ALICE: "alice", U0BOB: "bob" })[id] ?? id,
  channelName: (id: string) => ({ C0OPS: "ops" })[id] ?? id,
};

function numbered(): RenderContext & { seen: string[] } {
  let n = 0;
  const seen: string[] = [];
  return {
    ...names,
    paint: PLAIN,
    seen,
    control: (el) => {
      seen.push(String(el.action_id));
      n += 1;
      return n;
    },
  };
}

describe("mrkdwnToPlain", () => {
  it("shows dates' fallback, names for mentions, link labels, and undoes Slack's escapes", () => {
    expect(
      mrkdwnToPlain("set <!date^1700000000^{date_short_pretty} {time}|2023-11-14 22:13 UTC>.", names),
    ).toBe("set 2023-11-14 22:13 UTC.");
    expect(mrkdwnToPlain("by <@U0ALICE> and <@U0BOB|robert> in <#C0OPS> and <#C9|x>", names)).toBe(
      "by @alice and @robert in #ops and #x",
    );
    expect(mrkdwnToPlain("<!here> <!subteam^S1|@leads>", names)).toBe("@here @@leads");
    expect(mrkdwnToPlain("see <https://bunny.net|the docs> or <https://example.com>", names)).toBe(
      "see the docs (https://bunny.net) or https://example.com",
    );
    expect(mrkdwnToPlain("a &lt;b&gt; &amp;lt; *bold* _it_ `code`")).toBe("a <b> &lt; *bold* _it_ `code`");
    expect(mrkdwnToPlain("<@U0NOBODY>", names)).toBe("@U0NOBODY");
  });
});

describe("renderBlocks", () => {
  it("renders headers, sections with fields and accessories, context, dividers, images and numbered buttons", () => {
    const ctx = numbered();
    const lines = renderBlocks(
      [
        header("Bot detection & <more>"),
        fields(["*Mode*\nChallenge", "*IP*\nHigh"]),
        section(mrkdwn`Zone ${channel("C0OPS")} by ${mention("U0ALICE")}`, button("Open", "a.open", "1")),
        context(mrkdwn`updated ${dateToken(1000, "{date}")}`),
        { type: "context", elements: [{ type: "image", image_url: "https://x/y.png", alt_text: "logo" }] },
        divider(),
        { type: "image", image_url: "https://x/chart.png", alt_text: "28-day breaches" },
        actions(button("Block", "a.block", "b", "danger"), button("Allow", "a.allow", "a")),
        { type: "unknown_future_block" },
      ],
      ctx,
    );
    expect(lines).toEqual([
      "== Bot detection & <more> ==",
      "  *Mode* Challenge\n  *IP* High",
      "Zone #ops by @alice\n  [1] Open",
      "  updated 1970-01-01 00:00 UTC",
      "  [logo]",
      "-".repeat(40),
      "[image: 28-day breaches]",
      "[2] Block   [3] Allow",
      "[unknown_future_block block]",
    ]);
    expect(ctx.seen).toEqual(["a.open", "a.block", "a.allow"]);
  });

  it("shows selects and overflow menus as numbered controls, and a message without blocks as its text", () => {
    const ctx = numbered();
    const lines = renderBlocks(
      [
        {
          type: "actions",
          elements: [
            {
              type: "static_select",
              action_id: "pick",
              placeholder: { type: "plain_text", text: "Choose a zone" },
              options: [{ text: { type: "plain_text", text: "18401" }, value: "18401" }],
            },
            {
              type: "overflow",
              action_id: "more",
              options: [
                { text: { type: "plain_text", text: "a" }, value: "a" },
                { text: { type: "plain_text", text: "b" }, value: "b" },
              ],
            },
          ],
        },
      ],
      ctx,
    );
    expect(lines).toEqual(["[1] Choose a zone ▾   [2] … (2 choices)"]);
    expect(renderMessageBody({ text: "plain &amp; simple <@U0BOB>" }, names)).toEqual([
      "plain & simple @bob",
    ]);
  });

  it("renders a modal with numbered inputs, their hints and options, and what Submit and Close are called", () => {
    let inputs = 0;
    const info: ApiKeyInfo = {
      fingerprint: "…abcd",
      setBy: "U0ALICE",
      setAt: 1_700_000_000_000,
      rotatedAt: null,
      masterKeyId: undefined,
    };
    const view = keyModal(info, false) as unknown as Record<string, unknown>;
    const lines = renderModal(view, {
      ...names,
      input: () => {
        inputs += 1;
        return inputs;
      },
    });
    const text = lines.join("\n");
    expect(lines[0]).toBe("=== Modal: Edge API key ===");
    expect(text).toContain("set by @alice 2023-11-14 22:13 UTC");
    expect(text).toContain("{1} New Edge API key (optional)\n    (Paste the key)");
    expect(text).toContain("{2} Or remove it (optional)\n    1) Remove the stored key");
    expect(lines.at(-1)).toBe("[ Save (submit) | Cancel (/cancel) ]");
  });
});
