import { botCategoryKind } from "../../changes/kinds/bot-category.js";
import { BOT_EXAMPLE, parseAction, parseCategory } from "../../services/bot-categories.js";
import { edgeClientFor } from "../../services/edge-access.js";
import { confirmChangeMessage } from "../blocks/approvals.js";
import { newRequestId } from "../request-ids.js";
import { noMoreArgs, parseId, parseTemporary } from "./parse.js";
import type { Subcommand } from "./types.js";

export const botCommand: Subcommand = {
  name: "bot",
  usage: "bot <shieldZoneId> <category> <block|allow|clear> [for 30m]",
  summary: "Ask to set a bot category's action (approval may be required in this channel).",
  examples: [BOT_EXAMPLE, "/edge bot 1234 seo clear", `${BOT_EXAMPLE} for 30m`],
  shareable: () => false,
  async run(ctx) {
    const { args, temporaryMs } = parseTemporary(ctx.args, BOT_EXAMPLE);
    const zoneId = parseId(args[0], "zone id", BOT_EXAMPLE);
    const category = parseCategory(args[1]);
    const action = parseAction(args[2]);
    noMoreArgs(args, 3, BOT_EXAMPLE);
    const client = await edgeClientFor(ctx.env.deps, ctx.teamId);
    const current =
      (await client.getBotCategories(zoneId)).find((c) => c.category === category)?.action ?? null;
    return confirmChangeMessage(
      {
        r: newRequestId(),
        k: botCategoryKind.name,
        p: { shieldZoneId: zoneId, category, action },
        ...(temporaryMs !== undefined ? { t: temporaryMs } : {}),
      },
      current,
    );
  },
};
