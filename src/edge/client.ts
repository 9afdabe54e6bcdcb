import { setMaxListeners } from "node:events";
import { Agent, type Dispatcher } from "undici";
import type { z } from "zod";
import { withDeadline } from "../deadline.js";
import type { Logger } from "../log.js";
import { EdgeApiError, kindForStatus } from "./errors.js";
import { KeyQueues, keyId, type QueueStats, RETRY_DEFAULT, type RetryPolicy } from "./queue.js";
import { execute, type RequestContext, type RequestEvent, type RequestSpec } from "./request.js";
import { ignoredBody } from "./schemas/common.js";
import {
  type DnsScan,
  type DnsScanTrigger,
  type DnsZoneSummary,
  dnsScanSchema,
  dnsScanTriggerSchema,
  dnsZoneListSchema,
  type PullZone,
  pullZoneListSchema,
} from "./schemas/core.js";
import { dateKeyShape } from "./schemas/date-key.js";
import { type AppPage, listApplicationsResponseSchema } from "./schemas/mc.js";
import {
  type AccessListDetails,
  accessListsResponseSchema,
  type BotCategory,
  type BotCategoryAction,
  type BotDetection,
  botCategorizationListResponseSchema,
  botDetectionResponseSchema,
  type CustomAccessList,
  customAccessListResponseSchema,
  EVENT_LOG_DIMENSIONS,
  type EventLogsSearch,
  type EventLogsSearchResult,
  eventLogsSearchResponseSchema,
  getShieldZoneMetricsOverviewResponseSchema,
  getShieldZoneRateLimitMetricsResponseSchema,
  getShieldZoneResponseSchema,
  getShieldZonesResponseSchema,
  getTriggeredRulesResponseSchema,
  METRICS_RESOLUTION,
  type MetricsResolution,
  type RateLimitMetrics,
  rateLimitMetricsResponseSchema,
  type ShieldDetailedMetrics,
  type ShieldMetricsOverview,
  type ShieldZone,
  type ShieldZonePage,
  type ShieldZoneUpdate,
  shieldOverviewMetricsResponseSchema,
  type TriggeredRules,
  unreadableMetricKeys,
  updateBotCategoryResponseSchema,
  type WafAiRecommendation,
  type WafReviewAction,
  wafAiRecommendationSchema,
  type ZoneRateLimitMetrics,
} from "./schemas/shield.js";
import type { SharedLimit } from "./shared-limit.js";

export type { QueueStats, RetryPolicy } from "./queue.js";
export { RETRY_DEFAULT, RETRY_FAST } from "./queue.js";
export type { RequestEvent } from "./request.js";
export { EDGE_USER_AGENT } from "./request.js";

/**
 * The Edge API client: one thin method per operation. Arguments are checked before any request
 * (`invalid_argument`), responses are validated and normalised after; every failure is an
 * EdgeApiError. All requests for one API key share that key's rate-limited queue.
 */

export interface EdgeApiOptions {
  baseUrl: string;
  timeoutMs: number;
  ratePerSec: number;
  concurrency: number;
  maxQueue: number;
  /** Largest response body read (EDGE_API_MAX_BODY_BYTES); default 10 MiB. */
  maxBodyBytes?: number;
  logger: Logger;
  retry?: RetryPolicy;
  /** Default: an undici Agent with keep-alive owned (and closed) by this EdgeApi. */
  dispatcher?: Dispatcher;
  /** Called after every HTTP attempt (retries included). */
  onRequest?: (e: RequestEvent) => void;
  /** How long a call waited in its key's queue before its (first or retried) attempt started. */
  onQueueWait?: (ms: number) => void;
  /** A call refused because its key's queue was full. */
  onQueueRejected?: () => void;
  /** With REDIS_URL: the per-key start rate and 429 pauses shared by every replica (src/edge/shared-limit.ts). */
  sharedLimit?: SharedLimit;
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
  random?: () => number;
}

export interface ListAppsParams {
  /** 1..1000, default 20. */
  limit?: number;
  /** `nextCursor` of the previous page. */
  cursor?: string;
}

export interface ListShieldZonesParams {
  /** >= 1, default 1. */
  page?: number;
  /** 1..1000, default 10. */
  perPage?: number;
}

export interface ListPullZonesParams {
  /** >= 1, default 1 (the API's page 0, "everything as one array", is never asked for). */
  page?: number;
  /** 5..1000, default 1000. */
  perPage?: number;
}

export interface PullZonePage {
  items: PullZone[];
  /** Rows without an Id (optional in the document), left out. */
  skipped?: number;
  page: number;
  totalCount?: number;
  hasNext: boolean;
}

export interface DnsZonePage {
  items: DnsZoneSummary[];
  /** Rows without an Id (optional in the document), left out. */
  skipped?: number;
  page: number;
  hasNext: boolean;
}

export interface DetailedMetricsParams {
  /** Unix ms (sent as the StartDate date-time). */
  from: number;
  /** Unix ms, after `from` (sent as EndDate). */
  to: number;
  /** MetricsOverviewResolution; default Auto. */
  resolution?: MetricsResolution;
}

/** A zone's rate limits, and how many rows were left out for lacking an id. */
export interface RateLimitList {
  rules: ZoneRateLimitMetrics[];
  skipped: number;
}

