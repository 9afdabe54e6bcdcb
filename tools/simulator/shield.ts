/**
 * Shield family: envelope `{ data, error: { statusCode, success, message, errorKey } }` (`error` is null on success),
 * except the bot categorization list (`{ categories, error }`) and the AI recommendation (not wrapped).
 */
import { dateKeyFormatOf, rekeyDays } from "./date-keys.js";
import { type HandlerContext, intParam, isPlainObject, json, problem, type SimResponse } from "./http.js";
import {
  type BotCategoryGroup,
  type ShieldGenericResponse,
  type ShieldZone,
  type WafRecommendation,
  wafRuleAdvice,
  zoneHost,
} from "./seed.js";
import { breachOverview, zoneRuleMetrics } from "./shield-metrics.js";
import {
  clustersBetween,
  DAY_MS,
  type EventCluster,
  eventId,
  eventRange,
  eventTime,
  extraRuleId,
  MINUTE_MS,
  serverZoneFor,
  statusFor,
  wafRuleInfo,
  zoneModel,
} from "./traffic.js";

const err = (statusCode: number, message: string, errorKey: string): ShieldGenericResponse => ({
  statusCode,
  success: false,
  message,
  errorKey,
});

const envelopeError = (status: number, message: string, errorKey: string): SimResponse =>
  json(status, { data: null, error: err(status, message, errorKey) });

const zoneNotFound = (id: string | undefined) =>
  err(404, `Shield Zone ${id ?? ""} not found.`, "shield_zone.not_found");

function zoneExists(ctx: HandlerContext, id: number | undefined): id is number {
  return id !== undefined && ctx.state.shieldZones.some((z) => z.shieldZoneId === id);
}

/** GET /shield/shield-zones?page&perPage -> { data: ShieldZone[], page: PaginationResponse } */
export function listShieldZones(ctx: HandlerContext): SimResponse {
  const num = (raw: string | undefined, def: number) => {
    const n = raw === undefined || raw === "" ? def : Number(raw);
    return Number.isInteger(n) ? n : def;
  };
  const page = Math.max(1, num(ctx.query.page, 1));
  const perPage = Math.min(1000, Math.max(1, num(ctx.query.perPage, 10)));
  const zones = ctx.state.shieldZones;
  const totalPages = Math.ceil(zones.length / perPage);
  const data = zones.slice((page - 1) * perPage, page * perPage).map((z) => zoneAsAnswered(ctx, z));
  return json(200, {
    data,
    page: {
      totalCount: zones.length,
      totalPages,
      currentPage: page,
      nextPage: page < totalPages ? page + 1 : null,
      pageSize: perPage,
    },
  });
}

/**
 * A zone as GET answers it. The documents do not say what a zone reads once its learningModeUntil has passed:
 * still on with the end past (friendly), off with the end kept, or off with no end
 * ("shield-settings.learning-expiry").
 */
function zoneAsAnswered(ctx: HandlerContext, zone: ShieldZone): ShieldZone {
  const z = structuredClone(zone);
  const until = z.learningModeUntil === null ? Number.NaN : Date.parse(z.learningModeUntil);
  if (z.learningMode !== true || !(until <= ctx.now)) return z;
  const form = ctx.adversary.choose(
    "shield-settings.learning-expiry",
    ["as-set", "off-until-kept", "off-until-cleared"],
    z.shieldZoneId,
  );
  if (form !== "as-set") z.learningMode = false;
  if (form === "off-until-cleared") z.learningModeUntil = null;
  return z;
}

/**
 * GET /shield/shield-zone/{id} -> GetShieldZoneResponse `{ data }` (no `error` member in the document); an unknown
 * zone answers the framework's 404 problem details.
 */
export function getShieldZone(ctx: HandlerContext): SimResponse {
  const id = intParam(ctx.params[0]);
  const zone = id === undefined ? undefined : ctx.state.shieldZones.find((z) => z.shieldZoneId === id);
  if (zone === undefined) return problem(404, `Shield Zone ${ctx.params[0] ?? ""} not found.`, ctx.path);
  return json(200, { data: zoneAsAnswered(ctx, zone) });
}

