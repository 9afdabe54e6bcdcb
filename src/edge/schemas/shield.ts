import { z } from "zod";
import { LruCache } from "../../lru.js";
import { type IntLabels, ignoredBody, intEnum, intLabel, nullish, optIntEnum, rowsOf } from "./common.js";
import { dayMonthEitherWay, isoDay, parseDateKey, readDateKeys } from "./date-key.js";

/**
 * Shield (paths under /shield/). Shapes from shield-api-v1.0.0.json. Integer enums keep values the
 * spec does not list (shown as "Unknown (n)" by the label helpers). Responses are mostly wrapped in
 * `{data, error}`; the WAF AI recommendation is not.
 */

// ---- enum labels ----------------------------------------------------------------------------------

export const WAF_EXECUTION_MODE_LABELS: IntLabels = { 0: "Log", 1: "Block" };
export const PLAN_TYPE_LABELS: IntLabels = { 0: "Basic", 1: "Advanced", 2: "Business", 3: "Enterprise" };
export const DDOS_SENSITIVITY_LABELS: IntLabels = {
  0: "Off",
  1: "Low",
  2: "Medium",
  3: "High",
  4: "Challenge",
};
export const DDOS_EXECUTION_MODE_LABELS: IntLabels = { 0: "Log", 1: "Block" };
export const BODY_LIMIT_ACTION_LABELS: IntLabels = { 0: "Block", 1: "Log", 2: "Ignore" };
export const BOT_DETECTION_SENSITIVITY_LABELS: IntLabels = { 0: "Off", 1: "Low", 2: "Medium", 3: "High" };
export const BROWSER_FINGERPRINT_AGGRESSION_LABELS: IntLabels = {
  0: "Unknown",
  1: "Low",
  2: "Medium",
  3: "High",
  4: "Custom",
};
export const BOT_DETECTION_EXECUTION_MODE_LABELS: IntLabels = { 0: "Log only", 1: "Challenge" };
export const BOT_CATEGORY_LABELS: IntLabels = {
  0: "None",
  1: "SEO",
  2: "AI scraper",
  3: "AI tool",
  4: "Tool",
  5: "Ads",
  6: "Preview",
  7: "Social",
  255: "System",
};
/** Category-level actions (what `setBotCategoryAction` accepts). */
export const BOT_CATEGORY_ACTION_LABELS: IntLabels = { 0: "None", 1: "Block", 2: "Allow" };
/** Per-bot actions inside a category (adds Ignore). */
export const BOT_ACTION_LABELS: IntLabels = { 0: "None", 1: "Block", 2: "Allow", 3: "Ignore" };

export const wafExecutionModeLabel = (n: number | null | undefined) => intLabel(WAF_EXECUTION_MODE_LABELS, n);

/** When learning mode ended: it is on with an end (learningModeUntil) already past; else undefined. */
export function learningModeEnded(
  z: { learningMode?: boolean | null | undefined; learningModeUntil?: string | null | undefined },
  now: number,
): string | undefined {
  if (!z.learningMode || !z.learningModeUntil) return undefined;
  const until = Date.parse(z.learningModeUntil);
  return Number.isFinite(until) && until <= now ? z.learningModeUntil : undefined;
}
export const planTypeLabel = (n: number | null | undefined) => intLabel(PLAN_TYPE_LABELS, n);
export const ddosSensitivityLabel = (n: number | null | undefined) => intLabel(DDOS_SENSITIVITY_LABELS, n);
export const ddosExecutionModeLabel = (n: number | null | undefined) =>
  intLabel(DDOS_EXECUTION_MODE_LABELS, n);
export const bodyLimitActionLabel = (n: number | null | undefined) => intLabel(BODY_LIMIT_ACTION_LABELS, n);
export const botDetectionSensitivityLabel = (n: number | null | undefined) =>
  intLabel(BOT_DETECTION_SENSITIVITY_LABELS, n);
export const browserFingerprintAggressionLabel = (n: number | null | undefined) =>
  intLabel(BROWSER_FINGERPRINT_AGGRESSION_LABELS, n);
export const botDetectionExecutionModeLabel = (n: number | null | undefined) =>
  intLabel(BOT_DETECTION_EXECUTION_MODE_LABELS, n);
export const botCategoryLabel = (n: number | null | undefined) => intLabel(BOT_CATEGORY_LABELS, n);
export const botCategoryActionLabel = (n: number | null | undefined) =>
  intLabel(BOT_CATEGORY_ACTION_LABELS, n);
export const botActionLabel = (n: number | null | undefined) => intLabel(BOT_ACTION_LABELS, n);

/** Categories whose action can be set (255 System is read-only). */
export const SETTABLE_BOT_CATEGORIES = [0, 1, 2, 3, 4, 5, 6, 7] as const;
export type SettableBotCategory = (typeof SETTABLE_BOT_CATEGORIES)[number];
export const BOT_CATEGORY_ACTIONS = [0, 1, 2] as const;
export type BotCategoryAction = (typeof BOT_CATEGORY_ACTIONS)[number];

// ---- envelope -------------------------------------------------------------------------------------

