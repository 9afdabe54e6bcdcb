/**
 * The one error type that leaves the Edge client. Every failure — an HTTP status, a body that does
 * not match the schema, a timeout, a full queue, a bad argument — becomes an `EdgeApiError` with a
 * `kind`; `describeEdgeError` turns it (or anything else) into the sentence a Slack user reads.
 */

export const EDGE_ERROR_KINDS = [
  "bad_request",
  "unauthorized",
  "forbidden",
  "not_found",
  "plan_not_eligible",
  "rate_limited",
  "server",
  "timeout",
  "network",
  "invalid_response",
  "too_large",
  "queue_full",
  "busy",
  "invalid_argument",
  "not_ready",
] as const;

export type EdgeErrorKind = (typeof EDGE_ERROR_KINDS)[number];

const RETRYABLE: ReadonlySet<EdgeErrorKind> = new Set(["rate_limited", "server", "timeout", "network"]);

export interface EdgeApiErrorInit {
  kind: EdgeErrorKind;
  message: string;
  operation: string;
  status?: number | undefined;
  errorKey?: string | undefined;
  apiMessage?: string | undefined;
  /** What the call was about, for the user's sentence: "Shield zone 42", "DNS zone 7". */
  subject?: string | undefined;
  /** Seconds the API asked us to wait (429 Retry-After), when it said. */
  retryAfterMs?: number | undefined;
  cause?: unknown;
}

export class EdgeApiError extends Error {
  override readonly name = "EdgeApiError";
  readonly kind: EdgeErrorKind;
  readonly status: number | undefined;
  readonly errorKey: string | undefined;
  readonly apiMessage: string | undefined;
  readonly operation: string;
  readonly subject: string | undefined;
  readonly retryAfterMs: number | undefined;

  constructor(init: EdgeApiErrorInit) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.kind = init.kind;
    this.status = init.status;
    this.errorKey = init.errorKey;
    this.apiMessage = init.apiMessage;
    this.operation = init.operation;
    this.subject = init.subject;
    this.retryAfterMs = init.retryAfterMs;
  }

  /** Whether trying the same request again later may succeed. */
  get isRetryable(): boolean {
    return RETRYABLE.has(this.kind);
  }
}

export function isEdgeApiError(err: unknown): err is EdgeApiError {
  return err instanceof EdgeApiError;
}

/** A Shield `errorKey` saying the zone's plan lacks the feature (`invalid_plan_type.*`). */
export function isPlanErrorKey(errorKey: string | undefined): boolean {
  return errorKey !== undefined && /^invalid_plan_type(\.|$)/i.test(errorKey);
}

/** The ONE place an HTTP status (plus the API's errorKey) becomes an error kind. */
export function kindForStatus(status: number, errorKey?: string): EdgeErrorKind {
  if (isPlanErrorKey(errorKey)) return "plan_not_eligible";
  if (status === 401) return "unauthorized";
  if (status === 403) return "forbidden";
  if (status === 404 || status === 410) return "not_found";
  if (status === 408) return "timeout";
  if (status === 429) return "rate_limited";
  if (status >= 500) return "server";
  if (status >= 400) return "bad_request";
  // 1xx/3xx, or a 2xx that carried an error envelope without a usable status.
  return "invalid_response";
}

export interface ErrorBodyFields {
  errorKey?: string;
  apiMessage?: string;
  /** The status the body itself claims (Shield envelope / bare `{statusCode}` / problem details). */
  bodyStatus?: number;
}

const str = (v: unknown): string | undefined =>
  typeof v === "string" && v.trim() !== "" ? v.trim() : undefined;
const int = (v: unknown): number | undefined =>
  typeof v === "number" && Number.isInteger(v) ? v : undefined;
const obj = (v: unknown): Record<string, unknown> | undefined =>
  v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;

/**
 * Read errorKey / message from whichever error body shape arrived:
 * - Shield envelope `{data, error: {statusCode, success, message, errorKey}}` (or `errorResponse` on the
 *   WAF AI recommendation),
 * - Magic Containers RFC 7807 error details `{title, status, detail, instance, errors: [{field, message}], id}`,
 * - problem details `{type, title, status, detail, instance}`,
 * - a bare `{statusCode}`,
 * - Core `{ErrorKey, Field, Message}`,
 * - or nothing at all.
 */