/** GET /shield/shield-zone/{id}/bot-detection -> { data: BotDetectionConfigurationState, error } */
export function getBotDetection(ctx: HandlerContext): SimResponse {
  const id = intParam(ctx.params[0]);
  const state = id === undefined ? undefined : ctx.state.botDetection.get(id);
  if (!zoneExists(ctx, id) || state === undefined) {
    return json(404, { data: null, error: zoneNotFound(ctx.params[0]) });
  }
  if (ctx.state.shieldZones.find((z) => z.shieldZoneId === id)?.planType === 0) {
    // A Basic plan has no bot detection: the 202 the Terraform provider handles.
    const status = ctx.state.planFeatureErrorStatus;
    return json(status, {
      data: null,
      error: err(
        status,
        "Bot detection is not available on this Shield Zone's plan. Upgrade to Advanced or higher.",
        "invalid_plan_type.bot_detection",
      ),
    });
  }
  // Its three objects are bare $refs, which the document (Swashbuckle) cannot mark nullable: any may be null.
  const data: Record<string, unknown> = structuredClone(state) as unknown as Record<string, unknown>;
  for (const field of ["requestIntegrity", "ipAddress", "browserFingerprint"])
    if (ctx.adversary.chance("shield.null-objects", 0.3, `${id}:${field}`)) data[field] = null;
  return json(200, { data, error: null });
}

const planLacksCategorization = (status: number) =>
  err(
    status,
    "Bot categorization is not available on this Shield Zone's plan. Upgrade to Advanced or higher.",
    "invalid_plan_type.bot_categorization",
  );

/** A zone's bot categories as the calling key sees them: its own copy where keys keep their own. */
function botGroupsOf(ctx: HandlerContext, id: number | undefined): BotCategoryGroup[] | undefined {
  if (id === undefined) return undefined;
  if (ctx.accessKey === undefined) return ctx.state.botCategories.get(id);
  const own = ctx.state.botCategoriesByKey.get(`${ctx.accessKey} ${id}`);
  if (own) return own;
  const shared = ctx.state.botCategories.get(id);
  if (shared === undefined) return undefined;
  const copy = structuredClone(shared);
  ctx.state.botCategoriesByKey.set(`${ctx.accessKey} ${id}`, copy);
  return copy;
}

function setBotGroups(ctx: HandlerContext, id: number, groups: BotCategoryGroup[]): void {
  if (ctx.accessKey === undefined) ctx.state.botCategories.set(id, groups);
  else ctx.state.botCategoriesByKey.set(`${ctx.accessKey} ${id}`, groups);
}

/** GET /shield/shield-zone/{id}/bot-categorization -> { categories: BotCategorizationGroup[], error } */
export function getBotCategories(ctx: HandlerContext): SimResponse {
  const id = intParam(ctx.params[0]);
  if (!zoneExists(ctx, id)) return json(404, { categories: null, error: zoneNotFound(ctx.params[0]) });
  if (ctx.state.botCategorizationUnavailable.has(id)) {
    const status = ctx.state.planFeatureErrorStatus;
    return json(status, { categories: null, error: planLacksCategorization(status) });
  }
  const groups = botGroupsOf(ctx, id) ?? [];
  return json(200, { categories: structuredClone(groups), error: null });
}

/** PUT /shield/shield-zone/{id}/bot-categorization/categories/{category} body exactly {"action": 0|1|2}. */
export function putBotCategory(ctx: HandlerContext): SimResponse {
  const id = intParam(ctx.params[0]);
  if (!zoneExists(ctx, id)) return json(404, { data: null, error: zoneNotFound(ctx.params[0]) });
  const category = intParam(ctx.params[1]);
  if (category === 255) {
    return envelopeError(
      400,
      "The System bot category is read-only.",
      "bot_categorization.category_read_only",
    );
  }
  if (category === undefined || category > 7) {
    return envelopeError(400, "category must be one of 0..7.", "validation.invalid_category");
  }
  const body = ctx.body;
  if (!isPlainObject(body)) {
    return envelopeError(
      400,
      'The request body must be a JSON object {"action": n}.',
      "validation.invalid_body",
    );
  }
  const extra = Object.keys(body).filter((k) => k !== "action");
  if (extra.length > 0) {
    return envelopeError(400, `Unknown field(s): ${extra.join(", ")}.`, "validation.unknown_field");
  }
  const action = body.action;
  if (typeof action !== "number" || !Number.isInteger(action) || action < 0 || action > 2) {
    return envelopeError(
      400,
      "action must be 0 (None), 1 (Block) or 2 (Allow).",
      "validation.invalid_action",
    );
  }
  if (ctx.state.botCategorizationUnavailable.has(id)) {
    const status = ctx.state.planFeatureErrorStatus;
    return json(status, { data: null, error: planLacksCategorization(status) });
  }
  let groups = botGroupsOf(ctx, id);
  if (groups === undefined) {
    groups = [];
    setBotGroups(ctx, id, groups);
  }
  const group = groups.find((g) => g.category === category);
  if (group) group.categoryAction = action;
  else groups.push({ category, categoryAction: action, bots: [] });
  return json(200, { data: { category, action }, error: null });
}

