import type { WafAiRecommendation } from "../../edge/schemas/shield.js";
import { context, escapeMrkdwn, header, packLines, type Reply } from "./common.js";

export function wafMessage(zoneId: number, ruleId: string, r: WafAiRecommendation): Reply {
  const title = header(`WAF rule ${ruleId} · AI recommendation`);
  const where = context(`Shield zone ${zoneId} · rule ${escapeMrkdwn(ruleId)}`);
  if (!r.success || !r.recommendation) {
    const reason = r.message ? escapeMrkdwn(r.message) : "The Edge API gave no reason.";
    return {
      text: `No AI recommendation for WAF rule ${ruleId}`,
      blocks: [
        title,
        where,
        ...packLines([`:information_source: No recommendation for this rule. ${reason}`], 3),
      ],
    };
  }
  // The recommendation is free text from the API: escape it so it cannot mention, link or format.
  const paragraphs = escapeMrkdwn(r.recommendation).split(/\n/);
  return {
    text: `AI recommendation for WAF rule ${ruleId}`,
    blocks: [title, where, ...packLines(paragraphs, 40, "lines")],
  };
}
