import type { FetchFunction } from "@slack/web-api";
import { Agent, request } from "undici";
import { yieldToWaitingRequests } from "../../ack-priority.js";
import type { Metrics } from "../../ops/metrics.js";

/**
 * The `fetch` every Slack WebClient and Bolt's `respond()` use (passed as `clientOptions.fetch`), so
 * one place counts failed Slack calls by method and Slack error code, and can silence answers to
 * response_urls that shutdown has already answered. Labels stay bounded: methods must look like
 * Slack method names, error codes must be in KNOWN_SLACK_ERRORS, everything else is "other".
 */

export const KNOWN_SLACK_ERRORS: ReadonlySet<string> = new Set([
  "access_denied",
  "account_inactive",
  "channel_not_found",
  "expired_trigger_id",
  "expired_url",
  "fatal_error",
  "internal_error",
  "invalid_arguments",
  "invalid_auth",
  "invalid_blocks",
  "invalid_blocks_format",
  "invalid_trigger_id",
  "is_archived",
  "message_not_found",
  "method_not_supported_for_channel_type",
  "missing_scope",
  "msg_too_long",
  "no_permission",
  "no_such_subteam",
  "no_text",
  "not_authed",
  "not_in_channel",
  "org_login_required",
  "ratelimited",
  "request_timeout",
  "restricted_action",
  "service_unavailable",
  "team_access_not_granted",
  "token_expired",
  "token_revoked",
  "too_many_attachments",
  "used_url",
  "user_not_found",
  "user_not_visible",
  "users_not_found",
  "view_too_large",
]);

/** What counts as a Slack method name in a label ("chat.postMessage", "apps.connections.open"). */
const METHOD_NAME = /^[a-z][a-zA-Z]*(\.[a-zA-Z]+){1,3}$/;

export const RESPONSE_URL_METHOD = "response_url";

/**
 * Slack calls on kept-alive connections, at most SLACK_CONNECTIONS_PER_ORIGIN to each origin: a burst
 * of approvals (users.info, chat.update, response_url for each) queues for a connection instead of
 * opening hundreds, and a call costs one undici request, not a WHATWG fetch (streams, signals, tee).
 */
const SLACK_CONNECTIONS_PER_ORIGIN = 32;
const slackAgent = new Agent({ connections: SLACK_CONNECTIONS_PER_ORIGIN, keepAliveTimeout: 30_000 });

/**
 * fetch() for what Slack clients send (a string, bytes or URLSearchParams body; JSON or text answers)
 * over undici's request(); anything else (a FormData upload) goes to the standard fetch.
 */
export async function requestFetch(input: string | URL, init: RequestInit = {}): Promise<Response> {
  const rawBody = init.body;
  if (
    rawBody != null &&
    !(typeof rawBody === "string" || rawBody instanceof Uint8Array || rawBody instanceof URLSearchParams)
  )
    return globalThis.fetch(input, init);
  const headers = new Headers(init.headers);
  if (rawBody instanceof URLSearchParams && !headers.has("content-type"))
    headers.set("content-type", "application/x-www-form-urlencoded;charset=UTF-8");
  const res = await request(input, {
    method: (init.method ?? "GET") as "GET",
    headers: Object.fromEntries(headers),
    ...(rawBody != null ? { body: rawBody instanceof URLSearchParams ? rawBody.toString() : rawBody } : {}),
    ...(init.signal ? { signal: init.signal } : {}),
    dispatcher: slackAgent,
  });
  if (res.statusCode >= 300 && res.statusCode < 400 && init.redirect === "error") {
    await res.body.dump();
    throw new TypeError(`fetch failed: ${input} redirected (HTTP ${res.statusCode})`);
  }
  const answerHeaders = new Headers();
  for (const [name, value] of Object.entries(res.headers)) {
    if (Array.isArray(value)) for (const v of value) answerHeaders.append(name, v);
    else if (value !== undefined) answerHeaders.set(name, value);
  }
  const bytes = await res.body.arrayBuffer();
  const noBody = res.statusCode === 204 || res.statusCode === 205 || res.statusCode === 304;
  return new Response(noBody ? null : bytes, { status: res.statusCode, headers: answerHeaders });
}

