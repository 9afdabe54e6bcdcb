/**
 * Block Kit as terminal text. Pure functions: what the app sent in, lines out. The caller decides
 * how buttons and inputs are numbered (through `RenderContext`), and whether colour is used.
 */

type Obj = Record<string, unknown>;

/** Optional styling; the identity for plain (non-TTY) output. */
export interface Paint {
  bold(s: string): string;
  dim(s: string): string;
  accent(s: string): string;
  danger(s: string): string;
}

export const PLAIN: Paint = { bold: (s) => s, dim: (s) => s, accent: (s) => s, danger: (s) => s };

const ansi = (open: number, close: number) => (s: string) => `\u001b[${open}m${s}\u001b[${close}m`;
export const COLOUR: Paint = {
  bold: ansi(1, 22),
  dim: ansi(2, 22),
  accent: ansi(36, 39),
  danger: ansi(31, 39),
};

export interface RenderContext {
  /** A user id to the name shown after @ (the id itself when unknown). */
  userName(id: string): string;
  /** A channel id to the name shown after # (the id itself when unknown). */
  channelName(id: string): string;
  /** The number under which an interactive element (button, select, overflow) can be used; undefined = not usable. */
  control?(element: Obj, blockId: string): number | undefined;
  /** The number of an input block of a modal, for filling it in. */
  input?(block: Obj): number | undefined;
  paint?: Paint;
}

const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
const str = (v: unknown): string => (typeof v === "string" ? v : "");
const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

/** Undo Slack's three escapes; `&amp;` last so `&amp;lt;` stays `&lt;`. */
export function unescapeSlack(s: string): string {
  return s.replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&");
}

/**
 * mrkdwn to readable plain text: formatting marks are kept (`*bold*`, `_italic_`, `` `code` ``), the
 * angle-bracket forms become what Slack would show (dates' fallback, @names, #channels, link labels),
 * and escapes are undone.
 */
export function mrkdwnToPlain(
  text: string,
  names: Pick<RenderContext, "userName" | "channelName"> = { userName: (id) => id, channelName: (id) => id },
): string {
  const replaced = text.replace(/<([^<>]*)>/g, (_whole, inner: string) => {
    const bar = inner.indexOf("|");
    const target = bar === -1 ? inner : inner.slice(0, bar);
    const label = bar === -1 ? undefined : inner.slice(bar + 1);
    if (target.startsWith("!date^")) return label ?? target.split("^")[1] ?? "";
    if (target.startsWith("@")) return `@${label ?? names.userName(target.slice(1))}`;
    if (target.startsWith("#")) return `#${label ?? names.channelName(target.slice(1))}`;
    if (target.startsWith("!subteam^")) return `@${label ?? target.slice("!subteam^".length)}`;
    if (target.startsWith("!")) return `@${target.slice(1)}`;
    if (label !== undefined && label !== target) return `${label} (${target})`;
    return target;
  });
  return unescapeSlack(replaced);
}

/** A text object (`plain_text` or `mrkdwn`) as plain text; Slack decodes the escapes in both. */
export function textOf(t: unknown, ctx: Pick<RenderContext, "userName" | "channelName">): string {
  if (!isObj(t)) return typeof t === "string" ? t : "";
  const text = str(t.text);
  return t.type === "mrkdwn" ? mrkdwnToPlain(text, ctx) : unescapeSlack(text);
}

function optionsOf(element: Obj): Obj[] {
  const direct = arr(element.options).filter(isObj);
  const grouped = arr(element.option_groups)
    .filter(isObj)
    .flatMap((g) => arr(g.options).filter(isObj));
  return [...direct, ...grouped];
}

/** One interactive element (in an actions block or as an accessory) as a short label. */
export function elementLabel(element: Obj, blockId: string, ctx: RenderContext): string {
  const p = ctx.paint ?? PLAIN;
  const n = ctx.control?.(element, blockId);
  const num = n === undefined ? "" : `[${n}] `;
  switch (element.type) {
    case "button": {
      const label = `${num}${textOf(element.text, ctx)}`;
      const shown = element.style === "danger" ? p.danger(label) : p.accent(label);
      return element.url ? `${shown} (${str(element.url)})` : shown;
    }
    case "image":
      return `[image: ${str(element.alt_text)}]`;
    case "overflow":
      return p.accent(`${num}… (${optionsOf(element).length} choices)`);
    case "static_select":
    case "external_select":
    case "multi_static_select": {
      const initial = isObj(element.initial_option) ? textOf(element.initial_option.text, ctx) : undefined;
      const placeholder = textOf(element.placeholder, ctx) || "Select";
      return p.accent(`${num}${initial ?? placeholder} ▾`);
    }
    case "users_select":
    case "conversations_select":
    case "channels_select":
      return p.accent(`${num}${textOf(element.placeholder, ctx) || "Select"} ▾`);
    case "datepicker":
      return p.accent(`${num}date ${str(element.initial_date) || "(none)"}`);
    default:
      return p.accent(`${num}(${str(element.type) || "element"})`);
  }
}