export function readErrorBody(body: unknown): ErrorBodyFields {
  const b = obj(body);
  if (!b) return {};

  const envelope = obj(b.error) ?? obj(b.errorResponse);
  if (envelope) return fields(str(envelope.errorKey), str(envelope.message), int(envelope.statusCode));

  // Core: PascalCase.
  const coreKey = str(b.ErrorKey);
  const coreMessage = str(b.Message);
  if (coreKey || coreMessage) {
    const field = str(b.Field);
    const withField =
      coreMessage && field && !coreMessage.includes(field) ? `${coreMessage} (${field})` : coreMessage;
    return fields(coreKey, withField, undefined);
  }

  // RFC 7807 error details / problem details.
  const fieldErrors = Array.isArray(b.errors)
    ? b.errors
        .map((e) => {
          const o = obj(e);
          const m = str(o?.message);
          if (!m) return undefined;
          const f = str(o?.field);
          return f ? `${f}: ${m}` : m;
        })
        .filter((m): m is string => m !== undefined)
    : [];
  const parts = [str(b.detail) ?? str(b.title), ...fieldErrors].filter((p): p is string => p !== undefined);
  return fields(
    str(b.errorKey),
    parts.length > 0 ? parts.join("; ") : str(b.message),
    int(b.status) ?? int(b.statusCode),
  );
}

/** The fields that are there (an absent one is left out, not set to undefined). */
function fields(errorKey?: string, apiMessage?: string, bodyStatus?: number): ErrorBodyFields {
  return {
    ...(errorKey ? { errorKey } : {}),
    ...(apiMessage ? { apiMessage } : {}),
    ...(bodyStatus !== undefined ? { bodyStatus } : {}),
  };
}

/** What each operation does / needs, in words for the user's sentences. */
const OPERATION_WORDS: Record<string, { doing: string; feature?: string }> = {
  listApps: { doing: "list Magic Containers apps" },
  listShieldZones: { doing: "list shield zones" },
  listPullZones: { doing: "list pull zones" },
  getBotDetection: { doing: "read bot detection settings", feature: "bot detection" },
  getBotCategories: { doing: "read bot categories", feature: "bot categorization" },
  setBotCategoryAction: { doing: "change bot category actions", feature: "bot categorization" },
  getRateLimitMetrics: { doing: "read rate-limit metrics", feature: "rate-limit metrics" },
  getWafAiRecommendation: { doing: "read WAF AI recommendations", feature: "WAF AI recommendations" },
  getShieldZone: { doing: "read shield zones" },
  getMetricsOverview: { doing: "read shield metrics", feature: "shield metrics" },
  getMetricsOverviewDetailed: { doing: "read shield metrics", feature: "detailed shield metrics" },
  searchEventLogs: { doing: "search event logs", feature: "event logs" },
  getTriggeredWafRules: { doing: "review triggered WAF rules", feature: "the triggered WAF rule review" },
  getRateLimits: { doing: "read rate-limit metrics", feature: "rate-limit metrics" },
  listRateLimitRules: { doing: "read rate-limit rules", feature: "rate limiting" },
  getRateLimitRule: { doing: "read a rate-limit rule", feature: "rate limiting" },
  getLatestDnsScan: { doing: "read DNS record scans" },
  triggerDnsScan: { doing: "start DNS record scans" },
  listDnsZones: { doing: "list DNS zones" },
  restartApp: { doing: "restart Magic Containers apps" },
  purgePullZone: { doing: "purge pull zone caches" },
  purgeUrl: { doing: "purge URLs from the cache" },
  updateShieldZone: { doing: "change shield zone settings" },
  reviewTriggeredWafRule: { doing: "review triggered WAF rules", feature: "the triggered WAF rule review" },
  listCustomAccessLists: { doing: "read access lists", feature: "custom access lists" },
  getCustomAccessList: { doing: "read access lists", feature: "custom access lists" },
  createCustomAccessList: { doing: "create access lists", feature: "custom access lists" },
  setCustomAccessListContent: { doing: "change access lists", feature: "custom access lists" },
  configureAccessList: { doing: "change access lists", feature: "custom access lists" },
};

