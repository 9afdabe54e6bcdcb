import type { MrkdwnElement, PlainTextElement } from "@slack/types";
import { LIMITS } from "./limits.js";

/*
 * The one escaping boundary between text from outside (Edge API answers, Slack users, stored values)
 * and Slack. Every Block Kit text object and every message `text` is made here, and nowhere else; the
 * blocks and elements that hold them are built in block-kit.ts, a whole answer (Reply) in reply.ts.
 *
 * The helpers take either
 *  - a plain `string`, which they ALWAYS escape: `<!here>`, `<@U…>`, `<#C…>`, `<https://evil|click>`
 *    render as the characters they are; `*bold*`, `_italic_` and backquotes keep working; or
 *  - a `Mrkdwn` value: text already safe for Slack. Only this module makes one:
 *      mrkdwn`*${app.name}* by ${mention(userId)}, ${dateToken(iso)}`
 *    The tagged template escapes its literal parts and every interpolated string or number; only an
 *    interpolated Mrkdwn is kept as it is. The deliberate markup comes from the small constructors:
 *    mention, channel, usergroup, link, code, dateToken; joinMrkdwn joins parts.
 * So a `<` in anything edgeops sends to Slack can only open a token one of those constructors built.
 * There is no way to turn an unescaped string into Mrkdwn, and no raw escape function to forget.
 *
 * Plain-text objects (headers, button and option labels, modal titles: `plainText`) are escaped the
 * same way: Slack decodes `&amp;`, `&lt;`, `&gt;` in every text object, and a message's `text` fallback
 * (notifications) parses `<!here>`. A Reply's `text` is a `FallbackText`, made only by `fallbackText()`
 * (which `reply()` and `sentenceReply()` in reply.ts use).
 *
 * Converting older code: `\`*${escapeMrkdwn(x)}*\`` → mrkdwn`*${x}*`; `<@${id}>` → mention(id);
 * `<#${id}>` → channel(id); slackDate(iso) / slackDateFromMs(ms) → dateToken(iso | ms);
 * `{ text, blocks }` → reply(text, blocks) (reply.ts); a hand-written `{ type: "plain_text", text }` → plainText(text).
 * A plain string holding markup it made itself shows that markup as text, so pass Mrkdwn instead.
 */

// Set once by Mrkdwn's static block: only this module can read a Mrkdwn's source or make one.
let sourceOf: (m: Mrkdwn) => string;
let trusted: (source: string) => Mrkdwn;
const MAKE = Symbol("Mrkdwn");

/** Safe Slack mrkdwn. Made only by `mrkdwn\`…\`` and the constructors below; see the comment above. */
export class Mrkdwn {
  readonly #source: string;
  private constructor(token: symbol, source: string) {
    if (token !== MAKE)
      throw new TypeError("Mrkdwn is made by mrkdwn`…` and the helpers in blocks/mrkdwn.ts");
    this.#source = source;
  }
  static {
    sourceOf = (m) => m.#source;
    trusted = (source) => new Mrkdwn(MAKE, source);
  }
  /** The mrkdwn source (for logs and tests). A string made from it is escaped again when shown. */
  toString(): string {
    return this.#source;
  }
}

/** Text for a mrkdwn field: a string (escaped) or Mrkdwn (kept). */
export type MrkdwnInput = string | Mrkdwn;

declare const fallbackBrand: unique symbol;
/** A message's top-level `text` (notifications, screen readers): escaped, made by `fallbackText()`. */
export type FallbackText = string & { readonly [fallbackBrand]: true };

const ESCAPES: Readonly<Record<string, string>> = { "&": "&amp;", "<": "&lt;", ">": "&gt;" };
const NEEDS_ESCAPE = /[&<>]/;
// One pass, and none for the usual string with nothing to escape (a long answer escapes hundreds).
const escapeText = (s: string): string =>
  NEEDS_ESCAPE.test(s) ? s.replace(/[&<>]/g, (c) => ESCAPES[c] as string) : s;

const toMrkdwn = (x: MrkdwnInput): Mrkdwn => (x instanceof Mrkdwn ? x : trusted(escapeText(x)));

/**
 * Shorten escaped text to `max` characters with "…", never cutting an `&amp;` entity or a `<…>` token in
 * two (every `&` and `<` in escaped text opens one).
 */
function cut(source: string, max: number): string {
  if (source.length <= max) return source;
  let head = source.slice(0, Math.max(0, max - 1));
  const open = head.lastIndexOf("<");
  if (open > head.lastIndexOf(">")) head = head.slice(0, open);
  const amp = head.lastIndexOf("&");
  if (amp > head.lastIndexOf(";")) head = head.slice(0, amp);
  return `${head}…`;
}

/** Shorten a plain string (before it is escaped) to `max` characters with "…". */
export function truncate(s: string, max: number): string {
  return s.length <= max ? s : `${s.slice(0, Math.max(0, max - 1))}…`;
}

/**
 * The way to write formatted text: literal parts and interpolated strings and numbers are escaped,
 * interpolated Mrkdwn is kept. `mrkdwn\`*${name}* is ${status}\``.
 */
export function mrkdwn(
  strings: TemplateStringsArray,
  ...values: readonly (string | number | Mrkdwn)[]
): Mrkdwn {
  if (!Array.isArray(strings.raw)) throw new TypeError("mrkdwn is a tagged template: mrkdwn`…`");
  let out = escapeText(strings[0] ?? "");
  values.forEach((v, i) => {
    out += v instanceof Mrkdwn ? sourceOf(v) : escapeText(String(v));
    out += escapeText(strings[i + 1] ?? "");
  });
  return trusted(out);
}

