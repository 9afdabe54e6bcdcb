import type { AllMiddlewareArgs, RespondFn, SlackCommandMiddlewareArgs } from "@slack/bolt";
import type { Logger } from "../../../log.js";
import { type Reply, WITHOUT_PICTURE } from "../../blocks/reply.js";
import { type CommandOutcome, runCommand, withShareButton } from "../../edge-commands/run.js";
import type { CommandContext, SlackEnv, Subcommand } from "../../edge-commands/types.js";
import { fillLater } from "../../impact-fill.js";

/**
 * Send a reply through response_url: ephemeral with a Share button, or in the channel. A reply with a picture
 * Slack refuses is sent again without it. Whether Slack took the answer.
 */
export async function sendReply(
  respond: RespondFn,
  reply: Reply,
  isPublic: boolean,
  shareText: string | undefined,
  logger: Logger,
  replaceOriginal = false,
): Promise<void> {
  const finished = !isPublic && shareText !== undefined ? withShareButton(reply, shareText) : reply;
  try {
    await respond({
      response_type: isPublic ? "in_channel" : "ephemeral",
      replace_original: replaceOriginal,
      text: finished.text,
      blocks: finished.blocks,
    });
  } catch (err) {
    const withoutPicture = reply[WITHOUT_PICTURE];
    if (withoutPicture) {
      logger.info({ err }, "the answer's picture was refused; sending it without");
      return sendReply(respond, withoutPicture, isPublic, shareText, logger, replaceOriginal);
    }
    // The response_url is gone (expired or used up) or Slack refused the blocks: nothing more to tell.
    logger.warn({ err }, "could not answer through response_url");
  }
}

/** Who asked, and where: what a button, picker, shortcut or modal knows when it runs an /edge command. */
export type CommandOrigin = Pick<
  CommandContext,
  "client" | "logger" | "teamId" | "userId" | "channelId" | "triggerId"
>;

/**
 * Run `/edge <text>` for an interaction as if it had been typed (Share in channel, a picker's choice, a
 * shortcut, the change modal). No placeholder: the interaction is already acknowledged.
 */
export function rerunCommand(
  env: SlackEnv,
  subcommands: ReadonlyMap<string, Subcommand>,
  origin: CommandOrigin,
  text: string,
  options: { forcePublic?: true } = {},
): Promise<CommandOutcome> {
  const { client, logger, teamId, userId, channelId, triggerId } = origin;
  return runCommand(subcommands, {
    env,
    client,
    logger,
    teamId,
    userId,
    channelId,
    triggerId,
    text,
    ...options,
  });
}

/** `/edge ...`: ack at once, then build the answer and send it through response_url. */
export function edgeCommand(env: SlackEnv, subcommands: ReadonlyMap<string, Subcommand>) {
  return async ({ command, ack, respond, client }: SlackCommandMiddlewareArgs & AllMiddlewareArgs) => {
    await ack();
    const logger = env.deps.logger.child({
      teamId: command.team_id,
      userId: command.user_id,
      command: "edge",
    });
    // A slow command posts a placeholder first; its answer (or error) then replaces it, as visible as it was.
    let placeholderPublic: boolean | undefined;
    const result = await runCommand(subcommands, {
      env,
      client,
      logger,
      teamId: command.team_id,
      userId: command.user_id,
      channelId: command.channel_id,
      triggerId: command.trigger_id,
      text: command.text,
      placeholder: async (reply, isPublic) => {
        await sendReply(respond, reply, isPublic, undefined, logger);
        placeholderPublic = isPublic;
      },
    });
    logger.info({ subcommand: result.subcommand, outcome: result.outcome }, "command answered");
    env.deps.metrics.commands.inc({ subcommand: result.subcommand, outcome: result.outcome });
    if (result.reply) {
      const shareText = result.shareable ? stripPublic(command.text) : undefined;
      const replacing = placeholderPublic !== undefined;
      const isPublic = placeholderPublic ?? result.isPublic;
      // A change's confirmation goes out at once; its impact preview, read meanwhile, is filled in after.
      const fill = fillLater(env.deps, command.team_id, result.reply, (filled) =>
        sendReply(respond, filled, isPublic, shareText, logger, true),
      );
      await sendReply(respond, result.reply, isPublic, shareText, logger, replacing);
      await fill?.();
    }
  };
}

function stripPublic(text: string): string {
  return text
    .split(/\s+/)
    .filter((w) => w.toLowerCase() !== "public")
    .join(" ")
    .trim();
}
