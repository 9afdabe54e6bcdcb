import { readBotSettings } from "../../services/bots-view.js";
import { botsMessage } from "../blocks/bots.js";
import { newRequestId } from "../request-ids.js";
import { noMoreArgs, parseId } from "./parse.js";
import type { Subcommand } from "./types.js";

const EXAMPLE = "/edge bots 1234";

export const botsCommand: Subcommand = {
  name: "bots",
  usage: "bots <shieldZoneId>",
  summary:
    "Bot detection settings and each bot category's action for a shield zone, with Block, Allow and Clear.",
  examples: [EXAMPLE],
  async run(ctx) {
    const zoneId = parseId(ctx.args[0], "zone id", EXAMPLE);
    noMoreArgs(ctx.args, 1, EXAMPLE);
    const { detection, categories } = await readBotSettings(ctx.env.deps, ctx.teamId, zoneId);
    return botsMessage(zoneId, detection, categories, newRequestId);
  },
};
