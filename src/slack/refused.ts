import type { WebClient } from "@slack/web-api";
import { slackErrorCode } from "../errors.js";
import type { Logger } from "../log.js";
import type { Metrics } from "../ops/metrics.js";

/** Why a request Slack already had its acknowledgement for was not run. */
export type RefusalReason = "authorization" | "shutdown";

export const STEP_REFUSED_SHUTDOWN =
  "edgeops was restarting and could not run this step; nothing was changed. Run the workflow again in a minute.";

/** The request's kind for logs and the metric's label: a small fixed set, never free text. */
function kindOf(body: unknown): string {
  const b = (body ?? {}) as { command?: unknown; type?: unknown; event?: { type?: unknown } };
  if (typeof b.command === "string") return "command";
  if (b.type === "event_callback")
    return b.event?.type === "function_executed" ? "function_executed" : "event_callback";
  switch (b.type) {
    case "block_actions":
    case "shortcut":
    case "message_action":
    case "view_closed":
    case "view_submission":
    case "block_suggestion":
      return b.type;
    default:
      return "other";
  }
}

/** A function_executed event's execution and its own token (which completes the step), if it is one. */
function workflowStep(body: unknown): { executionId: string; token: string } | undefined {
  const event = (body as { type?: unknown; event?: Record<string, unknown> } | undefined)?.event;
  if (
    (body as { type?: unknown } | undefined)?.type !== "event_callback" ||
    event?.type !== "function_executed"
  )
    return undefined;
  const executionId = event.function_execution_id;
  const token = event.bot_access_token;
  return typeof executionId === "string" && typeof token === "string" && token
    ? { executionId, token }
    : undefined;
}

export interface RefusalOptions {
  logger: Logger;
  metrics: Pick<Metrics, "slackRefused">;
  clientWithToken: (token: string) => WebClient;
}

/**
 * A request acknowledged before it ran (the HTTP front thread acks at once) and then refused, by a failed
 * authorization or a shutdown, would otherwise vanish: each is logged and counted, and a workflow step
 * is completed with the sentence through its own token, so the workflow stops waiting on it.
 */
export function createRefusals(o: RefusalOptions) {
  return async (body: unknown, reason: RefusalReason, sentence: string): Promise<void> => {
    const kind = kindOf(body);
    o.metrics.slackRefused.inc({ reason, kind });
    const step = workflowStep(body);
    o.logger.warn(
      { reason, kind, ...(step ? { functionExecutionId: step.executionId } : {}) },
      "an acknowledged Slack request was refused",
    );
    if (!step) return;
    try {
      await o
        .clientWithToken(step.token)
        .functions.completeError({ function_execution_id: step.executionId, error: sentence });
    } catch (err) {
      o.logger.warn(
        { functionExecutionId: step.executionId, slackError: slackErrorCode(err) },
        "the refused workflow step could not be completed with its sentence",
      );
    }
  };
}
