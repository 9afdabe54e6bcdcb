import type { Button } from "@slack/types";
import { wafRuleReviewKind } from "../../changes/kinds/waf-rule-review.js";
import type { WafReviewAction } from "../../edge/schemas/shield.js";
import { ACTIONS } from "../ids.js";
import type { ChangeButtonValue } from "./approvals.js";
import { button, confirmDialog } from "./block-kit.js";
import { mrkdwn } from "./mrkdwn.js";

const REVIEWS: ReadonlyArray<{ action: WafReviewAction; id: string; label: string; effect: string }> = [
  { action: 0, id: "ignore", label: "Ignore", effect: "marks it reviewed and leaves it as it is" },
  {
    action: 1,
    id: "log_only",
    label: "Log only",
    effect: "makes it log matching requests instead of blocking them",
  },
  { action: 2, id: "disable", label: "Disable rule", effect: "turns it off for this zone" },
];

/**
 * Ignore / Log only / Disable rule for one triggered WAF rule: each a change request (kind
 * waf_rule_review) through the generic Confirm flow, after a Slack confirm dialog. Distinct action
 * ids (`edge.change.confirm.<review>`) because they share an actions block.
 */
export function wafReviewButtons(zoneId: number, ruleId: string, newRequestId: () => string): Button[] {
  return REVIEWS.map(({ action, id, label, effect }) => {
    const value: ChangeButtonValue = {
      r: newRequestId(),
      k: wafRuleReviewKind.name,
      p: { shieldZoneId: zoneId, ruleId, action },
    };
    const b = button(
      label,
      `${ACTIONS.changeConfirm}.${id}`,
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