function richTextOf(el: unknown, ctx: RenderContext): string {
  if (!isObj(el)) return "";
  switch (el.type) {
    case "text":
      return str(el.text);
    case "link":
      return str(el.text) || str(el.url);
    case "user":
      return `@${ctx.userName(str(el.user_id))}`;
    case "channel":
      return `#${ctx.channelName(str(el.channel_id))}`;
    case "emoji":
      return `:${str(el.name)}:`;
    case "rich_text_list":
      return arr(el.elements)
        .map((item) => `• ${richTextOf(item, ctx)}`)
        .join("\n");
    case "rich_text_preformatted":
      return arr(el.elements)
        .map((c) => richTextOf(c, ctx))
        .join("");
    case "rich_text_quote":
      return `> ${arr(el.elements)
        .map((c) => richTextOf(c, ctx))
        .join("")}`;
    default:
      return arr(el.elements)
        .map((c) => richTextOf(c, ctx))
        .join("");
  }
}

/** How an input block's element is filled, shown under its label. */
export function inputElementHint(element: Obj, ctx: RenderContext): string[] {
  const lines: string[] = [];
  const opts = optionsOf(element);
  switch (element.type) {
    case "plain_text_input":
    case "url_text_input":
    case "email_text_input":
    case "number_input": {
      const placeholder = textOf(element.placeholder, ctx);
      const initial = str(element.initial_value);
      if (initial) lines.push(`    current: ${initial}`);
      else if (placeholder) lines.push(`    (${placeholder})`);
      break;
    }
    default:
      opts.forEach((o, i) => {
        lines.push(`    ${i + 1}) ${textOf(o.text, ctx)}`);
      });
  }
  return lines;
}

function indent(text: string, prefix: string): string {
  return text
    .split("\n")
    .map((l) => `${prefix}${l}`)
    .join("\n");
}

/** Blocks to lines of text. Buttons read `[n] Label`; inputs `{n} Label`. */
export function renderBlocks(blocks: readonly unknown[], ctx: RenderContext): string[] {
  const p = ctx.paint ?? PLAIN;
  const out: string[] = [];
  blocks.forEach((raw, index) => {
    if (!isObj(raw)) return;
    const blockId = str(raw.block_id) || `b${index}`;
    switch (raw.type) {
      case "header":
        out.push(p.bold(`== ${textOf(raw.text, ctx)} ==`));
        break;
      case "section": {
        const parts: string[] = [];
        if (raw.text) parts.push(textOf(raw.text, ctx));
        const fieldTexts = arr(raw.fields).map((f) => `  ${textOf(f, ctx).replace(/\n/g, " ")}`);
        if (fieldTexts.length > 0) parts.push(fieldTexts.join("\n"));
        if (isObj(raw.accessory)) parts.push(`  ${elementLabel(raw.accessory, blockId, ctx)}`);
        if (parts.length > 0) out.push(parts.join("\n"));
        break;
      }
      case "context": {
        const texts = arr(raw.elements)
          .filter(isObj)
          .map((e) => (e.type === "image" ? `[${str(e.alt_text)}]` : textOf(e, ctx)));
        out.push(p.dim(indent(texts.join("  "), "  ")));
        break;
      }
      case "divider":
        out.push(p.dim("-".repeat(40)));
        break;
      case "image": {
        const title = raw.title ? `${textOf(raw.title, ctx)}: ` : "";
        out.push(`[image: ${title}${str(raw.alt_text)}]`);
        break;
      }
      case "actions":
        out.push(
          arr(raw.elements)
            .filter(isObj)
            .map((e) => elementLabel(e, blockId, ctx))
            .join("   "),
        );
        break;
      case "input": {
        const n = ctx.input?.(raw);
        const label = textOf(raw.label, ctx);
        const optional = raw.optional === true ? " (optional)" : "";
        out.push(p.bold(`${n === undefined ? "" : `{${n}} `}${label}${optional}`));
        if (isObj(raw.element)) out.push(...inputElementHint(raw.element, ctx));
        if (raw.hint) out.push(p.dim(`    ${textOf(raw.hint, ctx)}`));
        break;
      }
      case "rich_text":
        out.push(
          arr(raw.elements)
            .map((e) => richTextOf(e, ctx))
            .join("\n"),
        );
        break;
      case "markdown":
        out.push(str(raw.text));
        break;
      default:
        out.push(p.dim(`[${str(raw.type) || "unknown"} block]`));
    }
  });
  return out;
}

/** A message: its blocks, or its text when it has none. */
export function renderMessageBody(
  message: { text?: unknown; blocks?: unknown },
  ctx: RenderContext,
): string[] {
  const blocks = arr(message.blocks);
  if (blocks.length > 0) return renderBlocks(blocks, ctx);
  return [mrkdwnToPlain(str(message.text), ctx)];
}

/** A modal: title, blocks, then what Submit and Close are called. */
export function renderModal(view: Obj, ctx: RenderContext): string[] {
  const p = ctx.paint ?? PLAIN;
  const lines = [p.bold(`=== Modal: ${textOf(view.title, ctx)} ===`), ...renderBlocks(arr(view.blocks), ctx)];
  const buttons: string[] = [];
  if (view.submit) buttons.push(`${textOf(view.submit, ctx)} (submit)`);
  buttons.push(`${textOf(view.close, ctx) || "Close"} (/cancel)`);
  lines.push(p.dim(`[ ${buttons.join(" | ")} ]`));
  return lines;
}
