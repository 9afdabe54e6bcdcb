import type {
  AllMiddlewareArgs,
  BlockAction,
  ExternalSelectAction,
  SlackActionMiddlewareArgs,
} from "@slack/bolt";
import { PICKER_NOTICE_VALUE } from "../../blocks/pickers.js";
import { withShareButton } from "../../edge-commands/run.js";
import type { SlackEnv, Subcommand } from "../../edge-commands/types.js";
import { fillLater } from "../../impact-fill.js";
import { commandTextFor, decodePickTemplate } from "../../picker-template.js";
import { rerunCommand, sendReply } from "../commands/edge.js";
import { answerPrivately, replaceClicked } from "./context.js";

type SelectArgs = SlackActionMiddlewareArgs<BlockAction<ExternalSelectAction>> & AllMiddlewareArgs;

/**
 * A choice in a message picker: run the command it completes with the chosen id, as if typed, and put
 * the answer in the picker's place (a change goes on to its confirm, like a typed one).
 */
export function pickerChosen(env: SlackEnv, subcommands: ReadonlyMap<string, Subcommand>) {
  return async (args: SelectArgs) => {
    await args.ack();
    const { body, action } = args;
    const teamId = body.team?.id ?? body.user.team_id ?? "";
    const userId = body.user.id;
    const logger = env.deps.logger.child({ teamId, userId, actionId: action.action_id });
    const template = decodePickTemplate(action.block_id);
    const chosen = action.selected_option?.value;
    if (!template || !chosen || chosen === PICKER_NOTICE_VALUE) {
      await answerPrivately(
        args,
        template
          ? "That line only tells you something: type part of a name and pick one of the results."
          : "This picker is out of date: type the command again.",
        logger,
      );
      return;
    }
    const text = commandTextFor(template, chosen);
    const channelId = body.channel?.id ?? body.container?.channel_id ?? "";
    const origin = { client: args.client, logger, teamId, userId, channelId, triggerId: body.trigger_id };
    const result = await rerunCommand(env, subcommands, origin, text);
    logger.info({ subcommand: result.subcommand, outcome: result.outcome }, "picker choice answered");
    if (!result.reply) return;
    if (result.outcome === "ok" && result.isPublic) {
      await sendReply(args.respond, result.reply, true, undefined, logger);
      await args
        .respond({ delete_original: true })
        .catch((err: unknown) => logger.debug({ err }, "delete failed"));
      return;
    }
    // An error keeps the picker, so another choice can be made; an answer takes its place, with Share in
    // channel as a typed one has.
    if (result.outcome === "ok") {
      const reply = result.shareable ? withShareButton(result.reply, text) : result.reply;
      const fill = fillLater(env.deps, teamId, reply, (filled) => replaceClicked(args, filled, logger));
      await replaceClicked(args, reply, logger);
      await fill?.();
    } else await sendReply(args.respond, result.reply, false, undefined, logger);
  };
}
