import type { InstallationStore } from "@slack/bolt";
import { WebClient, type WebClientOptions } from "@slack/web-api";
import { UserError } from "../errors.js";
import { LruCache } from "../lru.js";
import { NOT_INSTALLED_SENTENCE } from "../store/installations.js";
import type { SlackAuth } from "./transport.js";

/**
 * A Web API client for a workspace, for work that does not start from a Slack request (approval
 * expiry, scheduled summaries). Single-workspace installs share one client; OAuth installs read the
 * workspace's bot token from the installation store and keep the clients of the `maxClients` most
 * recently used workspaces (about 26 KB each), as Bolt's own per-team cache does (src/slack/app.ts).
 */
export type SlackClientFor = (teamId: string) => Promise<WebClient>;

export function slackClientFactory(
  auth: SlackAuth,
  options: WebClientOptions,
  installations: InstallationStore,
  maxClients: number,
): SlackClientFor {
  if (auth.kind === "single") {
    const client = new WebClient(auth.botToken, options);
    return async () => client;
  }
  const clients = new LruCache<string, { token: string; client: WebClient }>(maxClients);
  return async (teamId) => {
    const installation = await installations.fetchInstallation({
      teamId,
      enterpriseId: undefined,
      isEnterpriseInstall: false,
    });
    const token = installation.bot?.token;
    if (!token) throw new UserError("slack", NOT_INSTALLED_SENTENCE);
    const cached = clients.get(teamId);
    if (cached?.token === token) return cached.client;
    const client = new WebClient(token, { ...options, teamId });
    clients.set(teamId, { token, client });
    return client;
  };
}
