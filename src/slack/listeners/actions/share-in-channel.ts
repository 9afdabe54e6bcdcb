import { z } from "zod";
import type { SlackEnv, Subcommand } from "../../edge-commands/types.js";
import { rerunCommand, sendReply } from "../commands/edge.js";
import { onButton } from "./context.js";

const shareValue = z.object({ text: z.string() });

/** Share in channel: run the same command again, answer in the channel, remove the private copy. */
export function shareInChannel(env: SlackEnv, subcommands: ReadonlyMap<string, Subcommand>) {
  return onButton(env, shareValue, undefined, async (args, ctx, value) => {
    const result = await rerunCommand(env, subcommands, { ...ctx, client: args.client }, value.text, {
      forcePublic: true,
    });
    if (!result.reply) return;
    await sendReply(args.respond, result.reply, result.outcome === "ok", undefined, ctx.logger);
    if (result.outcome === "ok") {
      await args
        .respond({ delete_original: true })
        .catch((err: unknown) => ctx.logger.debug({ err }, "delete failed"));
    }
  });
}
