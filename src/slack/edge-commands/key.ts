import { UserError } from "../../errors.js";
import { deploymentKeyServes } from "../../services/edge-access.js";
import { keyModal } from "../blocks/key-modal.js";
import type { CommandContext, Subcommand } from "./types.js";

export const NOT_ADMIN_KEY =
  "Only workspace admins can set the Edge API key: ask an admin or owner to run /edge key.";

/** Open the key modal for an admin. Shared by /edge key and the App Home button. */
export async function openKeyModal(
  ctx: Pick<CommandContext, "env" | "client" | "teamId" | "userId">,
  triggerId: string,
): Promise<void> {
  if (!(await ctx.env.admins.isAdmin(ctx.client, ctx.teamId, ctx.userId)))
    throw new UserError("not_admin", NOT_ADMIN_KEY);
  const info = await ctx.env.deps.store.keys.info(ctx.teamId);
  await ctx.client.views.open({
    trigger_id: triggerId,
    view: {
      ...keyModal(info, deploymentKeyServes(ctx.env.deps.config, ctx.teamId)),
      private_metadata: JSON.stringify({ teamId: ctx.teamId }),
    },
  });
}

export const keyCommand: Subcommand = {
  name: "key",
  usage: "key",
  summary:
    "Admins: set, replace or remove this workspace's Edge API key (in a private dialog, never as text).",
  examples: ["/edge key"],
  shareable: () => false,
  async run(ctx) {
    if (ctx.args.length > 0) {
      throw new UserError(
        "usage",
        "Never type an API key into a command: run /edge key alone and paste it into the dialog. If you just typed a real key, rotate it in the bunny.net dashboard.",
      );
    }
    if (!ctx.triggerId)
      throw new UserError("slack", "Slack did not give me a way to open the dialog; run /edge key again.");
    await openKeyModal(ctx, ctx.triggerId);
    return null;
  },
};
