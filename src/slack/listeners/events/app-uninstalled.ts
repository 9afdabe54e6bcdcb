import type { AllMiddlewareArgs, SlackEventMiddlewareArgs } from "@slack/bolt";
import type { WebClient } from "@slack/web-api";
import { forgetWorkspace, type UninstallReason } from "../../../services/uninstall.js";
import { updateCard } from "../../change-requests.js";
import type { SlackEnv } from "../../edge-commands/types.js";

type Args = SlackEventMiddlewareArgs<"app_uninstalled" | "tokens_revoked"> & AllMiddlewareArgs;

/**
 * app_uninstalled, and tokens_revoked naming the bot's token: the workspace's installation, Edge API key
 * and background work go (src/services/uninstall.ts). Cards of the requests that settled are redrawn
 * where Slack still takes the post (usually it does not: the token is gone). A revoked user token alone
 * changes nothing: edgeops works with the bot token.
 */
export function appUninstalled(env: SlackEnv) {
  return async ({ event, body, context }: Args) => {
    const teamId = context.teamId ?? (body as { team_id?: string }).team_id;
    const reason: UninstallReason = event.type;
    const logger = env.deps.logger.child({ teamId, event: reason });
    if (!teamId) {
      logger.warn("an uninstall event without a workspace id was ignored");
      return;
    }
    if (event.type === "tokens_revoked" && (event.tokens.bot ?? []).length === 0) {
      logger.info("only user tokens were revoked; the bot's token still serves the workspace");
      return;
    }
    // Taken before the installation is deleted: the last chance to tell the cards.
    const client: WebClient | undefined = await env.clientFor(teamId).catch(() => undefined);
    const { moved } = await forgetWorkspace(env.deps, teamId, reason);
    if (!client) return;
    for (const request of moved) await updateCard(client, request, logger);
  };
}
