import type { WebClient } from "@slack/web-api";
import { describeRequest } from "../../changes/index.js";
import { slackErrorCode } from "../../errors.js";
import type { Logger } from "../../log.js";
import {
  type ChangeRequest,
  type FunctionExecution,
  SETTLED_REQUEST_STATES,
  type WorkScope,
} from "../../store/index.js";
import type { SlackEnv } from "../edge-commands/types.js";

/**
 * Completing Workflow Builder steps (Slack functions). A step that asks for a change waits on its
 * request: it is completed once, by whichever replica wins the claim on its row, when the request
 * settles (the engine's observer point, src/changes/observers.ts) or, if that moment was missed (the
 * process died, Slack was down), by the approval sweeper.
 */

/** What a step is completed with: outputs (functions.completeSuccess) or a sentence (completeError). */
export type StepResult = { outputs: Record<string, unknown> } | { error: string };

/** How long a claim on a step lasts before another replica may take it over. */
export const STEP_LEASE_MS = 60_000;
/** A completion Slack did not take is tried again this much later. */
export const STEP_RETRY_MS = 30_000;

/** Slack's answers that mean the execution can't be completed any more (already done, or gone). */
const FINISHED_EXECUTION_ERRORS = new Set(["execution_not_in_running_state", "function_execution_not_found"]);
/** The stored execution token no longer works: complete with the workspace's bot token instead. */
const TOKEN_ERRORS = new Set([
  "invalid_auth",
  "token_expired",
  "token_revoked",
  "not_authed",
  "account_inactive",
]);

const STEP_REQUEST_PREFIX = "wf_";

/** The request id a step's change request gets: the same execution delivered twice makes one request. */
export function stepRequestId(functionExecutionId: string): string {
  return `${STEP_REQUEST_PREFIX}${functionExecutionId}`;
}

/**
 * Whether a step may wait on this request. A step only ever waits on the request named by stepRequestId
 * (the one place a step is stored), so any other request (every click's) needs no read of the steps when
 * it settles.
 */
export const mayHaveWaitingSteps = (requestId: string): boolean => requestId.startsWith(STEP_REQUEST_PREFIX);

/** The final state a request step reports: applied (also once undone later), failed, rejected … */
export function finalStateOf(r: Pick<ChangeRequest, "state">): string {
  return r.state === "undoing" || r.state === "undone" ? "applied" : r.state;
}

/** A settled request as the step's result; a request cancelled before it was asked (its card could not be posted) is an error. */
export function requestStepResult(r: ChangeRequest): StepResult {
  if (r.state === "cancelled" && r.lastError) return { error: r.lastError.message };
  const state = finalStateOf(r);
  const why = r.state === "failed" || r.state === "expired" ? (r.lastError?.message ?? "") : "";
  return {
    outputs: {
      request_id: r.id,
      final_state: state,
      summary: `${describeRequest(r)}: ${state}${why ? ` (${why})` : ""}.`,
      ...(r.decidedBy && r.decidedBy !== "system" ? { decided_by: r.decidedBy } : {}),
    },
  };
}

async function callSlack(client: WebClient, executionId: string, result: StepResult): Promise<void> {
  if ("outputs" in result)
    await client.functions.completeSuccess({ function_execution_id: executionId, outputs: result.outputs });
  else await client.functions.completeError({ function_execution_id: executionId, error: result.error });
}

/**
 * Complete a waiting step once: claim it (compare-and-set), tell Slack, mark it completed. A Slack that
 * can't be reached releases the claim for a later try; an execution Slack says is finished is closed.
 * Returns whether this call completed it.
 */
