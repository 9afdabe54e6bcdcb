import type { Button } from "@slack/types";
import { wafRuleReviewKind } from "../../changes/kinds/waf-rule-review.js";
import type { WafReviewAction } from "../../edge/schemas/shield.js";
import { ACTIONS } from "../ids.js";
import type { ChangeButtonValue } from "./approvals.js";
import { button, confirmDialog, mrkdwn } from "./common.js";

const REVIEWS: ReadonlyArray<{ action: WafReviewAction; label: string; effect: string }> = [
  { action: 0, label: "Ignore", effect: "marks it reviewed and leaves it as it is" },
  { action: 1, label: "Log only", effect: "makes it log matching requests instead of blocking them" },
  { action: 2, label: "Disable rule", effect: "turns it off for this zone" },
];

/**
 * Ignore / Log only / Disable rule for one triggered WAF rule: each a change request (kind
 * waf_rule_review) through the generic Confirm flow, after a Slack confirm dialog.
 */
export function wafReviewButtons(zoneId: number, ruleId: string, newRequestId: () => string): Button[] {
  return REVIEWS.map(({ action, label, effect }) => {
    const value: ChangeButtonValue = {
      r: newRequestId(),
      k: wafRuleReviewKind.name,
      p: { shieldZoneId: zoneId, ruleId, action },
    };
    const b = button(
      label,
      ACTIONS.changeConfirm,
      JSON.stringify(value),
      action === 2 ? "danger" : undefined,
    );
    b.confirm = confirmDialog(
      `${label}?`,
      mrkdwn`${label} on WAF rule ${ruleId} of shield zone ${zoneId} ${effect}. Approval may be required in this channel.`,
      label,
      action === 2 ? "danger" : "primary",
    );
    return b;
  });
}