export interface EdgeClient {
  listApps(params?: ListAppsParams): Promise<AppPage>;
  listShieldZones(params?: ListShieldZonesParams): Promise<ShieldZonePage>;
  listPullZones(params?: ListPullZonesParams): Promise<PullZonePage>;
  /** GET /dnszone: the account's DNS zones (id and domain), a page at a time. */
  listDnsZones(params?: ListPullZonesParams): Promise<DnsZonePage>;
  getShieldZone(shieldZoneId: number): Promise<ShieldZone>;
  /** Today's counters and the billable requests; the API takes no time range here. */
  getMetricsOverview(shieldZoneId: number): Promise<ShieldMetricsOverview>;
  getMetricsOverviewDetailed(
    shieldZoneId: number,
    params: DetailedMetricsParams,
  ): Promise<ShieldDetailedMetrics>;
  /** POST /shield/event-logs/{id}/search: a read, so it is retried like a GET. */
  searchEventLogs(shieldZoneId: number, search: EventLogsSearch): Promise<EventLogsSearchResult>;
  getTriggeredWafRules(shieldZoneId: number): Promise<TriggeredRules>;
  /** GET /shield/metrics/rate-limits/{id}: breach counters of every rate limit of the zone. */
  /** The zone's rate limits; `skipped`: rows left out for lacking the ratelimitId the document leaves optional. */
  getRateLimits(shieldZoneId: number): Promise<RateLimitList>;
  getBotDetection(shieldZoneId: number): Promise<BotDetection>;
  getBotCategories(shieldZoneId: number): Promise<BotCategory[]>;
  setBotCategoryAction(shieldZoneId: number, category: number, action: BotCategoryAction): Promise<void>;
  getRateLimitMetrics(rateLimitId: number): Promise<RateLimitMetrics>;
  getWafAiRecommendation(shieldZoneId: number, ruleId: string): Promise<WafAiRecommendation>;
  getLatestDnsScan(zoneId: number): Promise<DnsScan>;
  triggerDnsScan(zoneId: number): Promise<DnsScanTrigger>;
  /** Restart every pod of a Magic Containers application. */
  restartApp(appId: string): Promise<void>;
  /** Purge a pull zone's cache, all of it or only the files with `cacheTag`. */
  purgePullZone(pullZoneId: number, cacheTag?: string): Promise<void>;
  /** Purge one URL (a trailing `*` purges a prefix) from the cache. */
  purgeUrl(url: string): Promise<void>;
  /** PATCH /shield/shield-zone with only the fields in `update` (the others are left as they are). */
  updateShieldZone(shieldZoneId: number, update: ShieldZoneUpdate): Promise<void>;
  /** POST /shield/waf/rules/review-triggered/{id}: ignore a triggered rule, make it log only, or disable it. */
  reviewTriggeredWafRule(shieldZoneId: number, ruleId: string, action: WafReviewAction): Promise<void>;
  /** The zone's custom access lists with their configuration (action, enabled); managed lists left out. */
  listCustomAccessLists(shieldZoneId: number): Promise<AccessListDetails[]>;
  /** One custom list with its content. */
  getCustomAccessList(shieldZoneId: number, listId: number): Promise<CustomAccessList>;
  /**
   * Create a custom list (not safe to repeat: a retried POST could make two lists). The new list's id
   * as the answer gives it (`data.id`), or null when the answer does not say.
   */
  createCustomAccessList(shieldZoneId: number, list: NewCustomAccessList): Promise<number | null>;
  /** Replace a custom list's whole content (entries separated by newlines). */
  setCustomAccessListContent(shieldZoneId: number, listId: number, content: string): Promise<void>;
  /** Set a list's action and whether it is enabled. */
  configureAccessList(shieldZoneId: number, configurationId: number, config: AccessListConfig): Promise<void>;
}

export interface NewCustomAccessList {
  name: string;
  /** AccessListType (0 IP, 1 CIDR, 2 ASN, 3 Country, 4 Organization, 5 JA4). */
  type: number;
  content: string;
}

export interface AccessListConfig {
  isEnabled: boolean;
  /** AccessListAction (0 None, 1 Allow, 2 Block, 3 Challenge, 4 Log, 5 Bypass). */
  action: number;
}

/** CustomAccessListResponse's `data.id` when there is one; any other 2xx body means no id given. */
const createdListIdSchema = ignoredBody.transform((b): number | null => {
  const d = (b as { data?: { id?: unknown } } | null | undefined)?.data;
  return typeof d?.id === "number" && Number.isSafeInteger(d.id) && d.id > 0 ? d.id : null;
});

/** Largest list content edgeops sends (the plan's entry limit is far below this). */
const MAX_ACCESS_LIST_CONTENT = 1_000_000;

export interface ForKeyOptions {
  /** Background work (alert polling): its calls wait behind the key's other calls (commands). */
  background?: boolean;
  /**
   * Aborts this client's calls, waiting or sent (a change in flight whose lease is about to end). The
   * caller aborts it when done with the client, which also lets go of it here.
   */
  signal?: AbortSignal;
}

export interface EdgeApi {
  forKey(apiKey: string, options?: ForKeyOptions): EdgeClient;
  queueStats(): QueueStats;
  /**
   * Refuse new calls, wait up to `deadlineMs` (default 5000) for calls in progress, then abort what is
   * left and close the dispatcher if this EdgeApi created it.
   */
  close(deadlineMs?: number): Promise<void>;
}

// ---- argument checks ------------------------------------------------------------------------------

function show(v: unknown): string {
  if (typeof v === "string") return JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v);
  if (typeof v === "number" || typeof v === "boolean" || v === null || v === undefined) return String(v);
  return typeof v;
}

function invalid(operation: string, message: string): EdgeApiError {
  return new EdgeApiError({ kind: "invalid_argument", operation, message });
}

