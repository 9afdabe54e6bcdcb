/**
 * Shield metrics from the traffic model:
 * - GET /shield/metrics/overview/{id} -> GetShieldZoneMetricsOverviewResponse (28 UTC days up to the clock),
 * - GET /shield/metrics/overview/{id}/detailed?StartDate&EndDate&Resolution -> ShieldOverviewMetrics,
 * - GET /shield/metrics/rate-limits/{id} -> GetShieldZoneRatelimitMetricsResponse (the zone's rules, 28 days),
 * - GET /shield/metrics/rate-limit/{id} for the zones' rules (seeded fixed rules stay in shield.ts).
 * - GET /shield/rate-limits/{id} -> GetCustomWafRulesResponse (the zone's rate-limit rules with their names).
 * The documents leave the inner keys of the detailed `metrics`/`totals` maps open; they are named here after the
 * counters of the 28-day DTOs (`blockedRequests`, `loggedBreaches`, ...), bucket keys are ISO 8601 UTC bucket starts.
 */
import { type DateKeyFormat, dateKeyFormatOf, formatDateKey } from "./date-keys.js";
import { type HandlerContext, intParam, json, problem, type SimResponse } from "./http.js";
import {
  type ActionCounts,
  addInto,
  DAY_MS,
  emptyCounts,
  type Feature,
  MINUTE_MS,
  type MinuteCounts,
  type RateLimitRule,
  sumMinutes,
  type ZoneModel,
  zoneModel,
} from "./traffic.js";

const notFound = (ctx: HandlerContext) =>
  json(404, {
    data: null,
    error: {
      statusCode: 404,
      success: false,
      message: `Shield Zone ${ctx.params[0] ?? ""} not found.`,
      errorKey: "shield_zone.not_found",
    },
  });

const startOfDay = (t: number): number => Math.floor(t / DAY_MS) * DAY_MS;

/** Clean-request allowance per plan (Basic, Advanced, Business, Enterprise). */
const CLEAN_REQUESTS_LIMIT = [10_000_000, 50_000_000, 250_000_000, 1_000_000_000];

/** Billable (clean) requests from `from` to the clock. */
function billableSince(m: ZoneModel, from: number, now: number): number {
  // Daily diurnal average is 0.75; the attack's volume is mitigated, not billed.
  return Math.round(((now - from) / MINUTE_MS) * m.traffic.requestsPerMinute * 0.75);
}

/** Billable (clean) requests from the start of the clock's UTC month to the clock. */
function billableThisMonth(m: ZoneModel, now: number): number {
  const d = new Date(now);
  return billableSince(m, Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1), now);
}

/**
 * The overview's `totalBillableRequests`: the document gives no period (the detailed answer's
 * `totalBillableRequestsThisMonth` names its own), so the adversary may answer it over the 28 days of the
 * overview's maps ("metrics.billable-period").
 */
function billableOfOverview(ctx: HandlerContext, m: ZoneModel): number {
  const period = ctx.adversary.choose("metrics.billable-period", ["this-month", "28-days"] as const);
  if (period === "this-month") return billableThisMonth(m, ctx.now);
  return billableSince(m, startOfDay(ctx.now) - 27 * DAY_MS, ctx.now);
}

const sum = (c: ActionCounts) => c.block + c.challenge + c.log;

function ddosVerified(c: ActionCounts): number {
  // Visitors who solved the challenge.
  return Math.floor(c.challenge / 12);
}

function dayOverviews(
  m: ZoneModel,
  now: number,
  format: DateKeyFormat,
): Array<{ key: string; counts: MinuteCounts }> {
  const today = startOfDay(now);
  const out: Array<{ key: string; counts: MinuteCounts }> = [];
  for (let back = 27; back >= 0; back--) {
    const start = today - back * DAY_MS;
    const counts = sumMinutes(m, start / MINUTE_MS, (start + DAY_MS) / MINUTE_MS, now);
    out.push({ key: formatDateKey(start, format, false), counts });
  }
  return out;
}

