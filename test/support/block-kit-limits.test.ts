import { describe, expect, it } from "vitest";
import { BLOCK_KIT_LIMITS, type BlockKitSurface, checkBlockKitLimits } from "./block-kit-limits.js";

const x = (n: number): string => "x".repeat(n);
const pt = (text: string) => ({ type: "plain_text", text });
const md = (text: string) => ({ type: "mrkdwn", text });
const divider = { type: "divider" };
const dividers = (n: number) => Array.from({ length: n }, () => divider);
const button = (actionId: string, extra: Record<string, unknown> = {}) => ({
  type: "button",
  action_id: actionId,
  text: pt("Go"),
  ...extra,
});
const actions = (...elements: unknown[]) => ({ type: "actions", elements });
const msg = (...blocks: unknown[]) => ({ text: "fallback", blocks });
const modal = (extra: Record<string, unknown> = {}) => ({
  type: "modal",
  title: pt("Title"),
  close: pt("Cancel"),
  blocks: [md_section("hi")],
  ...extra,
});
function md_section(text: string) {
  return { type: "section", text: md(text) };
}
const option = (text: string, value: string) => ({ text: pt(text), value });
const options = (n: number) => Array.from({ length: n }, (_, i) => option(`o${i}`, `v${i}`));
const confirm = (over: Partial<Record<"title" | "text" | "confirm" | "deny", string>> = {}) => ({
  title: pt(over.title ?? "Sure?"),
  text: md(over.text ?? "Really?"),
  confirm: pt(over.confirm ?? "Yes"),
  deny: pt(over.deny ?? "No"),
});

interface LimitCase {
  /** What is limited (test name). */
  name: string;
  /** Which BLOCK_KIT_LIMITS entry this exercises. */
  key: keyof typeof BLOCK_KIT_LIMITS;
  surface: BlockKitSurface;
  /** The documented limit. */
  limit: number;
  /** Payload whose measured quantity is `n`. */
  build: (n: number) => unknown;
  /** Path the violation must name. */
  path: string;
}

