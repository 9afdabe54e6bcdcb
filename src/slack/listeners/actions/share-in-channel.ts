import { z } from "zod";
import { runCommand } from "../../edge-commands/run.js";
import type { SlackEnv, Subcommand } from "../../edge-commands/types.js";
import { sendReply } from "../commands/edge.js";
import { type ButtonArgs, buttonContext, parseButtonValue } from "./context.js";

const shareValue = z.object({ text: z.string() });

/** Share in channel: run the same command again, answer in the channel, remove the private copy. */
export function shareInChannel(env: SlackEnv, subcommands: ReadonlyMap<string, Subcommand>) {
  return async (args: ButtonArgs) => {
    await args.ack();
    const ctx = buttonContext(env, args);
    const value = parseButtonValue(ctx.value, shareValue);
    if (!value) return;
    const result = await runCommand(subcommands, {
      env,
      client: args.client,
      logger: ctx.logger,
      teamId: ctx.teamId,
      userId: ctx.userId,
      channelId: ctx.channelId,
      triggerId: ctx.triggerId,
      text: value.text,
      forcePublic: true,
    });
    if (!result.reply) return;
    await sendReply(args.respond, result.reply, result.outcome === "ok", undefined, ctx.logger);
    if (result.outcome === "ok") {
      await args
        .respond({ delete_original: true })
        .catch((err: unknown) => ctx.logger.debug({ err }, "delete failed"));
    }
  };
}
