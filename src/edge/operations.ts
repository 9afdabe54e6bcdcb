import { z } from "zod";
import type { HttpMethod, RequestSpec } from "./request.js";
import * as arg from "./schemas/arguments.js";
import { ignoredBody } from "./schemas/common.js";
import {
  dnsScanSchema,
  dnsScanTriggerSchema,
  dnsZoneListSchema,
  pullZoneListSchema,
} from "./schemas/core.js";
import { listApplicationsResponseSchema } from "./schemas/mc.js";
import {
  accessListsResponseSchema,
  botCategorizationListResponseSchema,
  botDetectionResponseSchema,
  createdListIdSchema,
  customAccessListResponseSchema,
  eventLogsSearchResponseSchema,
  getRateLimitRulesResponseSchema,
  getShieldZoneMetricsOverviewResponseSchema,
  getShieldZoneRateLimitMetricsResponseSchema,
  getShieldZoneResponseSchema,
  getShieldZonesResponseSchema,
  getTriggeredRulesResponseSchema,
  type RateLimitRulePage,
  rateLimitMetricsResponseSchema,
  rateLimitRuleAnswerSchema,
  shieldOverviewMetricsResponseSchema,
  unreadableMetricKeys,
  wafAiRecommendationSchema,
} from "./schemas/shield.js";

/**
 * The Edge API as a table: one row per operation (its checked arguments, method, path, query, body,
 * answer schema, whether it is safe to repeat), read by the one generic caller in client.ts. A row's
 * `answer` turns the validated body into what the method returns, when that is more than the body.
 * The argument checks are in schemas/arguments.ts, the answer schemas beside them.
 */

/** What `answer` may use besides the body: the call's subject, the envelope's data, date-key notes. */
export interface Answering {
  /** The Shield envelope's `data`; a 2xx without it is invalid_response. */
  data<T>(d: T | null | undefined): T;
  /** Log date keys edgeops could not read (once per form). */
  noteUnreadableKeys(keys: readonly string[]): void;
  /** The API accepted the request (HTTP 202) but has not made the thing yet: not_ready. */
  notReady(): never;
}

// biome-ignore lint/suspicious/noExplicitAny: the generic caller reads rows of every argument and answer shape
export interface Operation<In = any, Out = any, R = any> {
  /**
   * The method's positional arguments, in order, as the keys of an object schema that checks them before
   * any request; its first message is the invalid_argument sentence.
   */
  input: z.ZodType<In> & { shape: object };
  method: HttpMethod;
  /** `{name}` is filled, URL-encoded, from the checked input. */
  path: string;
  query?: (i: In) => RequestSpec<z.ZodType>["query"];
  body?: (i: In) => unknown;
  /** "Shield zone 42": what the call is about, for not-found sentences. */
  subject?: (i: In) => string;
  /** Safe to repeat after a 5xx / timeout / network error; default: only a GET. */
  idempotent?: boolean;
  schema: z.ZodType<Out>;
  statusIsTheAnswer?: boolean;
  allowEmptyBody?: boolean;
  /** How a refusal reads here: an error envelope in a 2xx refuses when this says the answer is absent. */
  answerAbsent?: RequestSpec<z.ZodType>["answerAbsent"];
  answer?: (out: Out, i: In, a: Answering) => R;
}

/** One argument of a method: its name (rows read it; `{name}` in a path) and its check. */
type Arg = readonly [name: string, check: z.ZodType];
type Named<A extends readonly Arg[]> = { [E in A[number] as E[0]]: z.output<E[1]> };

/** A method's arguments in order: checked as one object over their names, and kept for the client's types. */
export type Args<A extends readonly Arg[] = readonly Arg[]> = z.ZodType<Named<A>> & {
  shape: object;
  args: A;
};
const args = <const A extends readonly Arg[]>(...list: A): Args<A> =>
  Object.assign(z.object(Object.fromEntries(list)), { args: list }) as unknown as Args<A>;

/** A row; a write whose status is its answer (`statusIsTheAnswer`) answers nothing. */
const op = <A extends readonly Arg[], Out, R = Out, StatusOnly extends boolean = false>(
  row: Operation<Named<A>, Out, R> & { input: Args<A>; statusIsTheAnswer?: StatusOnly },
): Operation<Named<A>, Out, StatusOnly extends true ? void : R> & { input: Args<A> } => row as never;

