import type { KnownBlock } from "@slack/types";
import { section } from "./block-kit.js";
import { type FallbackText, fallbackText, type MrkdwnInput, mrkdwn } from "./mrkdwn.js";

/** A finished answer: blocks plus the plain-text fallback Slack shows in notifications. */
export interface Reply {
  text: FallbackText;
  blocks: KnownBlock[];
  /**
   * The change this reply asks to confirm (its Confirm button's request id, kind and parameters): where the
   * event log can speak to it, its impact preview is filled in place once read (slack/impact-fill.ts).
   * A symbol key: never sent, never part of what Slack is shown, kept by a spread.
   */
  [CONFIRMING]?: { requestId: string; kind: string; params: unknown };
  /**
   * The same answer without its picture (an image block naming an uploaded file), sent instead when Slack
   * refuses the picture. A symbol key, as above.
   */
  [WITHOUT_PICTURE]?: Reply;
}

export const CONFIRMING: unique symbol = Symbol("confirming");
export const WITHOUT_PICTURE: unique symbol = Symbol("without picture");

/** A message: its notification `text` (escaped, mrkdwn allowed) and its blocks. */
export function reply(text: MrkdwnInput, blocks: KnownBlock[]): Reply {
  return { text: fallbackText(text), blocks };
}

/** A one-sentence answer, used for every error and bad argument. */
export function sentenceReply(sentence: MrkdwnInput, emoji = ":warning:"): Reply {
  return reply(sentence, [section(mrkdwn`${emoji} ${sentence}`)]);
}