const shieldOverview = (c: MinuteCounts) => ({
  dDoSMitigated: c.byFeature.ddos.block + c.byFeature.ddos.challenge,
  wafTriggeredRules: sum(c.byFeature.waf),
  ratelimitBreaches: sum(c.byFeature.rateLimit),
  botDetectionChallenged: c.byFeature.botDetection.challenge,
  accessListActions: sum(c.byFeature.accessLists),
  uploadScanningBlocks: 0,
  apiGuardianBlocks: 0,
});
const wafMetrics = (c: ActionCounts) => ({
  totalTriggeredRules: sum(c),
  blockedRequests: c.block,
  loggedRequests: c.log,
  challengedRequests: c.challenge,
});
const ddosMetrics = (c: ActionCounts) => ({
  loggedRequests: c.log,
  verifiedRequests: ddosVerified(c),
  blockedRequests: c.block,
  challengedRequests: c.challenge,
});
const breachMetrics = (c: ActionCounts) => ({
  totalBreaches: sum(c),
  loggedBreaches: c.log,
  challengedBreaches: c.challenge,
  blockedBreaches: c.block,
});
const botMetrics = (c: ActionCounts) => ({ loggedRequests: c.log, challengedRequests: c.challenge });
const accessListMetrics = (c: ActionCounts) => ({
  totalActions: sum(c),
  blockedRequests: c.block,
  loggedRequests: c.log,
  challengedRequests: c.challenge,
});
const UPLOAD_SCANNING_ZERO = { loggedRequests: 0, blockedRequests: 0, filesScanned: 0 };
const API_GUARDIAN_ZERO = {
  blockedRequests: 0,
  loggedRequests: 0,
  rateLimited: 0,
  requestsInspected: 0,
  failedRequestValidation: 0,
  failedAuthenticationEnforcement: 0,
};

const perDay = <T>(days: Array<{ key: string; counts: MinuteCounts }>, f: (c: MinuteCounts) => T) =>
  Object.fromEntries(days.map((d) => [d.key, f(d.counts)]));

/** GET /shield/metrics/overview/{shieldZoneId}: totals and per-day maps over the 28 UTC days up to the clock. */
export function getMetricsOverview(ctx: HandlerContext): SimResponse {
  const id = intParam(ctx.params[0]);
  const m = id === undefined ? undefined : zoneModel(ctx.state, id);
  if (m === undefined) return notFound(ctx);
  const days = dayOverviews(m, ctx.now, dateKeyFormatOf(ctx));
  const total = emptyCounts(m);
  for (const d of days) addInto(total, d.counts);
  return json(200, {
    data: {
      overview: shieldOverview(total),
      waf: wafMetrics(total.byFeature.waf),
      overviewPastTwentyEightDays: perDay(days, shieldOverview),
      dDoS: ddosMetrics(total.byFeature.ddos),
      dDoSOverviewPastTwentyEightDays: perDay(days, (c) => ddosMetrics(c.byFeature.ddos)),
      ratelimit: breachMetrics(total.byFeature.rateLimit),
      ratelimitOverviewPastTwentyEightDays: perDay(days, (c) => breachMetrics(c.byFeature.rateLimit)),
      botDetection: botMetrics(total.byFeature.botDetection),
      botDetectionOverviewPastTwentyEightDays: perDay(days, (c) => botMetrics(c.byFeature.botDetection)),
      accessList: accessListMetrics(total.byFeature.accessLists),
      accessListOverviewPastTwentyEightDays: perDay(days, (c) => accessListMetrics(c.byFeature.accessLists)),
      uploadScanningOverviewPastTwentyEightDays: perDay(days, () => UPLOAD_SCANNING_ZERO),
      apiGuardian: API_GUARDIAN_ZERO,
      apiGuardianOverviewPastTwentyEightDays: perDay(days, () => API_GUARDIAN_ZERO),
      totalCleanRequestsLimit: CLEAN_REQUESTS_LIMIT[m.zone.planType] ?? CLEAN_REQUESTS_LIMIT[0],
      totalBillableRequests: billableOfOverview(ctx, m),
      uploadScanning: UPLOAD_SCANNING_ZERO,
    },
    error: null,
  });
}

// ---- detailed -----------------------------------------------------------------------------------------

/** MetricsOverviewResolution: 0 Auto, 1 TwoMinutes, 2 TenMinutes, 3 Hourly, 4 Daily, 5 Weekly, 6 Monthly. */
const RESOLUTION_MS: Record<number, number> = {
  1: 2 * MINUTE_MS,
  2: 10 * MINUTE_MS,
  3: 60 * MINUTE_MS,
  4: DAY_MS,
  5: 7 * DAY_MS,
};
const MAX_BUCKETS = 1_000;
/** Detailed metrics are kept this long; older buckets are zero. */
const DETAILED_RETENTION_MS = 90 * DAY_MS;
const DEFAULT_RANGE_MS = DAY_MS;

/** The resolution Auto picks for a range. */
function autoResolution(rangeMs: number): number {
  if (rangeMs <= 3 * 3_600_000) return 1;
  if (rangeMs <= DAY_MS) return 2;
  if (rangeMs <= 7 * DAY_MS) return 3;
  if (rangeMs <= 90 * DAY_MS) return 4;
  if (rangeMs <= 365 * DAY_MS) return 5;
  return 6;
}

