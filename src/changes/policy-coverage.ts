import { EVERY_CHANGE } from "../store/index.js";
import { type ChangeKind, RISK_LEVELS } from "./kind.js";
import { accessBlockKind } from "./kinds/access-block.js";
import { botCategoryKind } from "./kinds/bot-category.js";
import { purgeKind } from "./kinds/purge.js";
import { restartAppKind } from "./kinds/restart-app.js";
import { ddosSensitivityKind, learningModeKind, wafModeKind } from "./kinds/shield-zone-setting.js";
import { wafRuleReviewKind } from "./kinds/waf-rule-review.js";

/**
 * The kinds a channel's policy can require approvals for (its approvers decide them). The policy kind
 * itself is decided by admins and reads this list (is a new policy looser?), so it is not on it: that
 * keeps kinds/policy.ts and the table of every kind (index.ts) free of a circle.
 */
// biome-ignore lint/suspicious/noExplicitAny: each kind has its own parameter and value types
export const POLICY_GATED_KINDS: readonly ChangeKind<any, any>[] = Object.freeze([
  botCategoryKind,
  restartAppKind,
  purgeKind,
  ddosSensitivityKind,
  wafModeKind,
  learningModeKind,
  wafRuleReviewKind,
  accessBlockKind,
]);

/** Words a policy accepts after `for`: the names of the changes it can gate, and the risk levels. */
export function policyWords(): string[] {
  return [...POLICY_GATED_KINDS.map((k) => k.policyName), ...RISK_LEVELS];
}

/** Whether a policy's `approvalsFor` list (names, risk levels, or "*") covers this kind. */
export function policyCovers(
  approvalsFor: readonly string[],
  kind: Pick<ChangeKind, "policyName" | "risk">,
): boolean {
  return approvalsFor.some((w) => w === EVERY_CHANGE || w === kind.policyName || w === kind.risk);
}

/** The kinds a policy's approvals cover, by name (for comparing two policies). */
export function coveredKinds(approvalsFor: readonly string[]): string[] {
  return POLICY_GATED_KINDS.filter((k) => policyCovers(approvalsFor, k)).map((k) => k.policyName);
}
