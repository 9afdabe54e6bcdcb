import { closestMatch } from "leven";
import { toUserSentence, UserError } from "../../errors.js";
import { edgeAccessFor } from "../../services/edge-access.js";
import { warmPicker } from "../../services/pickers.js";
import { parseCommandText } from "../args.js";
import { actions, button } from "../blocks/block-kit.js";
import { pickerMessage } from "../blocks/pickers.js";
import { type Reply, sentenceReply, WITHOUT_PICTURE } from "../blocks/reply.js";
import { ACTIONS } from "../ids.js";
import { commandShapeOf, encodePickTemplate } from "../picker-template.js";
import { echo } from "./parse.js";
import type { CommandContext, Subcommand } from "./types.js";

export interface CommandInput extends Omit<CommandContext, "args" | "isPublic" | "placeholder"> {
  readonly text: string;
  readonly forcePublic?: boolean;
  /** Post a placeholder the answer will replace, visible as the answer will be. */
  readonly placeholder?: (reply: Reply, isPublic: boolean) => Promise<void>;
}

export interface CommandOutcome {
  reply: Reply | null;
  isPublic: boolean;
  subcommand: string;
  outcome: "ok" | "usage" | "error";
  /** A successful answer that "Share in channel" may re-run publicly. */
  shareable: boolean;
}

/** Run one `/edge ...` text against the subcommand table; every failure becomes a sentence. */
export async function runCommand(
  subcommands: ReadonlyMap<string, Subcommand>,
  input: CommandInput,
): Promise<CommandOutcome> {
  const parsed = parseCommandText(input.text);
  const name = parsed.subcommand || "help";
  const isPublic = parsed.isPublic || input.forcePublic === true;
  const sub = subcommands.get(name);
  if (!sub) {
    return {
      reply: sentenceReply(unknownSubcommandSentence(name, parsed.args, [...subcommands.keys()])),
      isPublic: false,
      subcommand: "unknown",
      outcome: "usage",
      shareable: false,
    };
  }
  try {
    const picker = await offerPicker(input, sub, parsed.args, isPublic);
    if (picker)
      return { reply: picker, isPublic: false, subcommand: sub.name, outcome: "ok", shareable: false };
    const { placeholder, ...rest } = input;
    const reply = await sub.run({
      ...rest,
      args: parsed.args,
      isPublic,
      ...(placeholder ? { placeholder: (r: Reply) => placeholder(r, isPublic) } : {}),
    });
    return {
      reply,
      isPublic,
      subcommand: sub.name,
      outcome: "ok",
      shareable: sub.shareable?.(parsed.args) ?? true,
    };
  } catch (err) {
    const isUsage = err instanceof UserError && err.kind === "usage";
    if (!(err instanceof UserError)) input.logger.warn({ err, subcommand: sub.name }, "command failed");
    return {
      reply: sentenceReply(shortenEchoes(toUserSentence(err), parsed.args)),
      isPublic: false,
      subcommand: sub.name,
      outcome: isUsage ? "usage" : "error",
      shareable: false,
    };
  }
}

/** "Did you mean" for a slip of one or two letters (blok, incdent); a longer name may be off by two. */
export function unknownSubcommandSentence(
  name: string,
  args: readonly string[],
  known: readonly string[],
): string {
  const near = closestMatch(name, known, { maxDistance: name.length > 5 ? 2 : 1 });
  const rest = args.join(" ");
  const meant = near && (rest.length <= 200 ? `/edge ${near}${rest ? ` ${rest}` : ""}` : `/edge ${near}`);
  return `I don't know "/edge ${echo(name)}".${meant ? ` Did you mean ${meant}?` : ""} Try /edge help for the list of commands.`;
}

/**
 * A command typed without the id a picker can supply answers with the picker (privately: it is a
 * question to the person who typed it). The workspace must have a key; its list starts loading now so
 * the first suggestions do not wait for the Edge API.
 */
async function offerPicker(
  input: CommandInput,
  sub: Subcommand,
  args: readonly string[],
  isPublic: boolean,
): Promise<Reply | undefined> {
  if (!sub.picker) return undefined;
  const words = sub.picker.completes?.(args) ?? args;
  const at = sub.picker.missingAt(words);
  if (at === undefined) return undefined;
  const template = { source: sub.picker.source, command: sub.name, args: words, at, isPublic };
  const blockId = encodePickTemplate(template);
  if (blockId === undefined) return undefined;
  await edgeAccessFor(input.env.deps, input.teamId);
  warmPicker(input.env.deps, input.teamId, sub.picker.source);
  return pickerMessage(sub.picker.source, commandShapeOf(template), blockId);
}

/**
 * A sentence that quotes a long word as typed (or lowercased) quotes its first ~60 characters instead,
 * so the advice after it is not cut off at Slack's 3,000 characters.
 */
export function shortenEchoes(sentence: string, words: readonly string[]): string {
  let out = sentence;
  for (const w of new Set(words.filter((x) => x.length > 60)).values()) {
    const escaped = w.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    out = out.replace(new RegExp(escaped, "gi"), () => echo(w));
  }
  return out;
}

/**
 * What Share in channel answers again, publicly: a command's text, or a page no command can name (an apps
 * page after the first is read at an opaque cursor; an incident card's "See all" list), as its button value.
 */
export type ShareSource = string | { readonly apps: unknown } | { readonly incidentList: unknown };

/** Ephemeral answers offer to share the same answer in the channel. */
export function withShareButton(reply: Reply, source: ShareSource): Reply {
  const value = JSON.stringify(typeof source === "string" ? { text: source } : source);
  if (value.length > 2000 || reply.blocks.length >= 50) return reply;
  const withoutPicture = reply[WITHOUT_PICTURE];
  return {
    ...reply,
    blocks: [...reply.blocks, actions(button("Share in channel", ACTIONS.shareInChannel, value))],
    ...(withoutPicture ? { [WITHOUT_PICTURE]: withShareButton(withoutPicture, source) } : {}),
  };
}
