import type { WafAiRecommendation } from "../../edge/schemas/shield.js";
import { actions, context, header, packLines } from "./block-kit.js";
import { type Reply, reply } from "./reply.js";
import { wafReviewButtons } from "./waf-review.js";

/** The AI recommendation for a triggered rule, with Ignore / Log only / Disable rule under it. */
export function wafMessage(
  zoneId: number,
  ruleId: string,
  r: WafAiRecommendation,
  newRequestId: () => string,
): Reply {
  const title = header(`WAF rule ${ruleId} · AI recommendation`);
  const where = context(`Shield zone ${zoneId} · rule ${ruleId}`);
  const review = actions(...wafReviewButtons(zoneId, ruleId, newRequestId));
  if (!r.success || !r.recommendation) {
    const reason = r.message ?? "The Edge API gave no reason.";
    return reply(`No AI recommendation for WAF rule ${ruleId}`, [
      title,
      where,
      ...packLines([`:information_source: No recommendation for this rule. ${reason}`], 3),
      review,
    ]);
  }
  return reply(`AI recommendation for WAF rule ${ruleId}`, [
    title,
    where,
    ...packLines(r.recommendation.split(/\n/), 40, "lines"),
    review,
  ]);
}
