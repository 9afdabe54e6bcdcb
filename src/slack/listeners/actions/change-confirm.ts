import { z } from "zod";
import {
  appliesWithoutApproval,
  type ChangeOutcome,
  changesNothing,
  MAX_TEMPORARY_MS,
} from "../../../changes/engine.js";
import { type ChangeKind, resolveChange } from "../../../changes/index.js";
import { toUserSentence } from "../../../errors.js";
import {
  type ChangeButtonValue,
  confirmChangeMessage,
  requestStateSentence,
} from "../../blocks/approvals.js";
import { section } from "../../blocks/block-kit.js";
import { type MrkdwnInput, mrkdwn } from "../../blocks/mrkdwn.js";
import { reply } from "../../blocks/reply.js";
import { outcomeBanner, requestWithCard, seesWhereItWaits } from "../../change-requests.js";
import type { SlackEnv } from "../../edge-commands/types.js";
import { ACTIONS, IN_THREAD_CONFIRM_PREFIX } from "../../ids.js";
import { confirmationAnswered, withPreviewRead } from "../../impact-fill.js";
import {
  answerPrivately,
  type ButtonArgs,
  type ButtonContext,
  buttonContext,
  parseButtonValue,
  replaceClicked,
  respondPrivately,
} from "./context.js";
import { driftPutBackAsked } from "./drift-keep.js";

/** What a Confirm button carries: the request id it creates, the kind, its parameters, and `for`. */
export const changeButtonValue = z.object({
  r: z.string().regex(/^[\w-]{10,40}$/),
  k: z.string().max(40),
  p: z.unknown(),
  t: z.number().int().min(60_000).max(MAX_TEMPORARY_MS).optional(),
  ok: z.literal(1).optional(),
  o: z
    .string()
    .regex(/^\d{1,12}\.\d{1,8}$/)
    .optional(),
  d: z.string().max(1_200).optional(),
});

/**
 * A button that asks for a change straight after Slack's confirm dialog (an alert's or the incident card's
 * Block, `/edge bots`, Put it back, a WAF rule's review) where no approval card would follow: instead of asking
 * it, answer the presser privately with the change's confirmation, its impact preview read, saying it applies at
 * once. Its Confirm carries the button's own action id and `confirmValue` (marked confirmed), so the change is
 * then asked exactly as the button would have. True when it answered so; false to ask the change now.
 */
export async function confirmFirstWhereNoApproval<P>(
  env: SlackEnv,
  args: ButtonArgs,
  ctx: ButtonContext,
  // biome-ignore lint/suspicious/noExplicitAny: any kind's value type
  kind: ChangeKind<P, any>,
  params: P,
  change: ChangeButtonValue,
  confirmValue: string,
): Promise<boolean> {
  const scope = { teamId: ctx.teamId, channelId: ctx.channelId, userId: ctx.userId };
  const deps = env.deps;
  try {
    const read = () => kind.readCurrent(deps, scope, params).catch(() => null);
    // Read once, and only where it decides or is shown: an approval card reads it again anyway.
    let current = kind.needsApproval ? await read() : null;
    const why = await appliesWithoutApproval(deps, kind, scope, params, current);
    if (why === undefined) return false;
    if (!kind.needsApproval) current = await read();
    const nothing = await changesNothing(deps, kind, scope, params, current);
    const warning =
      why === "off"
        ? "Approvals are off here: this applies at once."
        : "This channel's approvals do not cover this change: it applies at once.";
    const confirmation = confirmChangeMessage(change, current, warning, nothing, {
      actionId: args.action.action_id,
      value: confirmValue,
    });
    await respondPrivately(args, await withPreviewRead(deps, ctx.teamId, confirmation), ctx.logger);
    return true;
  } catch (err) {
    ctx.logger.warn({ err, kind: kind.name }, "could not confirm the change first");
    await answerPrivately(args, toUserSentence(err), ctx.logger);
    return true;
  }
}

/** The Keep value of the drift post clicked (edgeops' own message), carried through a confirmation. */
function keepValueOf(blocks: unknown): string | undefined {
  if (!Array.isArray(blocks)) return undefined;
  for (const b of blocks as Array<{ elements?: Array<{ action_id?: string; value?: string }> }>)
    for (const e of b.elements ?? []) if (e.action_id === ACTIONS.driftKeep) return e.value;
  return undefined;
}

/**
 * Create the request for a confirmed change of any kind, post its card where one is needed (pending,
 * an unknown outcome, a temporary change), and return the outcome's kind and the sentence for the person
 * who asked; undefined when they were already answered privately.
 */