/** GenericRequestResponse: the `error` part of the Shield envelope. */
export const genericRequestResponseSchema = z.looseObject({
  statusCode: z.number().int().optional(),
  success: z.boolean().optional(),
  message: nullish(z.string()),
  errorKey: nullish(z.string()),
});

/** The Shield envelope `{data, error}` around `data`. */
export const shieldEnvelope = <S extends z.ZodType>(data: S) =>
  z.looseObject({ data: nullish(data), error: nullish(genericRequestResponseSchema) });

// ---- shield zones ---------------------------------------------------------------------------------

export const shieldZoneSchema = z
  .looseObject({
    shieldZoneId: z.number().int(),
    pullZoneId: nullish(z.number().int()),
    learningMode: nullish(z.boolean()),
    learningModeUntil: nullish(z.string()),
    wafEnabled: nullish(z.boolean()),
    wafExecutionMode: optIntEnum(),
    wafRealtimeThreatIntelligenceEnabled: nullish(z.boolean()),
    wafProfileId: nullish(z.number().int()),
    wafRequestBodyLimitAction: optIntEnum(),
    wafResponseBodyLimitAction: optIntEnum(),
    rateLimitRulesLimit: nullish(z.number().int()),
    customWafRulesLimit: nullish(z.number().int()),
    planType: optIntEnum(),
    dDoSShieldSensitivity: optIntEnum(),
    dDoSExecutionMode: optIntEnum(),
    dDoSChallengeWindow: nullish(z.number().int()),
    whitelabelResponsePages: nullish(z.boolean()),
  })
  .transform((s) => ({
    shieldZoneId: s.shieldZoneId,
    pullZoneId: s.pullZoneId,
    planType: s.planType,
    learningMode: s.learningMode,
    learningModeUntil: s.learningModeUntil,
    wafEnabled: s.wafEnabled,
    wafExecutionMode: s.wafExecutionMode,
    wafRealtimeThreatIntelligenceEnabled: s.wafRealtimeThreatIntelligenceEnabled,
    wafProfileId: s.wafProfileId,
    wafRequestBodyLimitAction: s.wafRequestBodyLimitAction,
    wafResponseBodyLimitAction: s.wafResponseBodyLimitAction,
    rateLimitRulesLimit: s.rateLimitRulesLimit,
    customWafRulesLimit: s.customWafRulesLimit,
    ddosShieldSensitivity: s.dDoSShieldSensitivity,
    ddosExecutionMode: s.dDoSExecutionMode,
    ddosChallengeWindow: s.dDoSChallengeWindow,
    whitelabelResponsePages: s.whitelabelResponsePages,
    // Every setting as the API named it, read or not above: what moved with a PATCH is compared on these.
    ...({ settings: s } as { settings?: Readonly<Record<string, unknown>> }),
  }));

export const paginationSchema = z.looseObject({
  totalCount: nullish(z.number().int()),
  totalPages: nullish(z.number().int()),
  currentPage: nullish(z.number().int()),
  nextPage: nullish(z.number().int()),
  pageSize: nullish(z.number().int()),
});

export const getShieldZonesResponseSchema = z
  .looseObject({
    data: nullish(rowsOf(shieldZoneSchema, ["shieldZoneId"])),
    page: nullish(paginationSchema),
  })
  .transform(({ data, ...r }) => ({ ...r, data: data?.rows ?? null, skipped: data?.skipped ?? 0 }));

export type ShieldZone = z.output<typeof shieldZoneSchema>;

/**
 * A zone's WAF rule ids in `wafDisabledRules` or `wafLogOnlyRules` (where a triggered rule's review shows),
 * read from its settings as the API sent them: null and [] both none, anything but strings left out.
 */
export function zoneWafRules(zone: ShieldZone, field: "wafDisabledRules" | "wafLogOnlyRules"): string[] {
  const v = zone.settings?.[field];
  return Array.isArray(v) ? v.filter((r): r is string => typeof r === "string") : [];
}
export interface ShieldZonePage {
  items: ShieldZone[];
  /** Zones without a shieldZoneId (optional in the document), left out. */
  skipped?: number;
  page: number;
  perPage: number;
  totalCount?: number;
  totalPages?: number;
  /** The next page number, or null on the last page. */
  nextPage: number | null;
  hasNext: boolean;
}

// ---- bot detection --------------------------------------------------------------------------------

const sensitivityConfigSchema = z
  .looseObject({ sensitivity: optIntEnum() })
  .nullish()
  .transform((c) => ({ sensitivity: c?.sensitivity ?? null }));

export const botDetectionStateSchema = z
  .looseObject({
    shieldZoneId: nullish(z.number().int()),
    requestIntegrity: sensitivityConfigSchema,
    ipAddress: sensitivityConfigSchema,
    // A bare reference in the document: .NET writes a missing one as null, read as nothing said.
    browserFingerprint: z
      .looseObject({
        sensitivity: optIntEnum(),
        aggression: optIntEnum(),
        complexEnabled: nullish(z.boolean()),
      })
      .nullish(),
    executionMode: optIntEnum(),
  })
  .transform((s) => ({
    shieldZoneId: s.shieldZoneId,
    requestIntegrity: s.requestIntegrity,
    ipAddress: s.ipAddress,
    browserFingerprint: {
      sensitivity: s.browserFingerprint?.sensitivity ?? null,
      aggression: s.browserFingerprint?.aggression ?? null,
      complexEnabled: s.browserFingerprint?.complexEnabled ?? null,
    },
    executionMode: s.executionMode,
  }));

