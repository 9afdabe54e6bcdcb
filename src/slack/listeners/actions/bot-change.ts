import { z } from "zod";
import { requestChange } from "../../../changes/engine.js";
import { botCategoryKind } from "../../../changes/kinds/bot-category.js";
import { botCategoryActionLabel, botCategoryLabel } from "../../../edge/schemas/shield.js";
import { toUserSentence } from "../../../errors.js";
import { readBotSettings } from "../../../services/bots-view.js";
import { requestStateSentence } from "../../blocks/approvals.js";
import { botsMessage } from "../../blocks/bots.js";
import { type MrkdwnInput, mrkdwn, type Reply, reply, section } from "../../blocks/common.js";
import { outcomeBanner, postApprovalCard } from "../../change-requests.js";
import type { SlackEnv } from "../../commands/types.js";
import { newRequestId } from "../../request-ids.js";
import {
  answerPrivately,
  type ButtonArgs,
  buttonContext,
  parseButtonValue,
  replaceClicked,
} from "./context.js";

const changeValue = z.object({
  r: z.string().regex(/^[\w-]{10,40}$/),
  z: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER),
  c: z.number().int().min(1).max(7),
  a: z.union([z.literal(0), z.literal(1), z.literal(2)]),
});

/**
 * Block / Allow / Clear (after Slack's confirmation dialog) and Confirm (after a typed /edge bot):
 * create the request, then apply it at once or post the approval card, and say what happened.
 * `fromBotsMessage`: the clicked message is the /edge bots view, refreshed with the outcome on top.
 */
export function botChange(env: SlackEnv, fromBotsMessage: boolean) {
  return async (args: ButtonArgs) => {
    await args.ack();
    const ctx = buttonContext(env, args);
    const value = parseButtonValue(ctx.value, changeValue);
    if (!value) return answerPrivately(args, "That button is out of date: run /edge bots again.", ctx.logger);
    const params = { shieldZoneId: value.z, category: value.c, action: value.a };
    const change = botCategoryKind.describe(params);
    let banner: MrkdwnInput;
    try {
      const outcome = await requestChange(env.deps, botCategoryKind, {
        teamId: ctx.teamId,
        channelId: ctx.channelId,
        userId: ctx.userId,
        params,
        requestId: value.r,
      });
      if (outcome.kind === "duplicate")
        return answerPrivately(
          args,
          mrkdwn`This button was already used. ${requestStateSentence(outcome.request)}`,
          ctx.logger,
        );
      if (outcome.kind === "pending" || outcome.kind === "unknown") {
        // An unknown outcome gets a card too, so the reconciler's answer has somewhere to show.
        const policy =
          outcome.kind === "pending" ? outcome.policy : { approvers: { kind: "admins" as const } };
        const failure = await postApprovalCard(env, args.client, outcome.request, policy, ctx.logger);
        if (failure) return answerPrivately(args, failure, ctx.logger);
      }
      banner =
        outcome.kind === "unchanged"
          ? mrkdwn`:information_source: ${botCategoryLabel(value.c)} is already *${botCategoryActionLabel(value.a)}* on shield zone ${value.z}; nothing changed.`
          : (outcomeBanner(outcome, change) ?? "");
    } catch (err) {
      ctx.logger.warn({ err }, "bot category request failed");
      return answerPrivately(args, toUserSentence(err), ctx.logger);
    }
    let answer: Reply = reply(banner, [section(banner)]);
    if (fromBotsMessage) {
      try {
        const { detection, categories } = await readBotSettings(env.deps, ctx.teamId, value.z);
        answer = botsMessage(value.z, detection, categories, newRequestId, banner);
      } catch (err) {
        ctx.logger.debug({ err }, "could not refresh the bots view; showing the outcome alone");
      }
    }
    await replaceClicked(args, answer, ctx.logger);
  };
}

/** Cancel on the reply to a typed /edge bot. */
export function botCancel(env: SlackEnv) {
  return async (args: ButtonArgs) => {
    await args.ack();
    const ctx = buttonContext(env, args);
    await replaceClicked(args, reply("Cancelled: nothing was changed.", []), ctx.logger);
  };
}
