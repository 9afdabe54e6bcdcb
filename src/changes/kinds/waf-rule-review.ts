import { z } from "zod";
import { type WafReviewAction, wafReviewActionLabel } from "../../edge/schemas/shield.js";
import { oneOffKind } from "./one-off.js";

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

/**
 * Review a triggered WAF rule (ignore it, make it log only, or disable it). The review list shows no
 * rule's state, so there is nothing to read back: a one-off action with no undo.
 */
export const wafRuleReviewKind = oneOffKind<WafRuleReviewParams>({
  name: "waf_rule_review",
  params: wafRuleReviewParams,
  policyName: "waf",
  risk: "medium",
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
  call: (client, p) => client.reviewTriggeredWafRule(p.shieldZoneId, p.ruleId, p.action),
});
