import { BOT_EXAMPLE, parseAction, parseCategory } from "../../services/bot-categories.js";
import { edgeClientFor } from "../../services/edge-access.js";
import { resolveShieldZoneId } from "../../services/zone-lookup.js";
import { type BotChangeValue, confirmChangeMessage } from "../blocks/approvals.js";
import { newRequestId } from "../request-ids.js";
import { noMoreArgs, parseZoneRef } from "./parse.js";
import type { Subcommand } from "./types.js";

const DOMAIN_EXAMPLE = "/edge bot shop.example.com aiscraper block";

export const botCommand: Subcommand = {
  name: "bot",
  usage: "bot <shieldZoneId|domain> <category> <block|allow|clear>",
  summary: "Ask to set a bot category's action (approval may be required in this channel).",
  examples: [BOT_EXAMPLE, "/edge bot 1234 seo clear", DOMAIN_EXAMPLE],
  shareable: () => false,
  async run(ctx) {
    const zone = parseZoneRef(ctx.args[0], BOT_EXAMPLE, DOMAIN_EXAMPLE);
    const category = parseCategory(ctx.args[1]);
    const action = parseAction(ctx.args[2]);
    noMoreArgs(ctx.args, 3, BOT_EXAMPLE);
    const zoneId = await resolveShieldZoneId(ctx.env.deps, ctx.teamId, zone, BOT_EXAMPLE);
    const client = await edgeClientFor(ctx.env.deps, ctx.teamId);
    const current =
      (await client.getBotCategories(zoneId)).find((c) => c.category === category)?.action ?? null;
    const value: BotChangeValue = { r: newRequestId(), z: zoneId, c: category, a: action };
    return confirmChangeMessage(value, current);
  },
};