const cases: LimitCase[] = [
  {
    name: "message blocks",
    key: "messageBlocks",
    surface: "message",
    limit: 50,
    build: (n) => msg(...dividers(n)),
    path: "blocks",
  },
  {
    name: "modal blocks",
    key: "viewBlocks",
    surface: "modal",
    limit: 100,
    build: (n) => modal({ blocks: dividers(n) }),
    path: "blocks",
  },
  {
    name: "home blocks",
    key: "viewBlocks",
    surface: "home",
    limit: 100,
    build: (n) => ({ type: "home", blocks: dividers(n) }),
    path: "blocks",
  },
  {
    name: "message text",
    key: "messageText",
    surface: "message",
    limit: 40_000,
    build: (n) => ({ text: x(n) }),
    path: "text",
  },
  {
    name: "section text",
    key: "sectionText",
    surface: "message",
    limit: 3000,
    build: (n) => msg(divider, divider, divider, md_section(x(n))),
    path: "blocks[3].text",
  },
  {
    name: "section fields count",
    key: "sectionFields",
    surface: "message",
    limit: 10,
    build: (n) => msg({ type: "section", fields: Array.from({ length: n }, () => md("f")) }),
    path: "blocks[0].fields",
  },
  {
    name: "section field text",
    key: "sectionFieldText",
    surface: "message",
    limit: 2000,
    build: (n) => msg({ type: "section", fields: [md("a"), md(x(n))] }),
    path: "blocks[0].fields[1]",
  },
  {
    name: "header text",
    key: "headerText",
    surface: "message",
    limit: 150,
    build: (n) => msg(divider, { type: "header", text: pt(x(n)) }),
    path: "blocks[1].text",
  },
  {
    name: "context elements",
    key: "contextElements",
    surface: "message",
    limit: 10,
    build: (n) => msg({ type: "context", elements: Array.from({ length: n }, () => md("c")) }),
    path: "blocks[0].elements",
  },
  {
    name: "actions elements",
    key: "actionsElements",
    surface: "message",
    limit: 25,
    build: (n) => msg(actions(...Array.from({ length: n }, (_, i) => button(`a${i}`)))),
    path: "blocks[0].elements",
  },
  {
    name: "button text",
    key: "buttonText",
    surface: "message",
    limit: 75,
    build: (n) => msg(actions(button("a", { text: pt(x(n)) }))),
    path: "blocks[0].elements[0].text",
  },
  {
    name: "button value",
    key: "buttonValue",
    surface: "message",
    limit: 2000,
    build: (n) => msg(actions(button("a"), button("b", { value: x(n) }))),
    path: "blocks[0].elements[1].value",
  },
  {
    name: "button url",
    key: "buttonUrl",
    surface: "message",
    limit: 3000,
    build: (n) => msg(actions(button("a", { url: `https://e.example/${x(n - 18)}` }))),
    path: "blocks[0].elements[0].url",
  },
  {
    name: "action_id",
    key: "actionId",
    surface: "message",
    limit: 255,
    build: (n) => msg(actions(button(x(n)))),
    path: "blocks[0].elements[0].action_id",
  },
  {
    name: "action_id of a section accessory",
    key: "actionId",
    surface: "home",
    limit: 255,
    build: (n) => ({ type: "home", blocks: [{ ...md_section("s"), accessory: button(x(n)) }] }),
    path: "blocks[0].accessory.action_id",
  },
  {
    name: "block_id",
    key: "blockId",
    surface: "message",
    limit: 255,
    build: (n) => msg(divider, { ...md_section("s"), block_id: x(n) }),
    path: "blocks[1].block_id",
  },
  {
    name: "modal callback_id",
    key: "callbackId",
    surface: "modal",
    limit: 255,
    build: (n) => modal({ callback_id: x(n) }),
    path: "callback_id",
  },
  {
    name: "home callback_id",
    key: "callbackId",
    surface: "home",
    limit: 255,
    build: (n) => ({ type: "home", callback_id: x(n), blocks: [] }),
    path: "callback_id",
  },
  {
    name: "private_metadata",
    key: "privateMetadata",
    surface: "modal",
    limit: 3000,
    build: (n) => modal({ private_metadata: x(n) }),
    path: "private_metadata",
  },
  {
    name: "modal title",
    key: "viewTitle",
    surface: "modal",
    limit: 24,
    build: (n) => modal({ title: pt(x(n)) }),
    path: "title",
  },
  {
    name: "modal submit",
    key: "viewSubmit",
    surface: "modal",
    limit: 24,
    build: (n) => modal({ submit: pt(x(n)) }),
    path: "submit",
  },
  {
    name: "modal close",
    key: "viewClose",
    surface: "modal",
    limit: 24,
    build: (n) => modal({ close: pt(x(n)) }),
    path: "close",
  },
  {
    name: "confirm title",
    key: "confirmTitle",
    surface: "message",
    limit: 100,
    build: (n) => msg(actions(button("a", { confirm: confirm({ title: x(n) }) }))),
    path: "blocks[0].elements[0].confirm.title",
  },
  {
    name: "confirm text",
    key: "confirmText",
    surface: "message",
    limit: 300,
    build: (n) => msg(actions(button("a", { confirm: confirm({ text: x(n) }) }))),
    path: "blocks[0].elements[0].confirm.text",
  },
  {
    name: "confirm confirm-button text",
    key: "confirmButton",
    surface: "message",
    limit: 30,
    build: (n) => msg(actions(button("a", { confirm: confirm({ confirm: x(n) }) }))),
    path: "blocks[0].elements[0].confirm.confirm",
  },
  {
    name: "confirm deny-button text",
    key: "confirmButton",
    surface: "message",
    limit: 30,
    build: (n) => msg(actions(button("a", { confirm: confirm({ deny: x(n) }) }))),
    path: "blocks[0].elements[0].confirm.deny",
  },
  {
    name: "static_select options",
    key: "selectOptions",
    surface: "message",
    limit: 100,
    build: (n) => msg(actions({ type: "static_select", action_id: "s", options: options(n) })),
    path: "blocks[0].elements[0].options",
  },
  {
    name: "option text",
    key: "optionText",
    surface: "message",
    limit: 75,
    build: (n) =>
      msg(actions({ type: "static_select", action_id: "s", options: [option("a", "a"), option(x(n), "b")] })),
    path: "blocks[0].elements[0].options[1].text",
  },
  {
    name: "option value",
    key: "optionValue",
    surface: "modal",
    limit: 150,
    build: (n) =>
      modal({
        submit: pt("Save"),
        blocks: [
          {
            type: "input",
            label: pt("Pick"),
            element: { type: "static_select", action_id: "s", options: [option("a", x(n))] },
          },
        ],
      }),
    path: "blocks[0].element.options[0].value",
  },
  {
    name: "overflow options",
    key: "overflowOptions",
    surface: "message",
    limit: 5,
    build: (n) => msg(actions({ type: "overflow", action_id: "o", options: options(n) })),
    path: "blocks[0].elements[0].options",
  },
  {
    name: "select placeholder",
    key: "placeholder",
    surface: "message",
    limit: 150,
    build: (n) =>
      msg(actions({ type: "static_select", action_id: "s", placeholder: pt(x(n)), options: options(2) })),
    path: "blocks[0].elements[0].placeholder",
  },
  {
    name: "input label",
    key: "inputLabel",
    surface: "modal",
    limit: 2000,
    build: (n) =>
      modal({
        submit: pt("Save"),
        blocks: [{ type: "input", label: pt(x(n)), element: { type: "plain_text_input", action_id: "t" } }],
      }),
    path: "blocks[0].label",
  },
  {
    name: "plain_text_input max_length",
    key: "plainTextInputMaxLength",
    surface: "modal",
    limit: 3000,
    build: (n) =>
      modal({
        submit: pt("Save"),
        blocks: [
          {
            type: "input",
            label: pt("Text"),
            element: { type: "plain_text_input", action_id: "t", max_length: n },
          },
        ],
      }),
    path: "blocks[0].element.max_length",
  },
  {
    name: "option groups",
    key: "selectOptionGroups",
    surface: "message",
    limit: 100,
    build: (n) =>
      msg(
        actions({
          type: "static_select",
          action_id: "s",
          option_groups: Array.from({ length: n }, () => ({ label: pt("g"), options: options(1) })),
        }),
      ),
    path: "blocks[0].elements[0].option_groups",
  },
  {
    name: "option group label",
    key: "optionGroupLabel",
    surface: "message",
    limit: 75,
    build: (n) =>
      msg(
        actions({
          type: "static_select",
          action_id: "s",
          option_groups: [{ label: pt(x(n)), options: options(1) }],
        }),
      ),
    path: "blocks[0].elements[0].option_groups[0].label",
  },
  {
    name: "option description",
    key: "optionDescription",
    surface: "message",
    limit: 75,
    build: (n) =>
      msg(
        actions({
          type: "overflow",
          action_id: "o",
          options: [{ ...option("a", "a"), description: pt(x(n)) }],
        }),
      ),
    path: "blocks[0].elements[0].options[0].description",
  },
  {
    name: "input hint",
    key: "inputHint",
    surface: "modal",
    limit: 2000,
    build: (n) =>
      modal({
        submit: pt("Save"),
        blocks: [
          {
            type: "input",
            label: pt("L"),
            hint: pt(x(n)),
            element: { type: "plain_text_input", action_id: "t" },
          },
        ],
      }),
    path: "blocks[0].hint",
  },
];

