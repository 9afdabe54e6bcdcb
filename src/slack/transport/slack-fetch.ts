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

/** A Web API (or response_url) answer read as text. */
interface TextAnswer {
  status: number;
  statusText: string;
  headers: Headers;
  text: string;
}

const textOf = async (res: Response): Promise<TextAnswer> => ({
  status: res.status,
  statusText: res.statusText,
  headers: res.headers,
  text: await res.text(),
});

/**
 * What a Slack client asked fetch() for, its answer read as text once: over undici's request() for a
 * string, bytes or URLSearchParams body (a Response read and built again, a body stream each, cost more
 * than the rest of a call's way through here); anything else (a FormData upload) with the standard fetch.
 */
async function fetchText(input: string | URL, init: RequestInit): Promise<TextAnswer> {
  const rawBody = init.body;
  if (
    rawBody != null &&
    !(typeof rawBody === "string" || rawBody instanceof Uint8Array || rawBody instanceof URLSearchParams)
  )
    return textOf(await globalThis.fetch(input, init));
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
  return { status: res.statusCode, statusText: "", headers: answerHeaders, text: await res.body.text() };
}

const noBody = (status: number) => status === 204 || status === 205 || status === 304;

export interface SlackFetchOptions {
  metrics: Pick<Metrics, "slackApiErrors">;
  /** SLACK_API_URL; https://slack.com/api/ when unset. */
  apiUrl?: string | undefined;
  /** The real fetch (by default undici's request(), as fetchText). */
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
  const apiUrl = ensureTrailingSlash(options.apiUrl ?? "https://slack.com/api/");
  const count = (method: string, error: string) => options.metrics.slackApiErrors.inc({ method, error });

  /** The answer as the client gets it, one Response built from the text, its error counted. */
  const counted = (method: string, a: TextAnswer): Response => {
    if (a.status < 200 || a.status >= 300) {
      // response_url answers errors as plain text ("expired_url", "used_url"); the Web API as JSON or status.
      const code = readErrorCode(a.text);
      count(method, code !== undefined && KNOWN_SLACK_ERRORS.has(code) ? code : statusLabel(a.status));
    } else if (method !== RESPONSE_URL_METHOD && a.text.startsWith("{") && /"ok"\s*:\s*false/.test(a.text)) {
      // JSON is parsed here only for an error answer.
      try {
        const body = JSON.parse(a.text) as { ok?: unknown; error?: unknown };
        if (body.ok === false) count(method, slackErrorLabel(body.error));
      } catch {
        // Not JSON after all: WebClient reports that itself.
      }
    }
    return new Response(noBody(a.status) ? null : a.text, {
      status: a.status,
      statusText: a.statusText,
      headers: a.headers,
    });
  };

  const instrumented = async (input: string | URL, init: RequestInit = {}): Promise<Response> => {
    const url = typeof input === "string" ? input : input.href;
    if (options.drop?.(url)) {
      // The user already has the shutdown sentence for this request; a late answer would contradict it.
      return new Response("ok", { status: 200, headers: { "content-type": "text/plain" } });
    }
    const method = slackMethodLabel(url, apiUrl);
    let answer: TextAnswer;
    try {
      answer = options.base ? await textOf(await options.base(input, init)) : await fetchText(input, init);
    } catch (err) {
      count(method, init.signal?.aborted ? "request_timeout" : "request_error");
      throw err;
    } finally {
      await yieldToWaitingRequests();
    }
    return counted(method, answer);
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
