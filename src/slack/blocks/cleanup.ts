import type { Button, KnownBlock } from "@slack/types";
import { describeRequest } from "../../changes/index.js";
import type { DecisionOutcome } from "../../changes/moves.js";
import { type InForce, type InForceItem, REVIEW_AFTER_MS } from "../../services/in-force.js";
import type { ChangeRequest } from "../../store/index.js";
import { ACTIONS } from "../ids.js";
import { durationWords } from "./approvals.js";
import { actions, button, confirmDialog, context, section } from "./block-kit.js";
import { channel, code, dateToken, type Mrkdwn, mention, mrkdwn, truncate } from "./mrkdwn.js";
import { type Reply, reply } from "./reply.js";

/**
 * The cleanup checklist a resolved zone alert gets in its thread (every edgeops change in force on the zone,
 * with Undo, Make permanent and Extend), and the heads-up before a temporary change's undo while the alert
 * still fires. Changes asked in a channel the thread's readers may not see are shown by what they do alone.
 */

/** Items drawn at most (two blocks each, within a message's 50); the rest are counted. */
export const CHECKLIST_ITEMS_SHOWN = 20;

const WHO_MAY_PRESS =
  "Undo, Make permanent and Extend: the person who asked for the change, or an approver of the channel it was asked in.";

function zoneWords(zoneId: number, label: string | null): string {
  return label ? `${truncate(label, 80)} (shield zone ${zoneId})` : `shield zone ${zoneId}`;
}

/** The buttons that decide a temporary change's undo (value: its request id). */
export function undoScheduleButtons(requestId: string, change: string, withUndo: boolean): Button[] {
  const row: Button[] = [];
  if (withUndo) {
    const undo = button("Undo now", ACTIONS.cleanupUndo, requestId);
    undo.confirm = confirmDialog(
      "Undo this change now?",
      mrkdwn`*${change}* will be undone: the setting goes back to what it was before.`,
      "Undo now",
      "primary",
    );
    row.push(undo);
  }
  const permanent = button("Make permanent", ACTIONS.makePermanent, requestId);
  permanent.confirm = confirmDialog(
    "Keep this change for good?",
    mrkdwn`*${change}* stays in force: its automatic undo is cancelled.`,
    "Make permanent",
    "primary",
  );
  row.push(
    permanent,
    button("Extend 30 min", ACTIONS.extend30m, requestId),
    button("Extend 2 h", ACTIONS.extend2h, requestId),
  );
  return row;
}

function itemLine(item: InForceItem): Mrkdwn {
  const who = item.asked
    ? mrkdwn`asked by ${mention(item.asked.by)} in ${channel(item.asked.channelId)}`
    : mrkdwn`asked in another channel`;
  const when =
    item.state === "undoing"
      ? mrkdwn`:leftwards_arrow_with_hook: being undone now`
      : item.until !== null
        ? mrkdwn`:hourglass: temporary: undone automatically ${dateToken(item.until)}`
        : mrkdwn`:pushpin: permanent: review on ${dateToken(item.reviewOn, "{date_short_pretty}")}`;
  return mrkdwn`*${item.change}*\n${who}, applied ${dateToken(item.appliedAt)} · ${when}`;
}

function itemBlocks(item: InForceItem): KnownBlock[] {
  if (item.state === "applied" && item.until !== null)
    return [section(itemLine(item)), actions(...undoScheduleButtons(item.requestId, item.change, true))];
  if (item.state === "applied" && item.undoCommand) {
    // Two blocks an item, as the temporary ones: the undoing command is said in the item's own section.
    const undo = button("Undo…", ACTIONS.cleanupUndoPermanent, JSON.stringify({ requestId: item.requestId }));
    return [
      section(
        mrkdwn`${itemLine(item)}\nUndo… asks for ${code(item.undoCommand)}, confirmed and approved as if typed.`,
      ),
      actions(undo),
    ];
  }
  return [section(itemLine(item))];
}

