import { WAF_REVIEW_WORDS, wafRuleReviewKind } from "../../changes/kinds/waf-rule-review.js";
import { EdgeApiError } from "../../edge/errors.js";
import { UserError, usage } from "../../errors.js";
import { edgeClientFor } from "../../services/edge-access.js";
import { resolveShieldZoneId } from "../../services/zone-lookup.js";
import { confirmChangeMessage } from "../blocks/approvals.js";
import { wafMessage } from "../blocks/waf.js";
import { newChangeRequest, newRequestId } from "../request-ids.js";
import { noMoreArgs, parseZoneRef } from "./parse.js";
import type { Subcommand } from "./types.js";

const EXAMPLE = "/edge waf 1234 920100";
const DOMAIN_EXAMPLE = "/edge waf shop.example.com 920100";
const REVIEW_EXAMPLE = "/edge waf 1234 920100 disable";

export const wafCommand: Subcommand = {
  name: "waf",
  usage: "waf <shieldZoneId|domain> <ruleId> [ignore|log-only|disable]",
  summary:
    "The AI recommendation for a WAF rule that was triggered in a shield zone, with Ignore / Log only / Disable rule; or ask for one of those.",
  examples: [EXAMPLE, DOMAIN_EXAMPLE, REVIEW_EXAMPLE],
  shareable: (args) => args.length < 3,
  async run(ctx) {
    const zone = parseZoneRef(ctx.args[0], EXAMPLE, DOMAIN_EXAMPLE);
    const ruleId = ctx.args[1];
    if (!ruleId || !/^[\w.:-]{1,100}$/.test(ruleId))
      throw usage(`Which rule? Give the zone id and the rule id: ${EXAMPLE}`);
    const word = ctx.args[2]?.toLowerCase();
    const action = word === undefined ? undefined : WAF_REVIEW_WORDS[word];
    if (word !== undefined && (action === undefined || !Object.hasOwn(WAF_REVIEW_WORDS, word)))
      throw usage(
        `"${ctx.args[2]}" is not a review: use ignore, log-only or disable. For example: ${REVIEW_EXAMPLE}`,
      );
    noMoreArgs(ctx.args, 3, REVIEW_EXAMPLE);
    const zoneId = await resolveShieldZoneId(ctx.env.deps, ctx.teamId, zone, EXAMPLE);
    if (action !== undefined)
      return confirmChangeMessage(
        newChangeRequest(wafRuleReviewKind, { shieldZoneId: zoneId, ruleId, action }),
      );
    const client = await edgeClientFor(ctx.env.deps, ctx.teamId);
    const recommendation = await client.getWafAiRecommendation(zoneId, ruleId).catch(async (err: unknown) => {
      // The API's 404 does not say whether the zone or the rule is missing: ask about the zone.
      if (!(err instanceof EdgeApiError && err.kind === "not_found")) throw err;
      await client.getShieldZone(zoneId);
      throw new UserError(
        "not_found",
        `WAF rule ${ruleId} has no AI recommendation in shield zone ${zoneId}: check the rule id; /edge incident ${zoneId} lists the rules triggered there.`,
        { cause: err },
      );
    });
    return wafMessage(zoneId, ruleId, recommendation, newRequestId);
  },
};
