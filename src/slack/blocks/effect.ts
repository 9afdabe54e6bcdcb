import type { KnownBlock } from "@slack/types";
import { effectWords, type MitigationEffect } from "../../services/mitigation-effect.js";
import { context, packLines, section } from "./block-kit.js";
import { dateToken, fallbackText, type Mrkdwn, mrkdwn } from "./mrkdwn.js";
import type { Reply } from "./reply.js";

/** An entry's wanted state, for "since the block…" (undefined: a setting). */
export type EntryState = "block" | "challenge" | "none";

const ICON: Record<MitigationEffect["state"], string> = {
  measured: ":chart_with_downwards_trend:",
  cannot_say: ":grey_question:",
};

/** The Effect section of an applied change's card: what the change did, as of when it was measured. */
export function effectBlocks(effect: MitigationEffect, state?: EntryState): KnownBlock[] {
  return [
    section(
      mrkdwn`${ICON[effect.state]} *Effect* (as of ${dateToken(effect.asOf)}): ${effectWords(effect, state)}`,
    ),
    context(
      mrkdwn`Measured from the zone's event log and metrics: the hour before the change against the whole minutes since (the last hour at most); refreshed while the zone's alert is open.`,
    ),
  ];
}

const EFFECT_BLOCK_PREFIX = "mitigation_effect_";

/** `r` with the Effect section in place of an earlier one, or before its buttons (the last actions block), else at the end. */
export function withEffect(r: Reply, effect: MitigationEffect, state?: EntryState): Reply {
  const added = effectBlocks(effect, state).map((b, i) => ({ ...b, block_id: `${EFFECT_BLOCK_PREFIX}${i}` }));
  const blocks = r.blocks.filter((b) => !b.block_id?.startsWith(EFFECT_BLOCK_PREFIX));
  const at = blocks.map((b) => b.type).lastIndexOf("actions");
  blocks.splice(at === -1 ? blocks.length : at, 0, ...(added as KnownBlock[]));
  return { ...r, blocks };
}

/** One change in the resolution's "what worked" block. */
export interface WorkedItem {
  change: string;
  effect: MitigationEffect;
  state?: EntryState;
}

/** The alert's resolution reply: one line per change applied on the zone in the incident, with its effect. */
export function whatWorkedMessage(items: readonly WorkedItem[], now: number, more: number): Reply {
  const lines: Mrkdwn[] = items.map((i) => mrkdwn`• *${i.change}*: ${effectWords(i.effect, i.state)}`);
  if (more > 0) lines.push(mrkdwn`…and ${String(more)} more (the postmortem export lists every one).`);
  const title = mrkdwn`:white_check_mark: *What worked* (as of ${dateToken(now)}): the changes applied on this zone during the alert, measured.`;
  return {
    text: fallbackText(
      `What worked: ${items.length + more} change${items.length + more === 1 ? "" : "s"} applied on this zone during the alert`,
    ),
    // One section holds 3,000 characters: the lines go in as many as they need.
    blocks: [section(title), ...packLines(lines, 10)],
  };
}
