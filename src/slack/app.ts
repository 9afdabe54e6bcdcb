import type { Server } from "node:http";
import {
  type AnyMiddlewareArgs,
  App,
  type CustomRoute,
  LogLevel,
  type Middleware,
  type Receiver,
  type Logger as SlackLogger,
} from "@slack/bolt";
import type { FetchFunction } from "@slack/web-api";
import type { Deps } from "../deps.js";
import type { Logger } from "../log.js";
import { LruCache } from "../lru.js";
import { socketModeHttpListening } from "../ops/transport-state.js";
import { AdminDirectory } from "./admin.js";
import { slackClientFactory } from "./clients.js";
import type { SlackEnv } from "./commands/types.js";
import { registerListeners } from "./listeners/index.js";
import type { SlackAuth, Transport } from "./transport.js";

export const BOT_SCOPES = ["commands", "chat:write", "users:read", "usergroups:read", "im:write"];

/** Bolt's logger interface over our pino logger, so Bolt's own messages are structured and redacted. */
export function boltLogger(logger: Logger): SlackLogger {
  const l = logger.child({ component: "bolt" });
  return {
    debug: (...m: unknown[]) => l.debug(m.map(String).join(" ")),
    info: (...m: unknown[]) => l.info(m.map(String).join(" ")),
    warn: (...m: unknown[]) => l.warn(m.map(String).join(" ")),
    error: (...m: unknown[]) => l.error(m.map(String).join(" ")),
    setLevel: () => undefined,
    getLevel: () => LogLevel.INFO,
    setName: () => undefined,
  };
}

export interface SlackAppOptions {
  deps: Deps;
  transport: Exclude<Transport, { kind: "console" }> | ConsoleTransport;
  /** Extra HTTP routes (health, readiness, metrics) served beside /slack/events. */
  routes?: CustomRoute[];
  /** Port of the HTTP server (Socket Mode serves only the routes and OAuth pages there). */
  port: number;
  /** fetch for every Slack WebClient and respond() (src/ops/slack-fetch.ts counts Slack errors). */
  fetch?: FetchFunction;
  /** Global middleware registered before any listener (src/ops/shutdown.ts tracks in-flight work). */
  middleware?: Middleware<AnyMiddlewareArgs>[];
}

/** The local console (src/console): its own Bolt receiver feeds the app; one bot token, no signing. */
export interface ConsoleTransport {
  kind: "console";
  receiver: Receiver;
  botToken: string;
}

export interface SlackApp {
  app: App;
  env: SlackEnv;
  start(): Promise<{ port: number }>;
  stop(): Promise<void>;
}

/** Build the Bolt app for Socket Mode or HTTP, single workspace or OAuth; one set of listeners. */
export function createSlackApp({
  deps,
  transport,
  routes = [],
  port,
  fetch,
  middleware = [],
}: SlackAppOptions): SlackApp {
  const clientOptions = {
    ...(deps.config.slack.apiUrl ? { slackApiUrl: ensureTrailingSlash(deps.config.slack.apiUrl) } : {}),
    ...(fetch ? { fetch } : {}),
    retryConfig: { retries: 2, factor: 2, minTimeout: 500, maxTimeout: 5000 },
  };
  // Socket Mode's own client (apps.connections.open) and the OAuth installer read installerOptions'
  // clientOptions, not clientOptions: give them the same API URL and fetch, keeping their own retries.
  const { retryConfig: _ownRetries, ...installerClientOptions } = clientOptions;
  const auth: SlackAuth =
    transport.kind === "console" ? { kind: "single", botToken: transport.botToken } : transport.auth;
  const app = new App({
    logger: boltLogger(deps.logger),
    // No conversation state is used; Bolt's default store builds an Error on every request.
    convoStore: false,
    clientOptions,
    customRoutes: routes,
    ...(transport.kind === "console"
      ? { receiver: transport.receiver }
      : transport.kind === "socket"
        ? {
            socketMode: true,
            appToken: transport.appToken,
            port,
            installerOptions: { clientOptions: installerClientOptions },
          }
        : { signingSecret: transport.signingSecret }),
    ...(auth.kind === "single"
      ? { token: auth.botToken }
      : {
          clientId: auth.clientId,
          clientSecret: auth.clientSecret,
          stateSecret: auth.stateSecret,
          scopes: BOT_SCOPES,
          installationStore: deps.store.installations,
          installerOptions: {
            directInstall: true,
            clientOptions: installerClientOptions,
            ...(transport.kind === "socket" ? { port } : {}),
          },
        }),
  });

  const env: SlackEnv = {
    deps,
    admins: new AdminDirectory(deps.config.slack.adminUserIds, deps.now),
    clientFor: slackClientFactory(
      auth,
      { ...clientOptions, logger: boltLogger(deps.logger) },
      deps.store.installations,
      TEAM_CLIENT_CACHE_MAX,
    ),
  };
  for (const m of middleware) app.use(m);
  boundTeamClientCache(app, TEAM_CLIENT_CACHE_MAX);
  registerListeners(app, env);
  app.error(async (err) => {
    deps.logger.error({ err }, "unhandled error in a Slack listener");
  });

  return {
    app,
    env,
    async start() {
      if (transport.kind === "http") {
        const server = (await app.start(port)) as Server;
        const address = server.address();
        return { port: typeof address === "object" && address ? address.port : port };
      }
      // Socket Mode: Bolt's own server for the routes (and OAuth pages) may listen on PORT=0.
      const listening = socketModeHttpListening(app);
      const [actualPort] = await Promise.all([listening ?? Promise.resolve(port), app.start()]);
      return { port: actualPort };
    },
    stop: () => app.stop().then(() => undefined),
  };
}

function ensureTrailingSlash(url: string): string {
  return url.endsWith("/") ? url : `${url}/`;
}

/**
 * Teams whose Web API client Bolt keeps at once (and so does slackClientFactory for background work);
 * older ones are rebuilt on their next request.
 */
export const TEAM_CLIENT_CACHE_MAX = 1_000;

/**
 * Bolt keeps a Web API client per team in `App.clients` for ever (about 26 KB each): 10,000 workspaces
 * held 255 MB in the benchmark. Replace that plain object with a least-recently-used cache of `max`
 * teams. Bolt only reads and assigns `clients[teamId]`, which the proxy supports; a test checks the bound.
 */
export function boundTeamClientCache(app: App, max: number): void {
  const cache = new LruCache<string, unknown>(max);
  const holder = app as unknown as { clients: Record<string, unknown> };
  holder.clients = new Proxy({} as Record<string, unknown>, {
    get: (_, key) => (typeof key === "string" ? cache.get(key) : undefined),
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