export const botDetectionResponseSchema = shieldEnvelope(botDetectionStateSchema);

export type BotDetection = z.output<typeof botDetectionStateSchema>;

// ---- bot categorization ---------------------------------------------------------------------------

export const botSchema = z
  .looseObject({
    botId: z.number().int(),
    userAgentMatch: nullish(z.string()),
    category: intEnum(),
    action: intEnum(),
    isVerifiable: z.boolean(),
  })
  .transform((b) => ({
    botId: b.botId,
    userAgentMatch: b.userAgentMatch,
    category: b.category,
    action: b.action,
    isVerifiable: b.isVerifiable,
  }));

export const botCategorizationGroupSchema = z
  .looseObject({
    category: intEnum(),
    categoryAction: intEnum(),
    bots: nullish(z.array(botSchema)),
  })
  .transform((g) => ({ category: g.category, action: g.categoryAction, bots: g.bots ?? [] }));

export const botCategorizationListResponseSchema = z.looseObject({
  categories: nullish(z.array(botCategorizationGroupSchema)),
  error: nullish(genericRequestResponseSchema),
});

/** One bot category with its current category-level action (0 None, 1 Block, 2 Allow) and its bots. */
export type BotCategory = z.output<typeof botCategorizationGroupSchema>;
export type Bot = z.output<typeof botSchema>;

// ---- rate-limit metrics ---------------------------------------------------------------------------

const countersSchema = z
  .looseObject({
    totalBreaches: nullish(z.number().int()),
    loggedBreaches: nullish(z.number().int()),
    challengedBreaches: nullish(z.number().int()),
    blockedBreaches: nullish(z.number().int()),
  })
  .transform((c) => ({
    totalBreaches: c.totalBreaches ?? 0,
    loggedBreaches: c.loggedBreaches ?? 0,
    challengedBreaches: c.challengedBreaches ?? 0,
    blockedBreaches: c.blockedBreaches ?? 0,
  }));

export type RateLimitCounters = z.output<typeof countersSchema>;

export interface RateLimitDay extends RateLimitCounters {
  /** The day as `YYYY-MM-DD` when its key reads as a date, else the key as the API wrote it. */
  day: string;
  /** Unix ms the key names; null when it does not read as a date. */
  at: number | null;
}

/**
 * The 28-day map (a day per key, the format unspecified) by date; keys that do not read as a date
 * follow, as written and in the order they came, and are named in `unreadableDays`.
 */
function datedDays(raw: Record<string, RateLimitCounters> | null | undefined): {
  days: RateLimitDay[];
  unreadableDays: string[];
} {
  const read = readDateKeys(Object.keys(raw ?? {}));
  const all = Object.entries(raw ?? {}).map(([key, c]) => ({ key, at: read(key), c }));
  const dated = all.filter((d) => d.at !== null).sort((a, b) => (a.at ?? 0) - (b.at ?? 0));
  const undated = all.filter((d) => d.at === null);
  return {
    days: [...dated, ...undated].map(({ key, at, c }) => ({ day: at === null ? key : isoDay(at), at, ...c })),
    unreadableDays: undated.map((d) => d.key),
  };
}

export const rateLimitMetricsSchema = z
  .looseObject({
    overview: nullish(countersSchema),
    ratelimitOverviewPastTwentyEightDays: nullish(z.record(z.string(), countersSchema)),
  })
  .transform((m) => ({ overview: m.overview, ...datedDays(m.ratelimitOverviewPastTwentyEightDays) }));

export const rateLimitMetricsResponseSchema = shieldEnvelope(rateLimitMetricsSchema);

export type RateLimitMetrics = z.output<typeof rateLimitMetricsSchema>;

// ---- WAF AI recommendation (not wrapped in data) --------------------------------------------------

export const wafAiRecommendationSchema = z
  .looseObject({
    shieldZoneId: nullish(z.number().int()),
    ruleId: nullish(z.string()),
    success: nullish(z.boolean()),
    recommendation: nullish(z.string()),
    errorResponse: nullish(genericRequestResponseSchema),
  })
  .transform((r) => ({
    shieldZoneId: r.shieldZoneId,
    ruleId: r.ruleId,
    success: r.success ?? r.recommendation !== null,
    recommendation: r.recommendation,
    /** The API's explanation when it could not give a recommendation. */
    message: r.errorResponse?.message ?? null,
  }));

export type WafAiRecommendation = z.output<typeof wafAiRecommendationSchema>;

// ---- one shield zone ------------------------------------------------------------------------------

/** GET /shield/shield-zone/{id}: GetShieldZoneResponse `{data: ShieldZoneResponse}`. */
export const getShieldZoneResponseSchema = z.looseObject({
  // The document leaves shieldZoneId optional: a zone read by its id without one is that zone (0 here,
  // the id asked for in the client).
  data: nullish(
    z.preprocess(
      (d) =>
        d !== null && typeof d === "object" && (d as { shieldZoneId?: unknown }).shieldZoneId == null
          ? { ...d, shieldZoneId: 0 }
          : d,
      shieldZoneSchema,
    ),
  ),
  error: nullish(genericRequestResponseSchema),
});

