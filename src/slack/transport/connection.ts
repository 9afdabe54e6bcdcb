import type { AuthorizeResult, AuthorizeSourceData } from "@slack/bolt";
import {
  WebAPIHTTPError,
  WebAPIPlatformError,
  WebAPIRateLimitedError,
  WebAPIRequestError,
  WebClient,
  type WebClientOptions,
} from "@slack/web-api";
import type { Clock } from "../../clock.js";
import { withDeadline } from "../../deadline.js";
import { backoffDelay } from "../../edge/queue.js";
import { TransportError, UserError } from "../../errors.js";
import type { Logger } from "../../log.js";

/**
 * Slack at start-up, for the single-token transports. Bolt checks a bot token with auth.test as the App
 * is built and nobody awaits that call: with Slack unreachable the rejection ended the process, and the
 * cached failure would have failed every later request. edgeops checks the token itself instead,
 * retrying with backoff until Slack answers, while /healthz answers and /readyz names `slack`. Socket
 * Mode's first connection is supervised the same way. A token Slack rejects (invalid_auth …) cannot
 * heal by retrying: it is reported once through `onRejected`, which stops the process with a sentence.
 */

export interface RetryTimings {
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
}

/** First retry after 0.5–1 s, doubling, at most 30 s apart: Slack answers again within 30 s of coming back. */
export const SLACK_CONNECT_RETRY: RetryTimings = Object.freeze({ baseDelayMs: 1_000, maxDelayMs: 30_000 });

/** Slack's answers that mean the token itself is wrong: retrying cannot help. */
const REJECTED_TOKEN = new Set([
  "invalid_auth",
  "not_authed",
  "token_revoked",
  "token_expired",
  "account_inactive",
  "not_allowed_token_type",
  "user_removed_from_team",
  "team_disabled",
]);

/** A short reason for logs and /readyz: an error code, never a URL, host or token. */
export function describeSlackFailure(err: unknown): string {
  if (err instanceof WebAPIPlatformError) return `Slack answered ${err.data.error}`;
  if (err instanceof WebAPIRateLimitedError) return "Slack is rate-limiting";
  if (err instanceof WebAPIHTTPError) return `Slack answered HTTP ${err.statusCode}`;
  if (err instanceof WebAPIRequestError) {
    const original = err.original as Error & { cause?: { code?: unknown } };
    if (original.name === "TimeoutError" || original.name === "AbortError") return "no answer in time";
    const code = original.cause?.code;
    return typeof code === "string" ? `no connection (${code})` : "no connection";
  }
  return "no answer";
}

function rejectedCode(err: unknown): string | undefined {
  return err instanceof WebAPIPlatformError && REJECTED_TOKEN.has(err.data.error)
    ? err.data.error
    : undefined;
}

interface RetryLoopOptions {
  readonly logger: Logger;
  /** The waits between attempts and for the first answer. */
  readonly clock: Clock;
  readonly retry: RetryTimings;
  readonly random?: () => number;
}

/**
 * Run `attempt` until it succeeds, waiting a backoff delay (or Slack's Retry-After) between failures.
 * `onFailure` returns false to stop retrying. Never rejects; `stop()` ends the wait at once.
 */
function retryLoop(
  o: RetryLoopOptions & {
    attempt: (n: number) => Promise<void>;
    onFailure: (err: unknown, n: number, retryInMs: number) => boolean;
  },
) {
  const stopping = new AbortController();
  const run = async () => {
    for (let n = 1; !stopping.signal.aborted; n++) {
      try {
        await o.attempt(n);
        return;
      } catch (err) {
        if (stopping.signal.aborted) return;
        const retryAfterMs = err instanceof WebAPIRateLimitedError ? err.retryAfter * 1000 : 0;
        const retryInMs = Math.max(retryAfterMs, backoffDelay(o.retry, n, o.random));
        if (!o.onFailure(err, n, retryInMs)) return;
        await o.clock.sleep(retryInMs, stopping.signal).catch(() => undefined);
      }
    }
  };
  return {
    start: () => void run(),
    stop: () => stopping.abort(),
  };
}

export interface TokenCheckOptions extends RetryLoopOptions {
  readonly botToken: string;
  /** The Slack API URL and fetch of every other client; retries and timeout are this check's own. */
  readonly clientOptions: WebClientOptions;
  readonly attemptTimeoutMs?: number;
  readonly onRejected: (err: TransportError) => void;
}

/** What a request from a workspace the single bot token does not belong to is told (and nothing else). */
export const OTHER_WORKSPACE_SENTENCE =
  "edgeops is installed for another Slack workspace and does not answer here: ask an admin of this workspace to install it.";

/** What a request that arrives before Slack named the bot token's workspace (and after a short wait) is told. */
export const NOT_CONNECTED_SENTENCE =
  "edgeops is still connecting to Slack and can't tell yet whether it serves this workspace: try again in a minute.";

/** How long a request waits for the first answer to auth.test before it is refused. */
const AUTHORIZE_WAIT_MS = 2_000;

