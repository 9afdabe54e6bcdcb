import { z } from "zod";
import { undoCommand } from "../../../changes/moves.js";
import type { SlackEnv, Subcommand } from "../../edge-commands/types.js";
import { rerunCommand, sendReply } from "../commands/edge.js";
import { answerPrivately, onButton, staleButton } from "./context.js";

const undoPermanentValue = z.object({ requestId: z.string().min(1).max(100) });

/**
 * Undo… on a permanent change of the cleanup checklist: a permanent change has no scheduled undo to run, so
 * the button asks for the change that puts the earlier value back (the kind's undoing command), run as if the
 * presser typed it: the same confirmation, policy and approvals as typing it.
 */
export function undoPermanentButton(env: SlackEnv, subcommands: ReadonlyMap<string, Subcommand>) {
  return onButton(env, undoPermanentValue, staleButton("timeline"), async (args, ctx, value) => {
    const request = await env.deps.store.changeRequests.get(value.requestId);
    if (!request || request.teamId !== ctx.teamId) {
      await answerPrivately(args, "That change is no longer known here: see /edge timeline.", ctx.logger);
      return;
    }
    if (request.state !== "applied") {
      await answerPrivately(args, "That change is no longer in force: nothing to undo.", ctx.logger);
      return;
    }
    const command = undoCommand(request);
    if (!command) {
      await answerPrivately(
        args,
        "edgeops can't say what this change replaced: put it back by hand in the bunny.net dashboard.",
        ctx.logger,
      );
      return;
    }
    const result = await rerunCommand(
      env,
      subcommands,
      { ...ctx, client: args.client },
      command.replace(/^\/edge\s+/, ""),
    );
    ctx.logger.info({ subcommand: result.subcommand, outcome: result.outcome }, "checklist undo answered");
    if (result.reply) await sendReply(args.respond, result.reply, result.isPublic, undefined, ctx.logger);
  });
}
