import { z } from "zod";
import {
  type ShieldZone,
  type WafReviewAction,
  wafReviewActionLabel,
  zoneWafRules,
} from "../../edge/schemas/shield.js";
import { edgeClientFor } from "../../services/edge-access.js";
import type { ChangeKind } from "../kind.js";

export const wafRuleReviewParams = z.object({
  shieldZoneId: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER),
  ruleId: z.string().regex(/^[\w.:-]{1,100}$/),
  /** ReviewActionType: 0 Ignore, 1 LogOnly, 2 DisableRule. */
  action: z.union([z.literal(0), z.literal(1), z.literal(2)]),
});
export type WafRuleReviewParams = z.output<typeof wafRuleReviewParams>;

/** The word a user types for each review action. */
export const WAF_REVIEW_WORDS: Readonly<Record<string, WafReviewAction>> = {
  ignore: 0,
  log: 1,
  "log-only": 1,
  disable: 2,
};
const wordFor = (a: WafReviewAction) => (a === 0 ? "ignore" : a === 1 ? "log-only" : "disable");

/** Where a rule stands in its zone (GET /shield/shield-zone/{id}: wafDisabledRules, wafLogOnlyRules). */
export type WafRuleState = "disabled" | "log-only" | "neither";

function ruleState(zone: ShieldZone, ruleId: string): WafRuleState {
  if (zoneWafRules(zone, "wafDisabledRules").includes(ruleId)) return "disabled";
  if (zoneWafRules(zone, "wafLogOnlyRules").includes(ruleId)) return "log-only";
  return "neither";
}

/** What a review shows in the zone: Log only in its log-only rules, Disable rule in its disabled rules. */
const SHOWS: Readonly<Record<1 | 2, WafRuleState>> = { 1: "log-only", 2: "disabled" };

/**
 * Review a triggered WAF rule (ignore it, make it log only, or disable it). Log only and Disable rule are
 * read back in the zone's wafLogOnlyRules / wafDisabledRules: applied only when the zone shows the rule
 * there; the documents do not promise it shows at once, so until it does the outcome is not known yet (the
 * reconciler reads again). Ignoring shows nowhere the documents name: a one-off action. No undo.
 */
export const wafRuleReviewKind: ChangeKind<WafRuleReviewParams, WafRuleState> = {
  name: "waf_rule_review",
  params: wafRuleReviewParams,
  approvers: "policy",
  policyName: "waf",
  risk: "medium",
  oneOff: (p) => p.action === 0,
  notShownMeansUnknown: true,
  describe: (p) =>
    p.action === 0
      ? `Ignore triggered WAF rule ${p.ruleId} on shield zone ${p.shieldZoneId}`
      : p.action === 1
        ? `Make WAF rule ${p.ruleId} log only on shield zone ${p.shieldZoneId}`
        : `Disable WAF rule ${p.ruleId} on shield zone ${p.shieldZoneId}`,
  target: (p) => `shield zone ${p.shieldZoneId} / WAF rule ${p.ruleId}`,
  details: (p) => [
    { label: "Shield zone", value: String(p.shieldZoneId) },
    { label: "WAF rule", value: p.ruleId },
    { label: "Review", value: wafReviewActionLabel(p.action) },
  ],
  askAgain: (p) => `/edge waf ${p.shieldZoneId} ${p.ruleId} ${wordFor(p.action)}`,
  async readCurrent(deps, scope, p) {
    if (p.action === 0) return null;
    const client = await edgeClientFor(deps, scope.teamId);
    return ruleState(await client.getShieldZone(p.shieldZoneId), p.ruleId);
  },
  valueLabel: (v) =>
    v === "disabled"
      ? "the rule among the zone's disabled rules"
      : v === "log-only"
        ? "the rule among the zone's log-only rules"
        : v === "neither"
          ? "the rule in neither the zone's disabled nor its log-only rules"
          : "unknown",
  inForce: (p, current) => p.action !== 0 && current === SHOWS[p.action],
  // The rule lists are settings of the zone, which its PATCH writes too.
  lockKey: (p) => `shield-zone:${p.shieldZoneId}:settings`,
  async apply(deps, scope, p) {
    const client = await edgeClientFor(deps, scope.teamId);
    await client.reviewTriggeredWafRule(p.shieldZoneId, p.ruleId, p.action);
    return undefined;
  },
};