// ---- what rows share -------------------------------------------------------------------------------

const zoneId = ["shieldZoneId", arg.int32Id("shield zone id")] as const;
/** Where the document types the shield zone id int64 (WAF reviews, rate-limit rules, the zone PATCH). */
const int64ZoneId = ["shieldZoneId", arg.id("shield zone id")] as const;
const dnsZoneId = ["zoneId", arg.id("DNS zone id")] as const;
const listId = ["listId", arg.id("access list id")] as const;
const zone = args(zoneId);
const zoneSubject = (i: { shieldZoneId: number }) => `Shield zone ${i.shieldZoneId}`;
const dnsZoneSubject = (i: { zoneId: number }) => `DNS zone ${i.zoneId}`;
const ruleSubject = (i: { shieldZoneId: number; ruleId: string }) =>
  `WAF rule ${i.ruleId} in shield zone ${i.shieldZoneId}`;
const listSubject = (i: { shieldZoneId: number; listId: number }) =>
  `Access list ${i.listId} of shield zone ${i.shieldZoneId}`;
/** A GET of one shield zone's resource. */
const zoneRead = (path: string) => ({ input: zone, method: "GET", path, subject: zoneSubject }) as const;
/** A write whose 2xx status is its answer (unless the body carries a refusal). */
const write = (method: HttpMethod, path: string) =>
  ({ method, path, statusIsTheAnswer: true, schema: ignoredBody }) as const;
/** The Shield envelope's `data` as the answer. */
const envelopeData = <T>(r: { data: T | null }, _i: unknown, a: Answering) => a.data(r.data);
const pageQuery = ({ params }: { params: { page: number; perPage: number } }) => ({
  page: params.page,
  perPage: params.perPage,
});
const absent = (field: string) => (b: Record<string, unknown>) => b[field] === null || b[field] === undefined;
const empty = (v: unknown) => !Array.isArray(v) || v.length === 0;

// ---- the table -------------------------------------------------------------------------------------

