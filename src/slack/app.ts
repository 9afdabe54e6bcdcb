import {
  type AnyMiddlewareArgs,
  App,
  type CustomRoute,
  ErrorCode,
  LogLevel,
  type Middleware,
  type Receiver,
  type Logger as SlackLogger,
  SocketModeReceiver,
} from "@slack/bolt";
import type { FetchFunction } from "@slack/web-api";
import type { Deps } from "../deps.js";
import { type TransportError, toUserSentence } from "../errors.js";
import type { Logger } from "../log.js";
import { postEphemeral, responseUrlOf } from "../ops/response-url.js";
import { AdminDirectory } from "./admin.js";
import { CardRedraws } from "./card-redraws.js";
import { redrawCardsOnChange, tellRequester } from "./change-requests.js";
import type { SlackEnv } from "./edge-commands/types.js";
import { settleStepsWaitingOn } from "./functions/completion.js";
import { registerListeners } from "./listeners/index.js";
import { createRefusals, type RefusalReason } from "./refused.js";
import {
  boundTeamClientCache,
  SlackWebClient,
  slackClientFactory,
  TEAM_CLIENT_CACHE_MAX,
} from "./transport/clients.js";
import {
  createTokenCheck,
  SLACK_CONNECT_RETRY,
  superviseSocketMode,
  type TokenCheck,
} from "./transport/connection.js";
import { ThreadedHttpReceiver } from "./transport/threaded-receiver.js";
import { traceSlackFetch, traceSlackRequests } from "./transport/traces.js";
import type { SlackAuth, Transport } from "./transport/transport.js";
import { socketModeClientOf, socketModeHttpListening } from "./transport/transport-state.js";

export const BOT_SCOPES = [
  "commands",
  "chat:write",
  "users:read",
  "usergroups:read",
  "im:write",
  "channels:read",
  "groups:read",
];

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
  /** fetch for every Slack WebClient and respond() (src/slack/transport/slack-fetch.ts counts Slack errors). */
  fetch?: FetchFunction;
  /** Global middleware registered before any listener (src/ops/shutdown.ts tracks in-flight work). */
  middleware?: Middleware<AnyMiddlewareArgs>[];
  /** Slack refused a token for good (src/slack/transport/connection.ts); logged as an error when not given. */
  onRejected?: (err: TransportError) => void;
}

/** The local console (tools/console): its own Bolt receiver feeds the app; one bot token, no signing. */
export interface ConsoleTransport {
  kind: "console";
  receiver: Receiver;
  botToken: string;
}