describe("checkBlockKitLimits: documented limits", () => {
  it.each(cases)(
    "$name: $limit passes, $limit + 1 fails at $path",
    ({ key, surface, limit, build, path }) => {
      expect(BLOCK_KIT_LIMITS[key]).toBe(limit);
      expect(checkBlockKitLimits(surface, build(limit))).toEqual([]);
      const over = checkBlockKitLimits(surface, build(limit + 1));
      expect(over).toHaveLength(1);
      expect(over[0]).toMatch(
        new RegExp(`^${path.replace(/[.[\]]/g, "\\$&")}: .*\\b${limit + 1}\\b.*limit ${limit}$`),
      );
    },
  );

  it("names the limit and the path in a readable way", () => {
    const blocks = [divider, divider, divider, md_section(x(3001))];
    expect(checkBlockKitLimits("message", { blocks })).toEqual([
      "blocks[3].text: section text is 3001 characters, limit 3000",
    ]);
  });

  it("the table exercises every exported limit", () => {
    const covered = new Set(cases.map((c) => c.key));
    expect(
      Object.keys(BLOCK_KIT_LIMITS).filter((k) => !covered.has(k as keyof typeof BLOCK_KIT_LIMITS)),
    ).toEqual([]);
  });

  it("counts characters as code points (an emoji is one character)", () => {
    const emoji = "🚀".repeat(3000); // 6000 UTF-16 code units
    expect(checkBlockKitLimits("message", msg(md_section(emoji)))).toEqual([]);
    expect(checkBlockKitLimits("message", msg(md_section(`${emoji}x`)))).toEqual([
      "blocks[0].text: section text is 3001 characters, limit 3000",
    ]);
  });
});

