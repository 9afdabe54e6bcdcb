import { z } from "zod";
import type { HttpMethod, RequestSpec } from "./request.js";
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
  type BotCategoryAction,
  botCategorizationListResponseSchema,
  botDetectionResponseSchema,
  customAccessListResponseSchema,
  type DdosSensitivity,
  EVENT_LOG_DIMENSIONS,
  eventLogsSearchResponseSchema,
  getRateLimitRulesResponseSchema,
  getShieldZoneMetricsOverviewResponseSchema,
  getShieldZoneRateLimitMetricsResponseSchema,
  getShieldZoneResponseSchema,
  getShieldZonesResponseSchema,
  getTriggeredRulesResponseSchema,
  METRICS_RESOLUTION,
  type RateLimitRulePage,
  rateLimitMetricsResponseSchema,
  shieldOverviewMetricsResponseSchema,
  unreadableMetricKeys,
  type WafExecutionMode,
  type WafReviewAction,
  wafAiRecommendationSchema,
} from "./schemas/shield.js";

/**
 * The Edge API as a table: one row per operation (its checked arguments, method, path, query, body,
 * answer schema, whether it is safe to repeat), read by the one generic caller in client.ts. A row's
 * `answer` turns the validated body into what the method returns, when that is more than the body.
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

// ---- argument checks -------------------------------------------------------------------------------

/** The largest id a path the document types int32 can carry. */
export const MAX_INT32_ID = 2_147_483_647;

/** The event log keeps 72 hours: a search must end within them. */
export const EVENT_LOG_RETENTION_MS = 72 * 3_600_000;

/** Largest list content edgeops sends (the plan's entry limit is far below this). */
const MAX_ACCESS_LIST_CONTENT = 1_000_000;

function show(v: unknown): string {
  if (typeof v === "string") return JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v);
  if (typeof v === "number" || typeof v === "boolean" || v === null || v === undefined) return String(v);
  return typeof v;
}

/** A value `ok` accepts, else the sentence `refusal` followed by what was given. */
const checked = <T>(ok: (v: unknown) => boolean, refusal: string) =>
  z.custom<T>(ok, { error: (iss) => `${refusal} (got ${show(iss.input)}).` });

/** `T`: the numbers from min to max as a type (an enum's values), where the caller should name one. */
function whole<T extends number = number>(what: string, min: number, max = Number.MAX_SAFE_INTEGER) {
  const range = max >= Number.MAX_SAFE_INTEGER ? `of at least ${min}` : `from ${min} to ${max}`;
  return checked<T>(
    (v) => typeof v === "number" && Number.isSafeInteger(v) && v >= min && v <= max,
    `The ${what} must be a whole number ${range}`,
  );
}
const id = (what: string) => whole(what, 1);
/** An id sent where the document's path parameter is int32 (shield zones, rate limits). */
const int32Id = (what: string) => whole(what, 1, MAX_INT32_ID);
const time = (what: string) =>
  checked<number>(
    (v) => typeof v === "number" && Number.isSafeInteger(v) && v >= 0,
    `The ${what} must be a Unix time in milliseconds`,
  );
const text = (refusal: string, ok: (s: string) => boolean) =>
  checked<string>((v) => typeof v === "string" && ok(v), refusal);
const listContent = text("The list content must be a text", (s) => s.length <= MAX_ACCESS_LIST_CONTENT);

/** An object argument: its fields checked, unknown ones dropped. */
const record = <S extends z.core.$ZodLooseShape>(what: string, shape: S) =>
  z.object(shape, { error: (iss) => `The ${what} must be an object (got ${show(iss.input)}).` });
/** An options object (absent: all defaults). */
const options = <S extends z.core.$ZodLooseShape>(what: string, shape: S) =>
  record(what, shape).prefault({} as never);

const zoneId = ["shieldZoneId", int32Id("shield zone id")] as const;
const zone = args(zoneId);
const zoneSubject = (i: { shieldZoneId: number }) => `Shield zone ${i.shieldZoneId}`;
/** A GET of one shield zone's resource. */
const zoneRead = (path: string) => ({ input: zone, method: "GET", path, subject: zoneSubject }) as const;
/** A write whose 2xx status is its answer (unless the body carries a refusal). */
const write = (method: HttpMethod, path: string) =>
  ({ method, path, statusIsTheAnswer: true, schema: ignoredBody }) as const;
/** The Shield envelope's `data` as the answer. */
const envelopeData = <T>(r: { data: T | null }, _i: unknown, a: Answering) => a.data(r.data);

/** A page of a list: `page` >= 1 (the Core API's page 0, "everything as one array", is never asked for). */
const pages = (minPerPage: number, perPage: number) =>
  options("page options", {
    page: id("page number").default(1),
    perPage: whole("page size", minPerPage, 1000).default(perPage),
  });
