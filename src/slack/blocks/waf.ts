import type { WafAiRecommendation } from "../../edge/schemas/shield.js";
import { context, header, packLines, type Reply, reply } from "./common.js";

export function wafMessage(zoneId: number, ruleId: string, r: WafAiRecommendation): Reply {
  const title = header(`WAF rule ${ruleId} · AI recommendation`);
  const where = context(`Shield zone ${zoneId} · rule ${ruleId}`);
  if (!r.success || !r.recommendation) {
    const reason = r.message ?? "The Edge API gave no reason.";
    return reply(`No AI recommendation for WAF rule ${ruleId}`, [
      title,
      where,
      ...packLines([`:information_source: No recommendation for this rule. ${reason}`], 3),
    ]);
  }
  return reply(`AI recommendation for WAF rule ${ruleId}`, [
    title,
    where,
    ...packLines(r.recommendation.split(/\n/), 40, "lines"),
  ]);
}
