import type { AllMiddlewareArgs, SlackEventMiddlewareArgs } from "@slack/bolt";
import type { z } from "zod";
import { usage } from "../../../errors.js";
import type { Logger } from "../../../log.js";
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