export interface SlackFetchOptions {
  metrics: Pick<Metrics, "slackApiErrors">;
  /** SLACK_API_URL; https://slack.com/api/ when unset. */
  apiUrl?: string | undefined;
  /** The real fetch (requestFetch by default). */
  base?: typeof fetch;
  /** True for a URL whose answer must not be sent (a response_url shutdown already answered). */
  drop?: (url: string) => boolean;
}

/** The label for a request URL: the Slack method name, "response_url", or "other". */
export function slackMethodLabel(url: string, apiUrl: string): string {
  if (!url.startsWith(apiUrl)) return RESPONSE_URL_METHOD;
  const rest = url.slice(apiUrl.length).split(/[?#]/)[0] ?? "";
  return rest.length <= 64 && METHOD_NAME.test(rest) ? rest : "other";
}

export function slackErrorLabel(code: unknown): string {
  return typeof code === "string" && KNOWN_SLACK_ERRORS.has(code) ? code : "other";
}

function statusLabel(status: number): string {
  if (status === 429) return "ratelimited";
  if (status === 404) return "http_404";
  return `http_${Math.floor(status / 100)}xx`;
}

export function instrumentSlackFetch(options: SlackFetchOptions): FetchFunction {
  const base = options.base ?? requestFetch;
  const apiUrl = ensureTrailingSlash(options.apiUrl ?? "https://slack.com/api/");
  const count = (method: string, error: string) => options.metrics.slackApiErrors.inc({ method, error });

  const instrumented = async (input: string | URL, init?: RequestInit): Promise<Response> => {
    const url = typeof input === "string" ? input : input.href;
    if (options.drop?.(url)) {
      // The user already has the shutdown sentence for this request; a late answer would contradict it.
      return new Response("ok", { status: 200, headers: { "content-type": "text/plain" } });
    }
    const method = slackMethodLabel(url, apiUrl);
    let res: Response;
    try {
      res = await base(input, init);
    } catch (err) {
      count(method, init?.signal?.aborted ? "request_timeout" : "request_error");
      throw err;
    } finally {
      await yieldToWaitingRequests();
    }
    if (!res.ok) {
      // response_url answers errors as plain text ("expired_url", "used_url"); the Web API as JSON or status.
      const text = await res
        .clone()
        .text()
        .catch(() => "");
      const code = readErrorCode(text);
      count(method, code !== undefined && KNOWN_SLACK_ERRORS.has(code) ? code : statusLabel(res.status));
      return res;
    }
    if (method !== RESPONSE_URL_METHOD) {
      // Read once and hand WebClient a copy built from the text: a clone() tees the body stream,
      // which cost more than the rest of this function; JSON is parsed only for an error answer.
      let text: string;
      try {
        text = await res.text();
      } catch (err) {
        count(method, init?.signal?.aborted ? "request_timeout" : "request_error");
        throw err;
      }
      if (text.startsWith("{") && /"ok"\s*:\s*false/.test(text)) {
        try {
          const body = JSON.parse(text) as { ok?: unknown; error?: unknown };
          if (body.ok === false) count(method, slackErrorLabel(body.error));
        } catch {
          // Not JSON after all: WebClient reports that itself.
        }
      }
      return new Response(text, { status: res.status, statusText: res.statusText, headers: res.headers });
    }
    return res;
  };
  return instrumented as unknown as FetchFunction;
}

function readErrorCode(text: string): string | undefined {
  const t = text.trim();
  if (/^[a-z_]{2,60}$/.test(t)) return t;
  if (t.startsWith("{")) {
    try {
      const body = JSON.parse(t) as { error?: unknown };
      return typeof body.error === "string" ? body.error : undefined;
    } catch {
      return undefined;
    }
  }
  return undefined;
}

function ensureTrailingSlash(url: string): string {
  return url.endsWith("/") ? url : `${url}/`;
}
