import type { InstallationStore } from "@slack/bolt";
import { type WebAPICallResult, WebClient, type WebClientOptions } from "@slack/web-api";
import { UserError } from "../../errors.js";
import { LruCache } from "../../lru.js";
import { NOT_INSTALLED_SENTENCE } from "../../store/installations.js";
import type { SlackAuth } from "./transport.js";

/**
 * A Web API client for a workspace, for work that does not start from a Slack request (approval
 * expiry, scheduled summaries). Single-workspace installs share one client, with a queue per channel
 * (ChannelLanesClient); OAuth installs read the
 * workspace's bot token from the installation store and keep the clients of the `maxClients` most
 * recently used workspaces (about 26 KB each), as Bolt's own per-team cache does (src/slack/app.ts).
 */
export type SlackClientFor = (teamId: string) => Promise<WebClient>;

/** Channels whose own queue a workspace's background client keeps at once (about 26 KB each). */
export const CHANNEL_LANES_MAX = 100;

/**
 * A WebClient pauses its whole queue for a 429's Retry-After: one busy channel's chat.update would hold
 * back every approval card, undo card and workflow completion of the workspace. This client sends each
 * call through a client of its own channel (calls without a channel share one), so a 429 waits out
 * only its own channel's calls. Every method goes through apiCall, which is what is routed here.
 */
export class ChannelLanesClient extends WebClient {
  private readonly lanes = new LruCache<string, WebClient>(CHANNEL_LANES_MAX);

  constructor(
    private readonly laneToken: string,
    private readonly laneOptions: WebClientOptions,
  ) {
    super(laneToken, laneOptions);
  }

  override apiCall(method: string, options?: Record<string, unknown>): Promise<WebAPICallResult> {
    const channel = typeof options?.channel === "string" ? options.channel : "";
    let lane = this.lanes.get(channel);
    if (!lane) {
      lane = new WebClient(this.laneToken, this.laneOptions);
      this.lanes.set(channel, lane);
    }
    return lane.apiCall(method, options);
  }
}

export function slackClientFactory(
  auth: SlackAuth,
  options: WebClientOptions,
  installations: InstallationStore,
  maxClients: number,
): SlackClientFor {
  if (auth.kind === "single") {
    const client = new ChannelLanesClient(auth.botToken, options);
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
