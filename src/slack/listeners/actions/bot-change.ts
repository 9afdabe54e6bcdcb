import type { WebClient } from "@slack/web-api";
import { z } from "zod";
import { botCategoryActionLabel, botCategoryLabel } from "../../../edge/schemas/shield.js";
import { toUserSentence } from "../../../errors.js";
import type { Logger } from "../../../log.js";
import { cancel, describeChange, requestChange } from "../../../services/bot-categories.js";
import { readBotSettings } from "../../../services/bots-view.js";
import type { ApprovalRequest } from "../../../store/index.js";
import { approvalCard, requestStateSentence } from "../../blocks/approvals.js";
import { botsMessage } from "../../blocks/bots.js";
import { escapeMrkdwn, type Reply, section } from "../../blocks/common.js";
import type { SlackEnv } from "../../commands/types.js";
import { newRequestId } from "../../request-ids.js";
import { updateCard } from "./approval-decision.js";
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

/** Post the approval card in the channel; on failure the request is cancelled and the reason returned. */
async function postCard(
  env: SlackEnv,
  client: WebClient,
  request: ApprovalRequest,
  approvers: Parameters<typeof approvalCard>[1],
  logger: Logger,
): Promise<string | undefined> {
  const card = approvalCard(request, approvers);
  try {
    const res = await client.chat.postMessage({
      channel: request.channelId,
      text: card.text,
      blocks: card.blocks,
    });
    if (res.ts) {
      await env.deps.store.approvals.setMessage(request.id, res.channel ?? request.channelId, res.ts);
      // Decided (or expired) between posting and recording where: bring the card up to date now.
      const latest = await env.deps.store.approvals.get(request.id);
      if (latest && latest.state !== "pending") await updateCard(client, latest, logger);
    }
    return undefined;
  } catch (err) {
    logger.warn({ err, requestId: request.id }, "could not post the approval card");
    await cancel(env.deps, request, "approval card could not be posted");
    return `${toUserSentence(err)} The request was cancelled, nothing changed.`;
  }
}

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
    const change = describeChange({ shieldZoneId: value.z, category: value.c, requestedAction: value.a });
    let banner: string;
    try {
      const outcome = await requestChange(env.deps, {
        teamId: ctx.teamId,
        channelId: ctx.channelId,
        userId: ctx.userId,
        shieldZoneId: value.z,
        category: value.c,
        action: value.a,
        requestId: value.r,
      });
      switch (outcome.kind) {
        case "unchanged":
          banner = `:information_source: ${botCategoryLabel(value.c)} is already *${botCategoryActionLabel(outcome.current)}* on shield zone ${value.z}; nothing changed.`;
          break;
        case "duplicate":
          return answerPrivately(
            args,
            `This button was already used. ${requestStateSentence(outcome.request)}`,
            ctx.logger,
          );
        case "pending": {
          const failure = await postCard(env, args.client, outcome.request, outcome.policy, ctx.logger);
          if (failure) return answerPrivately(args, failure, ctx.logger);
          banner = `:hourglass_flowing_sand: *${escapeMrkdwn(change)}* needs a second person's approval: the request is posted in this channel.`;
          break;
        }
        case "applied":
          banner = `:white_check_mark: Done: *${escapeMrkdwn(change)}* (approvals are off here).`;
          break;
        case "failed":
          banner = `:x: *${escapeMrkdwn(change)}* failed: ${escapeMrkdwn(outcome.request.lastError?.message ?? "unknown error")}`;
          break;
      }
    } catch (err) {
      ctx.logger.warn({ err }, "bot category request failed");
      return answerPrivately(args, toUserSentence(err), ctx.logger);
    }
    let reply: Reply = { text: banner, blocks: [section(banner)] };
    if (fromBotsMessage) {
      try {
        const { detection, categories } = await readBotSettings(env.deps, ctx.teamId, value.z);
        reply = botsMessage(value.z, detection, categories, newRequestId, banner);
      } catch (err) {
        ctx.logger.debug({ err }, "could not refresh the bots view; showing the outcome alone");
      }
    }
    await replaceClicked(args, reply, ctx.logger);
  };
}

/** Cancel on the reply to a typed /edge bot. */
export function botCancel(env: SlackEnv) {
  return async (args: ButtonArgs) => {
    await args.ack();
    const ctx = buttonContext(env, args);
    await replaceClicked(args, { text: "Cancelled: nothing was changed.", blocks: [] }, ctx.logger);
  };
}