export interface SlackApp {
  app: App;
  /** The receiver Slack's requests arrive through (readiness watches it: src/slack/transport/transport-state.ts). */
  receiver: Receiver;
  env: SlackEnv;
  /**
   * Listen for Slack (HTTP) and the operations routes; check the bot token and connect Socket Mode in
   * the background, retrying until Slack answers. Rejects only when the server cannot listen.
   */
  start(): Promise<{ port: number }>;
  /** undefined once Slack answered the token check (single-workspace installs), otherwise why not. */
  problem(): string | undefined;
  /**
   * A request already acknowledged that will not run (src/slack/refused.ts): logged, counted, and a
   * workflow step completed with `sentence`.
   */
  refused(body: unknown, reason: RefusalReason, sentence: string): Promise<void>;
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
  onRejected = (err) => deps.logger.error({ err }, err.message),
}: SlackAppOptions): SlackApp {
  // Every Slack call (Web API, response_url) is a span of the trace it is made in (src/ops/tracing.ts).
  // Without one given, the global fetch as of each call (as WebClient's own default).
  const baseFetch = fetch ?? (((input, init) => globalThis.fetch(input, init)) as FetchFunction);
  const slackFetch = traceSlackFetch(baseFetch, deps.config.slack.apiUrl);
  const clientOptions = {
    ...(deps.config.slack.apiUrl ? { slackApiUrl: ensureTrailingSlash(deps.config.slack.apiUrl) } : {}),
    fetch: slackFetch,
    retryConfig: { retries: 2, factor: 2, minTimeout: 500, maxTimeout: 5000 },
  };
  // Socket Mode's own client (apps.connections.open) and the OAuth installer read installerOptions'
  // clientOptions, not clientOptions: give them the same API URL and fetch. Their default retries wait up
  // to minutes between attempts; at most 30 s apart, Socket Mode reconnects soon after Slack is back.
  const { retryConfig: _ownRetries, ...sharedClientOptions } = clientOptions;
  const installerClientOptions = {
    ...sharedClientOptions,
    retryConfig: { retries: 60, factor: 2, minTimeout: 1_000, maxTimeout: 30_000, randomize: true },
  };
  const auth: SlackAuth =
    transport.kind === "console" ? { kind: "single", botToken: transport.botToken } : transport.auth;
  const slackLogger = deps.logger.child({ component: "slack" });
  const tokenCheck: TokenCheck | undefined =
    auth.kind === "single"
      ? createTokenCheck({
          botToken: auth.botToken,
          clientOptions: { ...sharedClientOptions, logger: boltLogger(deps.logger) },
          logger: slackLogger,
          clock: deps.clock,
          retry: SLACK_CONNECT_RETRY,
          onRejected,
        })
      : undefined;
  const oauth =
    auth.kind === "single"
      ? undefined
      : {
          clientId: auth.clientId,
          clientSecret: auth.clientSecret,
          stateSecret: auth.stateSecret,
          scopes: BOT_SCOPES,
          installationStore: deps.store.installations,
        };
  // The receiver is built here, not by Bolt, so readiness and reconnects reach it without App's internals.
  // With OAuth the installer (and its authorize) lives in the receiver.
  const httpReceiver =
    transport.kind === "http"
      ? new ThreadedHttpReceiver(
          {
            signingSecret: transport.signingSecret,
            customRoutes: routes,
            logger: boltLogger(deps.logger),
            ...(oauth
              ? { ...oauth, installerOptions: { directInstall: true, clientOptions: installerClientOptions } }
              : {}),
          },
          slackLogger,
          deps.clock,
          deps.config.httpMaxPayloadsInFlight,
        )
      : undefined;
  const receiver: Receiver =
    transport.kind === "console"
      ? transport.receiver
      : transport.kind === "socket"
        ? new SocketModeReceiver({
            appToken: transport.appToken,
            logger: boltLogger(deps.logger),
            customRoutes: routes,
            ...oauth,
            // Socket Mode serves the routes (and OAuth pages) on installerOptions.port.
            installerOptions: {
              ...(oauth ? { directInstall: true } : {}),
              clientOptions: installerClientOptions,
              port,
            },
          })
        : httpReceiver!;
  const app = new App({
    logger: boltLogger(deps.logger),
    // No conversation state is used; Bolt's default store builds an Error on every request.
    convoStore: false,
    // The error handler gets the payload, so a request Bolt could not authorize is answered (below).
    extendedErrorHandler: true,
    clientOptions,
    receiver,
    ...(transport.kind === "socket" ? { socketMode: true } : {}),
    // Not `token`: Bolt would check it with an auth.test nobody awaits (src/slack/transport/connection.ts).
    ...(auth.kind === "single" ? { authorize: tokenCheck!.authorize } : {}),
  });

  const env: SlackEnv = {
    deps,
    admins: new AdminDirectory(deps.config.slack.adminUserIds, deps.clock.now),
    clientFor: slackClientFactory(
      auth,
      { ...clientOptions, logger: boltLogger(deps.logger) },
      deps.store.installations,
      TEAM_CLIENT_CACHE_MAX,
    ),
    clientWithToken: (token) =>
      new SlackWebClient(token, { ...clientOptions, logger: boltLogger(deps.logger) }),
    cardRedraws: new CardRedraws(),
  };
  // One trace per request, around everything after it (in-flight tracking, the listeners, their ack).
  app.use(traceSlackRequests);
  for (const m of middleware) app.use(m);
  boundTeamClientCache(app, TEAM_CLIENT_CACHE_MAX);
  registerListeners(app, env);
  // Workflow steps waiting on a change request complete when it settles, whichever path settled it.
  const unwatchSteps = deps.changeObservers.add((request) =>
    settleStepsWaitingOn(env, request).then(() => undefined),
  );
  // The requester hears how others decided their request, whichever path decided it.
  const unwatchOutcomes = deps.changeObservers.add((request) => tellRequester(env, request));
  const refused = createRefusals({
    logger: slackLogger,
    metrics: deps.metrics,
    clientWithToken: env.clientWithToken,
  });
  // After the observers above: the thread hears the outcome before the card shows it, as before.
  const unwatchCards = redrawCardsOnChange(env);
  app.error(async ({ error, body }: { error: Error & { code?: string }; body: unknown }) => {
    if (error.code !== ErrorCode.AuthorizationError) {
      deps.logger.error({ err: error }, "unhandled error in a Slack listener");
      return;
    }
    await refused(body, "authorization", toUserSentence(rootCause(error)));
    // No installation for the workspace (or the store could not read it): Bolt runs no listener and its
    // ack is empty, so without this the user would hear nothing.
    const url = responseUrlOf(body);
    // The error's message names the workspace (the store's "No Slack installation stored for ...").
    slackLogger.warn({ err: error, answered: url !== undefined }, "a Slack request could not be authorized");
    if (url)
      await postEphemeral(
        slackFetch as unknown as typeof globalThis.fetch,
        url,
        toUserSentence(rootCause(error)),
        slackLogger,
        "the authorization sentence",
      );
  });

  let socket: { stop(): void } | undefined;
  const stopConnecting = () => {
    tokenCheck?.stop();
    socket?.stop();
  };
  return {
    app,
    receiver,
    env,
    async start() {
      tokenCheck?.start();
      try {
        if (transport.kind === "http") {
          await app.start(port);
          return { port: httpReceiver?.port ?? port };
        }
        if (transport.kind === "console") {
          await app.start();
          return { port };
        }
        // Socket Mode: Bolt's own server for the routes (and OAuth pages) may listen on PORT=0, and it
        // listens before the WebSocket connects; the connection is supervised in the background.
        const listening = socketModeHttpListening(receiver);
        const first = app.start();
        socket = superviseSocketMode({
          first,
          reconnect: () => socketModeClientOf(receiver)?.start() ?? first,
          logger: slackLogger,
          clock: deps.clock,
          retry: SLACK_CONNECT_RETRY,
          onRejected,
        });
        return { port: await (listening ?? Promise.resolve(port)) };
      } catch (err) {
        stopConnecting();
        throw err;
      }
    },
    problem: () => tokenCheck?.problem(),
    refused,
    async stop() {
      unwatchSteps();
      unwatchOutcomes();
      unwatchCards();
      stopConnecting();
      await app.stop();
    },
  };
}

/** Bolt's and @slack/oauth's AuthorizationError each keep what they wrapped as `original`. */
function rootCause(err: unknown): unknown {
  const inner = (err as { original?: unknown } | undefined)?.original;
  return inner === undefined ? err : rootCause(inner);
}

function ensureTrailingSlash(url: string): string {
  return url.endsWith("/") ? url : `${url}/`;
}
