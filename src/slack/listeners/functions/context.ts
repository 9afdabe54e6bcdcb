import type { AllMiddlewareArgs, SlackEventMiddlewareArgs } from "@slack/bolt";
import type { WebClient } from "@slack/web-api";
import { z } from "zod";
import { toUserSentence, usage } from "../../../errors.js";
import type { Logger } from "../../../log.js";
import { channelMembers } from "../../channel-members.js";
import type { SlackEnv } from "../../edge-commands/types.js";

/** What Bolt's app.function gives a listener: the event, its inputs, complete() and fail(). */
export type FunctionArgs = SlackEventMiddlewareArgs<"function_executed"> & AllMiddlewareArgs;

export interface StepContext {
  teamId: string;
  executionId: string;
  callbackId: string;
  logger: Logger;
}

export function stepContext(env: SlackEnv, args: FunctionArgs): StepContext {
  const teamId = args.context.teamId ?? (args.body as { team_id?: string }).team_id ?? "";
  const executionId = args.event.function_execution_id;
  const callbackId = args.event.function.callback_id;
  return {
    teamId,
    executionId,
    callbackId,
    // Never the event itself: it carries the execution's token.
    logger: env.deps.logger.child({ teamId, functionExecutionId: executionId, callbackId }),
  };
}

/**
 * A step's inputs checked with `schema`; the first wrong or missing one is a sentence from `help`
 * (keyed by input name) saying what to give, so the workflow's author can fix the step.
 */
export function parseStepInputs<S extends z.ZodType>(
  schema: S,
  inputs: unknown,
  help: Readonly<Record<string, string>>,
): z.output<S> {
  const parsed = schema.safeParse(inputs ?? {});
  if (parsed.success) return parsed.data;
  const field = String(parsed.error.issues[0]?.path[0] ?? "");
  throw usage(
    help[field] ?? `The step's inputs are not what it expects (${field || "inputs"}); edit the step.`,
  );
}

/** Slack ids as Workflow Builder passes them. */
export const USER_ID = /^[UW][A-Z0-9]{2,30}$/;
export const CHANNEL_ID = /^[CGD][A-Z0-9]{2,30}$/;

/**
 * Who ran the workflow, as Slack fills a `slack#/types/user_context` input: the workflow's author can't
 * type it, so it really is the person who ran the workflow.
 */
export const userContext = z.object({ id: z.string().regex(USER_ID), secret: z.string().min(1) });

/**
 * The workflow's author picked the channel, so a step acts or posts there only for a person who ran the
 * workflow from inside it (as a typed command can only come from a member). The workspace's client when
 * they are a member; otherwise the step is completed with `notMember` (or why the members could not be
 * read) and undefined is returned.
 */
export async function clientIfMember(
  env: SlackEnv,
  args: FunctionArgs,
  ctx: StepContext,
  where: { channel: string; userId: string },
  notMember: string,
): Promise<WebClient | undefined> {
  try {
    const client = await env.clientFor(ctx.teamId);
    const members = await channelMembers(env.deps, client, ctx.teamId, where.channel, where.userId);
    if (members.has(where.userId)) return client;
    ctx.logger.info(
      { channel: where.channel },
      "the person who ran the workflow is not in the step's channel",
    );
    await finishNow(args, ctx, { error: notMember });
  } catch (err) {
    ctx.logger.info({ err, channel: where.channel }, "could not read the workflow step's channel members");
    await finishNow(args, ctx, { error: toUserSentence(err) });
  }
  return undefined;
}

/** Complete a step that finishes at once (no change request to wait on) with Bolt's complete/fail. */
export async function finishNow(
  args: FunctionArgs,
  ctx: StepContext,
  result: { outputs: Record<string, unknown> } | { error: string },
): Promise<void> {
  try {
    if ("outputs" in result) await args.complete({ outputs: result.outputs });
    else await args.fail({ error: result.error });
  } catch (err) {
    ctx.logger.warn({ err }, "could not complete the workflow step");
  }
}
