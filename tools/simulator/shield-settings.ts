/**
 * Shield zone writes used by the issue 14 mitigations: PATCH /shield/shield-zone (UpdateShieldZoneRequest, a field
 * left out is left as it is) and POST /shield/waf/rules/review-triggered/{id} (UpdateReviewTriggeredRuleRequest).
 * Both keep state: the PATCH changes what GET /shield/shield-zone/{id} and the zones list return; a review is
 * recorded, and LogOnly / DisableRule move the rule into the zone's wafLogOnlyRules / wafDisabledRules.
 */
import { type HandlerContext, intParam, isPlainObject, json, problem, type SimResponse } from "./http.js";
import type { ShieldZone } from "./seed.js";
import { triggeredRules } from "./shield.js";

type Check = (v: unknown) => boolean;

const isInt = (v: unknown) => typeof v === "number" && Number.isSafeInteger(v);
const oneOf =
  (...values: number[]): Check =>
  (v) =>
    typeof v === "number" && values.includes(v);
const nullable =
  (check: Check): Check =>
  (v) =>
    v === null || check(v);
const isBool = (v: unknown) => typeof v === "boolean";
const isDateTime = (v: unknown) => typeof v === "string" && !Number.isNaN(Date.parse(v));
const arrayOf =
  (check: Check): Check =>
  (v) =>
    Array.isArray(v) && v.every(check);
const isString = (v: unknown) => typeof v === "string";
const isEngineVariable = (v: unknown) =>
  isPlainObject(v) &&
  Object.keys(v).every((k) => k === "name" || k === "valueEncoded") &&
  nullable(isString)(v.name) &&
  nullable(isString)(v.valueEncoded);

/** ShieldZoneRequest's properties and what each accepts (the document's types, enums and nullability). */
const SHIELD_ZONE_REQUEST: Readonly<Record<string, Check>> = {
  shieldZoneId: isInt,
  premiumPlan: nullable(isBool),
  planType: oneOf(0, 1, 2, 3),
  learningMode: nullable(isBool),
  learningModeUntil: nullable(isDateTime),
  wafEnabled: nullable(isBool),
  wafExecutionMode: oneOf(0, 1),
  wafDisabledRules: nullable(arrayOf(isString)),
  wafLogOnlyRules: nullable(arrayOf(isString)),
  wafCustomRuleOrder: nullable(arrayOf(isInt)),
  wafRequestHeaderLoggingEnabled: nullable(isBool),
  requestBodyLoggingEnabled: nullable(isBool),
  wafRequestIgnoredHeaders: nullable(arrayOf(isString)),
  wafRealtimeThreatIntelligenceEnabled: nullable(isBool),
  wafProfileId: nullable(isInt),
  wafEngineConfig: nullable(arrayOf(isEngineVariable)),
  wafRequestBodyLimitAction: oneOf(0, 1, 2),
  wafResponseBodyLimitAction: oneOf(0, 1, 2),
  dDoSShieldSensitivity: oneOf(0, 1, 2, 3, 4),
  dDoSChallengeWindow: nullable(isInt),
  whitelabelResponsePages: nullable(isBool),
};

const invalidBody = (path: string, field: string, message: string) =>
  problem(400, message, path, { [field]: [message] });

/** The zone as ShieldZoneRequest shows it (the update's echo). */
function asRequest(zone: ShieldZone): Record<string, unknown> {
  const z = zone as unknown as Record<string, unknown>;
  return Object.fromEntries(
    Object.keys(SHIELD_ZONE_REQUEST)
      .filter((k) => k in z)
      .map((k) => [k, structuredClone(z[k])]),
  );
}

/**
 * PATCH /shield/shield-zone body UpdateShieldZoneRequest `{ shieldZoneId, shieldZone: ShieldZoneRequest }` ->
 * UpdateShieldZoneResponse `{ data: UpdateShieldZoneRequest, error }`. Absent and null fields are left as they are.
 */
