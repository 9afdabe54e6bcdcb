import { z } from "zod";
import { toUserSentence, UserError } from "../../../errors.js";
import { context } from "../../blocks/block-kit.js";
import { LIMITS } from "../../blocks/limits.js";
import { mention, mrkdwn } from "../../blocks/mrkdwn.js";
import type { Reply } from "../../blocks/reply.js";
import type { SlackEnv, Subcommand } from "../../edge-commands/types.js";
import { rerunCommand, sendReply } from "../commands/edge.js";
import { appsPageAt, appsPageValue } from "./apps-next-page.js";
import { answerPrivately, onButton } from "./context.js";
import { incidentListPage, incidentListValue } from "./incident.js";

const shareValue = z.union([
  z.object({ text: z.string() }),
  z.object({ apps: appsPageValue }),
  z.object({ incidentList: incidentListValue }),
]);

/** The shared answer says who shared it, at its foot (where Slack's block limit leaves room). */
function sharedBy(reply: Reply, userId: string): Reply {
  if (reply.blocks.length >= LIMITS.messageBlocks) return reply;
  return { text: reply.text, blocks: [...reply.blocks, context(mrkdwn`Shared by ${mention(userId)}`)] };
}

/**
 * Share in channel: answer the same command again (or read the same page again: an apps page's cursor
 * or a card's "See all" list can't be typed), in the channel, and remove the private copy.
 */
export function shareInChannel(env: SlackEnv, subcommands: ReadonlyMap<string, Subcommand>) {
  return onButton(env, shareValue, undefined, async (args, ctx, value) => {
    let result: { reply: Reply | null; outcome: string };
    if ("text" in value) {
      result = await rerunCommand(env, subcommands, { ...ctx, client: args.client }, value.text, {
        forcePublic: true,
      });
    } else {
      try {
        const reply =
          "apps" in value
            ? await appsPageAt(env, ctx.teamId, value.apps)
            : await incidentListPage(env, ctx.teamId, value.incidentList, ctx.channelId);
        result = { reply, outcome: "ok" };
      } catch (err) {
        if (!(err instanceof UserError)) ctx.logger.warn({ err }, "shared page failed");
        return answerPrivately(args, toUserSentence(err), ctx.logger);
      }
    }
    if (!result.reply) return;
    const shared = result.outcome === "ok";
    await sendReply(
      args.respond,
      shared ? sharedBy(result.reply, ctx.userId) : result.reply,
      shared,
      undefined,
      ctx.logger,
    );
    if (shared) {
      await args
        .respond({ delete_original: true })
        .catch((err: unknown) => ctx.logger.debug({ err }, "delete failed"));
    }
  });
}
