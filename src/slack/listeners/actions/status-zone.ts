import { z } from "zod";
import type { SlackEnv, Subcommand } from "../../edge-commands/types.js";
import { rerunCommand, sendReply } from "../commands/edge.js";
import { onButton, staleButton } from "./context.js";

const statusZoneValue = z.object({ zoneId: z.number().int().positive().max(2_147_483_647) });

/**
 * A ranked zone's button on `/edge status`: its incident card (`/edge incident <zone>`) or a zone watch in this
 * channel (`/edge watch zone <zone>`), run as if typed by the presser, so the same checks and answers apply;
 * the ranking stays where it is.
 */
export function statusZoneButton(
  env: SlackEnv,
  subcommands: ReadonlyMap<string, Subcommand>,
  what: "incident" | "watch",
) {
  return onButton(env, statusZoneValue, staleButton("status"), async (args, ctx, value) => {
    const text = what === "incident" ? `incident ${value.zoneId}` : `watch zone ${value.zoneId}`;
    const result = await rerunCommand(env, subcommands, { ...ctx, client: args.client }, text);
    ctx.logger.info({ subcommand: result.subcommand, outcome: result.outcome }, "status button answered");
    if (result.reply) await sendReply(args.respond, result.reply, result.isPublic, undefined, ctx.logger);
  });
}
