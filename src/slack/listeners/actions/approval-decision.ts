import { approve, type DecisionOutcome, reject, retry } from "../../../changes/engine.js";
import { undoNow } from "../../../changes/undo-and-reconcile.js";
import { extendUndo, makePermanent } from "../../../changes/undo-schedule.js";
import { toUserSentence } from "../../../errors.js";
import { approverCheck } from "../../approvers.js";
import { rejectedAnswer, rejectReasonModal, requestStateSentence } from "../../blocks/approvals.js";
import { undoScheduleAnswer } from "../../blocks/cleanup.js";
import { joinMrkdwn, type MrkdwnInput, mention, mrkdwn } from "../../blocks/mrkdwn.js";
import { sentenceReply } from "../../blocks/reply.js";
import type { SlackEnv } from "../../edge-commands/types.js";
import { answerPrivately, type ButtonArgs, buttonContext, respondPrivately } from "./context.js";

const MIN = 60_000;
const decisions = {
  approve,
  reject,
  retry,
  undo: undoNow,
  // From a resolved alert's cleanup checklist or the heads-up before an undo: the same decisions on the undo.
  cleanup_undo: undoNow,
  permanent: makePermanent,
  extend_30m: (deps, input) => extendUndo(deps, { ...input, byMs: 30 * MIN }),
  extend_2h: (deps, input) => extendUndo(deps, { ...input, byMs: 120 * MIN }),
} as const satisfies Record<string, (...args: Parameters<typeof undoNow>) => Promise<DecisionOutcome>>;
export type Decision = keyof typeof decisions;

/**
 * Pressed away from the card, maybe in another channel than the one the change was asked in: every answer is
 * private and names what, never who (undoScheduleAnswer).
 */
const AWAY_FROM_CARD: ReadonlySet<Decision> = new Set([
  "cleanup_undo",
  "permanent",
  "extend_30m",
  "extend_2h",
]);

function privateSentence(outcome: DecisionOutcome, decision: Decision): MrkdwnInput | undefined {
  switch (outcome.kind) {
    case "not_found":
      return "That request no longer exists.";
    case "self_approval":
      return "You asked for this change, so someone else has to approve it. Nothing changed.";
    case "not_approver":
      return decision === "undo"
        ? "Only the requester or this channel's approvers can undo this change (see /edge policy). Nothing changed."
        : `Only this channel's approvers can ${decision} requests (they are named on the card; see /edge policy). Nothing changed.`;
    case "not_undoable":
      return requestStateSentence(outcome.request);
    case "undo_failed":
      return outcome.request.lastError?.message;
    case "already_decided":
      return requestStateSentence(outcome.request);
    case "expired":
    case "retry_closed":
      return requestStateSentence(outcome.request);
    case "approval_recorded": {
      const more = `${outcome.remaining} more ${outcome.remaining === 1 ? "approver is" : "approvers are"} needed`;
      return outcome.dropped?.length
        ? mrkdwn`Your approval is recorded, but the approval of ${joinMrkdwn(outcome.dropped.map(mention), ", ")} no longer counts (no longer an approver here): ${more}.`
        : `Your approval is recorded: ${more}.`;
    }
    case "withdrawn":
      return "You withdrew your request: nothing changed.";
    case "already_approved":
      return "You already approved this request; it needs another approver.";
    // A Retry press gets an answer whatever the card shows.
    case "failed":
      return decision === "retry"
        ? mrkdwn`Retried, and it failed again: ${outcome.request.lastError?.message ?? "unknown error"}`
        : undefined;
    case "applied":
      return decision === "retry" ? "Retried: the change is applied." : undefined;
    default:
      return undefined;
  }
}

/** Approve / Reject / Retry / Undo now on an approval card. Every refusal is a private sentence; the card shows the outcome. */
export function approvalDecision(env: SlackEnv, decision: Decision) {
  return async (args: ButtonArgs) => {
    await args.ack();
    const ctx = buttonContext(env, args);
    let outcome: DecisionOutcome;
    try {
      outcome = await decisions[decision](env.deps, {
        requestId: ctx.value,
        teamId: ctx.teamId,
        userId: ctx.userId,
        isApprover: approverCheck(env, args.client, ctx.teamId),
      });
    } catch (err) {
      ctx.logger.warn({ err, decision }, "approval decision failed");
      return answerPrivately(args, toUserSentence(err), ctx.logger);
    }
    ctx.logger.info({ decision, outcome: outcome.kind, requestId: ctx.value }, "approval card clicked");
    // The card was redrawn by whatever this click moved (src/slack/change-requests.ts redrawCardsOnChange).
    if (outcome.kind === "rejected")
      return respondPrivately(args, rejectedAnswer(outcome.request), ctx.logger);
    if (AWAY_FROM_CARD.has(decision)) {
      const answer = undoScheduleAnswer(outcome);
      return respondPrivately(
        args,
        answer.done ? sentenceReply(answer.sentence, ":white_check_mark:") : sentenceReply(answer.sentence),
        ctx.logger,
      );
    }
    const sentence = privateSentence(outcome, decision);
    // What went as the clicker meant is not a warning.
    const done = ["approval_recorded", "withdrawn", "applied"].includes(outcome.kind);
    if (sentence)
      await respondPrivately(
        args,
        done ? sentenceReply(sentence, ":white_check_mark:") : sentenceReply(sentence),
        ctx.logger,
      );
  };
}

/** "Add a reason" on the rejecter's private answer: the modal, only for the person who rejected. */
export function rejectReasonOpen(env: SlackEnv) {
  return async (args: ButtonArgs) => {
    await args.ack();
    const ctx = buttonContext(env, args);
    const request = await env.deps.store.changeRequests.get(ctx.value);
    if (request?.teamId !== ctx.teamId || request.state !== "rejected" || request.decidedBy !== ctx.userId)
      return answerPrivately(
        args,
        "Only the person who rejected this request can add its reason.",
        ctx.logger,
      );
    await args.client.views
      .open({ trigger_id: ctx.triggerId, view: rejectReasonModal(request) })
      .catch((err: unknown) => ctx.logger.warn({ err }, "could not open the reject reason modal"));
  };
}