/** Start of the bucket containing t: minutes/hours/days on UTC boundaries, weeks from Monday, calendar months. */
function bucketStart(t: number, resolution: number): number {
  if (resolution === 6) {
    const d = new Date(t);
    return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
  }
  if (resolution === 5) {
    const day = startOfDay(t);
    const weekday = (new Date(day).getUTCDay() + 6) % 7; // Monday = 0
    return day - weekday * DAY_MS;
  }
  const size = RESOLUTION_MS[resolution] ?? MINUTE_MS;
  return Math.floor(t / size) * size;
}

function nextBucket(t: number, resolution: number): number {
  if (resolution === 6) {
    const d = new Date(t);
    return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
  }
  return t + (RESOLUTION_MS[resolution] ?? MINUTE_MS);
}

/** An ISO 8601 date-time; one without a zone designator is read as UTC. */
function parseDate(raw: string): number | undefined {
  if (!/^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d{1,7})?)?)?(Z|[+-]\d{2}:?\d{2})?$/i.test(raw.trim())) {
    return undefined;
  }
  const text = raw.trim().replace(" ", "T");
  const zoned = /(Z|[+-]\d{2}:?\d{2})$/i.test(text) || !text.includes("T") ? text : `${text}Z`;
  const t = Date.parse(zoned.includes("T") ? zoned : `${zoned}T00:00:00Z`);
  return Number.isNaN(t) ? undefined : t;
}

type Series = Record<string, number>;

/** One feature's series for some counts (names after the 28-day DTOs' counters). */
const SERIES: Record<Feature, (c: ActionCounts) => Series> = {
  waf: (c) => ({ blockedRequests: c.block, challengedRequests: c.challenge, loggedRequests: c.log }),
  ddos: (c) => ({
    blockedRequests: c.block,
    challengedRequests: c.challenge,
    loggedRequests: c.log,
    verifiedRequests: ddosVerified(c),
  }),
  rateLimit: (c) => ({ blockedBreaches: c.block, challengedBreaches: c.challenge, loggedBreaches: c.log }),
  botDetection: (c) => ({ challengedRequests: c.challenge, loggedRequests: c.log }),
  accessLists: (c) => ({ blockedRequests: c.block, challengedRequests: c.challenge, loggedRequests: c.log }),
};
const FEATURE_KEYS: ReadonlyArray<[string, Feature]> = [
  ["waf", "waf"],
  ["ddos", "ddos"],
  ["rateLimit", "rateLimit"],
  ["accessLists", "accessLists"],
  ["botDetection", "botDetection"],
];

function badQuery(ctx: HandlerContext, field: string, message: string): SimResponse {
  return problem(400, message, ctx.path, { [field]: [message] });
}