/** GET /shield/metrics/rate-limit/{id} -> { data: { overview, ratelimitOverviewPastTwentyEightDays }, error } */
export function getRateLimitMetrics(ctx: HandlerContext): SimResponse {
  const id = intParam(ctx.params[0]);
  const metrics =
    id === undefined ? undefined : (ctx.state.rateLimitMetrics.get(id) ?? zoneRuleMetrics(ctx, id));
  if (metrics === undefined) {
    // Not documented for this endpoint; answered in the Shield envelope like its siblings.
    return envelopeError(404, `Rate limit ${ctx.params[0] ?? ""} not found.`, "rate_limit.not_found");
  }
  // The seeded rules keep ISO days; the zones' rules are already written in the run's format.
  const seeded = id === undefined ? undefined : ctx.state.rateLimitMetrics.get(id);
  const days = seeded?.ratelimitOverviewPastTwentyEightDays;
  const data =
    seeded && days
      ? {
          ...structuredClone(seeded),
          overview: breachOverview(ctx, seeded.overview),
          ratelimitOverviewPastTwentyEightDays: rekeyDays(days, dateKeyFormatOf(ctx)),
        }
      : structuredClone(metrics);
  return json(200, { data, error: null });
}

/** GET /shield/waf/rules/review-triggered/ai-recommendation/{zoneId}/{ruleId} -> unwrapped recommendation. */
export function getAiRecommendation(ctx: HandlerContext): SimResponse {
  const zoneId = intParam(ctx.params[0]);
  const ruleId = decodeURIComponent(ctx.params[1] ?? "");
  const rec =
    ctx.state.wafRecommendations.get(`${zoneId}/${ruleId}`) ??
    (zoneId === undefined ? undefined : generatedRecommendation(ctx, zoneId, ruleId));
  if (zoneId === undefined || rec === undefined) {
    const known = zoneExists(ctx, zoneId);
    return json(404, {
      shieldZoneId: zoneId ?? 0,
      ruleId,
      success: false,
      recommendation: null,
      errorResponse: known
        ? err(404, `No triggered rule ${ruleId} for this Shield Zone.`, "waf.triggered_rule.not_found")
        : zoneNotFound(ctx.params[0]),
    });
  }
  return json(200, structuredClone(rec));
}

// ---- triggered WAF rules --------------------------------------------------------------------------------

/** The review covers the last 24 hours. */
const TRIGGERED_WINDOW_MS = DAY_MS;
const TOP_URLS = 5;
const RULE_LOGS = 3;

interface TriggeredRule {
  ruleId: string;
  ruleDescription: string | null;
  topTargetedUrls: Record<string, number>;
  totalTriggeredRequests: number;
  ruleLogs: Array<{
    logId: string;
    timestamp: number;
    log: string;
    labels: Record<string, string>;
  }>;
}

function ruleLog(c: EventCluster, j: number, host: string) {
  const info = wafRuleInfo(c.ruleId);
  const status = String(statusFor(c.feature, c.action));
  return {
    logId: eventId(c, j),
    timestamp: eventTime(c, j),
    log: JSON.stringify({
      remoteIp: c.source.ip,
      userAgent: c.source.ua,
      ja4: c.source.ja4,
      method: c.method,
      host,
      url: c.url,
      action: c.action,
      status: Number(status),
      message: info?.description ?? null,
    }),
    labels: {
      asn: c.source.asn,
      country: c.source.country,
      ruleId: c.ruleId,
      severity: info?.severity ?? "CRITICAL",
      method: c.method,
      ruleGroup: info?.group ?? "REQUEST-949-BLOCKING-EVALUATION",
      status,
      serverZone: serverZoneFor(c),
    },
  };
}