/** Join strings (escaped) and Mrkdwn with a separator. */
export function joinMrkdwn(parts: readonly MrkdwnInput[], separator: MrkdwnInput = ""): Mrkdwn {
  const sep = sourceOf(toMrkdwn(separator));
  return trusted(parts.map((p) => sourceOf(toMrkdwn(p))).join(sep));
}

const USER_ID = /^[UW][A-Z0-9]{1,40}$/;
const CHANNEL_ID = /^[CGD][A-Z0-9]{1,40}$/;
const USERGROUP_ID = /^[A-Z0-9]{1,40}$/;

/** `@person` for a Slack user id; anything that is not one is shown as text. */
export function mention(userId: string): Mrkdwn {
  return USER_ID.test(userId) ? trusted(`<@${userId}>`) : mrkdwn`@${userId}`;
}

/** `#channel` for a Slack channel id; anything that is not one is shown as text. */
export function channel(channelId: string): Mrkdwn {
  return CHANNEL_ID.test(channelId) ? trusted(`<#${channelId}>`) : mrkdwn`#${channelId}`;
}

/** `@group` for a Slack user group id; anything that is not one is shown as text. */
export function usergroup(groupId: string): Mrkdwn {
  return USERGROUP_ID.test(groupId) ? trusted(`<!subteam^${groupId}>`) : mrkdwn`@${groupId}`;
}

/** Approvers named in a policy: the people, then the user groups, as mentions. */
export function namedApprovers(a: { users: readonly string[]; usergroups: readonly string[] }): Mrkdwn {
  return joinMrkdwn([...a.users.map(mention), ...a.usergroups.map(usergroup)], ", ");
}

/** A link to an http(s) URL, labelled; anything else is shown as text (the label, or the URL). */
export function link(url: string, label?: string): Mrkdwn {
  let href: string | undefined;
  try {
    const u = new URL(url);
    if (u.protocol === "https:" || u.protocol === "http:") href = u.href;
  } catch {
    href = undefined;
  }
  if (!href) return mrkdwn`${label ?? url}`;
  const target = escapeText(href.replace(/\|/g, "%7C"));
  return trusted(label === undefined ? `<${target}>` : `<${target}|${escapeText(label)}>`);
}

/** Inline code: escaped, shortened to `max`, its backquotes replaced so it cannot close early. */
export function code(text: string, max = 200): Mrkdwn {
  return trusted(`\`${escapeText(truncate(text, max).replace(/`/g, "'"))}\``);
}

/** The largest time a JavaScript Date holds. */
const MAX_DATE_MS = 8.64e15;

/** The ways a date is shown (Slack's date tokens). */
export const DATE_FORMATS = [
  "{date_short_pretty} {time}",
  "{date_short_pretty}",
  "{date}",
  "{time}",
] as const;
export type DateFormat = (typeof DATE_FORMATS)[number];

/**
 * A date shown in each reader's own time zone (`<!date^unix^format|fallback>`), from an ISO string
 * (a missing zone means UTC) or epoch milliseconds. Missing: "–"; unparseable: the text as sent.
 */
export function dateToken(
  when: string | number | null | undefined,
  format: DateFormat = "{date_short_pretty} {time}",
): Mrkdwn {
  if (when === null || when === undefined || when === "") return trusted("–");
  const ms =
    typeof when === "number" ? when : Date.parse(/[zZ]|[+-]\d\d:?\d\d$/.test(when) ? when : `${when}Z`);
  // Slack's date token takes a Unix time in whole seconds from 1970; anything else is shown as sent.
  if (!Number.isFinite(ms) || ms < 0 || ms > MAX_DATE_MS || !DATE_FORMATS.includes(format))
    return mrkdwn`${String(when)}`;
  const fallback = new Date(ms).toISOString().replace("T", " ").slice(0, 16);
  return trusted(`<!date^${Math.floor(ms / 1000)}^${format}|${fallback} UTC>`);
}

/** A mrkdwn text object. */
export function mrkdwnText(text: MrkdwnInput, max: number = LIMITS.sectionText): MrkdwnElement {
  return { type: "mrkdwn", text: cut(sourceOf(toMrkdwn(text)), max) };
}

/** A plain_text object (header, button, option, label, modal title …), escaped. */
export function plainText(text: string, max: number = LIMITS.sectionText): PlainTextElement {
  return { type: "plain_text", text: cut(escapeText(text), max), emoji: true };
}

/** A message's notification `text`: escaped (mrkdwn allowed) and shortened to Slack's limit. */
export function fallbackText(text: MrkdwnInput): FallbackText {
  return cut(sourceOf(toMrkdwn(text)), LIMITS.messageText) as FallbackText;
}

/**
 * Lines joined by newlines into as few texts of at most `max` characters as hold them (a longer line is
 * shortened), each with how many lines it holds.
 */
export function packMrkdwn(lines: readonly MrkdwnInput[], max: number): { text: Mrkdwn; lines: number }[] {
  const packs: { source: string; lines: number }[] = [];
  for (const line of lines) {
    const piece = cut(sourceOf(toMrkdwn(line)), max);
    const last = packs[packs.length - 1];
    if (last && last.source.length + 1 + piece.length <= max) {
      last.source = `${last.source}\n${piece}`;
      last.lines++;
    } else {
      packs.push({ source: piece, lines: 1 });
    }
  }
  return packs.map((p) => ({ text: trusted(p.source), lines: p.lines }));
}