/** Operations whose 403 can be about the account rather than the key (billing, suspension). */
const ACCOUNT_BOUND = new Set(["restartApp", "listApps"]);
/** An API 403 message about the key's reach, not about the account. */
const KEY_WORDS = /\b(api ?key|access ?key|key|permission|scope|not allowed|unauthori[sz]ed)\b/i;

function endSentence(s: string): string {
  const t = s.trim();
  return /[.!?]$/.test(t) ? t : `${t}.`;
}

/** Where to find the right id of what was not found. */
function notFoundNextStep(subject: string | undefined): string {
  if (subject?.startsWith("Shield zone"))
    return " Find a zone by its domain with /edge zones and part of the name, e.g. /edge zones shop.example.com.";
  if (subject?.startsWith("DNS zone")) return " Type /edge dns alone to pick one of your DNS zones.";
  if (subject?.startsWith("Pull zone")) return " Type /edge purge alone to pick one of your pull zones.";
  if (subject?.startsWith("Application")) return " /edge apps lists the applications with their ids.";
  return "";
}

/** The sentence a Slack user reads for any error, saying what to do next. Never includes the API key. */
export function describeEdgeError(err: unknown): string {
  if (!(err instanceof EdgeApiError)) {
    return "Something went wrong while talking to the Edge API; try again, and tell an admin if it keeps happening.";
  }
  const words = OPERATION_WORDS[err.operation];
  const doing = words?.doing ?? "do that";
  switch (err.kind) {
    case "invalid_argument":
      return endSentence(err.message);
    case "bad_request":
      if (err.apiMessage)
        return `The Edge API refused the request: ${endSentence(err.apiMessage)} Check the values and try again.`;
      // A refusal inside a 2xx with no reason (`success: false` alone): not "invalid", it did not say.
      return err.status !== undefined && err.status < 300
        ? "The Edge API refused the request without saying why; check the values and try again."
        : "The Edge API refused the request as invalid; check the values and try again.";
    case "unauthorized":
      return "The Edge API rejected this workspace's API key: an admin can set a new one with /edge key.";
    case "forbidden":
      if (ACCOUNT_BOUND.has(err.operation) && err.apiMessage && !KEY_WORDS.test(err.apiMessage))
        return `The Edge API refused to ${doing}: ${endSentence(err.apiMessage)} That is about the bunny.net account (billing or its standing), not the key: an account owner can check it in the bunny.net dashboard.`;
      return `This workspace's Edge API key is not allowed to ${doing}: an admin can set a key with more access with /edge key.`;
    case "not_found":
      if (err.operation === "getLatestDnsScan") {
        return `No DNS scan was found for ${err.subject ?? "that DNS zone"} (or the zone does not exist): check the id, or start a scan first.`;
      }
      return `${err.subject ?? "What you asked for"} was not found: check the id.${notFoundNextStep(err.subject)}`;
    case "plan_not_eligible":
      return `This shield zone's plan does not include ${words?.feature ?? "this feature"}: upgrade the zone's Shield plan in the bunny.net dashboard to use it.`;
    case "rate_limited":
      return "The Edge API is rate-limiting this workspace's requests; wait a minute and try again.";
    case "server":
      return `The Edge API had a problem on its side${err.status ? ` (HTTP ${err.status})` : ""}; try again in a few minutes.`;
    case "timeout":
      return "The Edge API did not answer in time; try again in a moment.";
    case "network":
      return "edgeops could not reach the Edge API; try again in a moment, and tell an admin if it keeps happening.";
    case "invalid_response":
      return "The Edge API sent an answer edgeops could not understand; try again, and tell an admin if it keeps happening.";
    case "too_large":
      return "The Edge API's answer was larger than edgeops accepts: ask for less (a smaller page or limit) if you can, and tell an admin if it keeps happening (an operator can raise EDGE_API_MAX_BODY_BYTES).";
    case "queue_full":
      return "Too many Edge API requests are waiting for this workspace; try again in a few seconds.";
    case "busy":
      return "edgeops is busy with many background reads of the Edge API right now; ask again in a minute.";
    case "not_ready":
      return `The Edge API accepted ${err.subject ?? "that"} but has not finished setting it up (HTTP 202), so there is nothing to show yet; try again in a minute.`;
  }
}