export interface TokenCheck {
  /**
   * Bolt's authorize: the bot token, with the bot's user and bot ids once Slack confirmed them. Until
   * auth.test named the token's workspace no request is served (it waits briefly for the answer), then
   * a request from any other workspace is refused.
   */
  authorize(source?: AuthorizeSourceData<boolean>): Promise<AuthorizeResult>;
  /** undefined once Slack answered the check, otherwise what /readyz says. */
  problem(): string | undefined;
  start(): void;
  stop(): void;
}

/** auth.test for SLACK_BOT_TOKEN, retried with backoff until Slack answers. */
export function createTokenCheck(o: TokenCheckOptions): TokenCheck {
  const client = new WebClient(o.botToken, {
    ...o.clientOptions,
    retryConfig: { retries: 0 },
    rejectRateLimitedCalls: true,
    timeout: o.attemptTimeoutMs ?? 10_000,
  });
  let identity: { botId?: string; botUserId?: string } | undefined;
  let home: { teamId: string | undefined; enterpriseId: string | undefined; orgWide: boolean } | undefined;
  let problem: string | undefined = "Slack has not answered the token check yet";
  let answered: () => void = () => undefined;
  const firstAnswer = new Promise<void>((resolve) => {
    answered = resolve;
  });
  const loop = retryLoop({
    ...o,
    attempt: async (n) => {
      const r = await client.auth.test();
      identity = {
        ...(typeof r.bot_id === "string" ? { botId: r.bot_id } : {}),
        ...(typeof r.user_id === "string" ? { botUserId: r.user_id } : {}),
      };
      home = {
        teamId: typeof r.team_id === "string" && r.team_id ? r.team_id : undefined,
        enterpriseId: typeof r.enterprise_id === "string" && r.enterprise_id ? r.enterprise_id : undefined,
        orgWide: r.is_enterprise_install === true,
      };
      problem = undefined;
      answered();
      o.logger.info({ attempts: n }, "Slack answered the token check");
    },
    onFailure: (err, n, retryInMs) => {
      const code = rejectedCode(err);
      if (code) {
        problem = `Slack rejected SLACK_BOT_TOKEN (${code})`;
        o.onRejected(
          new TransportError(
            `Slack rejected SLACK_BOT_TOKEN (${code}): set the bot token (xoxb-…) of the installed app and start again.`,
          ),
        );
        return false;
      }
      const reason = describeSlackFailure(err);
      problem = `Slack has not answered the token check yet (${n} failed attempt${n === 1 ? "" : "s"}, last: ${reason}); retrying`;
      o.logger.warn({ attempt: n, retryInMs, reason }, "Slack did not answer the token check; retrying");
      return true;
    },
  });
  return {
    authorize: async (source) => {
      // Before auth.test answers, the token's workspace is unknown: serving would answer any workspace.
      if (!home) await withDeadline(o.clock, firstAnswer, AUTHORIZE_WAIT_MS, () => undefined);
      if (!home) {
        o.logger.warn(
          { teamId: source?.teamId, enterpriseId: source?.enterpriseId },
          "a request arrived before Slack named the bot token's workspace; refused",
        );
        throw new UserError("unavailable", NOT_CONNECTED_SENTENCE);
      }
      if (source && !servesHome(home, source)) {
        o.logger.warn(
          { teamId: source.teamId, enterpriseId: source.enterpriseId },
          "a request from another workspace than the bot token's was refused",
        );
        throw new UserError("slack", OTHER_WORKSPACE_SENTENCE);
      }
      return { botToken: o.botToken, ...identity };
    },
    problem: () => problem,
    start: loop.start,
    stop: loop.stop,
  };
}

/** An org-wide token serves its enterprise's workspaces; any other token, its own workspace. */
function servesHome(
  home: { teamId: string | undefined; enterpriseId: string | undefined; orgWide: boolean },
  source: AuthorizeSourceData<boolean>,
): boolean {
  if (home.orgWide && home.enterpriseId) return source.enterpriseId === home.enterpriseId;
  return home.teamId === undefined || source.teamId === home.teamId;
}

export interface SocketSupervisorOptions extends RetryLoopOptions {
  /** The first connection attempt (Bolt's app.start(), which also opens the HTTP server). */
  readonly first: Promise<unknown>;
  /** Every later attempt: the Socket Mode client's start() alone. */
  readonly reconnect: () => Promise<unknown>;
  readonly onRejected: (err: TransportError) => void;
}

/**
 * The Socket Mode client gives up on a network error while it asks for a WebSocket URL
 * (apps.connections.open): keep asking, with backoff, until it is connected or the app token is refused.
 */
export function superviseSocketMode(o: SocketSupervisorOptions): { stop(): void } {
  const loop = retryLoop({
    ...o,
    attempt: async (n) => {
      await (n === 1 ? o.first : o.reconnect());
      if (n > 1) o.logger.info({ attempts: n }, "Socket Mode connected");
    },
    onFailure: (err, n, retryInMs) => {
      const code = rejectedCode(err);
      if (code) {
        o.onRejected(
          new TransportError(
            `Slack rejected SLACK_APP_TOKEN (${code}): set the app-level token (xapp-…, scope connections:write) and start again.`,
          ),
        );
        return false;
      }
      o.logger.warn(
        { attempt: n, retryInMs, reason: describeSlackFailure(err) },
        "Socket Mode could not connect; retrying",
      );
      return true;
    },
  });
  loop.start();
  return { stop: loop.stop };
}
