import { durationMs } from "../../duration.js";
import { usage } from "../../errors.js";
import type { PickerSource } from "../../services/pickers.js";
import type { ZoneRef } from "../../services/zone-lookup.js";
import type { PickerArg } from "./types.js";

/** The largest id or page number the Edge API takes where its document types it int32 (shield zones, rate limits, pages). */
export const MAX_INT32 = 2_147_483_647;

/**
 * A positive whole-number id typed by a user (at most `max`), or a sentence with a correct example that
 * quotes the number as it was typed (never as JavaScript would print it, 1e+23).
 */
export function parseId(
  arg: string | undefined,
  what: string,
  example: string,
  max = 999_999_999_999_999,
): number {
  if (arg === undefined) throw usage(`Which ${what}? For example: ${example}`);
  const cleaned = arg.replace(/^#/, "");
  const digits = cleaned.replace(/^-?0*/, "");
  if (/^\d+$/.test(cleaned) && (digits.length > 15 || Number(digits) > max))
    throw usage(
      `"${echo(arg)}" is too large for a ${what} (at most ${max.toLocaleString("en-US")}). For example: ${example}`,
    );
  if (/^-?\d+$/.test(cleaned) && Number(cleaned) < 1)
    throw usage(`${capitalise(what)}s are whole numbers from 1. For example: ${example}`);
  if (!/^\d{1,15}$/.test(cleaned)) throw usage(`${capitalise(what)}s are numbers: ${example}`);
  return Number(cleaned);
}

/** What a user typed, quoted in a sentence: at most about 60 characters, so the advice after it shows. */
export function echo(typed: string): string {
  const flat = typed.replace(/\s+/g, " ");
  return flat.length <= 60 ? flat : `${flat.slice(0, 57)}…`;
}

/**
 * Words typed in the wrong order, `/edge ddos high 18401` for `/edge ddos 18401 high`: when the first
 * word is what comes after the zone and the second is a zone id, the two are swapped back.
 */
export function zoneFirst(args: readonly string[], follows: (word: string) => boolean): readonly string[] {
  const [first, second, ...rest] = args;
  if (first === undefined || second === undefined) return args;
  if (/^#?\d+$/.test(first) || !/^#?\d+$/.test(second) || !follows(first)) return args;
  return [second, first, ...rest];
}

/**
 * A domain or pull zone name as typed: `Shop.Example.com`, `https://shop.example.com/path`, or Slack's
 * link form `<http://shop.example.com|shop.example.com>`, reduced to `shop.example.com`. Undefined
 * when what is left cannot be a hostname or a pull zone name.
 */
export function parseZoneName(arg: string): string | undefined {
  const link = /^<([^|>]+)(?:\|[^>]*)?>$/.exec(arg);
  const name = (link?.[1] ?? arg)
    .trim()
    .replace(/^[a-z][a-z0-9+.-]*:\/\//i, "")
    .replace(/[/?#].*$/, "")
    .replace(/:\d+$/, "")
    .replace(/\.+$/, "")
    .toLowerCase();
  return /^[\p{L}\p{N}._-]{1,253}$/u.test(name) ? name : undefined;
}

/** A shield zone as a user gives it: a number is its id, anything else a domain or pull zone name. */
export function parseZoneRef(arg: string | undefined, example: string, domainExample: string): ZoneRef {
  if (arg === undefined)
    throw usage(`Which shield zone? Give its id or domain: ${example} or ${domainExample}`);
  if (/^#?\d+$/.test(arg)) return { kind: "id", id: parseId(arg, "zone id", example, MAX_INT32) };
  const name = parseZoneName(arg);
  if (name === undefined && arg.length > 253)
    throw usage(
      `That is too long for a domain (${arg.length} characters; at most 253): ${example} or ${domainExample}`,
    );
  if (name === undefined)
    throw usage(`"${echo(arg)}" is neither a zone id nor a domain: ${example} or ${domainExample}`);
  return { kind: "name", name };
}

/** A DNS zone as typed: its id, or its domain (reduced as parseZoneName reduces it). */
export type DnsZoneRef =
  | { readonly kind: "id"; readonly id: number }
  | { readonly kind: "name"; readonly name: string };

/**
 * A DNS zone as a user gives it, read alike wherever one is asked (`/edge dns`, `/edge schedule dns`): a
 * number is its id (`#51001` too), anything else its domain, any case, with a trailing dot, as a pasted URL
 * or Slack link.
 */
export function parseDnsZoneRef(arg: string | undefined, example: string): DnsZoneRef {
  if (arg === undefined) throw usage(`Which DNS zone? Give its id or its domain. For example: ${example}`);
  if (/^#?-?\d+$/.test(arg)) return { kind: "id", id: parseId(arg, "DNS zone id", example) };
  const name = parseZoneName(arg);
  if (name === undefined || !name.includes(".") || !/\p{L}/u.test(name))
    throw usage(`"${echo(arg)}" is neither a DNS zone id nor a domain. For example: ${example}`);
  return { kind: "name", name };
}

export function noMoreArgs(args: readonly string[], count: number, example: string): void {
  if (args.length > count) throw usage(`Too many words after the command. For example: ${example}`);
}

/**
 * A trailing `for 30m` / `for 2h` / `for 1h30m` (a temporary change, 1 minute to 24 hours): the words
 * left before it and the duration in ms, or a sentence with a correct example.
 */
export function parseTemporary(
  args: readonly string[],
  example: string,
): { args: readonly string[]; temporaryMs: number | undefined } {
  const at = args.findIndex((a) => a.toLowerCase() === "for");
  if (at === -1) return { args, temporaryMs: undefined };
  const ms = durationMs(args[at + 1], { days: false });
  if (!(ms >= 60_000 && ms <= 24 * 60 * 60_000) || args.length > at + 2)
    throw usage(
      `A temporary change ends the command with \`for\` and a duration from 1m to 24h, like 30m, 2h or 1h30m. For example: ${example} for 30m`,
    );
  return { args: args.slice(0, at), temporaryMs: ms };
}

function capitalise(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}

/** A picker for the first argument, offered when nothing was typed after the command. */
export function pickerWhenEmpty(source: PickerSource): PickerArg {
  return { source, missingAt: (args) => (args.length === 0 ? 0 : undefined) };
}

/**
 * A picker for a leading zone, offered when nothing was typed or when the first word is already what
 * comes after the zone (`/edge ddos high`, `/edge incident 1h`): `follows` says whether a word is that.
 */
export function pickerBeforeWord(source: PickerSource, follows: (word: string) => boolean): PickerArg {
  return {
    source,
    missingAt: (args) =>
      args.length === 0 || (args[0] !== undefined && follows(args[0]) && zoneFirst(args, follows) === args)
        ? 0
        : undefined,
  };
}
