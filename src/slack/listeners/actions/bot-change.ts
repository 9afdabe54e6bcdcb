import { z } from "zod";
import { botCategoryKind } from "../../../changes/kinds/bot-category.js";
import { botCategoryActionLabel, botCategoryLabel } from "../../../edge/schemas/shield.js";
import { readBotSettings } from "../../../services/bots-view.js";
import { section } from "../../blocks/block-kit.js";
import { botsMessage } from "../../blocks/bots.js";
import { type MrkdwnInput, mrkdwn } from "../../blocks/mrkdwn.js";
import { type Reply, reply } from "../../blocks/reply.js";
import type { SlackEnv } from "../../edge-commands/types.js";
import { newRequestId } from "../../request-ids.js";
import { confirmFirstWhereNoApproval, submitChange } from "./change-confirm.js";
import { onButton, replaceClicked, staleButton } from "./context.js";

const changeValue = z.object({
  r: z.string().regex(/^[\w-]{10,40}$/),
  z: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER),
  c: z.number().int().min(1).max(7),
  a: z.union([z.literal(0), z.literal(1), z.literal(2)]),
  /** Confirmed on the presser's own confirmation (shown where no approval card follows). */
  ok: z.literal(1).optional(),
});

/**
 * Block / Allow / Clear on the /edge bots view (after Slack's confirmation dialog): the one change flow,
 * then the view refreshed with the outcome on top.
 */
export function botChange(env: SlackEnv) {
  return onButton(env, changeValue, staleButton("bots"), async (args, ctx, value) => {
    const params = { shieldZoneId: value.z, category: value.c, action: value.a };
    if (
      value.ok === undefined &&
      (await confirmFirstWhereNoApproval(
        env,
        args,
        ctx,
        botCategoryKind,
        params,
        { r: value.r, k: botCategoryKind.name, p: params },
        JSON.stringify({ ...value, ok: 1 }),
      ))
    )
      return;
    const outcome = await submitChange(env, args, ctx, botCategoryKind, params, value.r);
    if (outcome === undefined) return;
    const shown: MrkdwnInput =
      outcome.kind === "unchanged"
        ? mrkdwn`:information_source: ${botCategoryLabel(value.c)} is already *${botCategoryActionLabel(value.a)}* on shield zone ${value.z}; nothing changed.`
        : outcome.banner;
    let answer: Reply = reply(shown, [section(shown)]);
    try {
      const { detection, categories } = await readBotSettings(env.deps, ctx.teamId, value.z);
      answer = botsMessage(value.z, detection, categories, newRequestId, shown);
    } catch (err) {
      ctx.logger.debug({ err }, "could not refresh the bots view; showing the outcome alone");
    }
    await replaceClicked(args, answer, ctx.logger);
  });
}
