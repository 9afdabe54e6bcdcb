import { edgeClientFor } from "../../services/edge-access.js";
import { rateLimitMessage } from "../blocks/ratelimit.js";
import { noMoreArgs, parseId } from "./parse.js";
import type { Subcommand } from "./types.js";

const EXAMPLE = "/edge ratelimit 42";

export const ratelimitCommand: Subcommand = {
  name: "ratelimit",
  usage: "ratelimit <rateLimitId>",
  summary: "Breach counters of a rate-limit rule and its past 28 days as a sparkline.",
  examples: [EXAMPLE],
  async run(ctx) {
    const id = parseId(ctx.args[0], "rate-limit id", EXAMPLE);
    noMoreArgs(ctx.args, 1, EXAMPLE);
    const client = await edgeClientFor(ctx.env.deps, ctx.teamId);
    return rateLimitMessage(id, await client.getRateLimitMetrics(id));
  },
};