describe("checkBlockKitLimits: structural rules", () => {
  it("rejects duplicate block_ids in one surface, wherever they are", () => {
    const a = { ...md_section("a"), block_id: "dup" };
    const b = { ...actions(button("x")), block_id: "dup" };
    expect(checkBlockKitLimits("message", msg(a, { ...b, block_id: "other" }))).toEqual([]);
    expect(checkBlockKitLimits("message", msg(a, divider, b))).toEqual([
      'blocks[2].block_id: duplicate block_id "dup" (first at blocks[0])',
    ]);
  });

  it("block_ids are per surface (separate calls do not interfere)", () => {
    const p = msg({ ...md_section("a"), block_id: "same" });
    expect(checkBlockKitLimits("message", p)).toEqual([]);
    expect(checkBlockKitLimits("message", p)).toEqual([]);
  });

  it("rejects duplicate action_ids within one actions block, allows them across blocks", () => {
    expect(checkBlockKitLimits("message", msg(actions(button("go")), actions(button("go"))))).toEqual([]);
    expect(checkBlockKitLimits("message", msg(actions(button("go"), button("stop"), button("go"))))).toEqual([
      'blocks[0].elements[2].action_id: duplicate action_id "go" in actions block (first at elements[0])',
    ]);
  });

  it("rejects a section with neither text nor fields", () => {
    expect(checkBlockKitLimits("message", msg({ type: "section", fields: [md("only fields")] }))).toEqual([]);
    expect(checkBlockKitLimits("message", msg(divider, { type: "section" }))).toEqual([
      "blocks[1]: section needs text or fields",
    ]);
  });

  it("rejects text objects with empty text (mrkdwn and plain_text)", () => {
    expect(checkBlockKitLimits("message", msg(md_section("")))).toEqual([
      "blocks[0].text.text: section text text must not be empty",
    ]);
    expect(checkBlockKitLimits("message", msg({ type: "header", text: pt("") }))).toEqual([
      "blocks[0].text.text: header text text must not be empty",
    ]);
    expect(checkBlockKitLimits("message", msg({ type: "context", elements: [md("ok"), pt("")] }))).toEqual([
      "blocks[0].elements[1].text: plain_text element text must not be empty",
    ]);
  });

  it("requires plain_text where Slack does (header, button, modal title)", () => {
    expect(checkBlockKitLimits("message", msg({ type: "header", text: md("*Zones*") }))).toEqual([
      "blocks[0].text: header text must be plain_text, not mrkdwn",
    ]);
    expect(checkBlockKitLimits("modal", modal({ title: md("T") }))).toEqual([
      "title: modal title must be plain_text, not mrkdwn",
    ]);
  });

  it("requires a modal title and a submit button when the modal has input blocks", () => {
    expect(checkBlockKitLimits("modal", { type: "modal", blocks: [] })).toEqual([
      "title: modal title must be a text object",
    ]);
    const input = { type: "input", label: pt("Key"), element: { type: "plain_text_input", action_id: "k" } };
    expect(checkBlockKitLimits("modal", modal({ blocks: [input] }))).toEqual([
      "submit: modal with input blocks needs submit",
    ]);
    expect(checkBlockKitLimits("modal", modal({ blocks: [input], submit: pt("Save") }))).toEqual([]);
  });

  it("rejects a view whose type does not match the surface", () => {
    expect(checkBlockKitLimits("home", modal())).toEqual([
      'type: view type "modal" does not match surface home',
    ]);
  });

  it("accepts blocks and views as JSON strings, as the form-encoded Web API does", () => {
    expect(checkBlockKitLimits("message", { blocks: JSON.stringify([md_section("hi")]) })).toEqual([]);
    expect(checkBlockKitLimits("message", { blocks: JSON.stringify(dividers(51)) })).toEqual([
      "blocks: message blocks has 51 items, limit 50",
    ]);
    expect(checkBlockKitLimits("home", JSON.stringify({ type: "home", blocks: [] }))).toEqual([]);
    expect(checkBlockKitLimits("message", { blocks: "[not json" })).toEqual([
      "blocks: blocks is not valid JSON",
    ]);
  });

  it("accepts a realistic message, home view and modal", () => {
    const message = {
      text: "Bot categories for zone 42",
      blocks: [
        { type: "header", text: pt("Bot categories — zone 42") },
        {
          type: "section",
          block_id: "cat-1",
          text: md("*Search engines*: allow"),
          accessory: button("bot_block"),
        },
        { type: "section", fields: [md("*Zone*\n42"), md("*Plan*\nAdvanced")] },
        {
          type: "context",
          elements: [
            md("Updated by <@U1>"),
            { type: "image", image_url: "https://e.example/i.png", alt_text: "i" },
          ],
        },
        actions(
          button("approve", { style: "primary", value: "42:1:block", confirm: confirm() }),
          button("deny", { style: "danger", value: "42:1:block" }),
          { type: "overflow", action_id: "more", options: options(3) },
        ),
        divider,
      ],
    };
    expect(checkBlockKitLimits("message", message)).toEqual([]);
    expect(checkBlockKitLimits("home", { type: "home", blocks: message.blocks })).toEqual([]);
    const view = modal({
      callback_id: "policy_edit",
      submit: pt("Save"),
      private_metadata: JSON.stringify({ zoneId: 42 }),
      blocks: [
        {
          type: "input",
          block_id: "approvers",
          label: pt("Approvers"),
          hint: pt("A user group or people"),
          element: {
            type: "static_select",
            action_id: "pick",
            option_groups: [{ label: pt("Groups"), options: options(2) }],
          },
        },
        {
          type: "input",
          block_id: "note",
          label: pt("Note"),
          element: { type: "plain_text_input", action_id: "t", max_length: 500 },
        },
      ],
    });
    expect(checkBlockKitLimits("modal", view)).toEqual([]);
  });
});

