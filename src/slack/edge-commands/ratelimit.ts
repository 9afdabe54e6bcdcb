import { usage } from "../../errors.js";
import { edgeClientFor } from "../../services/edge-access.js";
import {
  findRateLimitRules,
  type NamedRateLimitRule,
  rateLimitRuleNamed,
  readZoneRateLimits,
} from "../../services/rate-limits.js";
import { resolveShieldZoneId } from "../../services/zone-lookup.js";
import { rateLimitMessage, ruleWords, zoneRateLimitsMessage } from "../blocks/ratelimit.js";
import type { Reply } from "../blocks/reply.js";
import { echo, MAX_INT32, noMoreArgs, parseId, parseZoneRef } from "./parse.js";
import type { CommandContext, Subcommand } from "./types.js";

const EXAMPLE = "/edge ratelimit 42";
const NAME_EXAMPLE = "/edge ratelimit login";
const ZONE_EXAMPLE = "/edge ratelimit zone 1234";
const DOMAIN_EXAMPLE = "/edge ratelimit zone shop.example.com";
/** Rules named in a "which one?" answer at most. */
const LISTED = 10;

const isZoneWord = (w: string | undefined) => w?.toLowerCase() === "zone";

/** One rule's counters, named with its zone (the name is read beside the counters, never waited for alone). */
async function ruleAnswer(ctx: CommandContext, id: number, known?: NamedRateLimitRule): Promise<Reply> {
  const client = await edgeClientFor(ctx.env.deps, ctx.teamId);
  const [metrics, rule] = await Promise.all([
    client.getRateLimitMetrics(id),
    known ?? rateLimitRuleNamed(ctx.env.deps, ctx.teamId, id),
  ]);
  return rateLimitMessage(id, metrics, rule);
}

/** `/edge ratelimit login`: the one rule with that name (any case), or which ones to choose from. */
async function ruleByName(ctx: CommandContext, text: string): Promise<Reply> {
  const found = await findRateLimitRules(ctx.env.deps, ctx.teamId, text);
  const searched = `${found.zonesSearched} shield zone${found.zonesSearched === 1 ? "" : "s"} searched${
    found.zonesNotSearched > 0 || !found.complete
      ? `; ${found.complete ? found.zonesNotSearched : "more"} not searched (unreadable or beyond the first ${found.zonesSearched + found.zonesNotSearched})`
      : ""
  }`;
  const [only] = found.matches;
  if (found.matches.length === 1 && only) return ruleAnswer(ctx, only.id, only);
  if (only === undefined)
    throw usage(
      `No rate-limit rule's name is or contains "${echo(text)}" (${searched}). ${ZONE_EXAMPLE} lists a zone's rules by name; ${EXAMPLE} shows one by id.`,
    );
  const listed = found.matches.slice(0, LISTED).map(ruleWords);
  const more = found.matches.length > LISTED ? `; and ${found.matches.length - LISTED} more` : "";
  throw usage(
    `${found.matches.length} rate-limit rules ${found.exact ? "are named" : "have names containing"} "${echo(text)}": ${listed.join("; ")}${more}. Give the one you mean by its id, like /edge ratelimit ${only.id}, or list one zone's with ${ZONE_EXAMPLE}.`,
  );
}

export const ratelimitCommand: Subcommand = {
  name: "ratelimit",
  usage: "ratelimit <rateLimitId|rule name> | ratelimit zone <shieldZoneId|domain>",
  summary:
    "Breach counters of a rate-limit rule (by id, or by name across your zones) and its past 28 days as a sparkline; or a zone's rate-limit rules by name (alone: pick the zone).",
  examples: [EXAMPLE, NAME_EXAMPLE, ZONE_EXAMPLE, DOMAIN_EXAMPLE],
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
    const [first] = ctx.args;
    // A rule's name is any words that are not an id: `/edge ratelimit Search API`.
    if (first !== undefined && !/^[#-]?\d+$/.test(first)) {
      const text = ctx.args.join(" ");
      if (text.length > 200)
        throw usage(`That is too long for a rule's name (at most 200 characters): ${NAME_EXAMPLE}`);
      return ruleByName(ctx, text);
    }
    const id = parseId(first, "rate-limit id", EXAMPLE, MAX_INT32);
    noMoreArgs(ctx.args, 1, EXAMPLE);
    return ruleAnswer(ctx, id);
  },
};
