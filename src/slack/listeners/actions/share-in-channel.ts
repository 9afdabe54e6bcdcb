import { z } from "zod";
import { context, LIMITS, mention, mrkdwn, type Reply } from "../../blocks/common.js";
import type { SlackEnv, Subcommand } from "../../edge-commands/types.js";
import { rerunCommand, sendReply } from "../commands/edge.js";
import { onButton } from "./context.js";

const shareValue = z.object({ text: z.string() });

/** The shared answer says who shared it, at its foot (where Slack's block limit leaves room). */
function sharedBy(reply: Reply, userId: string): Reply {
  if (reply.blocks.length >= LIMITS.messageBlocks) return reply;
  return { text: reply.text, blocks: [...reply.blocks, context(mrkdwn`Shared by ${mention(userId)}`)] };
}

/** Share in channel: run the same command again, answer in the channel, remove the private copy. */
export function shareInChannel(env: SlackEnv, subcommands: ReadonlyMap<string, Subcommand>) {
  return onButton(env, shareValue, undefined, async (args, ctx, value) => {
    const result = await rerunCommand(env, subcommands, { ...ctx, client: args.client }, value.text, {
      forcePublic: true,
    });
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
