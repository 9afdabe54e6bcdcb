import { createRequire } from "node:module";
import pRetry from "p-retry";
import { type Dispatcher, request, errors as undiciErrors } from "undici";
import type { z } from "zod";
import { yieldToWaitingRequests } from "../ack-priority.js";
import type { Clock } from "../clock.js";
import type { Logger } from "../log.js";
import { inSpan, type Span } from "../ops/tracing.js";
import {
  EdgeApiError,
  type EdgeErrorKind,
  type ErrorBodyFields,
  isPlanErrorKey,
  kindForStatus,
  readErrorBody,
} from "./errors.js";
import { backoffDelay, type KeyQueues, parseRetryAfter, QueueFullError, type RetryPolicy } from "./queue.js";
import type { SharedLimit } from "./shared-limit.js";

/**
 * One Edge API call: undici → status → error → schema, through the key's queue, with retries.
 * Nothing but an EdgeApiError leaves this module.
 */

const require = createRequire(import.meta.url);
const pkg = require("../../package.json") as { name?: string; version?: string };
export const EDGE_USER_AGENT = `edgeops/${pkg.version ?? "0.0.0"}`;

export type HttpMethod = "GET" | "PUT" | "POST" | "PATCH";

export interface RequestSpec<S extends z.ZodType> {
  operation: string;
  method: HttpMethod;
  /** Already encoded path, starting with "/". */
  path: string;
  /** The operation table's path with its `{id}` placeholders: what a trace shows, never the ids. */
  pathTemplate?: string | undefined;
  query?: Record<string, string | number | undefined> | undefined;
  body?: unknown;
  /** "Shield zone 42" — what the call is about, for not-found sentences. */
  subject?: string | undefined;
  /** Safe to repeat after a 5xx / timeout / network error. */
  idempotent: boolean;
  schema: S;
  /** A 2xx with no body is fine (returns undefined instead of validating). */
  allowEmptyBody?: boolean | undefined;
  /**
   * A write whose 2xx status is its answer (returns undefined) unless the body carries a refusal (an
   * error envelope or a plan key: refusalInBody). An empty, oversized or unreadable body is no refusal:
   * the change is taken as made, and the read-back after it decides.
   */
  statusIsTheAnswer?: boolean | undefined;
  /**
   * Whether this operation's answer is missing from a 2xx body, so that an error envelope beside it is
   * a refusal (besides the general rule: every other field null).
   */
  answerAbsent?: ((body: Record<string, unknown>) => boolean) | undefined;
}

export interface RequestEvent {
  operation: string;
  method: HttpMethod;
  attempt: number;
  status?: number | undefined;
  kind?: EdgeErrorKind | undefined;
  durationMs: number;
}

export interface RequestContext {
  baseUrl: string;
  apiKey: string;
  keyId: string;
  timeoutMs: number;
  /** Largest response body read; a longer one is dropped unread past this many bytes. */
  maxBodyBytes: number;
  dispatcher: Dispatcher;
  retry: RetryPolicy;
  queues: KeyQueues;
  /** The rate shared with other replicas through Redis; absent: this process's queue alone. */
  shared?: SharedLimit | undefined;
  logger: Logger;
  clock: Clock;
  random: () => number;
  onRequest?: ((e: RequestEvent) => void) | undefined;
  /** Aborted when the API object closes. */
  closing: AbortSignal;
  /** Background work (alert polling): waits behind the key's other calls. */
  background?: boolean | "optional" | undefined;
  /** Before a call that is not a GET is sent: a throw sends nothing (ForKeyOptions.beforeWrite). */
  beforeWrite?: (() => Promise<void>) | undefined;
}

interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  /** The body was longer than maxBodyBytes: reading stopped there and `text` is empty. */
  tooLarge: boolean;
}

function scrub(s: string, apiKey: string): string {
  return apiKey.length >= 4 ? s.split(apiKey).join("[redacted]") : s;
}

function header(headers: RawResponse["headers"], name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}

export function buildUrl(baseUrl: string, path: string, query?: RequestSpec<z.ZodType>["query"]): string {
  const url = new URL(baseUrl.replace(/\/+$/, "") + path);
  for (const [k, v] of Object.entries(query ?? {})) {
    if (v !== undefined) url.searchParams.set(k, String(v));
  }
  return url.toString();
}