export async function completeStep(
  env: SlackEnv,
  executionId: string,
  result: StepResult,
  logger: Logger = env.deps.logger,
): Promise<boolean> {
  const repo = env.deps.store.functionExecutions;
  const claimed = await repo.claim(executionId, STEP_LEASE_MS);
  if (!claimed) return false;
  const log = logger.child({ functionExecutionId: executionId, teamId: claimed.teamId });
  try {
    await callSlack(await clientFor(env, claimed, log), executionId, result);
  } catch (err) {
    const code = slackErrorCode(err);
    env.deps.metrics.slackApiErrors.inc({
      method: "outputs" in result ? "functions.completeSuccess" : "functions.completeError",
      error: code ?? "unknown",
    });
    if (code && TOKEN_ERRORS.has(code) && claimed.hasToken) {
      try {
        await callSlack(await env.clientFor(claimed.teamId), executionId, result);
        return finish(env, claimed, result, log);
      } catch (again) {
        return settleFailure(env, claimed, result, again, log);
      }
    }
    return settleFailure(env, claimed, result, err, log);
  }
  return finish(env, claimed, result, log);
}

async function clientFor(env: SlackEnv, e: FunctionExecution, logger: Logger): Promise<WebClient> {
  const token = e.hasToken
    ? await env.deps.store.functionExecutions.token(e.id).catch(() => undefined)
    : undefined;
  if (e.hasToken && !token)
    logger.warn("the step's own token could not be read; completing with the bot token");
  return token ? env.clientWithToken(token) : env.clientFor(e.teamId);
}

async function finish(env: SlackEnv, e: FunctionExecution, result: StepResult, logger: Logger) {
  const done = await env.deps.store.functionExecutions.complete(e.id, result);
  logger.info(
    {
      requestId: e.requestId,
      callbackId: e.callbackId,
      completed: "outputs" in result ? "success" : "error",
    },
    "workflow step completed",
  );
  return done;
}

async function settleFailure(
  env: SlackEnv,
  e: FunctionExecution,
  result: StepResult,
  err: unknown,
  logger: Logger,
): Promise<boolean> {
  const code = slackErrorCode(err);
  if (code && FINISHED_EXECUTION_ERRORS.has(code)) {
    // Completed already (a lost answer to an earlier try) or gone: nothing left to do, ever.
    logger.warn({ slackError: code }, "Slack says the workflow step can't be completed any more; closing it");
    await env.deps.store.functionExecutions.complete(e.id, { ...result, slackError: code });
    return false;
  }
  logger.warn(
    { err, slackError: code, attempts: e.attempts },
    "completing a workflow step failed; tried again later",
  );
  await env.deps.store.functionExecutions.release(e.id, env.deps.clock.now() + STEP_RETRY_MS, result);
  return false;
}

const isSettled = (r: ChangeRequest) => SETTLED_REQUEST_STATES.includes(r.state);

/** The engine's observer: every step waiting on a request that just settled is completed with it. */
export async function settleStepsWaitingOn(env: SlackEnv, request: ChangeRequest): Promise<number> {
  if (!isSettled(request) || !mayHaveWaitingSteps(request.id)) return 0;
  const waiting = await env.deps.store.functionExecutions.listWaitingOn(request.id);
  let completed = 0;
  for (const e of waiting) if (await completeStep(env, e.id, requestStepResult(request))) completed++;
  return completed;
}

const isStepResult = (v: unknown): v is StepResult =>
  typeof v === "object" &&
  v !== null &&
  ((typeof (v as { error?: unknown }).error === "string" && !("slackError" in v)) ||
    typeof (v as { outputs?: unknown }).outputs === "object");

/**
 * The sweep: steps not completed although their request settled, or whose completion Slack did not
 * take (the result kept on release): a process died, or Slack was down.
 */
export async function settleMissedSteps(env: SlackEnv, scope: WorkScope = {}): Promise<number> {
  const due = await env.deps.store.functionExecutions.listSettleable(50, scope);
  let completed = 0;
  for (const e of due) {
    const request = await env.deps.store.changeRequests.get(e.requestId);
    const result =
      request && isSettled(request)
        ? requestStepResult(request)
        : isStepResult(e.outcome)
          ? e.outcome
          : undefined;
    if (result && (await completeStep(env, e.id, result))) completed++;
  }
  return completed;
}