export function patchShieldZone(ctx: HandlerContext): SimResponse {
  const body = ctx.body;
  if (!isPlainObject(body))
    return invalidBody(ctx.path, "$", "The request body must be a JSON object {shieldZoneId, shieldZone}.");
  const extra = Object.keys(body).filter((k) => k !== "shieldZoneId" && k !== "shieldZone");
  if (extra.length > 0) return invalidBody(ctx.path, extra[0]!, `Unknown field(s): ${extra.join(", ")}.`);
  if (!isInt(body.shieldZoneId))
    return invalidBody(ctx.path, "shieldZoneId", "The shieldZoneId field is required.");
  const id = body.shieldZoneId as number;
  const update = body.shieldZone ?? {};
  if (!isPlainObject(update))
    return invalidBody(ctx.path, "shieldZone", "shieldZone must be a JSON object (ShieldZoneRequest).");
  for (const [field, value] of Object.entries(update)) {
    const check = SHIELD_ZONE_REQUEST[field];
    if (check === undefined) return invalidBody(ctx.path, `shieldZone.${field}`, `Unknown field: ${field}.`);
    if (!check(value))
      return invalidBody(ctx.path, `shieldZone.${field}`, `The value of ${field} is not valid.`);
  }
  if (update.shieldZoneId !== undefined && update.shieldZoneId !== id)
    return invalidBody(
      ctx.path,
      "shieldZone.shieldZoneId",
      "shieldZone.shieldZoneId differs from shieldZoneId.",
    );
  const zone = ctx.state.shieldZones.find((z) => z.shieldZoneId === id);
  if (zone === undefined) return problem(404, `Shield Zone ${id} not found.`, ctx.path);
  const target = zone as unknown as Record<string, unknown>;
  for (const [field, value] of Object.entries(update)) {
    if (value === null || field === "shieldZoneId" || field === "premiumPlan") continue;
    target[field] = structuredClone(value);
  }
  if (update.learningMode === false) zone.learningModeUntil = null;
  return json(200, { data: { shieldZoneId: id, shieldZone: asRequest(zone) }, error: null });
}

const REVIEW_ACTIONS = [0, 1, 2];

/** Moves `ruleId` into `into` (a set) and out of `from`. */
function moveRule(ruleId: string, into: string[] | null, from: string[] | null): [string[], string[]] {
  const kept = (from ?? []).filter((r) => r !== ruleId);
  const added = into?.includes(ruleId) ? into : [...(into ?? []), ruleId];
  return [added, kept];
}

/**
 * POST /shield/waf/rules/review-triggered/{id} body UpdateReviewTriggeredRuleRequest `{ ruleId, action }` ->
 * UpdateReviewTriggeredRuleResponse `{ errorResponse, success }`. The rule must be one the zone triggered.
 */
export function reviewTriggeredRule(ctx: HandlerContext): SimResponse {
  const id = intParam(ctx.params[0]);
  const body = ctx.body;
  if (!isPlainObject(body))
    return invalidBody(ctx.path, "$", "The request body must be a JSON object {ruleId, action}.");
  const extra = Object.keys(body).filter((k) => k !== "ruleId" && k !== "action");
  if (extra.length > 0) return invalidBody(ctx.path, extra[0]!, `Unknown field(s): ${extra.join(", ")}.`);
  const { ruleId, action } = body;
  if (typeof ruleId !== "string" || ruleId.trim() === "")
    return invalidBody(ctx.path, "ruleId", "The ruleId field is required.");
  if (typeof action !== "number" || !REVIEW_ACTIONS.includes(action))
    return invalidBody(ctx.path, "action", "action must be 0 (Ignore), 1 (LogOnly) or 2 (DisableRule).");
  const zone = id === undefined ? undefined : ctx.state.shieldZones.find((z) => z.shieldZoneId === id);
  if (zone === undefined || id === undefined) {
    return json(404, {
      errorResponse: {
        statusCode: 404,
        success: false,
        message: `Shield Zone ${ctx.params[0] ?? ""} not found.`,
        errorKey: "shield_zone.not_found",
      },
      success: false,
    });
  }
  if (!triggeredRules(ctx, id)?.some((r) => r.ruleId === ruleId)) {
    return json(404, {
      errorResponse: {
        statusCode: 404,
        success: false,
        message: `No triggered rule ${ruleId} for this Shield Zone.`,
        errorKey: "waf.triggered_rule.not_found",
      },
      success: false,
    });
  }
  if (action === 1)
    [zone.wafLogOnlyRules, zone.wafDisabledRules] = moveRule(
      ruleId,
      zone.wafLogOnlyRules,
      zone.wafDisabledRules,
    );
  if (action === 2)
    [zone.wafDisabledRules, zone.wafLogOnlyRules] = moveRule(
      ruleId,
      zone.wafDisabledRules,
      zone.wafLogOnlyRules,
    );
  ctx.state.wafRuleReviews.push({ shieldZoneId: id, ruleId, action, at: ctx.now });
  return json(200, { errorResponse: null, success: true });
}