/** The zone's triggered WAF rules over the last 24 hours, busiest first. */
export function triggeredRules(ctx: HandlerContext, zoneId: number): TriggeredRule[] | undefined {
  const m = zoneModel(ctx.state, zoneId);
  if (m === undefined) return undefined;
  const to = Math.floor(ctx.now / MINUTE_MS) * MINUTE_MS;
  const from = to - TRIGGERED_WINDOW_MS;
  const host = zoneHost(ctx.state, zoneId);
  const byRule = new Map<string, { total: number; urls: Map<string, number>; latest: EventCluster[] }>();
  for (const c of clustersBetween(m, from, to, ctx.now)) {
    if (c.feature !== "waf" || c.ruleId === "") continue;
    const [first, end] = eventRange(c, from, to);
    if (end <= first) continue;
    const r = byRule.get(c.ruleId) ?? {
      total: 0,
      urls: new Map<string, number>(),
      latest: [] as EventCluster[],
    };
    r.total += end - first;
    r.urls.set(c.url, (r.urls.get(c.url) ?? 0) + end - first);
    r.latest.push(c);
    if (r.latest.length > RULE_LOGS * 4) r.latest.splice(0, r.latest.length - RULE_LOGS * 4);
    byRule.set(c.ruleId, r);
  }
  const rules: TriggeredRule[] = [...byRule.entries()].map(([ruleId, r]) => ({
    ruleId,
    ruleDescription: wafRuleInfo(ruleId)?.description ?? null,
    topTargetedUrls: Object.fromEntries(
      [...r.urls.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, TOP_URLS),
    ),
    totalTriggeredRequests: r.total,
    ruleLogs: r.latest
      .slice(-RULE_LOGS)
      .reverse()
      .map((c) => ruleLog(c, c.count - 1, host)),
  }));
  for (let i = 0; i < m.traffic.extraTriggeredRules; i++) {
    const ruleId = extraRuleId(i);
    rules.push({
      ruleId,
      ruleDescription: `Custom signature ${i + 1}: probe for <${ruleId}> & *paths*`,
      topTargetedUrls: { [`/probe/${i}`]: 1 + (i % 7) },
      totalTriggeredRequests: 1 + (i % 7),
      ruleLogs: [],
    });
  }
  return rules.sort(
    (a, b) => b.totalTriggeredRequests - a.totalTriggeredRequests || (a.ruleId < b.ruleId ? -1 : 1),
  );
}

/** GET /shield/waf/rules/review-triggered/{shieldZoneId} -> GetTriggeredRulesResponse (last 24 hours). */
export function getTriggeredRules(ctx: HandlerContext): SimResponse {
  const id = intParam(ctx.params[0]);
  const rules = id === undefined ? undefined : triggeredRules(ctx, id);
  if (rules === undefined) {
    return json(404, {
      errorResponse: zoneNotFound(ctx.params[0]),
      triggeredRules: null,
      totalTriggeredRules: 0,
    });
  }
  return json(200, { errorResponse: null, triggeredRules: rules, totalTriggeredRules: rules.length });
}

/** A recommendation for a rule the zone triggered in the last 24 hours: its own numbers, then the advice. */
function generatedRecommendation(
  ctx: HandlerContext,
  zoneId: number,
  ruleId: string,
): WafRecommendation | undefined {
  const rule = triggeredRules(ctx, zoneId)?.find((r) => r.ruleId === ruleId);
  if (rule === undefined) return undefined;
  return {
    shieldZoneId: zoneId,
    ruleId,
    success: true,
    recommendation: `${ruleFacts(ruleId, rule)}\n${wafRuleAdvice(ruleId)}`,
    errorResponse: null,
  };
}

/** What the rule matched in the review's 24 hours, from the same numbers the triggered-rules list serves. */
function ruleFacts(ruleId: string, rule: TriggeredRule): string {
  const name = `Rule ${ruleId} (${rule.ruleDescription ?? "custom rule"})`;
  const total = rule.totalTriggeredRequests;
  const [url, count = 0] = Object.entries(rule.topTargetedUrls).sort((a, b) => b[1] - a[1])[0] ?? [];
  const n = (x: number) => x.toLocaleString("en-US");
  const matched = `${name} matched ${n(total)} request${total === 1 ? "" : "s"} in the last 24 hours`;
  if (url === undefined) return `${matched}.`;
  const share = Math.round((count / total) * 100);
  return `${matched}; the busiest URL, \`${url}\`, had ${n(count)} of them (${share}%).`;
}
