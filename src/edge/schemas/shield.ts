import { z } from "zod";
import { type IntLabels, intEnum, intLabel, nullish, optIntEnum } from "./common.js";

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
  }));

export const paginationSchema = z.looseObject({
  totalCount: nullish(z.number().int()),
  totalPages: nullish(z.number().int()),
  currentPage: nullish(z.number().int()),
  nextPage: nullish(z.number().int()),
  pageSize: nullish(z.number().int()),
});

export const getShieldZonesResponseSchema = z.looseObject({
  data: nullish(z.array(shieldZoneSchema)),
  page: nullish(paginationSchema),
});

export type ShieldZone = z.output<typeof shieldZoneSchema>;
export interface ShieldZonePage {
  items: ShieldZone[];
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
    browserFingerprint: z.looseObject({
      sensitivity: optIntEnum(),
      aggression: optIntEnum(),
      complexEnabled: nullish(z.boolean()),
    }),
    executionMode: optIntEnum(),
  })
  .transform((s) => ({
    shieldZoneId: s.shieldZoneId,
    requestIntegrity: s.requestIntegrity,
    ipAddress: s.ipAddress,
    browserFingerprint: {
      sensitivity: s.browserFingerprint.sensitivity,
      aggression: s.browserFingerprint.aggression,
      complexEnabled: s.browserFingerprint.complexEnabled,
    },
    executionMode: s.executionMode,
  }));

export const botDetectionResponseSchema = z.looseObject({
  data: nullish(botDetectionStateSchema),
  error: nullish(genericRequestResponseSchema),
});

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

export const updateBotCategoryResponseSchema = z.looseObject({
  data: nullish(z.looseObject({ category: intEnum(), action: intEnum() })),
  error: nullish(genericRequestResponseSchema),
});

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

export const rateLimitMetricsSchema = z
  .looseObject({
    overview: nullish(countersSchema),
    ratelimitOverviewPastTwentyEightDays: nullish(z.record(z.string(), countersSchema)),
  })
  .transform((m) => ({
    overview: m.overview,
    /** One entry per key of `ratelimitOverviewPastTwentyEightDays` (a day, format unspecified), sorted by key. */
    days: Object.entries(m.ratelimitOverviewPastTwentyEightDays ?? {})
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([day, c]) => ({ day, ...c })),
  }));

export const rateLimitMetricsResponseSchema = z.looseObject({
  data: nullish(rateLimitMetricsSchema),
  error: nullish(genericRequestResponseSchema),
});

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
