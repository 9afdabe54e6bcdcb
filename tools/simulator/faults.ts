/**
 * Fault injection. A fault matches by optional method and by path (string = prefix of the request path, RegExp =
 * tested against the path). Faults that only add latency stack; the first matching fault that changes the answer
 * (reset, status, body) wins. Each applied fault counts one use against `times` and is dropped when used up.
 */
import { type Adversary, FRIENDLY } from "./adversary.js";
import type { SimResponse } from "./http.js";

export interface Fault {
  /** Match only this method (case-insensitive); any method when absent. */
  method?: string;
  /**
   * A string matches as a prefix of the request path (e.g. "/mc/apps"); a RegExp is tested against the path.
   * `exactPath("/shield/metrics/overview/18401")` fails that one section, not `.../detailed` below it.
   */
  path: string | RegExp;
  /**
   * Added latency before answering (stacks with other matching latency-only faults and the global latency),
   * slept on the simulator's clock: with a manual clock, it passes when the test moves time.
   */
  latencyMs?: number;
  /**
   * Hold the answer until this promise settles (after any latency): the test decides when the Edge API
   * answers, e.g. release a held read once a second request has started, without waiting out time.
   */
  holdUntil?: Promise<unknown>;
  /** Answer with this status (default 429 when only retryAfter is given; 200 when only body is given). */
  status?: number;
  /** Raw `Retry-After` header value (seconds like "2" or an HTTP date). */
  retryAfter?: string;
  /** "none" = empty body (the default with status), "malformed" = the real answer truncated mid-JSON, else JSON. */
  body?: "none" | "malformed" | unknown;
  /** Destroy the connection without answering (fetch rejects). */
  reset?: boolean;
  /**
   * Pad the real answer (a leading `padding` field, so it stays valid JSON) to about this many bytes,
   * streamed in chunks without a Content-Length: a huge answer.
   */
  padToBytes?: number;
  /**
   * Answer with the operation's documented refusal inside a 2xx (faults.ts refusalAnswer): the error
   * envelope with the answer absent, e.g. a 202 `{data: null, error: {success: false, …}}` to PATCH
   * /shield/shield-zone. Nothing is changed.
   */
  refuse?: Refusal;
  /** Apply to this many matching requests, then stop. Unlimited when absent. */
  times?: number;
  /** Let this many matching requests through untouched first (e.g. the read before a write). */
  skip?: number;
}

/** The error a refusal carries; each field defaults to the operation's own (a plan key where it has one). */
export interface Refusal {
  errorKey?: string;
  message?: string;
  /** The status the body claims (default 400); a 2xx here is the "claims no error status" case. */
  statusCode?: number;
}

/** What the server does for a request once faults are considered. */
export interface FaultPlan {
  latencyMs: number;
  /** Every matching hold: the answer waits for all of them. */
  holds: Promise<unknown>[];
  /** The fault that replaces or alters the answer, if any. */
  terminal?: Fault;
}

const alters = (f: Fault): boolean =>
  f.reset === true ||
  f.status !== undefined ||
  f.body !== undefined ||
  f.retryAfter !== undefined ||
  f.padToBytes !== undefined ||
  f.refuse !== undefined;

function matches(f: Fault, method: string, path: string): boolean {
  if (f.method !== undefined && f.method.toUpperCase() !== method.toUpperCase()) return false;
  if (typeof f.path === "string") return path.startsWith(f.path);
  f.path.lastIndex = 0; // tolerate /g and /y regexps
  return f.path.test(path);
}

export class FaultSet {
  private faults: Array<{ fault: Fault; remaining: number; skip: number }> = [];

  add(fault: Fault): void {
    this.faults.push({ fault, remaining: fault.times ?? Number.POSITIVE_INFINITY, skip: fault.skip ?? 0 });
  }

  clear(): void {
    this.faults = [];
  }

  /** Picks the faults for a request and consumes one use of each one applied. */
  plan(method: string, path: string): FaultPlan {
    const plan: FaultPlan = { latencyMs: 0, holds: [] };
    for (const entry of this.faults) {
      if (entry.remaining <= 0 || !matches(entry.fault, method, path)) continue;
      if (entry.skip > 0) {
        entry.skip -= 1;
        continue;
      }
      if (alters(entry.fault)) {
        if (plan.terminal !== undefined) continue;
        plan.terminal = entry.fault;
      }
      plan.latencyMs += entry.fault.latencyMs ?? 0;
      if (entry.fault.holdUntil) plan.holds.push(entry.fault.holdUntil);
      entry.remaining -= 1;
    }
    this.faults = this.faults.filter((e) => e.remaining > 0);
    return plan;
  }
}

/** Cuts a JSON text so that it can no longer be parsed. */
export function truncateJson(text: string): string {
  if (text.length < 2) return '{"truncated":';
  return text.slice(0, Math.max(1, Math.floor(text.length / 2)));
}

