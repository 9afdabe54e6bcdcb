import { changesNothing } from "../../changes/engine.js";
import { botCategoryKind } from "../../changes/kinds/bot-category.js";
import { BOT_EXAMPLE, parseAction, parseCategory } from "../../services/bot-categories.js";
import { edgeClientFor } from "../../services/edge-access.js";
import { resolveShieldZoneId } from "../../services/zone-lookup.js";
import { confirmChangeMessage } from "../blocks/approvals.js";
import { newChangeRequest } from "../request-ids.js";
import { noMoreArgs, parseTemporary, parseZoneRef, pickerBeforeWord, zoneFirst } from "./parse.js";
import type { Subcommand } from "./types.js";

const DOMAIN_EXAMPLE = "/edge bot shop.example.com aiscraper block";

function isCategory(w: string): boolean {
  if (/^\d+$/.test(w)) return false;
  try {
    parseCategory(w);
    return true;
  } catch {
    return false;
  }
}

export const botCommand: Subcommand = {
  name: "bot",
  usage: "bot <shieldZoneId|domain> <category> <block|allow|clear> [for 30m]",
  summary: "Ask to set a bot category's action (approval may be required in this channel).",
  examples: [BOT_EXAMPLE, "/edge bot 1234 seo clear", DOMAIN_EXAMPLE, `${BOT_EXAMPLE} for 30m`],
  shareable: () => false,
  // A category name where the zone goes (`/edge bot aiscraper block`): the zone is missing.
  picker: pickerBeforeWord("shield", isCategory),
  async run(ctx) {
    const { args, temporaryMs } = parseTemporary(zoneFirst(ctx.args, isCategory), BOT_EXAMPLE);
    const zone = parseZoneRef(args[0], BOT_EXAMPLE, DOMAIN_EXAMPLE);
    const category = parseCategory(args[1]);
    const action = parseAction(args[2]);
    noMoreArgs(args, 3, BOT_EXAMPLE);
    const zoneId = await resolveShieldZoneId(ctx.env.deps, ctx.teamId, zone, BOT_EXAMPLE);
    const client = await edgeClientFor(ctx.env.deps, ctx.teamId);
    const current =
      (await client.getBotCategories(zoneId)).find((c) => c.category === category)?.action ?? null;
    const p = { shieldZoneId: zoneId, category, action };
    const scope = { teamId: ctx.teamId, channelId: ctx.channelId, userId: ctx.userId };
    return confirmChangeMessage(
      newChangeRequest(botCategoryKind, p, temporaryMs),
      current,
      undefined,
      await changesNothing(ctx.env.deps, botCategoryKind, scope, p, current),
    );
  },
};
