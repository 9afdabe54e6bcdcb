/**
 * Shield zone writes used by the issue 14 mitigations: PATCH /shield/shield-zone (UpdateShieldZoneRequest) and
 * POST /shield/waf/rules/review-triggered/{id} (UpdateReviewTriggeredRuleRequest). Both keep state: the PATCH
 * changes what GET /shield/shield-zone/{id} and the zones list return; a review is recorded, and LogOnly /
 * DisableRule move the rule into the zone's wafLogOnlyRules / wafDisabledRules.
 *
 * The documents do not say what a PATCH does to the fields it was not sent: the friendly simulator keeps them;
 * the adversary may reset them ("shield-settings.patch-absent"), answer an unchanged empty one in its other
 * empty form ("shield-settings.empty-form": a rule list null <-> [], a nullable boolean null -> false) and
 * reorder wafEngineConfig ("shield-settings.waf-engine-order").
 */
import { type HandlerContext, intParam, isPlainObject, json, problem, type SimResponse } from "./http.js";
import type { ShieldZone, SimulatorState } from "./seed.js";
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

/** ShieldZoneRequest's lists: null and [] both say "none" (uniqueItems sets, and the engine variables). */
const LIST_FIELDS = [
  "wafDisabledRules",
  "wafLogOnlyRules",
  "wafCustomRuleOrder",
  "wafRequestIgnoredHeaders",
  "wafEngineConfig",
] as const;
/** ShieldZoneResponse's nullable booleans. */
const NULLABLE_BOOLEANS = [
  "learningMode",
  "wafEnabled",
  "wafRealtimeThreatIntelligenceEnabled",
  "whitelabelResponsePages",
] as const;
/** The request model's value for a field not sent (nullable: null; an enum: 0), where a PATCH resets it. */
const RESET: Readonly<Record<string, unknown>> = {
  learningMode: null,
  learningModeUntil: null,
  wafEnabled: null,
  wafExecutionMode: 0,
  wafDisabledRules: null,
  wafLogOnlyRules: null,
  wafCustomRuleOrder: null,
  // Not nullable in ShieldZoneResponse: a null request value reads back false.
  wafRequestHeaderLoggingEnabled: false,
  requestBodyLoggingEnabled: false,
  wafRequestIgnoredHeaders: null,
  wafRealtimeThreatIntelligenceEnabled: null,
  wafProfileId: null,
  wafEngineConfig: null,
  wafRequestBodyLimitAction: 0,
  wafResponseBodyLimitAction: 0,
  dDoSShieldSensitivity: 0,
  dDoSChallengeWindow: null,
  whitelabelResponsePages: null,
};

/** What the fields a PATCH was not sent read as afterwards, where the documents leave it open. */
function untouchedAfterPatch(ctx: HandlerContext, zone: ShieldZone, sent: ReadonlySet<string>): void {
  const target = zone as unknown as Record<string, unknown>;
  const id = zone.shieldZoneId;
  if (ctx.adversary.choose("shield-settings.patch-absent", ["keep", "reset"], id) === "reset")
    for (const [field, value] of Object.entries(RESET))
      if (!sent.has(field)) target[field] = structuredClone(value);
  for (const field of LIST_FIELDS) {
    const v = target[field];
    if (sent.has(field) || !(v === null || (Array.isArray(v) && v.length === 0))) continue;
    const other = v === null ? [] : null;
    target[field] = ctx.adversary.choose("shield-settings.empty-form", [v, other], `${id}:${field}`);
  }
  for (const field of NULLABLE_BOOLEANS)
    if (!sent.has(field) && target[field] === null)
      target[field] = ctx.adversary.choose("shield-settings.empty-form", [null, false], `${id}:${field}`);
  if (!sent.has("wafEngineConfig") && zone.wafEngineConfig !== null)
    zone.wafEngineConfig = ctx.adversary.order("shield-settings.waf-engine-order", zone.wafEngineConfig, id);
}