/** GET /shield/metrics/overview/{shieldZoneId}/detailed?StartDate&EndDate&Resolution */
export function getDetailedMetrics(ctx: HandlerContext): SimResponse {
  const q = ctx.query;
  const end = q.EndDate === undefined || q.EndDate === "" ? ctx.now : parseDate(q.EndDate);
  if (end === undefined) {
    return badQuery(
      ctx,
      "EndDate",
      `The value '${q.EndDate}' is not valid for EndDate (ISO 8601 date-time).`,
    );
  }
  const start =
    q.StartDate === undefined || q.StartDate === "" ? end - DEFAULT_RANGE_MS : parseDate(q.StartDate);
  if (start === undefined) {
    return badQuery(
      ctx,
      "StartDate",
      `The value '${q.StartDate}' is not valid for StartDate (ISO 8601 date-time).`,
    );
  }
  if (end <= start) return badQuery(ctx, "EndDate", "EndDate must be after StartDate.");
  let resolution = 0;
  if (q.Resolution !== undefined && q.Resolution !== "") {
    resolution = /^\d$/.test(q.Resolution) ? Number(q.Resolution) : -1;
    if (resolution < 0 || resolution > 6) {
      return badQuery(ctx, "Resolution", `The value '${q.Resolution}' is not valid for Resolution (0-6).`);
    }
  }
  if (resolution === 0) resolution = autoResolution(end - start);

  const id = intParam(ctx.params[0]);
  const m = id === undefined ? undefined : zoneModel(ctx.state, id);
  if (m === undefined) return notFound(ctx);

  // Buckets that start in [bucketStart(start), end) and not after the clock.
  const buckets: number[] = [];
  for (let t = bucketStart(start, resolution); t < end && t <= ctx.now; t = nextBucket(t, resolution)) {
    buckets.push(t);
    if (buckets.length > MAX_BUCKETS) {
      return badQuery(
        ctx,
        "Resolution",
        `The range from StartDate to EndDate holds more than ${MAX_BUCKETS} buckets at this resolution; choose a coarser Resolution.`,
      );
    }
  }
  const oldest = ctx.now - DETAILED_RETENTION_MS;
  const perBucket = buckets.map((b) => {
    const stop = nextBucket(b, resolution);
    if (stop <= oldest) return emptyCounts(m);
    const from = Math.max(b, Math.floor(oldest / MINUTE_MS) * MINUTE_MS);
    return sumMinutes(m, from / MINUTE_MS, stop / MINUTE_MS, ctx.now);
  });
  const format = dateKeyFormatOf(ctx);
  const data: Record<string, unknown> = {};
  for (const [key, feature] of FEATURE_KEYS) {
    const metrics: Record<string, Series> = {};
    const totals: Series = {};
    buckets.forEach((b, i) => {
      const counts = perBucket[i]?.byFeature[feature] ?? { block: 0, challenge: 0, log: 0 };
      const series = SERIES[feature](counts);
      metrics[formatDateKey(b, format, true)] = series;
      for (const [name, n] of Object.entries(series)) totals[name] = (totals[name] ?? 0) + n;
    });
    if (buckets.length === 0) Object.assign(totals, SERIES[feature]({ block: 0, challenge: 0, log: 0 }));
    data[key] = { metrics, totals };
  }
  const zeroSeries = (names: string[]) => {
    const metrics: Record<string, Series> = {};
    for (const b of buckets)
      metrics[formatDateKey(b, format, true)] = Object.fromEntries(names.map((n) => [n, 0]));
    return { metrics, totals: Object.fromEntries(names.map((n) => [n, 0])) };
  };
  data.uploadScanning = zeroSeries(["blockedRequests", "loggedRequests", "filesScanned"]);
  data.apiGuardian = zeroSeries(["blockedRequests", "loggedRequests", "rateLimited"]);
  data.totalCleanRequestsLimit = CLEAN_REQUESTS_LIMIT[m.zone.planType] ?? CLEAN_REQUESTS_LIMIT[0];
  data.totalBillableRequestsThisMonth = billableThisMonth(m, ctx.now);
  data.resolution = resolution;
  return json(200, { data, error: null });
}

// ---- rate limits ----------------------------------------------------------------------------------------

type Breaches = ReturnType<typeof breachMetrics>;

/** Days before the 28-day window counted when a rule's total is over all time ("metrics.total-breaches-period"). */
const OLDER_DAYS = 62;

/**
 * A rule's `overview`: the document gives no period for it. Friendly: the 28 days of the map beside it;
 * "all-time": those and the OLDER_DAYS before them, each as busy as the 28 days' average.
 */
export function breachOverview(ctx: HandlerContext, total28: Breaches): Breaches {
  const period = ctx.adversary.choose("metrics.total-breaches-period", ["28-days", "all-time"] as const);
  if (period === "28-days") return total28;
  const older = (k: keyof Breaches) => total28[k] + Math.round((OLDER_DAYS * total28[k]) / 28);
  return {
    totalBreaches: older("totalBreaches"),
    loggedBreaches: older("loggedBreaches"),
    challengedBreaches: older("challengedBreaches"),
    blockedBreaches: older("blockedBreaches"),
  };
}

/** One rule's 28-day breaches (all of a rule's breaches take its action). */
function ruleMetrics(
  ctx: HandlerContext,
  days: Array<{ key: string; counts: MinuteCounts }>,
  rule: RateLimitRule,
  index: number,
) {
  const total: ActionCounts = { block: 0, challenge: 0, log: 0 };
  const perDayBreaches: Record<string, Breaches> = {};
  for (const d of days) {
    const n = d.counts.byRateLimitRule[index] ?? 0;
    total[rule.action] += n;
    perDayBreaches[d.key] = breachMetrics({ block: 0, challenge: 0, log: 0, [rule.action]: n });
  }
  return {
    overview: breachOverview(ctx, breachMetrics(total)),
    ratelimitOverviewPastTwentyEightDays: perDayBreaches,
  };
}

/**
 * GET /shield/metrics/rate-limits/{shieldZoneId}: each of the zone's rules with 28 days of breaches, in an order
 * the document leaves open ("rate-limits.order"); a rule may come without a row ("rate-limits.metrics-missing":
 * the document does not say every rule has one).
 */