function intArg(operation: string, what: string, v: unknown, min: number, max: number): number {
  if (typeof v !== "number" || !Number.isSafeInteger(v) || v < min || v > max) {
    const range = max >= Number.MAX_SAFE_INTEGER ? `of at least ${min}` : `from ${min} to ${max}`;
    throw invalid(operation, `The ${what} must be a whole number ${range} (got ${show(v)}).`);
  }
  return v;
}

const idArg = (operation: string, what: string, v: unknown) =>
  intArg(operation, what, v, 1, Number.MAX_SAFE_INTEGER);

/** The largest id a path the document types int32 can carry. */
export const MAX_INT32_ID = 2_147_483_647;

/** An id sent where the document's path parameter is int32 (shield zones, rate limits). */
const int32IdArg = (operation: string, what: string, v: unknown) =>
  intArg(operation, what, v, 1, MAX_INT32_ID);

function paramsObject(operation: string, v: unknown): Record<string, unknown> {
  if (v === undefined) return {};
  if (v === null || typeof v !== "object" || Array.isArray(v)) {
    throw invalid(operation, `The ${operation} options must be an object (got ${show(v)}).`);
  }
  return v as Record<string, unknown>;
}

const enc = (v: string | number) => encodeURIComponent(String(v));

/** The event log keeps 72 hours: a search must end within them. */
export const EVENT_LOG_RETENTION_MS = 72 * 3_600_000;

function timeArg(operation: string, what: string, v: unknown): number {
  if (typeof v !== "number" || !Number.isSafeInteger(v) || v < 0) {
    throw invalid(operation, `The ${what} must be a Unix time in milliseconds (got ${show(v)}).`);
  }
  return v;
}

function checkSearch(op: string, v: unknown): EventLogsSearch {
  const p = paramsObject(op, v);
  const from = timeArg(op, "search start", p.from);
  const to = timeArg(op, "search end", p.to);
  if (to <= from) throw invalid(op, "The event-log search must end after it starts.");
  const out: EventLogsSearch = { from, to };
  if (p.query !== undefined) {
    if (typeof p.query !== "string" || p.query.length > 500)
      throw invalid(op, `The search text must be a text of at most 500 characters (got ${show(p.query)}).`);
    out.query = p.query;
  }
  if (p.groupBy !== undefined) {
    if (
      !Array.isArray(p.groupBy) ||
      p.groupBy.some((d) => !(EVENT_LOG_DIMENSIONS as readonly unknown[]).includes(d))
    ) {
      throw invalid(op, `Event logs group by ${EVENT_LOG_DIMENSIONS.join(", ")} (got ${show(p.groupBy)}).`);
    }
    out.groupBy = [...(p.groupBy as EventLogsSearch["groupBy"] & unknown[])];
  }
  if (p.filters !== undefined) {
    if (!Array.isArray(p.filters)) throw invalid(op, "The event-log filters must be a list.");
    out.filters = p.filters.map((f) => {
      const o = paramsObject(op, f);
      if (
        !(EVENT_LOG_DIMENSIONS as readonly unknown[]).includes(o.field) ||
        !["eq", "in", "contains", "cidr", "wildcard"].includes(o.op as string) ||
        !Array.isArray(o.value) ||
        o.value.some((x) => typeof x !== "string")
      ) {
        throw invalid(
          op,
          `An event-log filter needs a known field, an operator and text values (got ${show(f)}).`,
        );
      }
      return o as unknown as NonNullable<EventLogsSearch["filters"]>[number];
    });
  }
  if (p.buckets !== undefined) out.buckets = intArg(op, "number of sparkline buckets", p.buckets, 0, 500);
  if (p.page !== undefined) out.page = intArg(op, "page index", p.page, 0, Number.MAX_SAFE_INTEGER);
  if (p.pageSize !== undefined) out.pageSize = intArg(op, "page size", p.pageSize, 1, 500);
  return out;
}

/**
 * The API's own failure inside a 2xx answer (`errorResponse` with success false and nothing else),
 * as the error its status means.
 */
function refusedInBody(
  operation: string,
  subject: string | undefined,
  e: {
    statusCode?: number | undefined;
    success?: boolean | undefined;
    message: string | null;
    errorKey: string | null;
  } | null,
): EdgeApiError | undefined {
  if (e?.success !== false) return undefined;
  const status = e.statusCode !== undefined && e.statusCode >= 400 ? e.statusCode : 400;
  return new EdgeApiError({
    kind: kindForStatus(status, e.errorKey ?? undefined),
    status,
    errorKey: e.errorKey ?? undefined,
    apiMessage: e.message ?? undefined,
    operation,
    subject,
    message: `${operation}: the Edge API answered with an error${e.errorKey ? ` (${e.errorKey})` : ""}`,
  });
}

/** The document's AcceptedResult (the 202 of GET /shield/shield-zone/{id}): no zone yet, work under way. */
function isAcceptedResult(r: Record<string, unknown>): boolean {
  return ["location", "value", "formatters", "contentTypes", "declaredType", "statusCode"].some(
    (k) => k in r,
  );
}

// ---- the API --------------------------------------------------------------------------------------

export const DEFAULT_MAX_BODY_BYTES = 10 * 1024 * 1024;