/**
 * PATCH /shield/shield-zone body UpdateShieldZoneRequest `{ shieldZoneId, shieldZone: ShieldZoneRequest }` ->
 * UpdateShieldZoneResponse `{ data: UpdateShieldZoneRequest, error }`. A null field is not a change; what the
 * fields not sent become is untouchedAfterPatch's.
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
  const sent = new Set<string>();
  for (const [field, value] of Object.entries(update)) {
    if (value === null || field === "shieldZoneId" || field === "premiumPlan") continue;
    target[field] = structuredClone(value);
    sent.add(field);
  }
  if (update.learningMode === false) {
    zone.learningModeUntil = null;
    sent.add("learningModeUntil");
  }
  untouchedAfterPatch(ctx, zone, sent);
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

/** What `/sim dashboard` can change on a zone, as a person would in the bunny.net dashboard (not via the API). */
export const DASHBOARD_SETTINGS: Readonly<
  Record<string, { field: string; words: Readonly<Record<string, number | boolean>> }>
> = {
  "waf-mode": { field: "wafExecutionMode", words: { log: 0, block: 1 } },
  waf: { field: "wafEnabled", words: { on: true, off: false } },
  ddos: { field: "dDoSShieldSensitivity", words: { off: 0, low: 1, medium: 2, high: 3, challenge: 4 } },
  learning: { field: "learningMode", words: { on: true, off: false } },
};

/**
 * A change made in the dashboard: the zone's setting moves directly, no request recorded. Returns the
 * sentence that says what changed, or why nothing did.
 */
export function changeInDashboard(
  state: SimulatorState,
  shieldZoneId: number,
  setting: string,
  word: string,
): { ok: boolean; sentence: string } {
  if (setting.toLowerCase().startsWith("bot:")) return botInDashboard(state, shieldZoneId, setting, word);
  const s = DASHBOARD_SETTINGS[setting.toLowerCase()];
  if (s === undefined)
    return {
      ok: false,
      sentence: `"${setting}" is not a setting /sim dashboard changes: use ${Object.keys(DASHBOARD_SETTINGS).join(", ")}.`,
    };
  const value = s.words[word.toLowerCase()];
  if (value === undefined)
    return {
      ok: false,
      sentence: `"${word}" is not a value of ${setting}: use ${Object.keys(s.words).join(", ")}.`,
    };
  const zone = state.shieldZones.find((z) => z.shieldZoneId === shieldZoneId);
  if (zone === undefined)
    return { ok: false, sentence: `There is no shield zone ${shieldZoneId} in the simulator.` };
  const target = zone as unknown as Record<string, unknown>;
  const before =
    Object.entries(s.words).find(([, v]) => v === target[s.field])?.[0] ?? String(target[s.field]);
  target[s.field] = value;
  if (s.field === "learningMode" && value === false) zone.learningModeUntil = null;
  return {
    ok: true,
    sentence: `Changed in the dashboard (not through edgeops): shield zone ${shieldZoneId} ${setting} ${before} → ${word.toLowerCase()}.`,
  };
}

const BOT_WORDS: Readonly<Record<string, number>> = { none: 0, block: 1, allow: 2 };
const BOT_NAMES: Readonly<Record<string, number>> = {
  seo: 1,
  aiscraper: 2,
  aitool: 3,
  tool: 4,
  ads: 5,
  preview: 6,
  social: 7,
};

/** `bot:<category> none|block|allow`: a bot category's action, in every key's copy of the zone's categories. */
function botInDashboard(
  state: SimulatorState,
  shieldZoneId: number,
  setting: string,
  word: string,
): { ok: boolean; sentence: string } {
  const name = setting.slice(4).toLowerCase();
  const category = /^[1-7]$/.test(name) ? Number(name) : BOT_NAMES[name];
  if (category === undefined)
    return {
      ok: false,
      sentence: `"${name}" is not a bot category: use ${Object.keys(BOT_NAMES).join(", ")} or 1..7.`,
    };
  const action = BOT_WORDS[word.toLowerCase()];
  if (action === undefined)
    return { ok: false, sentence: `"${word}" is not a bot category action: use none, block, allow.` };
  const copies = [
    state.botCategories.get(shieldZoneId),
    ...[...state.botCategoriesByKey].filter(([k]) => k.endsWith(` ${shieldZoneId}`)).map(([, v]) => v),
  ];
  let changed = 0;
  for (const groups of copies)
    for (const g of groups ?? [])
      if (g.category === category) {
        g.categoryAction = action;
        changed++;
      }
  return changed === 0
    ? { ok: false, sentence: `Shield zone ${shieldZoneId} has no bot category ${name} in the simulator.` }
    : {
        ok: true,
        sentence: `Changed in the dashboard (not through edgeops): shield zone ${shieldZoneId} bot category ${name} → ${word.toLowerCase()}.`,
      };
}