describe("checkBlockKitLimits: defensive walking", () => {
  const cyclic: Record<string, unknown> = { type: "section", text: md("c") };
  cyclic.accessory = cyclic;
  const throwing = new Proxy(
    {},
    {
      get() {
        throw new Error("boom");
      },
    },
  );

  const garbage: unknown[] = [
    null,
    undefined,
    42,
    "text",
    [],
    {},
    { blocks: 5 },
    { blocks: {} },
    { blocks: [null, 1, "x", [], { type: 5 }, { type: "section", text: 5, fields: "x" }] },
    {
      blocks: [
        { type: "actions", elements: {} },
        { type: "actions", elements: [null, { type: "button" }, { action_id: 3 }] },
      ],
    },
    {
      blocks: [
        { type: "section", text: { type: "html", text: "<b>" } },
        { type: "header" },
        { type: "input" },
      ],
    },
    {
      blocks: [
        { type: "static_select" },
        actions({ type: "static_select", options: [null, { text: 1 }], option_groups: [1] }),
      ],
    },
    { blocks: [cyclic] },
    { text: 5, blocks: [actions(button("a", { confirm: 1, value: 7, url: {} }))] },
    throwing,
    { blocks: [throwing] },
  ];

  it.each(["message", "modal", "home", "bogus"] as const)(
    "never throws on garbage for surface %s",
    (surface) => {
      for (const payload of garbage) {
        const out = checkBlockKitLimits(surface as BlockKitSurface, payload);
        expect(Array.isArray(out)).toBe(true);
        for (const v of out) expect(typeof v).toBe("string");
      }
    },
  );

  it("reports garbage instead of accepting it", () => {
    expect(checkBlockKitLimits("message", null)).toEqual(["payload: message payload must be an object"]);
    expect(checkBlockKitLimits("modal", 42)).toEqual(["view: view must be an object"]);
    expect(checkBlockKitLimits("message", { blocks: 5 })).toEqual(["blocks: blocks must be an array"]);
    expect(checkBlockKitLimits("message", { blocks: [null] })).toEqual([
      "blocks[0]: block must be an object",
    ]);
    expect(checkBlockKitLimits("message", { text: 5 })).toEqual(["text: message text must be a string"]);
    expect(checkBlockKitLimits("message", throwing)[0]).toMatch(/^payload: could not be inspected/);
    expect(checkBlockKitLimits("bogus" as BlockKitSurface, {})).toEqual(['surface: unknown surface "bogus"']);
  });
});