/** The checklist, or the sentence that nothing edgeops did is in force on the zone. */
export function cleanupChecklistMessage(inForce: InForce, o: { label: string | null }): Reply {
  const zone = zoneWords(inForce.zoneId, o.label);
  if (inForce.items.length === 0)
    return reply(`No edgeops changes in force on ${zone}`, [
      section(mrkdwn`:broom: No edgeops changes in force on ${zone}: nothing to clean up.`),
    ]);
  const shown = inForce.items.slice(0, CHECKLIST_ITEMS_SHOWN);
  const more = inForce.items.length - shown.length;
  const count = inForce.items.length;
  const blocks: KnownBlock[] = [
    section(
      mrkdwn`:broom: *Cleanup: ${count} edgeops ${count === 1 ? "change" : "changes"} in force on ${zone}*, from every channel. Undo what the attack needed and the zone does not; keep the rest on purpose.`,
    ),
    ...shown.flatMap(itemBlocks),
  ];
  const notes = [
    WHO_MAY_PRESS,
    "A permanent change's review date is 30 days after it was applied.",
    ...(more > 0 || inForce.cut
      ? [`${more}${inForce.cut ? "+" : ""} more in force not shown: see /edge timeline ${inForce.zoneId}.`]
      : []),
  ];
  blocks.push(context(...notes));
  return reply(`Cleanup: ${count} edgeops ${count === 1 ? "change" : "changes"} in force on ${zone}`, blocks);
}

/** Five minutes (or less) before a temporary change's undo, in the thread of an alert still firing. */
export function undoHeadsUpMessage(
  h: { requestId: string; change: string; undoAt: number },
  now: number,
): Reply {
  const minutes = Math.max(1, Math.ceil((h.undoAt - now) / 60_000));
  const inWords = durationWords(minutes * 60_000);
  return reply(`${h.change} ends in ${inWords}, while this alert is still firing`, [
    section(
      mrkdwn`:hourglass_flowing_sand: *${h.change}* ends ${dateToken(h.undoAt, "{time}")}, in ${inWords}, while this alert is still firing: edgeops then undoes it.`,
    ),
    actions(...undoScheduleButtons(h.requestId, h.change, false)),
    context(WHO_MAY_PRESS),
  ]);
}

/** Where a change stands, in words that name what and never who or where (it may be another channel's). */
function standsNow(r: ChangeRequest): Mrkdwn {
  const change = describeRequest(r);
  switch (r.state) {
    case "applied":
      return r.undoAt === null
        ? mrkdwn`${change} is no longer temporary: it stays in force, with no automatic undo.`
        : mrkdwn`${change} is in force until ${dateToken(r.undoAt)}, then undone.`;
    case "undoing":
      return mrkdwn`${change} is being undone right now.`;
    case "undone":
      return mrkdwn`${change} is no longer in force: it was undone.`;
    default:
      return mrkdwn`${change} is not in force.`;
  }
}

/**
 * The private answer to Undo now, Make permanent or Extend pressed on the checklist or a heads-up: what
 * happened, or why nothing did. `done`: it went as the presser meant.
 */
export function undoScheduleAnswer(outcome: DecisionOutcome): { done: boolean; sentence: Mrkdwn } {
  switch (outcome.kind) {
    case "made_permanent":
      return {
        done: true,
        sentence: mrkdwn`${describeRequest(outcome.request)} is permanent now: its automatic undo is cancelled. Review it by ${dateToken((outcome.request.decidedAt ?? outcome.request.createdAt) + REVIEW_AFTER_MS, "{date_short_pretty}")}.`,
      };
    case "extended":
      return {
        done: true,
        sentence: mrkdwn`${describeRequest(outcome.request)} is now undone automatically ${dateToken(outcome.request.undoAt)} (it was ${dateToken(outcome.from)}).`,
      };
    case "extend_too_far":
      return {
        done: false,
        sentence: mrkdwn`A temporary change lasts at most 24 h from now, so this one can be extended to ${dateToken(outcome.latest)} at most. Use Make permanent to keep it longer. Nothing changed.`,
      };
    case "undone":
      return outcome.request.lastError
        ? {
            done: false,
            sentence: mrkdwn`${describeRequest(outcome.request)}: ${outcome.request.lastError.message}`,
          }
        : {
            done: true,
            sentence: mrkdwn`${describeRequest(outcome.request)} is undone: the previous setting is back.`,
          };
    case "undo_failed":
    case "undo_unknown":
      return {
        done: false,
        sentence: mrkdwn`${describeRequest(outcome.request)}: ${outcome.request.lastError?.message ?? "the undo did not finish; edgeops tries again."}`,
      };
    case "not_approver":
      return {
        done: false,
        sentence: mrkdwn`Only the person who asked for this change, or an approver of the channel it was asked in, can undo, keep or extend it (see /edge policy there). Nothing changed.`,
      };
    case "not_found":
      return { done: false, sentence: mrkdwn`That change no longer exists.` };
    case "not_undoable":
    case "already_decided":
      return { done: false, sentence: mrkdwn`${standsNow(outcome.request)} Nothing changed.` };
    default:
      return {
        done: false,
        sentence: "request" in outcome ? standsNow(outcome.request) : mrkdwn`Nothing changed.`,
      };
  }
}
