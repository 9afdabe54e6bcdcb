import type { AllMiddlewareArgs, BlockAction, ButtonAction, SlackActionMiddlewareArgs } from "@slack/bolt";
import type { z } from "zod";
import { toUserSentence, UserError } from "../../../errors.js";
import type { Logger } from "../../../log.js";
import type { MrkdwnInput } from "../../blocks/mrkdwn.js";
import { type Reply, sentenceReply, WITHOUT_PICTURE } from "../../blocks/reply.js";
import type { SlackEnv } from "../../edge-commands/types.js";

export type ButtonArgs = SlackActionMiddlewareArgs<BlockAction<ButtonAction>> & AllMiddlewareArgs;
/** What answering the person who acted needs: the interaction's response_url. */
type Respondable = Pick<ButtonArgs, "respond">;

export interface ButtonContext {
  teamId: string;
  userId: string;
  channelId: string;
  triggerId: string;
  value: string;
  logger: Logger;
}

/** The ids every button handler needs, and a child logger carrying them. */
export function buttonContext(env: SlackEnv, args: ButtonArgs): ButtonContext {
  const { body, action } = args;
  const teamId = body.team?.id ?? body.user.team_id ?? "";
  const userId = body.user.id;
  const channelId = body.channel?.id ?? body.container?.channel_id ?? "";
  return {
    teamId,
    userId,
    channelId,
    triggerId: body.trigger_id,
    value: action.value ?? "",
    logger: env.deps.logger.child({ teamId, userId, actionId: action.action_id }),
  };
}

/** Parse a button value the app itself wrote; a tampered or stale value yields undefined. */
export function parseButtonValue<S extends z.ZodType>(value: string, schema: S): z.output<S> | undefined {
  try {
    const parsed = schema.safeParse(JSON.parse(value));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/** What a button whose value no longer parses answers: run `/edge <command>` again. */
export const staleButton = (command: string): string =>
  `That button is out of date: run /edge ${command} again.`;

/**
 * A button's listener: ack, read the ids, parse the value the app wrote with `schema`, then `handle`.
 * A value that no longer parses is answered `stale` privately (silently when `stale` is undefined).
 */
export function onButton<S extends z.ZodType>(
  env: SlackEnv,
  schema: S,
  stale: string | undefined,
  handle: (args: ButtonArgs, ctx: ButtonContext, value: z.output<S>) => Promise<void>,
) {
  return async (args: ButtonArgs): Promise<void> => {
    await args.ack();
    const ctx = buttonContext(env, args);
    const value = parseButtonValue(ctx.value, schema);
    if (!value) {
      if (stale !== undefined) await answerPrivately(args, stale, ctx.logger);
      return;
    }
    await handle(args, ctx, value);
  };
}

/** A private sentence to the person who clicked, leaving the message as it is. */
export async function answerPrivately(
  args: Respondable,
  sentence: MrkdwnInput,
  logger: Logger,
): Promise<void> {
  await respondPrivately(args, sentenceReply(sentence), logger);
}

/** A private reply to the person who clicked, leaving the message as it is. */
export async function respondPrivately(args: Respondable, reply: Reply, logger: Logger): Promise<void> {
  await args
    .respond({ response_type: "ephemeral", replace_original: false, text: reply.text, blocks: reply.blocks })
    .catch((err: unknown) => logger.warn({ err }, "could not answer through response_url"));
}

/**
 * Replace the clicked message with `reply` (through its response_url); a picture Slack refuses is dropped and
 * the rest sent again.
 */
export async function replaceClicked(args: Respondable, reply: Reply, logger: Logger): Promise<void> {
  await replacedClicked(args, reply, logger);
}

/** replaceClicked, saying whether Slack took the replacement. */
export async function replacedClicked(args: Respondable, reply: Reply, logger: Logger): Promise<boolean> {
  try {
    await args.respond({
      replace_original: true,
      text: reply.text,
      ...(reply.blocks.length > 0 ? { blocks: reply.blocks } : {}),
    });
    return true;
  } catch (err) {
    const withoutPicture = reply[WITHOUT_PICTURE];
    if (withoutPicture) {
      logger.info({ err }, "the replacement's picture was refused; sending it without");
      return replacedClicked(args, withoutPicture, logger);
    }
    logger.warn({ err }, "could not replace the message");
    return false;
  }
}

/** Replace the clicked message with what `build` returns; any error becomes a private sentence. */
export async function replaceMessage(
  args: ButtonArgs,
  logger: Logger,
  build: () => Promise<Reply>,
): Promise<void> {
  await replacedMessage(args, logger, build);
}

/** replaceMessage, saying whether the message was replaced. */
export async function replacedMessage(
  args: ButtonArgs,
  logger: Logger,
  build: () => Promise<Reply>,
): Promise<boolean> {
  let reply: Reply;
  try {
    reply = await build();
  } catch (err) {
    if (!(err instanceof UserError)) logger.warn({ err }, "button failed");
    await answerPrivately(args, toUserSentence(err), logger);
    return false;
  }
  return replacedClicked(args, reply, logger);
}