// ---- metrics overview (no time range: today's counters and the past 28 days) ---------------------

const count = () =>
  z
    .number()
    .int()
    .nullish()
    .transform((v) => v ?? 0);

export const shieldMetricsOverviewSchema = z
  .looseObject({
    overview: nullish(
      z.looseObject({
        dDoSMitigated: count(),
        wafTriggeredRules: count(),
        ratelimitBreaches: count(),
        botDetectionChallenged: count(),
        accessListActions: count(),
      }),
    ),
    totalCleanRequestsLimit: nullish(z.number().int()),
    totalBillableRequests: nullish(z.number().int()),
  })
  .transform((m) => ({
    ddosMitigated: m.overview?.dDoSMitigated ?? 0,
    wafTriggeredRules: m.overview?.wafTriggeredRules ?? 0,
    rateLimitBreaches: m.overview?.ratelimitBreaches ?? 0,
    botDetectionChallenged: m.overview?.botDetectionChallenged ?? 0,
    accessListActions: m.overview?.accessListActions ?? 0,
    totalCleanRequestsLimit: m.totalCleanRequestsLimit,
    totalBillableRequests: m.totalBillableRequests,
  }));

export const getShieldZoneMetricsOverviewResponseSchema = shieldEnvelope(shieldMetricsOverviewSchema);

export type ShieldMetricsOverview = z.output<typeof shieldMetricsOverviewSchema>;

// ---- detailed metrics overview (a time range at a resolution) ------------------------------------

/** MetricsOverviewResolution. */
export const METRICS_RESOLUTION = {
  auto: 0,
  twoMinutes: 1,
  tenMinutes: 2,
  hourly: 3,
  daily: 4,
  weekly: 5,
  monthly: 6,
} as const;
export type MetricsResolution = (typeof METRICS_RESOLUTION)[keyof typeof METRICS_RESOLUTION];

/** The Unix ms a series key names (any date form of `parseDateKey`); else NaN. */
export function seriesKeyTime(key: string): number {
  return parseDateKey(key) ?? Number.NaN;
}

export interface MetricPoint {
  /** Unix ms of the start of the point's interval. */
  at: number;
  /** Counts by name (e.g. blocked, logged, challenged) in that interval. */
  values: Readonly<Record<string, number>>;
}

type SeriesMap = Readonly<Record<string, Readonly<Record<string, number>> | null | undefined>>;

export interface OverviewMetric {
  /** By time, oldest first. */
  points: MetricPoint[];
  totals: Record<string, number> | null;
  /** Time keys that did not read as a date: their counts are missing from `points`. */
  unreadableKeys: string[];
}

/** One level of a series map's keys read as dates together (`readDateKeys`), with what decides which level is time. */
interface LevelReading {
  keys: readonly string[];
  /** Each key's Unix ms, in `keys`' order; null when it does not read as a date. */
  times: ReadonlyArray<number | null>;
  /** Keys that read as dates, or whose day and month could be either way round (still a date, of a day not known). */
  dated: number;
  /** Keys with a digit in them. */
  digits: number;
}

/**
 * The levels read lately: an answer's seven features share their time keys, and a minute's checks of a key's zones
 * their answers' keys, so each list of keys is read once, not once per feature and zone.
 */
const levelReadings = new LruCache<string, LevelReading>(64);

function readLevel(keys: readonly string[]): LevelReading {
  const id = `${keys.length}\u0000${keys[0]}\u0000${keys.at(-1)}`;
  const seen = levelReadings.get(id);
  if (seen && seen.keys.length === keys.length && seen.keys.every((k, i) => k === keys[i])) return seen;
  const read = readDateKeys(keys);
  const times: Array<number | null> = [];
  let dated = 0;
  let digits = 0;
  for (const k of keys) {
    const t = read(k);
    times.push(t);
    if (t !== null || dayMonthEitherWay(k)) dated++;
    if (/\d/.test(k)) digits++;
  }
  const reading = { keys, times, dated, digits };
  levelReadings.set(id, reading);
  return reading;
}

const isPlain = (v: unknown): v is Record<string, unknown> => {
  if (typeof v !== "object" || v === null) return false;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
};

/**
 * The metric read from `metrics` and `totals` as they came, checking them as it goes; undefined when anything
 * is not a plain map of safe integers (or has a `__proto__` key, which the shape's check leaves out), so the
 * shape's own check decides and words the fault.
 */