export const OPERATIONS = {
  listApps: op({
    input: args(["params", arg.listAppsParams]),
    method: "GET",
    path: "/mc/apps",
    query: ({ params }) => ({ limit: params.limit, nextCursor: params.cursor }),
    schema: listApplicationsResponseSchema,
  }),
  listShieldZones: op({
    input: args(["params", arg.shieldZonePages]),
    method: "GET",
    path: "/shield/shield-zones",
    query: pageQuery,
    schema: getShieldZonesResponseSchema,
    answer: (r, { params }) => ({
      ...shieldPage(r, params.page),
      perPage: r.page?.pageSize ?? params.perPage,
      ...(r.page?.totalCount == null ? {} : { totalCount: r.page.totalCount }),
      ...(r.page?.totalPages == null ? {} : { totalPages: r.page.totalPages }),
    }),
  }),
  listPullZones: op({
    input: args(["params", arg.corePages]),
    method: "GET",
    path: "/pullzone",
    // Never ask for certificates: the answer would carry each hostname's private key.
    query: (i) => ({ ...pageQuery(i), includeCertificate: "false" }),
    schema: pullZoneListSchema,
    answer: (r, { params }) => ({
      ...corePage(r, params.page),
      ...(r.totalItems == null ? {} : { totalCount: r.totalItems }),
    }),
  }),
  /** GET /dnszone: the account's DNS zones (id and domain), a page at a time. */
  listDnsZones: op({
    input: args(["params", arg.corePages]),
    method: "GET",
    path: "/dnszone",
    query: pageQuery,
    schema: dnsZoneListSchema,
    answer: (r, { params }) => corePage(r, params.page),
  }),
  getShieldZone: op({
    ...zoneRead("/shield/shield-zone/{shieldZoneId}"),
    schema: getShieldZoneResponseSchema,
    answer: (r, i, a) => {
      if (r.data === null && isAcceptedResult(r)) a.notReady();
      const found = a.data(r.data);
      return found.shieldZoneId === 0 ? { ...found, shieldZoneId: i.shieldZoneId } : found;
    },
  }),
  /** Today's counters and the billable requests; the API takes no time range here. */
  getMetricsOverview: op({
    ...zoneRead("/shield/metrics/overview/{shieldZoneId}"),
    schema: getShieldZoneMetricsOverviewResponseSchema,
    answer: envelopeData,
  }),
  getMetricsOverviewDetailed: op({
    input: args(zoneId, ["params", arg.metricsRange]),
    method: "GET",
    path: "/shield/metrics/overview/{shieldZoneId}/detailed",
    query: ({ params: p }) => ({
      StartDate: new Date(p.from).toISOString(),
      EndDate: new Date(p.to).toISOString(),
      Resolution: p.resolution,
    }),
    subject: zoneSubject,
    schema: shieldOverviewMetricsResponseSchema,
    answer: (r, _i, a) => {
      const d = a.data(r.data);
      a.noteUnreadableKeys(unreadableMetricKeys(d));
      return d;
    },
  }),
  /** POST /shield/event-logs/{id}/search: a search changes nothing, so it is retried like a GET. */
  searchEventLogs: op({
    input: args(zoneId, ["search", arg.eventLogSearch]),
    method: "POST",
    path: "/shield/event-logs/{shieldZoneId}/search",
    body: (i) => i.search,
    subject: zoneSubject,
    idempotent: true,
    schema: eventLogsSearchResponseSchema,
    answerAbsent: (b) => empty(b.groups) && empty(b.rows),
    answer: ({ errorResponse: _, ...result }) => result,
  }),
  getTriggeredWafRules: op({
    input: args(int64ZoneId),
    method: "GET",
    path: "/shield/waf/rules/review-triggered/{shieldZoneId}",
    subject: zoneSubject,
    schema: getTriggeredRulesResponseSchema,
    answerAbsent: absent("triggeredRules"),
    answer: (r) => {
      const rules = r.rules ?? [];
      return { rules, totalTriggeredRules: r.totalTriggeredRules ?? rules.length };
    },
  }),
  /**
   * GET /shield/metrics/rate-limits/{id}: breach counters of every rate limit of the zone; `skipped`: rows
   * left out for lacking the ratelimitId the document leaves optional.
   */
  getRateLimits: op({
    ...zoneRead("/shield/metrics/rate-limits/{shieldZoneId}"),
    schema: getShieldZoneRateLimitMetricsResponseSchema,
    answer: (r) => ({ rules: r.data ?? [], skipped: r.skipped }),
  }),
  /** GET /shield/rate-limits/{id}: the zone's rate-limit rules with their names, a page at a time. */
  listRateLimitRules: op({
    input: args(int64ZoneId, ["params", arg.shieldZonePages]),
    method: "GET",
    path: "/shield/rate-limits/{shieldZoneId}",
    query: pageQuery,
    subject: zoneSubject,
    schema: getRateLimitRulesResponseSchema,
    answer: (r, { params }): RateLimitRulePage => {
      const read = shieldPage(r, params.page);
      const { currentPage, totalPages } = r.page ?? {};
      if (r.page === null) return { ...read, hasNext: null };
      // A page that names no next page but counts more pages than this one is not the last.
      const more = read.hasNext || (currentPage != null && totalPages != null && currentPage < totalPages);
      return { ...read, hasNext: more };
    },
  }),
  getBotDetection: op({
    ...zoneRead("/shield/shield-zone/{shieldZoneId}/bot-detection"),
    schema: botDetectionResponseSchema,
    answer: envelopeData,
  }),
  getBotCategories: op({
    ...zoneRead("/shield/shield-zone/{shieldZoneId}/bot-categorization"),
    schema: botCategorizationListResponseSchema,
    answer: (r) => r.categories ?? [],
  }),
  setBotCategoryAction: op({
    input: args(zoneId, ["category", arg.botCategory], ["action", arg.botCategoryAction]),
    ...write("PUT", "/shield/shield-zone/{shieldZoneId}/bot-categorization/categories/{category}"),
    body: (i) => ({ action: i.action }),
    subject: zoneSubject,
    idempotent: true,
  }),
  getRateLimitMetrics: op({
    input: args(["rateLimitId", arg.int32Id("rate limit id")]),
    method: "GET",
    path: "/shield/metrics/rate-limit/{rateLimitId}",
    subject: (i) => `Rate limit ${i.rateLimitId}`,
    schema: rateLimitMetricsResponseSchema,
    answer: (r, _i, a) => {
      const m = a.data(r.data);
      a.noteUnreadableKeys(m.unreadableDays);
      return m;
    },
  }),
  /** GET /shield/rate-limit/{id}: one rate-limit rule's name and zone. */
  getRateLimitRule: op({
    input: args(["rateLimitId", arg.id("rate limit id")]),
    method: "GET",
    path: "/shield/rate-limit/{rateLimitId}",
    subject: (i) => `Rate limit ${i.rateLimitId}`,
    schema: rateLimitRuleAnswerSchema,
    answer: (r, _i, a) => {
      if (r.id == null && isAcceptedResult(r)) a.notReady();
      return { id: a.data(r.id), shieldZoneId: r.shieldZoneId ?? null, name: r.ruleName ?? null };
    },
  }),
  getWafAiRecommendation: op({
    input: args(int64ZoneId, ["ruleId", arg.recommendationRuleId]),
    method: "GET",
    path: "/shield/waf/rules/review-triggered/ai-recommendation/{shieldZoneId}/{ruleId}",
    subject: ruleSubject,
    schema: wafAiRecommendationSchema,
  }),
  getLatestDnsScan: op({
    input: args(dnsZoneId),
    method: "GET",
    path: "/dnszone/{zoneId}/records/scan",
    subject: dnsZoneSubject,
    schema: dnsScanSchema,
  }),
  triggerDnsScan: op({
    input: args(dnsZoneId),
    method: "POST",
    path: "/dnszone/records/scan",
    body: (i) => ({ ZoneId: i.zoneId }),
    subject: dnsZoneSubject,
    // Starting a scan twice is not harmless: no retry after 5xx / timeout / network errors.
    idempotent: false,
    schema: dnsScanTriggerSchema,
  }),
  /** Restart every pod of a Magic Containers application. */
  restartApp: op({
    input: args(["appId", arg.appId]),
    ...write("POST", "/mc/apps/{appId}/restart"),
    subject: (i) => `Application ${i.appId}`,
    // A second restart is not harmless: no retry after 5xx / timeout / network errors.
    idempotent: false,
  }),
  /** Purge a pull zone's cache, all of it or only the files with `cacheTag`. */
  purgePullZone: op({
    input: args(["pullZoneId", arg.id("pull zone id")], ["cacheTag", arg.cacheTag.optional()]),
    ...write("POST", "/pullzone/{pullZoneId}/purgeCache"),
    body: (i) => (i.cacheTag === undefined ? undefined : { CacheTag: i.cacheTag }),
    subject: (i) => `Pull zone ${i.pullZoneId}`,
    // Purging twice is harmless.
    idempotent: true,
  }),
  /** Purge one URL (a trailing `*` purges a prefix) from the cache. */
  purgeUrl: op({
    input: args(["url", arg.purgeUrl]),
    ...write("POST", "/purge"),
    query: (i) => ({ url: i.url }),
    subject: (i) => `URL ${arg.webUrl(i.url)?.host}`,
    idempotent: true,
  }),
  /**
   * PATCH /shield/shield-zone with only the fields in `update`; the document does not say whether the others
   * stay as they are, so the caller reads the zone back.
   */
  updateShieldZone: op({
    input: args(int64ZoneId, ["update", arg.shieldZoneUpdate]),
    ...write("PATCH", "/shield/shield-zone"),
    body: (i) => ({ shieldZoneId: i.shieldZoneId, shieldZone: i.update }),
    subject: zoneSubject,
    // Setting a field to a value twice leaves the same value.
    idempotent: true,
  }),
  /** POST /shield/waf/rules/review-triggered/{id}: ignore a triggered rule, make it log only, or disable it. */
  reviewTriggeredWafRule: op({
    input: args(int64ZoneId, ["ruleId", arg.reviewRuleId], ["action", arg.wafReviewAction]),
    ...write("POST", "/shield/waf/rules/review-triggered/{shieldZoneId}"),
    body: (i) => ({ ruleId: i.ruleId, action: i.action }),
    subject: ruleSubject,
    // The same review twice leaves the rule as the first one did.
    idempotent: true,
  }),
  /** The zone's custom access lists with their configuration (action, enabled); managed lists left out. */
  listCustomAccessLists: op({
    ...zoneRead("/shield/shield-zone/{shieldZoneId}/access-lists"),
    schema: accessListsResponseSchema,
    answerAbsent: absent("customLists"),
    answer: (r) => r.customLists ?? [],
  }),
  /** One custom list with its content. */
  getCustomAccessList: op({
    input: args(zoneId, listId),
    method: "GET",
    path: "/shield/shield-zone/{shieldZoneId}/access-lists/{listId}",
    subject: listSubject,
    schema: customAccessListResponseSchema,
    answerAbsent: absent("data"),
    answer: envelopeData,
  }),
  /** Create a custom list; the answer is the new list's id (`data.id`), or null when the API does not say. */
  createCustomAccessList: op({
    input: args(zoneId, ["list", arg.newAccessList]),
    method: "POST",
    path: "/shield/shield-zone/{shieldZoneId}/access-lists",
    body: (i) => i.list,
    subject: zoneSubject,
    // Sent twice, it would make two lists: no retry after 5xx / timeout / network errors.
    idempotent: false,
    allowEmptyBody: true,
    schema: createdListIdSchema,
    answer: (createdId) => createdId ?? null,
  }),
  /** Replace a custom list's whole content (entries separated by newlines). */
  setCustomAccessListContent: op({
    input: args(zoneId, listId, ["content", arg.listContent]),
    ...write("PATCH", "/shield/shield-zone/{shieldZoneId}/access-lists/{listId}"),
    body: (i) => ({ content: i.content }),
    subject: listSubject,
    // Not retried here: the content was computed from a read that may be stale by then, so a retry
    // must read the list again and recompute (the caller's read-modify-write loop).
    idempotent: false,
  }),
  /** Set a list's action and whether it is enabled. */
  configureAccessList: op({
    input: args(
      zoneId,
      ["configurationId", arg.id("access list configuration id")],
      ["config", arg.accessListConfig],
    ),
    ...write("PATCH", "/shield/shield-zone/{shieldZoneId}/access-lists/configurations/{configurationId}"),
    body: (i) => i.config,
    subject: (i) => `Access list configuration ${i.configurationId} of shield zone ${i.shieldZoneId}`,
    idempotent: true,
  }),
};

