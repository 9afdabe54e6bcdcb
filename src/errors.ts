import { describeEdgeError, EdgeApiError } from "./edge/errors.js";
import { StoreError } from "./store/index.js";

/**
 * Errors raised at the Slack boundary for things the user can fix. `message` is the sentence the
 * user reads: it says what went wrong and what to do.
 */
export type UserErrorKind =
  | "usage"
  | "no_key"
  | "not_admin"
  | "not_found"
  | "slack"
  | "unavailable"
  | "unauthorized";

export class UserError extends Error {
  override readonly name = "UserError";
  constructor(
    readonly kind: UserErrorKind,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/**
 * The bot cannot reach or serve Slack (credentials, ports, a token Slack refused for good): main.ts
 * prints its sentence and exits. Here rather than in src/slack/transport so that src/ops may raise it too.
 */
export class TransportError extends Error {
  override readonly name = "TransportError";
}

export const usage = (sentence: string) => new UserError("usage", sentence);

const SLACK_ERROR_SENTENCES: Record<string, string> = {
  not_in_channel: "I'm not a member of that channel: invite me with /invite @edgeops and try again.",
  channel_not_found:
    "I can't see that channel (it may be private or deleted): invite me with /invite @edgeops.",
  is_archived: "That channel is archived, so I can't post there.",
  ratelimited: "Slack is rate-limiting me right now; try again in a minute.",
  expired_trigger_id: "That took too long for Slack to open a dialog; run the command again.",
  invalid_blocks: "Slack refused the message I built; this is a bug in edgeops, please report it.",
};

/** Slack Web API errors carry `data.error` (a code like not_in_channel). */
export function slackErrorCode(err: unknown): string | undefined {
  const data = (err as { data?: { error?: unknown } } | undefined)?.data;
  return typeof data?.error === "string" ? data.error : undefined;
}

/** The one mapper from any error to the sentence a Slack user reads. Never leaks a stack or secret. */
export function toUserSentence(err: unknown): string {
  if (err instanceof UserError) return err.message;
  if (err instanceof EdgeApiError) return describeEdgeError(err);
  if (err instanceof StoreError) return err.userMessage;
  const code = slackErrorCode(err);
  if (code)
    return (
      SLACK_ERROR_SENTENCES[code] ??
      `Slack answered "${code}"; try again, and tell an admin if it keeps happening.`
    );
  if ((err as { code?: unknown } | undefined)?.code === "slack_webapi_rate_limited_error") {
    return SLACK_ERROR_SENTENCES.ratelimited!;
  }
  return "Something went wrong on our side and nothing was changed; try again, and tell an admin if it keeps happening.";
}