function readMetric(
  raw: SeriesMap,
  totalsIn: Readonly<Record<string, unknown>> | null,
): OverviewMetric | undefined {
  let totals: Record<string, number> | null = null;
  if (totalsIn !== null) {
    totals = {};
    for (const k in totalsIn) {
      const v = totalsIn[k];
      if (k === "__proto__" || !Number.isSafeInteger(v)) return undefined;
      totals[k] = v as number;
    }
  }
  const outer: string[] = [];
  const innerSeen = new Set<string>();
  for (const k in raw) {
    if (k === "__proto__") return undefined;
    outer.push(k);
    const series = raw[k];
    if (series === null || series === undefined) continue;
    if (!isPlain(series)) return undefined;
    for (const ik in series) {
      if (ik === "__proto__" || !Number.isSafeInteger(series[ik])) return undefined;
      innerSeen.add(ik);
    }
  }
  const inner = [...innerSeen];
  const outerLevel = readLevel(outer);
  const innerLevel = readLevel(inner);
  // The level with more keys that read as dates is time; with none, the one with more digits in its keys.
  const timeOuter =
    outerLevel.dated !== innerLevel.dated
      ? outerLevel.dated > innerLevel.dated
      : outerLevel.digits >= innerLevel.digits;
  const level = timeOuter ? outerLevel : innerLevel;
  const unreadableKeys: string[] = [];
  for (let i = 0; i < level.keys.length; i++)
    if (level.times[i] === null) unreadableKeys.push(level.keys[i] as string);
  // Each inner key's time, when the inner level is time (`level` is then the inner keys' reading).
  const innerTime = new Map<string, number | null>(
    timeOuter ? [] : inner.map((k, i) => [k, level.times[i] ?? null]),
  );
  const byTime = new Map<number, Record<string, number>>();
  for (let i = 0; i < outer.length; i++) {
    const k = outer[i] as string;
    const series = raw[k];
    if (series === null || series === undefined) continue;
    if (timeOuter) {
      const at = level.times[i] ?? null;
      if (at === null) continue;
      // A time with no counts under it is no point.
      let values: Record<string, number> | undefined;
      for (const ik in series) {
        if (values === undefined) {
          values = byTime.get(at) ?? {};
          byTime.set(at, values);
        }
        values[ik] = (values[ik] ?? 0) + (series[ik] as number);
      }
    } else
      for (const ik in series) {
        const at = innerTime.get(ik) ?? null;
        if (at === null) continue;
        let values = byTime.get(at);
        if (values === undefined) {
          values = {};
          byTime.set(at, values);
        }
        values[k] = (values[k] ?? 0) + (series[ik] as number);
      }
  }
  const points: MetricPoint[] = [];
  for (const [at, values] of byTime) points.push({ at, values });
  points.sort((a, b) => a.at - b.at);
  return { points, totals, unreadableKeys };
}

/** The shape as the document gives it: the check whose faults are the answer's when `readMetric` refuses. */
const overviewMetricShape = z
  .looseObject({
    metrics: nullish(z.record(z.string(), nullish(z.record(z.string(), z.number().int())))),
    totals: nullish(z.record(z.string(), z.number().int())),
  })
  .nullish();

/**
 * OverviewMetric `{metrics: {string: {string: int64}}, totals: {string: int64}}`. The document does not
 * say which level of `metrics` is time: a time-keyed outer level (`{"2024-…": {blocked: 3}}`) and a
 * time-keyed inner level (`{blocked: {"2024-…": 3}}`) are both read into points sorted by time. Checked and
 * read in one pass by hand (a check of zones reads a hundred keys' answers of seven of these at once); only an
 * answer that pass refuses goes through the shape's zod check, for its faults' wording.
 */
export const overviewMetricSchema = z
  .unknown()
  .nullish()
  .transform((m, ctx): OverviewMetric => {
    if (m === null || m === undefined) return { points: [], totals: null, unreadableKeys: [] };
    if (isPlain(m)) {
      const { metrics, totals } = m as { metrics?: unknown; totals?: unknown };
      const raw = metrics ?? {};
      const t = totals ?? null;
      if (isPlain(raw) && (t === null || isPlain(t))) {
        const read = readMetric(raw as SeriesMap, t);
        if (read) return read;
      }
    }
    const checked = overviewMetricShape.safeParse(m);
    if (!checked.success) {
      for (const issue of checked.error.issues) ctx.addIssue(issue as never);
      return z.NEVER;
    }
    return readMetric(checked.data?.metrics ?? {}, checked.data?.totals ?? null) as OverviewMetric;
  });

const ACTION_COUNT = /block|challeng|logged/i;

/**
 * How many requests a feature acted on: a count named like a total (`total`, `totalRequests`) stands
 * for the whole; otherwise the per-action counts (blocked, challenged, logged) add up, and other
 * counters (DDoS `verifiedRequests`, `filesScanned`) are not actions. `match` picks one action.
 */
export function actedOnCount(values: Readonly<Record<string, number>>, match?: RegExp): number {
  const entries = Object.entries(values);
  if (match) return entries.filter(([k]) => match.test(k)).reduce((n, [, v]) => n + v, 0);
  const total = entries.find(([k]) => /^total/i.test(k));
  if (total) return total[1];
  const acted = entries.filter(([k]) => ACTION_COUNT.test(k));
  return (acted.length > 0 ? acted : entries).reduce((n, [, v]) => n + v, 0);
}