export function getZoneRateLimitMetrics(ctx: HandlerContext): SimResponse {
  const id = intParam(ctx.params[0]);
  const m = id === undefined ? undefined : zoneModel(ctx.state, id);
  if (m === undefined) return notFound(ctx);
  const days = dayOverviews(m, ctx.now, dateKeyFormatOf(ctx));
  const rows = m.traffic.rateLimitRules
    .map((rule, i) => ({ ratelimitId: rule.id, ...ruleMetrics(ctx, days, rule, i) }))
    .filter((row) => !ctx.adversary.chance("rate-limits.metrics-missing", 0.3, row.ratelimitId));
  return json(200, { data: ctx.adversary.order("rate-limits.order", rows, `metrics ${id}`), error: null });
}

/**
 * The page size GET /shield/rate-limits answers: the document gives perPage a default (10) and no maximum, so the
 * API may answer fewer rows than asked ("rate-limits.page-size").
 */
function rulePageSize(ctx: HandlerContext, asked: number): number {
  const size = ctx.adversary.choose("rate-limits.page-size", ["as-asked", "default", "two"] as const);
  return Math.min(asked, size === "default" ? 10 : size === "two" ? 2 : asked);
}

/**
 * GET /shield/rate-limits/{shieldZoneId}?page&perPage: the zone's rules as CustomWafRule rows, a page at a time, in
 * an order the document leaves open ("rate-limits.order"); the `page` member, not required by the document, may be
 * left out ("rate-limits.page-info-missing").
 */
export function getZoneRateLimitRules(ctx: HandlerContext): SimResponse {
  const id = intParam(ctx.params[0]);
  const m = id === undefined ? undefined : zoneModel(ctx.state, id);
  if (id === undefined || m === undefined) return notFound(ctx);
  const num = (raw: string | undefined, def: number) => {
    const n = raw === undefined || raw === "" ? def : Number(raw);
    return Number.isInteger(n) ? n : def;
  };
  const page = Math.max(1, num(ctx.query.page, 1));
  const perPage = rulePageSize(ctx, Math.min(1000, Math.max(1, num(ctx.query.perPage, 10))));
  const rules = ctx.adversary.order("rate-limits.order", m.traffic.rateLimitRules, `rules ${id}`);
  const totalPages = Math.ceil(rules.length / perPage);
  const data = rules.slice((page - 1) * perPage, page * perPage).map((rule) => ({
    id: rule.id,
    shieldZoneId: id,
    userId: null,
    ruleName: rule.name,
    ruleDescription: `Limits requests to ${rule.path}`,
    ruleJson: null,
  }));
  const pageInfo = {
    totalCount: rules.length,
    totalPages,
    currentPage: page,
    nextPage: page < totalPages ? page + 1 : null,
    pageSize: perPage,
  };
  if (ctx.adversary.chance("rate-limits.page-info-missing", 0.3, id)) return json(200, { data, error: null });
  return json(200, { data, page: pageInfo, error: null });
}

/**
 * GET /shield/rate-limit/{id}: one of the zones' rules as a bare CustomWafRule (its id, zone and name). A rule no
 * zone has (the seeded metrics-only rules among them) is not found: the framework's NotFound problem details.
 */
export function getRateLimitRule(ctx: HandlerContext): SimResponse {
  const ruleId = intParam(ctx.params[0]);
  for (const [zoneId, traffic] of ctx.state.shieldTraffic) {
    const rule = traffic.rateLimitRules.find((r) => r.id === ruleId);
    if (rule !== undefined && zoneModel(ctx.state, zoneId) !== undefined)
      return json(200, {
        id: rule.id,
        shieldZoneId: zoneId,
        userId: null,
        ruleName: rule.name,
        ruleDescription: `Limits requests to ${rule.path}`,
        ruleJson: null,
      });
  }
  return problem(404, `Rate limit ${ctx.params[0] ?? ""} not found.`, ctx.path);
}

/** The 28-day metrics of a zone's rule by its id (the shape of GET /shield/metrics/rate-limit/{id}), if any. */
export function zoneRuleMetrics(ctx: HandlerContext, ruleId: number) {
  for (const [zoneId, traffic] of ctx.state.shieldTraffic) {
    const index = traffic.rateLimitRules.findIndex((r) => r.id === ruleId);
    const rule = traffic.rateLimitRules[index];
    const m = zoneModel(ctx.state, zoneId);
    if (rule !== undefined && m !== undefined)
      return ruleMetrics(ctx, dayOverviews(m, ctx.now, dateKeyFormatOf(ctx)), rule, index);
  }
  return undefined;
}