function networkErrorKind(err: unknown): EdgeErrorKind {
  if (
    err instanceof undiciErrors.HeadersTimeoutError ||
    err instanceof undiciErrors.BodyTimeoutError ||
    err instanceof undiciErrors.ConnectTimeoutError
  ) {
    return "timeout";
  }
  const code = (err as { code?: unknown } | null)?.code;
  if (
    code === "UND_ERR_HEADERS_TIMEOUT" ||
    code === "UND_ERR_BODY_TIMEOUT" ||
    code === "UND_ERR_CONNECT_TIMEOUT"
  ) {
    return "timeout";
  }
  if (code === "ETIMEDOUT") return "timeout";
  return "network";
}

/** One HTTP attempt. Throws EdgeApiError (timeout / network) when no response arrived. */
async function sendOnce(ctx: RequestContext, spec: RequestSpec<z.ZodType>): Promise<RawResponse> {
  const url = buildUrl(ctx.baseUrl, spec.path, spec.query);
  const headers: Record<string, string> = {
    AccessKey: ctx.apiKey,
    Accept: "application/json",
    "User-Agent": EDGE_USER_AGENT,
  };
  let body: string | undefined;
  if (spec.body !== undefined) {
    body = JSON.stringify(spec.body);
    headers["Content-Type"] = "application/json";
  }
  // One controller per attempt, aborted by the timeout or by close(). (Not AbortSignal.any: on Node 20
  // each composite signal stays referenced by the long-lived closing signal, a leak per request.)
  const attempt = new AbortController();
  let timedOut = false;
  const cancelTimer = ctx.clock.setTimeout(() => {
    timedOut = true;
    attempt.abort(new Error("edge request timed out"));
  }, ctx.timeoutMs);
  const onClose = () => attempt.abort(ctx.closing.reason);
  if (ctx.closing.aborted) onClose();
  else ctx.closing.addEventListener("abort", onClose, { once: true });
  const signal = attempt.signal;
  try {
    const res = await request(url, {
      method: spec.method,
      headers,
      ...(body === undefined ? {} : { body }),
      dispatcher: ctx.dispatcher,
      signal,
      headersTimeout: ctx.timeoutMs,
      bodyTimeout: ctx.timeoutMs,
    });
    const { text, tooLarge } = await readBodyUpTo(res, ctx.maxBodyBytes);
    // Validating and rendering the answer waits for the Slack requests already waiting for their ack.
    await yieldToWaitingRequests();
    return { status: res.statusCode, headers: res.headers, text, tooLarge };
  } catch (err) {
    const kind: EdgeErrorKind = timedOut ? "timeout" : networkErrorKind(err);
    const message =
      kind === "timeout"
        ? `${spec.operation}: the Edge API did not answer within ${ctx.timeoutMs} ms`
        : ctx.closing.aborted
          ? `${spec.operation}: the Edge API client was closed`
          : `${spec.operation}: could not reach the Edge API (${scrub(String((err as Error)?.message ?? err), ctx.apiKey)})`;
    throw new EdgeApiError({ kind, message, operation: spec.operation, subject: spec.subject, cause: err });
  } finally {
    cancelTimer();
    ctx.closing.removeEventListener("abort", onClose);
  }
}

/**
 * The body as text, unless it is longer than `maxBytes` (announced or counted while streaming): then
 * reading stops at once and the connection is dropped, so a huge answer costs at most `maxBytes`.
 */
async function readBodyUpTo(
  res: Dispatcher.ResponseData,
  maxBytes: number,
): Promise<{ text: string; tooLarge: boolean }> {
  const announced = Number(header(res.headers, "content-length"));
  if (Number.isFinite(announced) && announced > maxBytes) {
    res.body.destroy();
    return { text: "", tooLarge: true };
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of res.body as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) {
      res.body.destroy();
      return { text: "", tooLarge: true };
    }
    chunks.push(chunk);
  }
  return { text: Buffer.concat(chunks, size).toString("utf8"), tooLarge: false };
}

function parseJson(text: string): { ok: true; value: unknown } | { ok: false; error: unknown } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (error) {
    return { ok: false, error };
  }
}

/**
 * Whether a 2xx body lacks the operation's answer: no body, the row's own test, or every field but the
 * error envelope's null or absent.
 */
