import { edgeClientFor } from "../../services/edge-access.js";
import { readZoneRateLimits } from "../../services/rate-limits.js";
import { resolveShieldZoneId } from "../../services/zone-lookup.js";
import { rateLimitMessage, zoneRateLimitsMessage } from "../blocks/ratelimit.js";
import { noMoreArgs, parseId, parseZoneRef } from "./parse.js";
import type { Subcommand } from "./types.js";

const EXAMPLE = "/edge ratelimit 42";
const ZONE_EXAMPLE = "/edge ratelimit zone 1234";
const DOMAIN_EXAMPLE = "/edge ratelimit zone shop.example.com";

const isZoneWord = (w: string | undefined) => w?.toLowerCase() === "zone";

export const ratelimitCommand: Subcommand = {
  name: "ratelimit",
  usage: "ratelimit <rateLimitId> | ratelimit zone <shieldZoneId|domain>",
  summary:
    "Breach counters of a rate-limit rule and its past 28 days as a sparkline; or a zone's rate-limit rules by name (alone: pick the zone).",
  examples: [EXAMPLE, ZONE_EXAMPLE, DOMAIN_EXAMPLE],
  // `/edge ratelimit` alone (or `… zone`) picks a shield zone for `ratelimit zone <id>`.
  picker: {
    source: "shield",
    completes: (args) => (args.length === 0 ? ["zone"] : args),
    missingAt: (args) => (args.length === 1 && isZoneWord(args[0]) ? 1 : undefined),
  },
  async run(ctx) {
    if (isZoneWord(ctx.args[0])) {
      const zone = parseZoneRef(ctx.args[1], ZONE_EXAMPLE, DOMAIN_EXAMPLE);
      noMoreArgs(ctx.args, 2, ZONE_EXAMPLE);
      const zoneId = await resolveShieldZoneId(ctx.env.deps, ctx.teamId, zone, ZONE_EXAMPLE);
      return zoneRateLimitsMessage(await readZoneRateLimits(ctx.env.deps, ctx.teamId, zoneId));
    }
    const id = parseId(ctx.args[0], "rate-limit id", EXAMPLE);
    noMoreArgs(ctx.args, 1, EXAMPLE);
    const client = await edgeClientFor(ctx.env.deps, ctx.teamId);
    return rateLimitMessage(id, await client.getRateLimitMetrics(id));
  },
};
