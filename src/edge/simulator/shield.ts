/**
 * Shield family: envelope `{ data, error: { statusCode, success, message, errorKey } }` (`error` is null on success),
 * except the bot categorization list (`{ categories, error }`) and the AI recommendation (not wrapped).
 */
import { type HandlerContext, intParam, isPlainObject, json, type SimResponse } from "./http.js";
import type { ShieldGenericResponse } from "./seed.js";

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
  const data = zones.slice((page - 1) * perPage, page * perPage).map((z) => structuredClone(z));
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

/** GET /shield/shield-zone/{id}/bot-detection -> { data: BotDetectionConfigurationState, error } */
export function getBotDetection(ctx: HandlerContext): SimResponse {
  const id = intParam(ctx.params[0]);
  const state = id === undefined ? undefined : ctx.state.botDetection.get(id);
  if (!zoneExists(ctx, id) || state === undefined) {
    return json(404, { data: null, error: zoneNotFound(ctx.params[0]) });
  }
  return json(200, { data: structuredClone(state), error: null });
}

const planLacksCategorization = (status: number) =>
  err(
    status,
    "Bot categorization is not available on this Shield Zone's plan. Upgrade to Advanced or higher.",
    "invalid_plan_type.bot_categorization",
  );

/** GET /shield/shield-zone/{id}/bot-categorization -> { categories: BotCategorizationGroup[], error } */
export function getBotCategories(ctx: HandlerContext): SimResponse {
  const id = intParam(ctx.params[0]);
  if (!zoneExists(ctx, id)) return json(404, { categories: null, error: zoneNotFound(ctx.params[0]) });
  if (ctx.state.botCategorizationUnavailable.has(id)) {
    const status = ctx.state.planFeatureErrorStatus;
    return json(status, { categories: null, error: planLacksCategorization(status) });
  }
  const groups = ctx.state.botCategories.get(id) ?? [];
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
  let groups = ctx.state.botCategories.get(id);
  if (groups === undefined) {
    groups = [];
    ctx.state.botCategories.set(id, groups);
  }
  const group = groups.find((g) => g.category === category);
  if (group) group.categoryAction = action;
  else groups.push({ category, categoryAction: action, bots: [] });
  return json(200, { data: { category, action }, error: null });
}

/** GET /shield/metrics/rate-limit/{id} -> { data: { overview, ratelimitOverviewPastTwentyEightDays }, error } */
export function getRateLimitMetrics(ctx: HandlerContext): SimResponse {
  const id = intParam(ctx.params[0]);
  const metrics = id === undefined ? undefined : ctx.state.rateLimitMetrics.get(id);
  if (metrics === undefined) {
    // Not documented for this endpoint; answered in the Shield envelope like its siblings.
    return envelopeError(404, `Rate limit ${ctx.params[0] ?? ""} not found.`, "rate_limit.not_found");
  }
  return json(200, { data: structuredClone(metrics), error: null });
}

/** GET /shield/waf/rules/review-triggered/ai-recommendation/{zoneId}/{ruleId} -> unwrapped recommendation. */
export function getAiRecommendation(ctx: HandlerContext): SimResponse {
  const zoneId = intParam(ctx.params[0]);
  const ruleId = decodeURIComponent(ctx.params[1] ?? "");
  const rec = ctx.state.wafRecommendations.get(`${zoneId}/${ruleId}`);
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
