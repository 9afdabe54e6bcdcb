import { readBotSettings } from "../../services/bots-view.js";
import { resolveShieldZoneId } from "../../services/zone-lookup.js";
import { botsMessage } from "../blocks/bots.js";
import { newRequestId } from "../request-ids.js";
import { noMoreArgs, parseZoneRef, pickerWhenEmpty } from "./parse.js";
import type { Subcommand } from "./types.js";

const EXAMPLE = "/edge bots 1234";
const DOMAIN_EXAMPLE = "/edge bots shop.example.com";

export const botsCommand: Subcommand = {
  name: "bots",
  usage: "bots <shieldZoneId|domain>",
  summary:
    "Bot detection settings and each bot category's action for a shield zone, with Block, Allow and Clear.",
  examples: [EXAMPLE, DOMAIN_EXAMPLE],
  picker: pickerWhenEmpty("shield"),
  async run(ctx) {
    const zone = parseZoneRef(ctx.args[0], EXAMPLE, DOMAIN_EXAMPLE);
    noMoreArgs(ctx.args, 1, EXAMPLE);
    const zoneId = await resolveShieldZoneId(ctx.env.deps, ctx.teamId, zone, EXAMPLE);
    const { detection, categories } = await readBotSettings(ctx.env.deps, ctx.teamId, zoneId);
    return botsMessage(zoneId, detection, categories, newRequestId);
  },
};