/** ShieldOverviewMetrics' data, each feature's series read by `feature` (the spec test passes its reference). */
export function detailedMetricsSchema(feature: z.ZodType<OverviewMetric>) {
  return z
    .looseObject({
      waf: feature,
      ddos: feature,
      rateLimit: feature,
      accessLists: feature,
      botDetection: feature,
      uploadScanning: feature,
      apiGuardian: feature,
      totalCleanRequestsLimit: nullish(z.number().int()),
      totalBillableRequestsThisMonth: nullish(z.number().int()),
      resolution: optIntEnum(),
    })
    .transform((d) => ({
      features: {
        waf: d.waf,
        ddos: d.ddos,
        rateLimit: d.rateLimit,
        accessLists: d.accessLists,
        botDetection: d.botDetection,
        uploadScanning: d.uploadScanning,
        apiGuardian: d.apiGuardian,
      },
      totalCleanRequestsLimit: d.totalCleanRequestsLimit,
      totalBillableRequestsThisMonth: d.totalBillableRequestsThisMonth,
      resolution: d.resolution,
    }));
}

export const shieldDetailedMetricsSchema = detailedMetricsSchema(overviewMetricSchema);

/** ShieldOverviewMetrics `{data, error}`. */
export const shieldOverviewMetricsResponseSchema = shieldEnvelope(shieldDetailedMetricsSchema);

export type ShieldDetailedMetrics = z.output<typeof shieldDetailedMetricsSchema>;
export type MetricFeature = keyof ShieldDetailedMetrics["features"];

/** The time keys of these features' series that did not read as a date (their counts are missing). */
export function unreadableMetricKeys(
  d: ShieldDetailedMetrics,
  features: readonly MetricFeature[] = Object.keys(d.features) as MetricFeature[],
): string[] {
  return [...new Set(features.flatMap((f) => d.features[f].unreadableKeys))];
}

/** Why a key like `09/08/2026` is no date edgeops can name. */
export const UNDECIDED_DAY_MONTH = "which names one day read day-first and another read month-first";

/** The sentence for metrics whose time keys edgeops cannot read as dates. */
export function unreadableMetricsSentence(keys: readonly string[], consequence: string): string {
  const shown = JSON.stringify((keys[0] ?? "").slice(0, 40));
  const more = keys.length > 1 ? ` and ${keys.length - 1} more` : "";
  const why = keys.every(dayMonthEitherWay)
    ? `${UNDECIDED_DAY_MONTH}, and no key of the answer says which`
    : "a form edgeops does not know";
  return `edgeops can't read this zone's metrics: the Edge API dated them as ${shown}${more}, ${why}, so ${consequence}; tell an admin.`;
}

// ---- event logs search ----------------------------------------------------------------------------

/** The event log keeps 72 hours: a search must end within them. */
export const EVENT_LOG_RETENTION_MS = 72 * 3_600_000;

/** Dimensions the event-log search can filter and group on. */
export const EVENT_LOG_DIMENSIONS = [
  "feature",
  "ruleId",
  "ip",
  "ja4",
  "ua",
  "url",
  "asn",
  "country",
  "action",
] as const;
export type EventLogDimension = (typeof EVENT_LOG_DIMENSIONS)[number];

/** EventLogsSearchRequest (times are Unix ms, UTC). */
export interface EventLogsSearch {
  from: number;
  to: number;
  query?: string;
  filters?: {
    field: EventLogDimension;
    op: "eq" | "in" | "contains" | "cidr" | "wildcard";
    value: string[];
  }[];
  groupBy?: EventLogDimension[];
  /** Sparkline buckets per group, 0..500. */
  buckets?: number;
  /** Zero-based. */
  page?: number;
  /** 1..500. */
  pageSize?: number;
}

const contextNumber = (ctx: Record<string, unknown>, ...names: string[]): number => {
  for (const [k, v] of Object.entries(ctx)) {
    if (!names.includes(k.toLowerCase())) continue;
    if (typeof v === "number" && Number.isFinite(v)) return v;
    if (typeof v === "string" && /^\d+$/.test(v)) return Number(v);
  }
  return 0;
};
const contextText = (ctx: Record<string, unknown>, name: string): string | null => {
  for (const [k, v] of Object.entries(ctx)) {
    if (k.toLowerCase() !== name) continue;
    if (typeof v === "string" && v.trim() !== "") return v;
    if (typeof v === "number") return String(v);
  }
  return null;
};

/** EventGroup; `context` is free-form in the document: the per-action counts, country and ASN are read from it. */
export const eventGroupSchema = z
  .looseObject({
    key: nullish(z.record(z.string(), nullish(z.string()))),
    count: z.number().int(),
    firstSeen: nullish(z.number().int()),
    lastSeen: nullish(z.number().int()),
    context: nullish(z.record(z.string(), z.unknown())),
    sparkline: nullish(z.array(z.number().int())),
  })
  .transform((g) => {
    const ctx = g.context ?? {};
    return {
      key: Object.fromEntries(Object.entries(g.key ?? {}).map(([k, v]) => [k, v ?? ""])) as Record<
        string,
        string
      >,
      count: g.count,
      firstSeen: g.firstSeen,
      lastSeen: g.lastSeen,
      actions: {
        blocked: contextNumber(ctx, "blocked"),
        challenged: contextNumber(ctx, "challenged"),
        logged: contextNumber(ctx, "logged"),
      },
      country: contextText(ctx, "country"),
      asn: contextText(ctx, "asn"),
      sparkline: g.sparkline ?? [],
    };
  });

export type EventGroup = z.output<typeof eventGroupSchema>;