export const shieldZonePages = pages(1, 10);
export const corePages = pages(5, 1000);

/** `cursor`: the `nextCursor` of the previous page. */
export const listAppsParams = options("listApps options", {
  limit: whole("page size", 1, 1000).default(20),
  cursor: text(
    "The app list cursor must be a non-empty string",
    (s) => s.trim() !== "" && s.length <= 4096,
  ).optional(),
});

/** `type`: AccessListType (0 IP, 1 CIDR, 2 ASN, 3 Country, 4 Organization, 5 JA4). */
export const newAccessList = record("new access list", {
  name: text(
    "The list name must be a text of 1 to 100 characters",
    (s) => s.trim() !== "" && s.length <= 100,
  ),
  type: whole("access list type", 0, 5),
  content: listContent,
});

/** `action`: AccessListAction (0 None, 1 Allow, 2 Block, 3 Challenge, 4 Log, 5 Bypass). */
export const accessListConfig = record("access list configuration", {
  isEnabled: checked<boolean>((v) => typeof v === "boolean", "isEnabled must be true or false"),
  action: whole("access list action", 0, 5),
});

const filterSchema = z.object({
  field: z.enum(EVENT_LOG_DIMENSIONS),
  op: z.enum(["eq", "in", "contains", "cidr", "wildcard"]),
  value: z.array(z.string()),
});
const searchSchema = record("event-log search", {
  from: time("search start"),
  to: time("search end"),
  query: text("The search text must be a text of at most 500 characters", (s) => s.length <= 500).optional(),
  groupBy: checked<(typeof EVENT_LOG_DIMENSIONS)[number][]>(
    (v) => Array.isArray(v) && v.every((d) => (EVENT_LOG_DIMENSIONS as readonly unknown[]).includes(d)),
    `Event logs group by ${EVENT_LOG_DIMENSIONS.join(", ")}`,
  ).optional(),
  filters: checked<z.output<typeof filterSchema>[]>(
    (v) => z.array(filterSchema).safeParse(v).success,
    "An event-log filter needs a known field, an operator and text values",
  ).optional(),
  buckets: whole("number of sparkline buckets", 0, 500).optional(),
  page: whole("page index", 0).optional(),
  pageSize: whole("page size", 1, 500).optional(),
}).refine((s) => s.to > s.from, "The event-log search must end after it starts.");

/** From and to: Unix ms, sent as StartDate and EndDate; resolution: MetricsOverviewResolution. */
export const metricsRange = options("metrics options", {
  from: time("start"),
  to: time("end"),
  resolution: whole("metrics resolution (0 Auto … 6 Monthly)", 0, 6).default(METRICS_RESOLUTION.auto),
}).refine((p) => p.to > p.from, "The metrics range must end after it starts.");

const UPDATE_FIELDS = "A shield zone update names dDoSShieldSensitivity, wafExecutionMode or learningMode.";
const shieldZoneUpdate = z
  .strictObject(
    {
      dDoSShieldSensitivity: whole<DdosSensitivity>(
        "DDoS sensitivity (0 Off, 1 Low, 2 Medium, 3 High, 4 Challenge)",
        0,
        4,
      ),
      wafExecutionMode: whole<WafExecutionMode>("WAF execution mode (0 Log, 1 Block)", 0, 1),
      learningMode: checked<boolean>((v) => typeof v === "boolean", "Learning mode is on or off"),
    },
    { error: UPDATE_FIELDS },
  )
  .partial()
  .refine((u) => Object.values(u).some((v) => v !== undefined), UPDATE_FIELDS);

/** CustomAccessListResponse's `data.id` when there is one; any other 2xx body means no id given. */
const createdListIdSchema = ignoredBody.transform((b): number | null => {
  const d = (b as { data?: { id?: unknown } } | null | undefined)?.data;
  return typeof d?.id === "number" && Number.isSafeInteger(d.id) && d.id > 0 ? d.id : null;
});

const absent = (field: string) => (b: Record<string, unknown>) => b[field] === null || b[field] === undefined;
const empty = (v: unknown) => !Array.isArray(v) || v.length === 0;

// ---- the table -------------------------------------------------------------------------------------