/** A fault path matching exactly this request path (optionally with a trailing slash), not the paths below it. */
export function exactPath(path: string): RegExp {
  return new RegExp(`^${path.replace(/[.*+?^${}()|[\]\\]/g, "\\$&").replace(/\/$/, "")}/?$`);
}

/**
 * The documented refusal inside a 2xx for the operation at this path: the Shield envelope
 * `{…, error: GenericRequestResponse}` with every answer field null (202 for the writes that document a
 * 202: PATCH /shield/shield-zone and the access-list writes; 202 with a plan key for a bot-category PUT,
 * as the reference notes), or `{success: false, errorResponse}` (200) for a WAF rule review.
 *
 * The documents do not say what else a refusal carries ("shield.refusal-form", index 1 the off form): the
 * zone PATCH may refuse in its 200 (UpdateShieldZoneResponse) with `data` echoing the request
 * (UpdateShieldZoneRequest) beside the error, and a review's `errorResponse` may be null, `success: false`
 * alone saying it was refused.
 */
export function refusalAnswer(
  method: string,
  path: string,
  refuse: Refusal,
  adversary: Adversary = FRIENDLY,
  body?: unknown,
): SimResponse {
  const form = REFUSAL_FORMS.find((f) => f.method === method && f.pattern.test(path));
  const error = {
    statusCode: refuse.statusCode ?? 400,
    success: false,
    message: refuse.message ?? form?.message ?? "The request could not be completed.",
    errorKey: refuse.errorKey ?? form?.errorKey ?? "request.refused",
  };
  if (form === undefined) return { status: 200, body: { data: null, error } };
  if (
    form.echoesRequest &&
    adversary.choose("shield.refusal-form", ["data-null", "data-echoed"], path) === "data-echoed"
  )
    return { status: 200, body: { ...form.answer, data: body ?? null, error } };
  if (
    form.envelope === "errorResponse" &&
    adversary.choose("shield.refusal-form", ["error-given", "error-null"], path) === "error-null"
  )
    return { status: form.status, body: { ...form.answer, errorResponse: null } };
  return { status: form.status, body: { ...form.answer, [form.envelope]: error } };
}

interface RefusalForm {
  method: string;
  pattern: RegExp;
  status: number;
  /** The answer's own fields, all null. */
  answer: Record<string, null | boolean>;
  envelope: "error" | "errorResponse";
  errorKey?: string;
  message?: string;
  /** Its `data` is the request as sent (UpdateShieldZoneResponse), so a refusal may echo it. */
  echoesRequest?: boolean;
}

const BOT_PLAN_MESSAGE = "Bot categorization is not available on your current Shield plan.";

const REFUSAL_FORMS: readonly RefusalForm[] = [
  {
    method: "PATCH",
    pattern: /^\/shield\/shield-zone\/?$/,
    status: 202,
    answer: { data: null },
    envelope: "error",
    echoesRequest: true,
  },
  {
    method: "PUT",
    pattern: /^\/shield\/shield-zone\/[^/]+\/bot-categorization\/categories\/[^/]+\/?$/,
    status: 202,
    answer: { data: null },
    envelope: "error",
    errorKey: "invalid_plan_type.bot_categorization",
    message: BOT_PLAN_MESSAGE,
  },
  {
    method: "GET",
    pattern: /^\/shield\/shield-zone\/[^/]+\/bot-categorization\/?$/,
    status: 200,
    answer: { categories: null },
    envelope: "error",
  },
  {
    method: "GET",
    pattern: /^\/shield\/metrics\/rate-limits\/[^/]+\/?$/,
    status: 200,
    answer: { data: null },
    envelope: "error",
  },
  {
    method: "POST",
    pattern: /^\/shield\/waf\/rules\/review-triggered\/[^/]+\/?$/,
    status: 200,
    answer: { success: false },
    envelope: "errorResponse",
  },
  {
    method: "GET",
    pattern: /^\/shield\/shield-zone\/[^/]+\/access-lists\/?$/,
    status: 200,
    answer: { managedLists: null, customLists: null },
    envelope: "error",
  },
  {
    method: "POST",
    pattern: /^\/shield\/shield-zone\/[^/]+\/access-lists\/?$/,
    status: 202,
    answer: { data: null },
    envelope: "error",
  },
  {
    method: "PATCH",
    pattern: /^\/shield\/shield-zone\/[^/]+\/access-lists\/\d+\/?$/,
    status: 202,
    answer: { data: null },
    envelope: "error",
  },
  {
    method: "PATCH",
    pattern: /^\/shield\/shield-zone\/[^/]+\/access-lists\/configurations\/[^/]+\/?$/,
    status: 202,
    answer: { data: null },
    envelope: "error",
  },
];