function answerMissing(value: unknown, spec: RequestSpec<z.ZodType>): boolean {
  if (value === undefined) return true;
  if (value === null || typeof value !== "object" || Array.isArray(value)) return false;
  const body = value as Record<string, unknown>;
  return (
    spec.answerAbsent?.(body) === true ||
    Object.entries(body).every(
      ([k, v]) => k === "error" || k === "errorResponse" || k === "success" || v === null || v === undefined,
    )
  );
}

/**
 * The one rule for a refusal inside a 2xx, for reads and writes alike: a Shield `invalid_plan_type.*`
 * key (the 202 a plan without the feature gets), or `success: false` (in an error envelope `error` /
 * `errorResponse`, or the answer's own, as a WAF rule review's) while the answer itself is absent (every
 * other field null, or `data` null with a status >= 400 in the body). A write's answer is its status, so
 * there an error envelope that gives a reason (a message, a key or an error status) refuses even beside a
 * `data` echoing the request. The AI recommendation's `{ruleId, success:false, errorResponse}` carries its
 * answer and is not a refusal.
 */
function refusalInBody(
  value: unknown,
  spec: RequestSpec<z.ZodType>,
  apiKey: string,
  status: number,
): EdgeApiError | undefined {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return undefined;
  const body = value as Record<string, unknown>;
  const fields = readErrorBody(body);
  const failed = (e: unknown) =>
    e !== null && typeof e === "object" && (e as { success?: unknown }).success === false;
  const envelopeFailed = failed(body.error) || failed(body.errorResponse);
  const errorStatus = fields.bodyStatus !== undefined && fields.bodyStatus >= 400;
  const refused =
    ((envelopeFailed || body.success === false) && answerMissing(body, spec)) ||
    (failed(body.error) && (body.data === undefined || body.data === null) && errorStatus) ||
    (spec.statusIsTheAnswer === true &&
      envelopeFailed &&
      (fields.apiMessage !== undefined || fields.errorKey !== undefined || errorStatus));
  if (!isPlanErrorKey(fields.errorKey) && !refused) return undefined;
  // A body that claims no error status still refused: the API's own words, as a refusal.
  const bodyStatus = errorStatus && fields.bodyStatus !== undefined ? fields.bodyStatus : 400;
  return answeredError(spec, apiKey, status, fields, bodyStatus, " carrying an error");
}

/** The error an answer means (an error status, or a refusal inside a 2xx), in the API's own words. */
function answeredError(
  spec: RequestSpec<z.ZodType>,
  apiKey: string,
  status: number,
  fields: ErrorBodyFields,
  meaningStatus: number,
  carrying: string,
  retryAfterMs?: number,
): EdgeApiError {
  const { errorKey } = fields;
  const apiMessage = fields.apiMessage === undefined ? undefined : scrub(fields.apiMessage, apiKey);
  return new EdgeApiError({
    kind: kindForStatus(meaningStatus, errorKey),
    status,
    errorKey,
    apiMessage,
    operation: spec.operation,
    subject: spec.subject,
    retryAfterMs,
    message: `${spec.operation}: Edge API answered HTTP ${status}${carrying}${errorKey ? ` (${errorKey})` : ""}${apiMessage ? `: ${apiMessage}` : ""}`,
  });
}