export const OPERATIONS = {
  listApps: op({
    input: args(["params", listAppsParams]),
    method: "GET",
    path: "/mc/apps",
    query: ({ params }) => ({ limit: params.limit, nextCursor: params.cursor }),
    schema: listApplicationsResponseSchema,
  }),
  listShieldZones: op({
    input: args(["params", shieldZonePages]),
    method: "GET",
    path: "/shield/shield-zones",
    query: ({ params }) => ({ page: params.page, perPage: params.perPage }),
    schema: getShieldZonesResponseSchema,
    answer: (r, { params }) => {
      const pg = r.page;
      const nextPage = pg?.nextPage ?? null;
      return {
        items: r.data ?? [],
        ...(r.skipped > 0 ? { skipped: r.skipped } : {}),
        page: pg?.currentPage ?? params.page,
        perPage: pg?.pageSize ?? params.perPage,
        ...(pg?.totalCount == null ? {} : { totalCount: pg.totalCount }),
        ...(pg?.totalPages == null ? {} : { totalPages: pg.totalPages }),
        nextPage,
        hasNext: nextPage !== null,
      };
    },
  }),
  listPullZones: op({
    input: args(["params", corePages]),
    method: "GET",
    path: "/pullzone",
    // Never ask for certificates: the answer would carry each hostname's private key.
    query: ({ params }) => ({ page: params.page, perPage: params.perPage, includeCertificate: "false" }),
    schema: pullZoneListSchema,
    answer: (r, { params }) => ({
      ...pageOf(r, params.page),
      ...(r.totalItems == null ? {} : { totalCount: r.totalItems }),
      hasNext: r.hasMoreItems,
    }),
  }),
  /** GET /dnszone: the account's DNS zones (id and domain), a page at a time. */
  listDnsZones: op({
    input: args(["params", corePages]),
    method: "GET",
    path: "/dnszone",
    query: ({ params }) => ({ page: params.page, perPage: params.perPage }),
    schema: dnsZoneListSchema,
    answer: (r, { params }) => ({ ...pageOf(r, params.page), hasNext: r.hasMoreItems }),
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
    input: args(zoneId, ["params", metricsRange]),
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
  /** POST /shield/event-logs/{id}/search: a read, so it is retried like a GET. */
  searchEventLogs: op({
    input: args(zoneId, ["search", searchSchema]),
    method: "POST",
    path: "/shield/event-logs/{shieldZoneId}/search",
    body: (i) => i.search,
    subject: zoneSubject,
    // A search changes nothing: safe to repeat.
    idempotent: true,
    schema: eventLogsSearchResponseSchema,
    answerAbsent: (b) => empty(b.groups) && empty(b.rows),
    answer: ({ errorResponse: _, ...result }) => result,
  }),
  getTriggeredWafRules: op({
    // The WAF review paths are int64 in the document.
    input: args(["shieldZoneId", id("shield zone id")]),
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
    // The rate-limit rule paths are int64 in the document.
    input: args(["shieldZoneId", id("shield zone id")], ["params", shieldZonePages]),
    method: "GET",
    path: "/shield/rate-limits/{shieldZoneId}",
    query: ({ params }) => ({ page: params.page, perPage: params.perPage }),
    subject: zoneSubject,
    schema: getRateLimitRulesResponseSchema,
    answer: (r, { params }): RateLimitRulePage => {
      const nextPage = r.page?.nextPage ?? null;
      return {
        items: r.data ?? [],
        ...(r.skipped > 0 ? { skipped: r.skipped } : {}),
        page: r.page?.currentPage ?? params.page,
        nextPage,
        hasNext: nextPage !== null,
      };
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
    input: args(
      zoneId,
      ["category", whole("bot category (255 System cannot be changed)", 0, 7)],
      ["action", whole<BotCategoryAction>("bot category action (0 None, 1 Block, 2 Allow)", 0, 2)],
    ),
    ...write("PUT", "/shield/shield-zone/{shieldZoneId}/bot-categorization/categories/{category}"),
    body: (i) => ({ action: i.action }),
    subject: zoneSubject,
    idempotent: true,
  }),
  getRateLimitMetrics: op({
    input: args(["rateLimitId", int32Id("rate limit id")]),
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
  getWafAiRecommendation: op({
    input: args(
      ["shieldZoneId", id("shield zone id")],
      [
        "ruleId",
        text("The WAF rule id must be a non-empty text", (s) => s.trim() !== "" && s.length <= 256).transform(
          (s) => s.trim(),
        ),
      ],
    ),
    method: "GET",
    path: "/shield/waf/rules/review-triggered/ai-recommendation/{shieldZoneId}/{ruleId}",
    subject: (i) => `WAF rule ${i.ruleId} in shield zone ${i.shieldZoneId}`,
    schema: wafAiRecommendationSchema,
  }),
  getLatestDnsScan: op({
    input: args(["zoneId", id("DNS zone id")]),
    method: "GET",
    path: "/dnszone/{zoneId}/records/scan",
    subject: (i) => `DNS zone ${i.zoneId}`,
    schema: dnsScanSchema,
  }),
  triggerDnsScan: op({
    input: args(["zoneId", id("DNS zone id")]),
    method: "POST",
    path: "/dnszone/records/scan",
    body: (i) => ({ ZoneId: i.zoneId }),
    subject: (i) => `DNS zone ${i.zoneId}`,
    // Starting a scan twice is not harmless: no retry after 5xx / timeout / network errors.
    idempotent: false,
    schema: dnsScanTriggerSchema,
  }),
  /** Restart every pod of a Magic Containers application. */
  restartApp: op({
    input: args([
      "appId",
      text("The application id must be letters, digits, - or _", (s) => /^[\w-]{1,100}$/.test(s)),
    ]),
    ...write("POST", "/mc/apps/{appId}/restart"),
    subject: (i) => `Application ${i.appId}`,
    // A second restart is not harmless: no retry after 5xx / timeout / network errors.
    idempotent: false,
  }),
  /** Purge a pull zone's cache, all of it or only the files with `cacheTag`. */
  purgePullZone: op({
    input: args(
      ["pullZoneId", id("pull zone id")],
      [
        "cacheTag",
        text("A cache tag is up to 200 letters, digits and . : / - _", (s) =>
          /^[\w.:/-]{1,200}$/.test(s),
        ).optional(),
      ],
    ),
    ...write("POST", "/pullzone/{pullZoneId}/purgeCache"),
    body: (i) => (i.cacheTag === undefined ? undefined : { CacheTag: i.cacheTag }),
    subject: (i) => `Pull zone ${i.pullZoneId}`,
    // Purging twice is harmless.
    idempotent: true,
  }),
  /** Purge one URL (a trailing `*` purges a prefix) from the cache. */
  purgeUrl: op({
    input: args([
      "url",
      text(
        "The URL to purge must start with https:// or http://",
        (s) => s.length <= 2000 && webUrl(s) !== undefined,
      ),
    ]),
    ...write("POST", "/purge"),
    query: (i) => ({ url: i.url }),
    subject: (i) => `URL ${webUrl(i.url)?.host}`,
    idempotent: true,
  }),
  /** PATCH /shield/shield-zone with only the fields in `update` (the others are left as they are). */
  updateShieldZone: op({
    input: args(["shieldZoneId", id("shield zone id")], ["update", shieldZoneUpdate]),
    ...write("PATCH", "/shield/shield-zone"),
    body: (i) => ({ shieldZoneId: i.shieldZoneId, shieldZone: i.update }),
    subject: zoneSubject,
    // Setting a field to a value twice leaves the same value.
    idempotent: true,
  }),
  /** POST /shield/waf/rules/review-triggered/{id}: ignore a triggered rule, make it log only, or disable it. */
  reviewTriggeredWafRule: op({
    input: args(
      ["shieldZoneId", id("shield zone id")],
      [
        "ruleId",
        text("The WAF rule id must be letters, digits, . : - or _", (s) => /^[\w.:-]{1,100}$/.test(s)),
      ],
      ["action", whole<WafReviewAction>("review action (0 Ignore, 1 Log only, 2 Disable rule)", 0, 2)],
    ),
    ...write("POST", "/shield/waf/rules/review-triggered/{shieldZoneId}"),
    body: (i) => ({ ruleId: i.ruleId, action: i.action }),
    subject: (i) => `WAF rule ${i.ruleId} in shield zone ${i.shieldZoneId}`,
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
    input: args(zoneId, ["listId", id("access list id")]),
    method: "GET",
    path: "/shield/shield-zone/{shieldZoneId}/access-lists/{listId}",
    subject: listSubject,
    schema: customAccessListResponseSchema,
    answerAbsent: absent("data"),
    answer: envelopeData,
  }),
  /**
   * Create a custom list (not safe to repeat: a retried POST could make two lists). The new list's id
   * as the answer gives it (`data.id`), or null when the answer does not say.
   */
  createCustomAccessList: op({
    input: args(zoneId, ["list", newAccessList]),
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
    input: args(zoneId, ["listId", id("access list id")], ["content", listContent]),
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
      ["configurationId", id("access list configuration id")],
      ["config", accessListConfig],
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

/** The rows of a Core list page; rows without an Id (optional in the document) are left out, and counted. */
function pageOf<T>(
  r: { items: T[]; skipped: number; currentPage?: number | null | undefined },
  page: number,
) {
  return { items: r.items, ...(r.skipped > 0 ? { skipped: r.skipped } : {}), page: r.currentPage ?? page };
}

function listSubject(i: { shieldZoneId: number; listId: number }): string {
  return `Access list ${i.listId} of shield zone ${i.shieldZoneId}`;
}

function webUrl(s: string): URL | undefined {
  try {
    const u = new URL(s);
    return u.protocol === "https:" || u.protocol === "http:" ? u : undefined;
  } catch {
    return undefined;
  }
}
