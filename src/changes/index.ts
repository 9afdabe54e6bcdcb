import { type ApprovalRequest, EVERY_CHANGE } from "../store/index.js";
import { type ChangeKind, RISK_LEVELS } from "./kind.js";
import { accessBlockKind } from "./kinds/access-block.js";
import { botCategoryKind } from "./kinds/bot-category.js";
import { policyKind } from "./kinds/policy.js";
import { purgeKind } from "./kinds/purge.js";
import { restartAppKind } from "./kinds/restart-app.js";
import { ddosSensitivityKind, learningModeKind, wafModeKind } from "./kinds/shield-zone-setting.js";
import { wafRuleReviewKind } from "./kinds/waf-rule-review.js";

// Built on first use, not at load: kinds/policy.ts reads the table back (coverage of a policy), and an
// import cycle must not meet a half-initialised table.
// biome-ignore lint/suspicious/noExplicitAny: each kind has its own parameter and value types
let table: Readonly<Record<string, ChangeKind<any, any>>> | undefined;
function kindsTable() {
  table ??= Object.freeze({
    [botCategoryKind.name]: botCategoryKind,
    [policyKind.name]: policyKind,
    [restartAppKind.name]: restartAppKind,
    [purgeKind.name]: purgeKind,
    [ddosSensitivityKind.name]: ddosSensitivityKind,
    [wafModeKind.name]: wafModeKind,
    [learningModeKind.name]: learningModeKind,
    [wafRuleReviewKind.name]: wafRuleReviewKind,
    [accessBlockKind.name]: accessBlockKind,
  });
  return table;
}

/** Words a policy accepts after `for`: the names of the changes it can gate, and the risk levels. */
export function policyWords(): string[] {
  return [
    ...Object.values(kindsTable())
      .filter((k) => k.approvers === "policy")
      .map((k) => k.policyName),
    ...RISK_LEVELS,
  ];
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
  return Object.values(kindsTable())
    .filter((k) => k.approvers === "policy" && policyCovers(approvalsFor, k))
    .map((k) => k.policyName);
}

/** A stored request with its kind and checked parameters. */
export interface ResolvedChange {
  // biome-ignore lint/suspicious/noExplicitAny: see KINDS
  kind: ChangeKind<any, any>;
  params: unknown;
}

/** The kind of a stored request and its parameters, or undefined for a kind or shape this version does not know. */
export function resolveChange(r: Pick<ApprovalRequest, "kind" | "params">): ResolvedChange | undefined {
  const kind = kindsTable()[r.kind];
  if (!kind) return undefined;
  const parsed = kind.params.safeParse(r.params);
  return parsed.success ? { kind, params: parsed.data } : undefined;
}

/** "Block AI scraper on shield zone 1234", or a neutral sentence for a request this version can't read. */
export function describeRequest(r: Pick<ApprovalRequest, "kind" | "params">): string {
  const c = resolveChange(r);
  return c ? c.kind.describe(c.params) : `A ${r.kind.replace(/_/g, " ")} change`;
}

export type { ChangeKind, ChangeScope } from "./kind.js";
export {
  accessBlockKind,
  botCategoryKind,
  ddosSensitivityKind,
  learningModeKind,
  policyKind,
  purgeKind,
  restartAppKind,
  wafModeKind,
  wafRuleReviewKind,
};