/** Turn a response into the validated payload, or throw the EdgeApiError its status and body mean. */
export function interpret<S extends z.ZodType>(
  res: RawResponse,
  spec: RequestSpec<S>,
  apiKey: string,
  now: number,
  maxRetryAfterMs: number,
): z.output<S> {
  const { operation, subject } = spec;
  const ok2xx = res.status >= 200 && res.status < 300;
  // A write's 2xx is its answer unless the body says it was refused; no body, or one that can't be
  // read, leaves it accepted (the read-back after the write decides).
  if (spec.statusIsTheAnswer && ok2xx) {
    const body = res.tooLarge ? undefined : parseJson(res.text.trim());
    const refusal = body?.ok ? refusalInBody(body.value, spec, apiKey, res.status) : undefined;
    if (refusal) throw refusal;
    return undefined as z.output<S>;
  }
  /** A 2xx whose answer edgeops cannot use. */
  const unusable = (kind: "too_large" | "invalid_response", what: string, cause?: unknown) =>
    new EdgeApiError({
      kind,
      status: res.status,
      operation,
      subject,
      message: `${operation}: ${what}`,
      cause,
    });
  // An error status says enough without its (oversized, unread) body; an answer we need does not.
  if (res.tooLarge && ok2xx) {
    throw unusable("too_large", "the Edge API answer is larger than EDGE_API_MAX_BODY_BYTES allows");
  }
  const trimmed = res.text.trim();
  const parsed = trimmed === "" ? ({ ok: true, value: undefined } as const) : parseJson(trimmed);

  if (!ok2xx) {
    const fields = parsed.ok ? readErrorBody(parsed.value) : {};
    const retryAfterMs =
      res.status === 429
        ? parseRetryAfter(header(res.headers, "retry-after"), now, maxRetryAfterMs)
        : undefined;
    throw answeredError(spec, apiKey, res.status, fields, res.status, "", retryAfterMs);
  }

  if (!parsed.ok) {
    throw unusable(
      "invalid_response",
      `the Edge API answered HTTP ${res.status} with a body that is not JSON`,
      parsed.error,
    );
  }

  const refusal = refusalInBody(parsed.value, spec, apiKey, res.status);
  if (refusal) throw refusal;
  // A read the API accepted (202) without its answer: taken, but nothing to give yet.
  if (res.status === 202 && spec.method === "GET" && answerMissing(parsed.value, spec))
    throw new EdgeApiError({
      kind: "not_ready",
      status: res.status,
      operation,
      subject,
      message: `${operation}: the Edge API answered 202 Accepted without the answer`,
    });

  if (parsed.value === undefined && spec.allowEmptyBody) return undefined as z.output<S>;
  const result = spec.schema.safeParse(parsed.value);
  if (!result.success) {
    const where = result.error.issues
      .slice(0, 3)
      .map((i) => `${i.path.join(".") || "(body)"}: ${i.message}`)
      .join("; ");
    throw unusable(
      "invalid_response",
      `the Edge API answer did not have the expected shape (${where})`,
      result.error,
    );
  }
  return result.data;
}

/** One attempt through the key's queue: sent, read, reported (onRequest and the log). */
async function attemptOnce<S extends z.ZodType>(
  ctx: RequestContext,
  spec: RequestSpec<S>,
  attempt: number,
  span: Span,
): Promise<z.output<S>> {
  let startedAt = 0;
  const report = (status: number | undefined, e?: EdgeApiError) => {
    span.setAttributes({ "edge.attempts": attempt, "edge.retry_count": attempt - 1 });
    if (status !== undefined) span.setAttribute("http.response.status_code", status);
    const durationMs = startedAt ? ctx.clock.now() - startedAt : 0;
    const { operation, method, path } = spec;
    // Only attempts that reached the network count as requests (not ones dropped while waiting).
    if (startedAt) ctx.onRequest?.({ operation, method, attempt, status, kind: e?.kind, durationMs });
    const fields = { op: operation, method, path, keyId: ctx.keyId, attempt, status, durationMs };
    if (!e) ctx.logger.debug(fields, "edge request");
    else
      (e.isRetryable || status === undefined ? ctx.logger.warn : ctx.logger.info).call(
        ctx.logger,
        { ...fields, kind: e.kind, apiError: e.errorKey },
        "edge request failed",
      );
  };
  let res: RawResponse;
  let refusedBeforeWrite: { err: unknown } | undefined;
  try {
    // With REDIS_URL the queue also waits for the start rate shared by every replica (its gate).
    res = await ctx.queues.run(
      ctx.keyId,
      async (leaving) => {
        if (ctx.beforeWrite && spec.method !== "GET")
          await ctx.beforeWrite().catch((err: unknown) => {
            refusedBeforeWrite = { err };
            throw err;
          });
        startedAt = ctx.clock.now();
        // From here to the socket is synchronous: the key's window counts this start from now.
        leaving();
        return sendOnce(ctx, spec);
      },
      attempt > 1,
      ctx.closing,
      ctx.background ?? false,
    );
  } catch (err) {
    if (refusedBeforeWrite) throw refusedBeforeWrite.err;
    if (err instanceof QueueFullError) {
      // The key's own queue is full (a warning), or a best-effort read met the replica's background bound.
      const ofKey = err.scope === "key";
      ctx.logger[ofKey ? "warn" : "debug"](
        { op: spec.operation, keyId: ctx.keyId },
        ofKey ? "edge queue full; request refused" : "edge background work full; optional read refused",
      );
      throw new EdgeApiError({
        kind: ofKey ? "queue_full" : "busy",
        operation: spec.operation,
        subject: spec.subject,
        message: ofKey
          ? `${spec.operation}: too many Edge API requests are waiting for this key`
          : `${spec.operation}: too much background work is waiting for the Edge API on this replica`,
      });
    }
    const e =
      err instanceof EdgeApiError
        ? err
        : new EdgeApiError({
            kind: "network",
            operation: spec.operation,
            subject: spec.subject,
            message: ctx.closing.aborted
              ? `${spec.operation}: the Edge API client was closed`
              : `${spec.operation}: the request failed`,
            cause: err,
          });
    report(undefined, e);
    throw e;
  }
  try {
    const out = interpret(res, spec, ctx.apiKey, ctx.clock.now(), ctx.retry.maxRetryAfterMs);
    report(res.status);
    return out;
  } catch (err) {
    report(res.status, err as EdgeApiError);
    throw err;
  }
}

