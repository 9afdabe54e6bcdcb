import { z } from "zod";
import { PICKER_NOUNS, PICKER_SOURCES, type PickerSource } from "../services/pickers.js";

/**
 * The command a message picker completes, carried in the picker's block_id (Slack hands it back with
 * every suggestion request and with the choice): the subcommand, the words typed, where the chosen id
 * goes, and whether the answer was asked for in the channel.
 */
export interface PickTemplate {
  readonly source: PickerSource;
  readonly command: string;
  readonly args: readonly string[];
  readonly at: number;
  readonly isPublic: boolean;
}

const BLOCK_ID_PREFIX = "pick:";
const MAX_BLOCK_ID = 255;

const encoded = z.object({
  s: z.enum(PICKER_SOURCES),
  c: z.string().regex(/^[a-z-]{1,20}$/),
  a: z.array(z.string().max(200)).max(10),
  i: z.number().int().min(0).max(10),
  p: z.boolean(),
});

/** The block_id for a picker completing `t`, or undefined when the words typed do not fit in one. */
export function encodePickTemplate(t: PickTemplate): string | undefined {
  const id = `${BLOCK_ID_PREFIX}${JSON.stringify({ s: t.source, c: t.command, a: t.args, i: t.at, p: t.isPublic })}`;
  return id.length <= MAX_BLOCK_ID ? id : undefined;
}

/** The template in a picker's block_id; undefined for anything edgeops did not write. */
export function decodePickTemplate(blockId: string): PickTemplate | undefined {
  if (!blockId.startsWith(BLOCK_ID_PREFIX)) return undefined;
  try {
    const parsed = encoded.safeParse(JSON.parse(blockId.slice(BLOCK_ID_PREFIX.length)));
    if (!parsed.success || parsed.data.i > parsed.data.a.length) return undefined;
    const { s, c, a, i, p } = parsed.data;
    return { source: s, command: c, args: a, at: i, isPublic: p };
  } catch {
    return undefined;
  }
}

/** One word of `/edge` text: a word with spaces is quoted (its own quotes dropped). */
export const quoted = (w: string) => (/\s/.test(w) ? `"${w.replace(/"/g, "")}"` : w);

/** `/edge` text for the template with `id` in its place (what runs once a choice is made). */
export function commandTextFor(t: PickTemplate, id: string): string {
  const words = [t.command, ...t.args.slice(0, t.at), id, ...t.args.slice(t.at)];
  return `${words.map(quoted).join(" ")}${t.isPublic ? " public" : ""}`;
}

/** `/edge ddos <shield zone> high`: the command as it will run, the id still to choose. */
export function commandShapeOf(t: PickTemplate): string {
  const words = [
    ...[t.command, ...t.args.slice(0, t.at)].map(quoted),
    `<${PICKER_NOUNS[t.source]}>`,
    ...t.args.slice(t.at).map(quoted),
  ];
  return `/edge ${words.join(" ")}`;
}