export async function submitChange<P>(
  env: SlackEnv,
  args: ButtonArgs,
  ctx: ButtonContext,
  // biome-ignore lint/suspicious/noExplicitAny: any kind's value type
  kind: ChangeKind<P, any>,
  params: P,
  requestId: string,
  temporaryMs?: number,
): Promise<{ kind: ChangeOutcome["kind"]; banner: MrkdwnInput } | undefined> {
  const change = kind.describe(params);
  try {
    const { outcome, failure } = await requestWithCard(
      env,
      args.client,
      ctx.logger,
      kind,
      {
        teamId: ctx.teamId,
        channelId: ctx.channelId,
        userId: ctx.userId,
        params,
        requestId,
        ...(temporaryMs !== undefined ? { temporaryMs } : {}),
      },
      true,
    );
    if (outcome.kind === "duplicate") {
      await answerPrivately(
        args,
        mrkdwn`This button was already used. ${requestStateSentence(outcome.request)}`,
        ctx.logger,
      );
      return undefined;
    }
    if (failure) {
      await answerPrivately(args, failure, ctx.logger);
      return undefined;
    }
    const seesWhere =
      outcome.kind !== "already_pending" ||
      (await seesWhereItWaits(env, args.client, outcome.request, ctx).catch(() => false));
    return {
      kind: outcome.kind,
      banner: outcomeBanner(outcome, change, ctx.userId, undefined, seesWhere) ?? "",
    };
  } catch (err) {
    ctx.logger.warn({ err, kind: kind.name }, "change request failed");
    await answerPrivately(args, toUserSentence(err), ctx.logger);
    return undefined;
  }
}

/** Confirm on the reply to a typed change command (/edge bot, /edge restart, /edge purge …). */
export function changeConfirm(env: SlackEnv) {
  return async (args: ButtonArgs) => {
    await args.ack();
    const ctx = buttonContext(env, args);
    const value = parseButtonValue(ctx.value, changeButtonValue);
    const resolved = value ? resolveChange({ kind: value.k, params: value.p }) : undefined;
    if (!value || !resolved) {
      if (value) confirmationAnswered(value.r);
      return answerPrivately(args, "That button is out of date: run the command again.", ctx.logger);
    }
    const clickedTs = args.body.message?.ts ?? args.body.container?.message_ts;
    // The Confirm of a typed command's confirmation (its preview shown) and of a button's own are asked now.
    if (args.action.action_id !== ACTIONS.changeConfirm && value.ok === undefined) {
      const drift =
        args.action.action_id === ACTIONS.driftPutBack ? keepValueOf(args.body.message?.blocks) : undefined;
      const change: ChangeButtonValue = {
        r: value.r,
        k: value.k,
        p: value.p,
        ...(value.t !== undefined ? { t: value.t } : {}),
      };
      const confirmed: ChangeButtonValue = {
        ...change,
        ok: 1,
        ...(typeof clickedTs === "string" ? { o: clickedTs } : {}),
        ...(drift !== undefined ? { d: drift } : {}),
      };
      if (
        await confirmFirstWhereNoApproval(
          env,
          args,
          ctx,
          resolved.kind,
          resolved.params,
          change,
          JSON.stringify(confirmed),
        )
      )
        return;
    }
    confirmationAnswered(value.r);
    const submitted = await submitChange(env, args, ctx, resolved.kind, resolved.params, value.r, value.t);
    if (submitted === undefined) return;
    const answer = reply(submitted.banner, [section(submitted.banner)]);
    // An alert's mitigation: the alert stays as it is; the outcome goes into its thread, except a
    // pointer to someone's waiting request, which concerns the presser alone.
    // Confirmed on the button's own confirmation: the thread is that of the message whose button opened it.
    const threadTs = value.ok ? value.o : clickedTs;
    const inThread =
      args.action.action_id.startsWith(IN_THREAD_CONFIRM_PREFIX) && typeof threadTs === "string";
    if (args.action.action_id === ACTIONS.driftPutBack)
      await driftPutBackAsked(
        env,
        args,
        ctx,
        submitted.kind,
        value.ok && value.o !== undefined && value.d !== undefined
          ? { ts: value.o, keep: value.d }
          : undefined,
      );
    if (inThread && submitted.kind === "already_pending") return respondPrivately(args, answer, ctx.logger);
    if (inThread && value.ok) await replaceClicked(args, answer, ctx.logger);
    if (inThread) {
      await args.client.chat
        .postMessage({
          channel: ctx.channelId,
          thread_ts: threadTs,
          text: answer.text,
          blocks: answer.blocks,
        })
        .catch((err: unknown) => ctx.logger.warn({ err }, "could not answer in the alert's thread"));
      return;
    }
    await replaceClicked(args, answer, ctx.logger);
  };
}

/** Cancel on the reply to a typed change command. */
export function changeCancel(env: SlackEnv) {
  return async (args: ButtonArgs) => {
    await args.ack();
    const ctx = buttonContext(env, args);
    confirmationAnswered(ctx.value);
    await replaceClicked(args, reply("Cancelled: nothing was changed.", []), ctx.logger);
  };
}
