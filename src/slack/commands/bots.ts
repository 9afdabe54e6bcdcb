import { edgeClientFor } from "../../services/edge-access.js";
import { botsMessage } from "../blocks/bots.js";
import { noMoreArgs, parseId } from "./parse.js";
import type { Subcommand } from "./types.js";

const EXAMPLE = "/edge bots 1234";

export const botsCommand: Subcommand = {
  name: "bots",
  usage: "bots <shieldZoneId>",
  summary: "Bot detection settings and each bot category's action for a shield zone.",
  examples: [EXAMPLE],
  async run(ctx) {
    const zoneId = parseId(ctx.args[0], "zone id", EXAMPLE);
    noMoreArgs(ctx.args, 1, EXAMPLE);
    const client = await edgeClientFor(ctx.env.deps, ctx.teamId);
    const [detection, categories] = await Promise.all([
      client.getBotDetection(zoneId),
      client.getBotCategories(zoneId),
    ]);
    return botsMessage(zoneId, detection, categories);
  },
};
