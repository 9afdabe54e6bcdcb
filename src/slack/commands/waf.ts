import { usage } from "../../errors.js";
import { edgeClientFor } from "../../services/edge-access.js";
import { resolveShieldZoneId } from "../../services/zone-lookup.js";
import { wafMessage } from "../blocks/waf.js";
import { noMoreArgs, parseZoneRef } from "./parse.js";
import type { Subcommand } from "./types.js";

const EXAMPLE = "/edge waf 1234 920100";
const DOMAIN_EXAMPLE = "/edge waf shop.example.com 920100";

export const wafCommand: Subcommand = {
  name: "waf",
  usage: "waf <shieldZoneId|domain> <ruleId>",
  summary: "The AI recommendation for a WAF rule that was triggered in a shield zone.",
  examples: [EXAMPLE, DOMAIN_EXAMPLE],
  async run(ctx) {
    const zone = parseZoneRef(ctx.args[0], EXAMPLE, DOMAIN_EXAMPLE);
    const ruleId = ctx.args[1];
    if (!ruleId || !/^[\w.:-]{1,100}$/.test(ruleId))
      throw usage(`Which rule? Give the zone id and the rule id: ${EXAMPLE}`);
    noMoreArgs(ctx.args, 2, EXAMPLE);
    const zoneId = await resolveShieldZoneId(ctx.env.deps, ctx.teamId, zone, EXAMPLE);
    const client = await edgeClientFor(ctx.env.deps, ctx.teamId);
    return wafMessage(zoneId, ruleId, await client.getWafAiRecommendation(zoneId, ruleId));
  },
};