export const eventLogsSearchResponseSchema = z
  .looseObject({
    rows: nullish(z.array(z.unknown())),
    groups: nullish(rowsOf(eventGroupSchema, ["count"])),
    total: nullish(z.number().int()),
    totalPages: nullish(z.number().int()),
    page: nullish(z.number().int()),
    errorResponse: nullish(genericRequestResponseSchema),
  })
  .transform((r) => ({
    groups: r.groups?.rows ?? [],
    /** Groups without a count (optional in the document), left out. */
    skippedGroups: r.groups?.skipped ?? 0,
    rowCount: r.rows?.length ?? 0,
    /** Rows, or distinct groups, in all; null when the answer did not say. */
    total: r.total ?? null,
    /** Pages of the request's size; null when the answer did not say (the document requires neither). */
    totalPages: r.totalPages ?? null,
    page: r.page ?? 0,
    errorResponse: r.errorResponse,
  }));

export type EventLogsSearchResult = Omit<z.output<typeof eventLogsSearchResponseSchema>, "errorResponse">;

/**
 * Whether the answer to page `page` (of `pageSize`) was the last: as its `totalPages` says, else as its `total`
 * says (the document promises neither, nor full pages), else when the page came back short. An empty page ends.
 */
export function isLastEventLogPage(r: EventLogsSearchResult, page: number, pageSize: number): boolean {
  const read = r.groups.length + r.skippedGroups + r.rowCount;
  if (read === 0) return true;
  if (r.totalPages !== null) return page + 1 >= r.totalPages;
  if (r.total !== null) return (page + 1) * pageSize >= r.total;
  return read < pageSize;
}

// ---- triggered WAF rules --------------------------------------------------------------------------

export const triggeredRuleSchema = z
  .looseObject({
    ruleId: nullish(z.string()),
    ruleDescription: nullish(z.string()),
    topTargetedUrls: nullish(z.record(z.string(), z.number().int())),
    totalTriggeredRequests: count(),
    // ruleLogs (the raw logs) are not read.
  })
  .transform((r) => ({
    ruleId: r.ruleId,
    description: r.ruleDescription,
    triggeredRequests: r.totalTriggeredRequests,
    /** Busiest first. */
    topUrls: Object.entries(r.topTargetedUrls ?? {})
      .map(([url, hits]) => ({ url, hits }))
      .sort((a, b) => b.hits - a.hits),
  }));

export type TriggeredRule = z.output<typeof triggeredRuleSchema>;

export const getTriggeredRulesResponseSchema = z
  .looseObject({
    errorResponse: nullish(genericRequestResponseSchema),
    triggeredRules: nullish(z.array(triggeredRuleSchema)),
    totalTriggeredRules: nullish(z.number().int()),
  })
  .transform((r) => ({
    rules: r.triggeredRules,
    totalTriggeredRules: r.totalTriggeredRules,
    errorResponse: r.errorResponse,
  }));

export interface TriggeredRules {
  rules: TriggeredRule[];
  /** How many rules were triggered, as the API counts them. */
  totalTriggeredRules: number;
}

// ---- every rate limit of a zone -------------------------------------------------------------------

export const zoneRateLimitMetricsSchema = z
  .looseObject({
    ratelimitId: z.number().int(),
    overview: nullish(countersSchema),
    ratelimitOverviewPastTwentyEightDays: nullish(z.record(z.string(), countersSchema)),
  })
  .transform((m) => ({
    rateLimitId: m.ratelimitId,
    /** Over a period the document does not give: the 28 days are `days`. */
    overview: m.overview,
    /** Whether the 28-day map came (null: the rule's 28 days are unknown, not quiet). */
    daysCame: m.ratelimitOverviewPastTwentyEightDays !== null,
    ...datedDays(m.ratelimitOverviewPastTwentyEightDays),
  }));

export const getShieldZoneRateLimitMetricsResponseSchema = shieldEnvelope(
  rowsOf(zoneRateLimitMetricsSchema, ["ratelimitId"]),
).transform(({ data, ...r }) => ({ ...r, data: data?.rows ?? null, skipped: data?.skipped ?? 0 }));

export type ZoneRateLimitMetrics = z.output<typeof zoneRateLimitMetricsSchema>;

// ---- a zone's rate-limit rules (their names) -------------------------------------------------------

/** CustomWafRule as GET /shield/rate-limits/{shieldZoneId} lists it: the rule's id, zone and name. */
export const rateLimitRuleSchema = z
  .looseObject({
    id: z.number().int(),
    shieldZoneId: nullish(z.number().int()),
    ruleName: nullish(z.string()),
    ruleDescription: nullish(z.string()),
  })
  .transform((r) => ({
    id: r.id,
    shieldZoneId: r.shieldZoneId,
    name: r.ruleName,
    description: r.ruleDescription,
  }));

/** GetCustomWafRulesResponse: `{ data, page, error }`; rows without an id are left out and counted. */
export const getRateLimitRulesResponseSchema = z
  .looseObject({
    data: nullish(rowsOf(rateLimitRuleSchema, ["id"])),
    page: nullish(paginationSchema),
    error: nullish(genericRequestResponseSchema),
  })
  .transform(({ data, ...r }) => ({ ...r, data: data?.rows ?? null, skipped: data?.skipped ?? 0 }));

export type RateLimitRule = z.output<typeof rateLimitRuleSchema>;

