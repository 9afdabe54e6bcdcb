import type { App, InstallationStore } from "@slack/bolt";
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
 * recently used workspaces (about 26 KB each), as Bolt's own per-team cache does (boundTeamClientCache below).
 */
export type SlackClientFor = (teamId: string) => Promise<WebClient>;

/**
 * WebClient builds its debug line of every call's arguments whatever the log level: a deep copy (each key
 * tested against two patterns) turned into JSON. A message's blocks are most of that, and WebClient sends
 * them as their JSON text anyway: given as that text, they cost the line one string, the same request on
 * the wire. Every Web API client edgeops builds is one of these.
 */
export class SlackWebClient extends WebClient {
  override apiCall(method: string, options?: Record<string, unknown>): Promise<WebAPICallResult> {
    return super.apiCall(
      method,
      options && Array.isArray(options.blocks)
        ? { ...options, blocks: JSON.stringify(options.blocks) }
        : options,
    );
  }
}

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
      lane = new SlackWebClient(this.laneToken, this.laneOptions);
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
    const client = new SlackWebClient(token, { ...options, teamId });
    clients.set(teamId, { token, client });
    return client;
  };
}

/**
 * Teams whose Web API client Bolt keeps at once (and so does slackClientFactory for background work);
 * older ones are rebuilt on their next request. 1,000 held 26 MiB after the bench's 1,000 approvals.
 */
export const TEAM_CLIENT_CACHE_MAX = 200;

/** What Bolt calls on `App.clients[teamId]`: its WebClientPool's one method. */
interface TeamClients {
  getOrCreate(token: string, options: WebClientOptions): WebClient;
}

/**
 * Bolt builds a Web API client for every request's team (about 26 KB and 0.3 ms each: hundreds of bound
 * methods) and keeps it in `App.clients` for ever: 10,000 workspaces held 255 MB in the benchmark. Most
 * requests never call it (a slash command answers through response_url), yet each one of a team outside
 * a bounded cache built a new client: at 200 commands/s over 10,000 teams those were most of the heap
 * under load. So `App.clients` becomes a least-recently-used cache of `max` teams, and a request gets a
 * stand-in that builds (and caches) the team's client the first time a listener uses it. Bolt only reads
 * `clients[teamId]` and calls `getOrCreate` on it, which the proxy supports; tests check both.
 */
export function boundTeamClientCache(app: App, max: number): void {
  const cache = new LruCache<string, TeamClients>(max);
  const teamClients = (teamId: string): TeamClients => {
    const built = new Map<string, WebClient>();
    const self: TeamClients = {
      getOrCreate: (token, options) =>
        built.get(token) ??
        lazyClient(() => {
          let client = built.get(token);
          if (!client) {
            client = new SlackWebClient(token, options);
            built.set(token, client);
          }
          cache.set(teamId, self);
          return client;
        }),
    };
    return self;
  };
  // No public way: Bolt keeps `clients` private, unbounded, with no option to bound or replace it.
  const holder = app as unknown as { clients: Record<string, TeamClients> };
  holder.clients = new Proxy({} as Record<string, TeamClients>, {
    get: (_, key) => (typeof key === "string" ? (cache.get(key) ?? teamClients(key)) : undefined),
    set(_, key, value) {
      if (typeof key !== "string") return false;
      cache.set(key, value);
      return true;
    },
    has: (_, key) => typeof key === "string" && cache.has(key),
    ownKeys: () => [...cache.keys()],
    getOwnPropertyDescriptor: (_, key) =>
      typeof key === "string" && cache.has(key)
        ? { value: cache.peek(key), writable: true, enumerable: true, configurable: true }
        : undefined,
  });
}

/** A WebClient that is only built when something reads a property of it (its methods bound to it). */
export function lazyClient(build: () => WebClient): WebClient {
  let client: WebClient | undefined;
  const real = () => {
    client ??= build();
    return client;
  };
  return new Proxy(Object.create(WebClient.prototype) as WebClient, {
    get(_, prop) {
      const c = real();
      const value: unknown = Reflect.get(c, prop, c);
      return typeof value === "function" ? value.bind(c) : value;
    },
    set: (_, prop, value) => Reflect.set(real(), prop, value),
    has: (_, prop) => prop in real(),
  });
}
