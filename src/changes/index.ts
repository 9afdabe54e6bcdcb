import type { ChangeRequest } from "../store/index.js";
import type { ChangeKind } from "./kind.js";
import { accessBlockKind } from "./kinds/access-block.js";
import { botCategoryKind } from "./kinds/bot-category.js";
import { policyKind } from "./kinds/policy.js";
import { purgeKind } from "./kinds/purge.js";
import { restartAppKind } from "./kinds/restart-app.js";
import { ddosSensitivityKind, learningModeKind, wafModeKind } from "./kinds/shield-zone-setting.js";
import { wafRuleReviewKind } from "./kinds/waf-rule-review.js";
import { POLICY_GATED_KINDS } from "./policy-coverage.js";

// biome-ignore lint/suspicious/noExplicitAny: each kind has its own parameter and value types
const KINDS: Readonly<Record<string, ChangeKind<any, any>>> = Object.freeze(
  Object.fromEntries([policyKind, ...POLICY_GATED_KINDS].map((k) => [k.name, k])),
);

/** A stored request with its kind and checked parameters. */
export interface ResolvedChange {
  // biome-ignore lint/suspicious/noExplicitAny: see KINDS
  kind: ChangeKind<any, any>;
  params: unknown;
}

/** The kind of a stored request and its parameters, or undefined for a kind or shape this version does not know. */
export function resolveChange(r: Pick<ChangeRequest, "kind" | "params">): ResolvedChange | undefined {
  const kind = KINDS[r.kind];
  if (!kind) return undefined;
  const parsed = kind.params.safeParse(r.params);
  return parsed.success ? { kind, params: parsed.data } : undefined;
}

/** "Block AI scraper on shield zone 1234", or a neutral sentence for a request this version can't read. */
export function describeRequest(r: Pick<ChangeRequest, "kind" | "params">): string {
  const c = resolveChange(r);
  return c ? c.kind.describe(c.params) : `A ${r.kind.replace(/_/g, " ")} change`;
}

export type { ChangeKind, ChangeScope } from "./kind.js";
export { coveredKinds, policyCovers, policyWords } from "./policy-coverage.js";
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