/**
 * GET /shield/rate-limit/{id}: one rule, bare (the document names CustomWafRule, unwrapped); its id, zone and
 * name. A body without an id carries no rule (an AcceptedResult, or a refusal in `errorResponse`).
 */
export const rateLimitRuleAnswerSchema = z.looseObject({
  id: nullish(z.number().int()),
  shieldZoneId: nullish(z.number().int()),
  ruleName: nullish(z.string()),
  errorResponse: nullish(genericRequestResponseSchema),
});
export interface RateLimitRulePage {
  items: RateLimitRule[];
  /** Rules without an id (optional in the document), left out. */
  skipped?: number;
  page: number;
  /** The next page number, or null on the last page. */
  nextPage: number | null;
  /** Null when the answer had no `page` member (the document does not require it): whether more follow is not said. */
  hasNext: boolean | null;
}

// ---- shield zone settings and WAF rule reviews (issue 14 mitigations) ------------------------------

/** DDoSShieldSensitivity: 0 Off, 1 Low, 2 Medium, 3 High, 4 Challenge. */
export const DDOS_SENSITIVITIES = [0, 1, 2, 3, 4] as const;
export type DdosSensitivity = (typeof DDOS_SENSITIVITIES)[number];
/** WAFExecutionMode: 0 Log, 1 Block. */
export const WAF_EXECUTION_MODES = [0, 1] as const;
export type WafExecutionMode = (typeof WAF_EXECUTION_MODES)[number];

/**
 * The fields of a PATCH /shield/shield-zone that edgeops changes. A change names only its own fields; the
 * document's ShieldZoneRequest does not say what becomes of the fields left out, so what else moved is
 * read back after the PATCH (otherSettingsMoved).
 */
export interface ShieldZoneUpdate {
  dDoSShieldSensitivity?: DdosSensitivity;
  wafExecutionMode?: WafExecutionMode;
  learningMode?: boolean;
  /** When learning mode ends (ISO 8601 date-time), sent with learningMode on. */
  learningModeUntil?: string;
}

/** ReviewActionType: 0 Ignore, 1 LogOnly, 2 DisableRule. */
export const WAF_REVIEW_ACTION_LABELS: IntLabels = { 0: "Ignore", 1: "Log only", 2: "Disable rule" };
export const WAF_REVIEW_ACTIONS = [0, 1, 2] as const;
export type WafReviewAction = (typeof WAF_REVIEW_ACTIONS)[number];
export const wafReviewActionLabel = (n: number | null | undefined) => intLabel(WAF_REVIEW_ACTION_LABELS, n);

// ---- access lists ---------------------------------------------------------------------------------

/** AccessListType. */
export const ACCESS_LIST_TYPES = { ip: 0, cidr: 1, asn: 2, country: 3, organization: 4, ja4: 5 } as const;
/** AccessListAction. */
export const ACCESS_LIST_ACTIONS = { none: 0, allow: 1, block: 2, challenge: 3, log: 4, bypass: 5 } as const;
export const ACCESS_LIST_ACTION_LABELS: IntLabels = {
  0: "None",
  1: "Allow",
  2: "Block",
  3: "Challenge",
  4: "Log",
  5: "Bypass",
};

/** AccessListDetails: one list in GET …/access-lists, with its configuration (action, enabled). */
export const accessListDetailsSchema = z
  .looseObject({
    listId: z.number().int(),
    configurationId: z.number().int(),
    name: nullish(z.string()),
    isEnabled: z.boolean(),
    type: intEnum(),
    action: intEnum(),
    entryCount: nullish(z.number().int()),
  })
  .transform((l) => ({
    listId: l.listId,
    configurationId: l.configurationId,
    name: l.name,
    isEnabled: l.isEnabled,
    type: l.type,
    action: l.action,
    entryCount: l.entryCount,
  }));
export type AccessListDetails = z.output<typeof accessListDetailsSchema>;

/** AccessListsDetailsResponse (not wrapped in `data`). */
export const accessListsResponseSchema = z.looseObject({
  managedLists: nullish(z.array(accessListDetailsSchema)),
  customLists: nullish(z.array(accessListDetailsSchema)),
  error: nullish(genericRequestResponseSchema),
});

/** CustomAccessList: a custom list with its content (entries separated by newlines). */
export const customAccessListSchema = z
  .looseObject({
    id: z.number().int(),
    name: nullish(z.string()),
    type: optIntEnum(),
    content: nullish(z.string()),
    checksum: nullish(z.string()),
  })
  .transform((l) => ({
    id: l.id,
    name: l.name,
    type: l.type,
    content: l.content ?? "",
    checksum: l.checksum,
  }));
export type CustomAccessList = z.output<typeof customAccessListSchema>;

/** CustomAccessListResponse. */
export const customAccessListResponseSchema = shieldEnvelope(customAccessListSchema);

/** CustomAccessListResponse's `data.id` when there is one; any other 2xx body means no id given. */
export const createdListIdSchema = ignoredBody.transform((b): number | null => {
  const d = (b as { data?: { id?: unknown } } | null | undefined)?.data;
  return typeof d?.id === "number" && Number.isSafeInteger(d.id) && d.id > 0 ? d.id : null;
});