export type OperationName = keyof typeof OPERATIONS;

// ---- the client's methods, read from the rows ---------------------------------------------------------

type Inputs<A extends readonly Arg[]> = {
  -readonly [K in keyof A]: A[K] extends readonly [string, infer S extends z.ZodType] ? z.input<S> : never;
};
/** True when every argument from here on may be left out. */
type AllOptional<T extends readonly unknown[]> = T extends readonly [infer H, ...infer R]
  ? undefined extends H
    ? AllOptional<R>
    : false
  : true;
/** The arguments as parameters: trailing ones that accept undefined may be left out. */
type Positional<T extends readonly unknown[]> = T extends readonly [infer H, ...infer R]
  ? AllOptional<T> extends true
    ? [H?, ...Positional<R>]
    : [H, ...Positional<R>]
  : [];

/** A row as a method: its arguments, in order, as parameters; its answer as the promised value. */
export type MethodOf<Row extends Operation & { input: Args }> = (
  ...args: Positional<Inputs<Row["input"]["args"]>>
) => Promise<ReturnType<NonNullable<Row["answer"]>>>;

// ---- what the rows' answers use --------------------------------------------------------------------

/** The document's AcceptedResult (the 202 of GET /shield/shield-zone/{id}): no zone yet, work under way. */
function isAcceptedResult(r: Record<string, unknown>): boolean {
  return ["location", "value", "formatters", "contentTypes", "declaredType", "statusCode"].some(
    (k) => k in r,
  );
}

/** A Shield list page (`{ data, page }`); rows the schema skipped (no id) are counted. */
function shieldPage<T>(
  r: {
    data: T[] | null;
    skipped: number;
    page?: { currentPage?: number | null; nextPage?: number | null } | null;
  },
  page: number,
) {
  const nextPage = r.page?.nextPage ?? null;
  return {
    items: r.data ?? [],
    ...(r.skipped > 0 ? { skipped: r.skipped } : {}),
    page: r.page?.currentPage ?? page,
    nextPage,
    hasNext: nextPage !== null,
  };
}

/** A Core list page; rows without an Id (optional in the document) are left out, and counted. */
function corePage<T>(
  r: { items: T[]; skipped: number; currentPage?: number | null; hasMoreItems: boolean },
  page: number,
) {
  return {
    items: r.items,
    ...(r.skipped > 0 ? { skipped: r.skipped } : {}),
    page: r.currentPage ?? page,
    hasNext: r.hasMoreItems,
  };
}