/**
 * Run a request through the key's queue with the retry policy (p-retry): 5xx, timeouts and network
 * errors are retried with backoff for idempotent calls only; a 429 pauses the key's queue (Retry-After,
 * shared with other replicas) and is retried for any call, counted apart. Closing stops retrying.
 */
export function execute<S extends z.ZodType>(
  ctx: RequestContext,
  spec: RequestSpec<S>,
): Promise<z.output<S>> {
  const template = spec.pathTemplate ?? spec.operation;
  return inSpan(
    `${spec.method} ${template}`,
    {
      "http.request.method": spec.method,
      "url.template": template,
      "edge.operation": spec.operation,
      "edge.background": Boolean(ctx.background),
      "edge.retry_count": 0,
    },
    (span) => executeWithRetries(ctx, spec, span),
  );
}

async function executeWithRetries<S extends z.ZodType>(
  ctx: RequestContext,
  spec: RequestSpec<S>,
  span: Span,
): Promise<z.output<S>> {
  const policy = ctx.retry;
  const release = ctx.queues.acquire(ctx.keyId);
  let rateLimitRetries = 0;
  let pausedForRateLimit = false;
  // Whether a failed attempt is tried again after a backoff (a 429 is retried apart, after its pause).
  const retriesAfter = (e: EdgeApiError, retriesConsumed: number) =>
    !ctx.closing.aborted && e.isRetryable && spec.idempotent && retriesConsumed < policy.retries;
  try {
    return await pRetry((attempt) => attemptOnce(ctx, spec, attempt, span), {
      // A bound only: shouldRetry decides, counting rate-limit retries apart (they consume none).
      retries: policy.retries + policy.rateLimitRetries,
      // p-retry would sleep on the process's own timers: the backoff sleeps on the clock, in onFailedAttempt.
      minTimeout: 0,
      maxTimeout: 0,
      onFailedAttempt: async ({ error, retriesConsumed }) => {
        const e = error as EdgeApiError;
        pausedForRateLimit =
          !ctx.closing.aborted && e.kind === "rate_limited" && rateLimitRetries < policy.rateLimitRetries;
        if (!pausedForRateLimit) {
          const backoffMs = retriesAfter(e, retriesConsumed)
            ? backoffDelay(policy, retriesConsumed + 1, ctx.random)
            : 0;
          // Closing cuts the backoff short; shouldRetry then gives up with this attempt's error.
          if (backoffMs > 0) await ctx.clock.sleep(backoffMs, ctx.closing).catch(() => undefined);
          return;
        }
        rateLimitRetries++;
        const pauseMs = e.retryAfterMs ?? backoffDelay(policy, rateLimitRetries, ctx.random);
        ctx.logger.info(
          { op: spec.operation, keyId: ctx.keyId, pauseMs },
          "edge API rate limit: pausing this key's queue",
        );
        ctx.queues.pause(ctx.keyId, pauseMs);
        await ctx.shared?.pause(ctx.keyId, pauseMs);
      },
      // The queue's pause is a 429's wait: no backoff on top, and no retry of the budget spent.
      shouldConsumeRetry: () => !pausedForRateLimit,
      shouldRetry: ({ error, retriesConsumed }) =>
        pausedForRateLimit || retriesAfter(error as EdgeApiError, retriesConsumed),
    });
  } finally {
    release();
  }
}