export function createEdgeApi(options: EdgeApiOptions): EdgeApi {
  const now = options.now ?? (() => Date.now());
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const ownsDispatcher = options.dispatcher === undefined;
  const dispatcher =
    options.dispatcher ??
    new Agent({ keepAliveTimeout: 10_000, keepAliveMaxTimeout: 60_000, connections: 64 });
  const queues = new KeyQueues({
    ratePerSec: options.ratePerSec,
    concurrency: options.concurrency,
    maxQueue: options.maxQueue,
    now,
    onQueueWait: options.onQueueWait,
    onQueueRejected: options.onQueueRejected,
    gate: options.sharedLimit
      ? (id, signal) => (options.sharedLimit as SharedLimit).acquireStart(id, signal)
      : undefined,
  });
  const closing = new AbortController();
  // Every waiting attempt listens for close; thousands may be waiting across keys.
  setMaxListeners(0, closing.signal);
  const logger = options.logger.child({ component: "edge" });
  let closed = false;
  // Each form of date key edgeops cannot read is logged once (not every answer that carries it).
  const unreadableShapes = new Set<string>();
  function noteUnreadableKeys(operation: string, keys: readonly string[]): void {
    const fresh = [...new Set(keys.map(dateKeyShape))].filter((k) => !unreadableShapes.has(k));
    if (fresh.length === 0 || unreadableShapes.size >= 100) return;
    for (const k of fresh) unreadableShapes.add(k);
    logger.warn(
      { op: operation, unreadable: keys.slice(0, 5), forms: fresh },
      "edge answer has date keys edgeops cannot read; shown as written",
    );
  }

  /** Aborted by close() or by `signal`; stops listening to close() once `signal` is aborted. */
  function closingOr(signal: AbortSignal): AbortSignal {
    const either = new AbortController();
    setMaxListeners(0, either.signal);
    const onClose = () => either.abort(closing.signal.reason);
    const onSignal = () => {
      closing.signal.removeEventListener("abort", onClose);
      either.abort(signal.reason);
    };
    if (closing.signal.aborted) onClose();
    else closing.signal.addEventListener("abort", onClose, { once: true });
    if (signal.aborted) onSignal();
    else signal.addEventListener("abort", onSignal, { once: true });
    return either.signal;
  }

  function forKey(apiKey: string, forKeyOptions: ForKeyOptions = {}): EdgeClient {
    const hasKey = typeof apiKey === "string" && apiKey.trim() !== "";
    const id = hasKey ? keyId(apiKey) : "none";
    const ctx: RequestContext = {
      baseUrl: options.baseUrl,
      apiKey: hasKey ? apiKey : "",
      keyId: id,
      timeoutMs: options.timeoutMs,
      maxBodyBytes: options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
      dispatcher,
      retry: options.retry ?? RETRY_DEFAULT,
      queues,
      shared: options.sharedLimit,
      logger,
      now,
      sleep,
      random: options.random ?? Math.random,
      onRequest: options.onRequest,
      closing: forKeyOptions.signal ? closingOr(forKeyOptions.signal) : closing.signal,
      background: forKeyOptions.background === true,
    };

    /** Validate arguments synchronously (so nothing is sent), then run the request. */
    function call<S extends z.ZodType, R>(
      operation: string,
      build: () => RequestSpec<S>,
      finish: (out: z.output<S>) => R,
    ): Promise<R> {
      let spec: RequestSpec<S>;
      try {
        if (!hasKey) {
          throw invalid(
            operation,
            "No Edge API key is set for this workspace: an admin can set one with /edge key.",
          );
        }
        if (closed) {
          throw new EdgeApiError({
            kind: "network",
            operation,
            message: `${operation}: the Edge API client is shut down`,
          });
        }
        spec = build();
      } catch (err) {
        return Promise.reject(err);
      }
      return execute(ctx, spec).then((out) => {
        try {
          return finish(out);
        } catch (err) {
          if (err instanceof EdgeApiError) throw err;
          throw new EdgeApiError({
            kind: "invalid_response",
            operation,
            subject: spec.subject,
            message: `${operation}: the Edge API answer could not be read`,
            cause: err,
          });
        }
      });
    }

    /** The Shield envelope's `data`, or invalid_response when a 2xx carried none. */
    function data<T>(operation: string, d: T | null, subject: string | undefined): T {
      if (d === null || d === undefined) {
        throw new EdgeApiError({
          kind: "invalid_response",
          operation,
          subject,
          message: `${operation}: the Edge API answer had no data`,
        });
      }
      return d;
    }

    return {
      listApps(params) {
        const op = "listApps";
        return call(
          op,
          () => {
            const p = paramsObject(op, params);
            const limit = p.limit === undefined ? 20 : intArg(op, "page size", p.limit, 1, 1000);
            let cursor: string | undefined;
            if (p.cursor !== undefined) {
              if (typeof p.cursor !== "string" || p.cursor.trim() === "" || p.cursor.length > 4096) {
                throw invalid(op, `The app list cursor must be a non-empty string (got ${show(p.cursor)}).`);
              }
              cursor = p.cursor;
            }
            return {
              operation: op,
              method: "GET",
              path: "/mc/apps",
              query: { limit, nextCursor: cursor },
              idempotent: true,
              schema: listApplicationsResponseSchema,
            };
          },
          (page) => page,
        );
      },

      listShieldZones(params) {
        const op = "listShieldZones";
        let page = 1;
        let perPage = 10;
        return call(
          op,
          () => {
            const p = paramsObject(op, params);
            if (p.page !== undefined) page = idArg(op, "page number", p.page);
            if (p.perPage !== undefined) perPage = intArg(op, "page size", p.perPage, 1, 1000);
            return {
              operation: op,
              method: "GET",
              path: "/shield/shield-zones",
              query: { page, perPage },
              idempotent: true,
              schema: getShieldZonesResponseSchema,
            };
          },
          (r): ShieldZonePage => {
            const pg = r.page;
            const nextPage = pg?.nextPage ?? null;
            return {
              items: r.data ?? [],
              ...(r.skipped > 0 ? { skipped: r.skipped } : {}),
              page: pg?.currentPage ?? page,
              perPage: pg?.pageSize ?? perPage,
              ...(pg?.totalCount == null ? {} : { totalCount: pg.totalCount }),
              ...(pg?.totalPages == null ? {} : { totalPages: pg.totalPages }),
              nextPage,
              hasNext: nextPage !== null,
            };
          },
        );
      },

      listPullZones(params) {
        const op = "listPullZones";
        let page = 1;
        let perPage = 1000;
        return call(
          op,
          () => {
            const p = paramsObject(op, params);
            if (p.page !== undefined) page = idArg(op, "page number", p.page);
            if (p.perPage !== undefined) perPage = intArg(op, "page size", p.perPage, 5, 1000);
            return {
              operation: op,
              method: "GET",
              path: "/pullzone",
              // Never ask for certificates: the answer would carry each hostname's private key.
              query: { page, perPage, includeCertificate: "false" },
              idempotent: true,
              schema: pullZoneListSchema,
            };
          },
          (r): PullZonePage => ({
            items: r.items,
            ...(r.skipped > 0 ? { skipped: r.skipped } : {}),
            page: r.currentPage ?? page,
            ...(r.totalItems == null ? {} : { totalCount: r.totalItems }),
            hasNext: r.hasMoreItems,
          }),
        );
      },

      listDnsZones(params) {
        const op = "listDnsZones";
        let page = 1;
        let perPage = 1000;
        return call(
          op,
          () => {
            const p = paramsObject(op, params);
            if (p.page !== undefined) page = idArg(op, "page number", p.page);
            if (p.perPage !== undefined) perPage = intArg(op, "page size", p.perPage, 5, 1000);
            return {
              operation: op,
              method: "GET",
              path: "/dnszone",
              query: { page, perPage },
              idempotent: true,
              schema: dnsZoneListSchema,
            };
          },
          (r): DnsZonePage => ({
            items: r.items,
            ...(r.skipped > 0 ? { skipped: r.skipped } : {}),
            page: r.currentPage ?? page,
            hasNext: r.hasMoreItems,
          }),
        );
      },

      getShieldZone(shieldZoneId) {
        const op = "getShieldZone";
        let subject: string | undefined;
        return call(
          op,
          () => {
            const id = int32IdArg(op, "shield zone id", shieldZoneId);
            subject = `Shield zone ${id}`;
            return {
              operation: op,
              method: "GET",
              path: `/shield/shield-zone/${enc(id)}`,
              subject,
              idempotent: true,
              schema: getShieldZoneResponseSchema,
            };
          },
          (r) => {
            if (r.data === null && isAcceptedResult(r)) {
              throw new EdgeApiError({
                kind: "not_ready",
                operation: op,
                subject,
                message: `${op}: the Edge API answered 202 Accepted (an AcceptedResult) instead of the zone`,
              });
            }
            const zone = data(op, r.data, subject);
            return zone.shieldZoneId === 0 ? { ...zone, shieldZoneId: shieldZoneId } : zone;
          },
        );
      },

      getMetricsOverview(shieldZoneId) {
        const op = "getMetricsOverview";
        let subject: string | undefined;
        return call(
          op,
          () => {
            const id = int32IdArg(op, "shield zone id", shieldZoneId);
            subject = `Shield zone ${id}`;
            return {
              operation: op,
              method: "GET",
              path: `/shield/metrics/overview/${enc(id)}`,
              subject,
              idempotent: true,
              schema: getShieldZoneMetricsOverviewResponseSchema,
            };
          },
          (r) => data(op, r.data, subject),
        );
      },

      getMetricsOverviewDetailed(shieldZoneId, params) {
        const op = "getMetricsOverviewDetailed";
        let subject: string | undefined;
        return call(
          op,
          () => {
            const id = int32IdArg(op, "shield zone id", shieldZoneId);
            const p = paramsObject(op, params);
            const from = timeArg(op, "start", p.from);
            const to = timeArg(op, "end", p.to);
            if (to <= from) throw invalid(op, "The metrics range must end after it starts.");
            const resolution =
              p.resolution === undefined
                ? METRICS_RESOLUTION.auto
                : intArg(op, "metrics resolution (0 Auto … 6 Monthly)", p.resolution, 0, 6);
            subject = `Shield zone ${id}`;
            return {
              operation: op,
              method: "GET",
              path: `/shield/metrics/overview/${enc(id)}/detailed`,
              query: {
                StartDate: new Date(from).toISOString(),
                EndDate: new Date(to).toISOString(),
                Resolution: resolution,
              },
              subject,
              idempotent: true,
              schema: shieldOverviewMetricsResponseSchema,
            };
          },
          (r) => {
            const d = data(op, r.data, subject);
            noteUnreadableKeys(op, unreadableMetricKeys(d));
            return d;
          },
        );
      },

      searchEventLogs(shieldZoneId, search) {
        const op = "searchEventLogs";
        let subject: string | undefined;
        return call(
          op,
          () => {
            const id = int32IdArg(op, "shield zone id", shieldZoneId);
            const body = checkSearch(op, search);
            subject = `Shield zone ${id}`;
            return {
              operation: op,
              method: "POST",
              path: `/shield/event-logs/${enc(id)}/search`,
              body,
              subject,
              // A search changes nothing: safe to repeat.
              idempotent: true,
              schema: eventLogsSearchResponseSchema,
            };
          },
          ({ errorResponse, ...result }) => {
            const refused =
              result.groups.length === 0 && result.rowCount === 0
                ? refusedInBody(op, subject, errorResponse)
                : undefined;
            if (refused) throw refused;
            return result;
          },
        );
      },

      getTriggeredWafRules(shieldZoneId) {
        const op = "getTriggeredWafRules";
        let subject: string | undefined;
        return call(
          op,
          () => {
            const id = idArg(op, "shield zone id", shieldZoneId);
            subject = `Shield zone ${id}`;
            return {
              operation: op,
              method: "GET",
              path: `/shield/waf/rules/review-triggered/${enc(id)}`,
              subject,
              idempotent: true,
              schema: getTriggeredRulesResponseSchema,
            };
          },
          (r): TriggeredRules => {
            const refused = r.rules === null ? refusedInBody(op, subject, r.errorResponse) : undefined;
            if (refused) throw refused;
            const rules = r.rules ?? [];
            return { rules, totalTriggeredRules: r.totalTriggeredRules ?? rules.length };
          },
        );
      },

      getRateLimits(shieldZoneId) {
        const op = "getRateLimits";
        return call(
          op,
          () => {
            const id = int32IdArg(op, "shield zone id", shieldZoneId);
            return {
              operation: op,
              method: "GET",
              path: `/shield/metrics/rate-limits/${enc(id)}`,
              subject: `Shield zone ${id}`,
              idempotent: true,
              schema: getShieldZoneRateLimitMetricsResponseSchema,
            };
          },
          (r) => ({ rules: r.data ?? [], skipped: r.skipped }),
        );
      },

      getBotDetection(shieldZoneId) {
        const op = "getBotDetection";
        let subject: string | undefined;
        return call(
          op,
          () => {
            const id = int32IdArg(op, "shield zone id", shieldZoneId);
            subject = `Shield zone ${id}`;
            return {
              operation: op,
              method: "GET",
              path: `/shield/shield-zone/${enc(id)}/bot-detection`,
              subject,
              idempotent: true,
              schema: botDetectionResponseSchema,
            };
          },
          (r) => data(op, r.data, subject),
        );
      },

      getBotCategories(shieldZoneId) {
        const op = "getBotCategories";
        return call(
          op,
          () => {
            const id = int32IdArg(op, "shield zone id", shieldZoneId);
            return {
              operation: op,
              method: "GET",
              path: `/shield/shield-zone/${enc(id)}/bot-categorization`,
              subject: `Shield zone ${id}`,
              idempotent: true,
              schema: botCategorizationListResponseSchema,
            };
          },
          (r) => r.categories ?? [],
        );
      },

      setBotCategoryAction(shieldZoneId, category, action) {
        const op = "setBotCategoryAction";
        return call(
          op,
          () => {
            const id = int32IdArg(op, "shield zone id", shieldZoneId);
            const cat = intArg(op, "bot category (255 System cannot be changed)", category, 0, 7);
            const act = intArg(op, "bot category action (0 None, 1 Block, 2 Allow)", action, 0, 2);
            return {
              operation: op,
              method: "PUT",
              path: `/shield/shield-zone/${enc(id)}/bot-categorization/categories/${enc(cat)}`,
              body: { action: act },
              subject: `Shield zone ${id}`,
              idempotent: true,
              statusIsTheAnswer: true,
              schema: updateBotCategoryResponseSchema.optional(),
            };
          },
          () => undefined,
        );
      },

      getRateLimitMetrics(rateLimitId) {
        const op = "getRateLimitMetrics";
        let subject: string | undefined;
        return call(
          op,
          () => {
            const id = int32IdArg(op, "rate limit id", rateLimitId);
            subject = `Rate limit ${id}`;
            return {
              operation: op,
              method: "GET",
              path: `/shield/metrics/rate-limit/${enc(id)}`,
              subject,
              idempotent: true,
              schema: rateLimitMetricsResponseSchema,
            };
          },
          (r) => {
            const m = data(op, r.data, subject);
            noteUnreadableKeys(op, m.unreadableDays);
            return m;
          },
        );
      },

      getWafAiRecommendation(shieldZoneId, ruleId) {
        const op = "getWafAiRecommendation";
        return call(
          op,
          () => {
            const id = idArg(op, "shield zone id", shieldZoneId);
            if (typeof ruleId !== "string" || ruleId.trim() === "" || ruleId.length > 256) {
              throw invalid(op, `The WAF rule id must be a non-empty text (got ${show(ruleId)}).`);
            }
            const rule = ruleId.trim();
            return {
              operation: op,
              method: "GET",
              path: `/shield/waf/rules/review-triggered/ai-recommendation/${enc(id)}/${enc(rule)}`,
              subject: `WAF rule ${rule} in shield zone ${id}`,
              idempotent: true,
              schema: wafAiRecommendationSchema,
            };
          },
          (r) => r,
        );
      },

      getLatestDnsScan(zoneId) {
        const op = "getLatestDnsScan";
        return call(
          op,
          () => {
            const id = idArg(op, "DNS zone id", zoneId);
            return {
              operation: op,
              method: "GET",
              path: `/dnszone/${enc(id)}/records/scan`,
              subject: `DNS zone ${id}`,
              idempotent: true,
              schema: dnsScanSchema,
            };
          },
          (r) => r,
        );
      },

      triggerDnsScan(zoneId) {
        const op = "triggerDnsScan";
        return call(
          op,
          () => {
            const id = idArg(op, "DNS zone id", zoneId);
            return {
              operation: op,
              method: "POST",
              path: "/dnszone/records/scan",
              body: { ZoneId: id },
              subject: `DNS zone ${id}`,
              // Starting a scan twice is not harmless: no retry after 5xx / timeout / network errors.
              idempotent: false,
              schema: dnsScanTriggerSchema,
            };
          },
          (r) => r,
        );
      },

      restartApp(appId) {
        const op = "restartApp";
        return call(
          op,
          () => {
            if (typeof appId !== "string" || !/^[\w-]{1,100}$/.test(appId))
              throw invalid(op, `The application id must be letters, digits, - or _ (got ${show(appId)}).`);
            return {
              operation: op,
              method: "POST",
              path: `/mc/apps/${enc(appId)}/restart`,
              subject: `Application ${appId}`,
              // A second restart is not harmless: no retry after 5xx / timeout / network errors.
              idempotent: false,
              statusIsTheAnswer: true,
              schema: ignoredBody,
            };
          },
          () => undefined,
        );
      },

      purgePullZone(pullZoneId, cacheTag) {
        const op = "purgePullZone";
        return call(
          op,
          () => {
            const id = idArg(op, "pull zone id", pullZoneId);
            if (
              cacheTag !== undefined &&
              (typeof cacheTag !== "string" || !/^[\w.:/-]{1,200}$/.test(cacheTag))
            )
              throw invalid(
                op,
                `A cache tag is up to 200 letters, digits and . : / - _ (got ${show(cacheTag)}).`,
              );
            return {
              operation: op,
              method: "POST",
              path: `/pullzone/${enc(id)}/purgeCache`,
              ...(cacheTag !== undefined ? { body: { CacheTag: cacheTag } } : {}),
              subject: `Pull zone ${id}`,
              // Purging twice is harmless.
              idempotent: true,
              statusIsTheAnswer: true,
              schema: ignoredBody,
            };
          },
          () => undefined,
        );
      },

      purgeUrl(url) {
        const op = "purgeUrl";
        return call(
          op,
          () => {
            let parsed: URL | undefined;
            try {
              parsed = typeof url === "string" && url.length <= 2000 ? new URL(url) : undefined;
            } catch {
              parsed = undefined;
            }
            if (!parsed || (parsed.protocol !== "https:" && parsed.protocol !== "http:"))
              throw invalid(op, `The URL to purge must start with https:// or http:// (got ${show(url)}).`);
            return {
              operation: op,
              method: "POST",
              path: "/purge",
              query: { url: url as string },
              subject: `URL ${parsed.host}`,
              idempotent: true,
              statusIsTheAnswer: true,
              schema: ignoredBody,
            };
          },
          () => undefined,
        );
      },

      // ---- shield zone settings and WAF rule reviews (issue 14) ----

      updateShieldZone(shieldZoneId, update) {
        const op = "updateShieldZone";
        return call(
          op,
          () => {
            const id = idArg(op, "shield zone id", shieldZoneId);
            const u = paramsObject(op, update);
            const shieldZone: Record<string, unknown> = {};
            if (u.dDoSShieldSensitivity !== undefined)
              shieldZone.dDoSShieldSensitivity = intArg(
                op,
                "DDoS sensitivity (0 Off, 1 Low, 2 Medium, 3 High, 4 Challenge)",
                u.dDoSShieldSensitivity,
                0,
                4,
              );
            if (u.wafExecutionMode !== undefined)
              shieldZone.wafExecutionMode = intArg(
                op,
                "WAF execution mode (0 Log, 1 Block)",
                u.wafExecutionMode,
                0,
                1,
              );
            if (u.learningMode !== undefined) {
              if (typeof u.learningMode !== "boolean")
                throw invalid(op, `Learning mode is on or off (got ${show(u.learningMode)}).`);
              shieldZone.learningMode = u.learningMode;
            }
            const unknown = Object.keys(u).filter(
              (k) => !["dDoSShieldSensitivity", "wafExecutionMode", "learningMode"].includes(k),
            );
            if (unknown.length > 0 || Object.keys(shieldZone).length === 0)
              throw invalid(
                op,
                "A shield zone update names dDoSShieldSensitivity, wafExecutionMode or learningMode.",
              );
            return {
              operation: op,
              method: "PATCH",
              path: "/shield/shield-zone",
              body: { shieldZoneId: id, shieldZone },
              subject: `Shield zone ${id}`,
              // Setting a field to a value twice leaves the same value.
              idempotent: true,
              statusIsTheAnswer: true,
              schema: ignoredBody,
            };
          },
          () => undefined,
        );
      },

      reviewTriggeredWafRule(shieldZoneId, ruleId, action) {
        const op = "reviewTriggeredWafRule";
        return call(
          op,
          () => {
            const id = idArg(op, "shield zone id", shieldZoneId);
            if (typeof ruleId !== "string" || !/^[\w.:-]{1,100}$/.test(ruleId))
              throw invalid(op, `The WAF rule id must be letters, digits, . : - or _ (got ${show(ruleId)}).`);
            const act = intArg(op, "review action (0 Ignore, 1 Log only, 2 Disable rule)", action, 0, 2);
            return {
              operation: op,
              method: "POST",
              path: `/shield/waf/rules/review-triggered/${enc(id)}`,
              body: { ruleId, action: act },
              subject: `WAF rule ${ruleId} in shield zone ${id}`,
              // The same review twice leaves the rule as the first one did.
              idempotent: true,
              statusIsTheAnswer: true,
              schema: ignoredBody,
            };
          },
          () => undefined,
        );
      },

      listCustomAccessLists(shieldZoneId) {
        const op = "listCustomAccessLists";
        let subject: string | undefined;
        return call(
          op,
          () => {
            const id = int32IdArg(op, "shield zone id", shieldZoneId);
            subject = `Shield zone ${id}`;
            return {
              operation: op,
              method: "GET",
              path: `/shield/shield-zone/${enc(id)}/access-lists`,
              subject,
              idempotent: true,
              schema: accessListsResponseSchema,
            };
          },
          (r) => {
            const refused = r.customLists === null ? refusedInBody(op, subject, r.error) : undefined;
            if (refused) throw refused;
            return r.customLists ?? [];
          },
        );
      },

      getCustomAccessList(shieldZoneId, listId) {
        const op = "getCustomAccessList";
        let subject: string | undefined;
        return call(
          op,
          () => {
            const id = int32IdArg(op, "shield zone id", shieldZoneId);
            const list = idArg(op, "access list id", listId);
            subject = `Access list ${list} of shield zone ${id}`;
            return {
              operation: op,
              method: "GET",
              path: `/shield/shield-zone/${enc(id)}/access-lists/${enc(list)}`,
              subject,
              idempotent: true,
              schema: customAccessListResponseSchema,
            };
          },
          (r) => {
            const refused = r.data === null ? refusedInBody(op, subject, r.error) : undefined;
            if (refused) throw refused;
            return data(op, r.data, subject);
          },
        );
      },

      createCustomAccessList(shieldZoneId, list) {
        const op = "createCustomAccessList";
        return call(
          op,
          () => {
            const id = int32IdArg(op, "shield zone id", shieldZoneId);
            const l = paramsObject(op, list);
            if (typeof l.name !== "string" || l.name.trim() === "" || l.name.length > 100)
              throw invalid(op, `The list name must be a text of 1 to 100 characters (got ${show(l.name)}).`);
            const type = intArg(op, "access list type", l.type, 0, 5);
            if (typeof l.content !== "string" || l.content.length > MAX_ACCESS_LIST_CONTENT)
              throw invalid(op, `The list content must be a text (got ${show(l.content)}).`);
            return {
              operation: op,
              method: "POST",
              path: `/shield/shield-zone/${enc(id)}/access-lists`,
              body: { name: l.name, type, content: l.content },
              subject: `Shield zone ${id}`,
              // Sent twice, it would make two lists: no retry after 5xx / timeout / network errors.
              idempotent: false,
              allowEmptyBody: true,
              schema: createdListIdSchema,
            };
          },
          (createdId) => createdId ?? null,
        );
      },

      setCustomAccessListContent(shieldZoneId, listId, content) {
        const op = "setCustomAccessListContent";
        return call(
          op,
          () => {
            const id = int32IdArg(op, "shield zone id", shieldZoneId);
            const list = idArg(op, "access list id", listId);
            if (typeof content !== "string" || content.length > MAX_ACCESS_LIST_CONTENT)
              throw invalid(op, `The list content must be a text (got ${show(content)}).`);
            return {
              operation: op,
              method: "PATCH",
              path: `/shield/shield-zone/${enc(id)}/access-lists/${enc(list)}`,
              body: { content },
              subject: `Access list ${list} of shield zone ${id}`,
              // Not retried here: the content was computed from a read that may be stale by then, so a
              // retry must read the list again and recompute (the caller's read-modify-write loop).
              idempotent: false,
              statusIsTheAnswer: true,
              schema: ignoredBody,
            };
          },
          () => undefined,
        );
      },

      configureAccessList(shieldZoneId, configurationId, config) {
        const op = "configureAccessList";
        return call(
          op,
          () => {
            const id = int32IdArg(op, "shield zone id", shieldZoneId);
            const conf = idArg(op, "access list configuration id", configurationId);
            const c = paramsObject(op, config);
            if (typeof c.isEnabled !== "boolean")
              throw invalid(op, `isEnabled must be true or false (got ${show(c.isEnabled)}).`);
            const action = intArg(op, "access list action", c.action, 0, 5);
            return {
              operation: op,
              method: "PATCH",
              path: `/shield/shield-zone/${enc(id)}/access-lists/configurations/${enc(conf)}`,
              body: { isEnabled: c.isEnabled, action },
              subject: `Access list configuration ${conf} of shield zone ${id}`,
              idempotent: true,
              statusIsTheAnswer: true,
              schema: ignoredBody,
            };
          },
          () => undefined,
        );
      },
    };
  }

  return {
    forKey,
    queueStats: () => queues.stats(),
    async close(deadlineMs = 5000) {
      if (closed) return;
      closed = true;
      await withDeadline(queues.whenIdle(), deadlineMs, () => undefined);
      closing.abort(new Error("edge client closed"));
      queues.close();
      if (ownsDispatcher) await dispatcher.destroy().catch(() => undefined);
    },
  };
}

// Re-exported so callers can name them without reaching into schemas/.
export type {
  AccessListDetails,
  AppPage,
  BotCategory,
  BotDetection,
  CustomAccessList,
  DnsScan,
  DnsScanTrigger,
  EventLogsSearch,
  EventLogsSearchResult,
  PullZone,
  RateLimitMetrics,
  ShieldDetailedMetrics,
  ShieldMetricsOverview,
  ShieldZone,
  ShieldZonePage,
  TriggeredRules,
  WafAiRecommendation,
  ZoneRateLimitMetrics,
};
