import type { AllMiddlewareArgs, SlackEventMiddlewareArgs } from "@slack/bolt";
import type { WebClient } from "@slack/web-api";
import {
  enterpriseTeams,
  forgetEnterprise,
  forgetWorkspace,
  type UninstallReason,
} from "../../../services/uninstall.js";
import { updateCard } from "../../change-requests.js";
import type { SlackEnv } from "../../edge-commands/types.js";

type Args = SlackEventMiddlewareArgs<"app_uninstalled" | "tokens_revoked"> & AllMiddlewareArgs;

/**
 * app_uninstalled, and tokens_revoked naming the bot's token: the workspace's installation, Edge API key
 * and background work go (src/services/uninstall.ts). Slack sends both for one uninstall: the first to
 * arrive (here or on another replica) starts the removal, the other finds it under way and does nothing.
 * Cards of the requests that settled are redrawn where Slack still takes the post (usually it does not:
 * the token is gone). A revoked user token alone changes nothing: edgeops works with the bot token.
 */
export function appUninstalled(env: SlackEnv) {
  return async ({ event, body, context }: Args) => {
    const teamId = context.teamId ?? (body as { team_id?: string }).team_id;
    const reason: UninstallReason = event.type;
    const enterpriseId = context.enterpriseId ?? (body as { enterprise_id?: string }).enterprise_id;
    const logger = env.deps.logger.child({ teamId, enterpriseId, event: reason });
    if (event.type === "tokens_revoked" && (event.tokens.bot ?? []).length === 0) {
      logger.info("only user tokens were revoked; the bot's token still serves the workspace");
      return;
    }
    if (context.isEnterpriseInstall && enterpriseId) {
      // Bolt reads the org-wide install from the event's authorizations: the enterprise's install goes.
      const teams = await enterpriseTeams(env.deps, enterpriseId, teamId?.startsWith("T") ? [teamId] : []);
      const clients = await clientsOf(env, teams);
      const { moved } = await forgetEnterprise(env.deps, enterpriseId, teams, reason);
      for (const request of moved) {
        const client = clients.get(request.teamId);
        if (client) await updateCard(env, client, request, logger);
      }
      return;
    }
    if (!teamId) {
      logger.warn("an uninstall event without a workspace id was ignored");
      return;
    }
    // Taken before the installation is deleted: the last chance to tell the cards.
    const client: WebClient | undefined = await env.clientFor(teamId).catch(() => undefined);
    const { moved } = await forgetWorkspace(env.deps, teamId, reason);
    if (!client) return;
    // The installation went first, so the card observer (redrawCardsOnChange) could not reach this
    // workspace's Slack for these moves: the client taken before redraws them.
    for (const request of moved) await updateCard(env, client, request, logger);
  };
}

/** The workspaces' clients, taken before their installations are deleted (the last chance to tell the cards). */
async function clientsOf(env: SlackEnv, teamIds: readonly string[]): Promise<Map<string, WebClient>> {
  const clients = new Map<string, WebClient>();
  for (const teamId of teamIds) {
    const client = await env.clientFor(teamId).catch(() => undefined);
    if (client) clients.set(teamId, client);
  }
  return clients;
}
