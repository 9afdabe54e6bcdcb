import type { AnyMiddlewareArgs, Middleware } from "@slack/bolt";
import type { Clock } from "../clock.js";
import type { Config } from "../config.js";
import type { Deps } from "../deps.js";
import { TransportError } from "../errors.js";
import type { Logger } from "../log.js";
import { createOps, type Ops } from "../ops/index.js";
import { createSlackApp, type SlackApp, type SlackAppOptions } from "../slack/app.js";
import { STEP_REFUSED_SHUTDOWN } from "../slack/refused.js";
import { instrumentSlackFetch } from "../slack/transport/slack-fetch.js";
import { CONNECT_HINT, selectTransport } from "../slack/transport/transport.js";
import { watchTransport } from "../slack/transport/transport-state.js";
import { type Composed, type ComposeOptions, composeDeps, startJobs } from "./compose.js";

export interface BuildOptions extends ComposeOptions {
  transport: SlackAppOptions["transport"];
  /** The HTTP server's port (Socket Mode serves only the routes there); 0 picks a free one. */
  port: number;
  /**
   * Production's operations (src/ops): /healthz, /readyz, /metrics, Slack call metrics, in-flight
   * tracking and the graceful stop. The console and the test harness run without them.
   */
  withOps?: boolean;
  /** Global Bolt middleware, after the in-flight tracking (tests add their own). */
  middleware?: Middleware<AnyMiddlewareArgs>[];
  /** Slack refused a token for good after start-up; without this the error is only logged. */
  onFatal?: (err: TransportError) => void;
}

export interface BuiltBot extends Composed {
  slack: SlackApp;
  ops: Ops | undefined;
}

/**
 * Everything the bot is made of, built and not yet started: the dependencies (composeDeps), the
 * Slack app on the given transport and, with `withOps`, its operations. The bot (startBot), the
 * console, the test harness and the bench build through here; each starts what it needs.
 * `close()` stops the Slack app and closes what composeDeps built (with ops, use ops.stop instead).
 */
export async function buildBot(o: BuildOptions & { withOps: true }): Promise<BuiltBot & { ops: Ops }>;
export async function buildBot(o: BuildOptions): Promise<BuiltBot>;
export async function buildBot(o: BuildOptions): Promise<BuiltBot> {
  const { transport, port, withOps, middleware = [], onFatal, ...composeOptions } = o;
  const composed = await composeDeps(composeOptions);
  const { deps, sharedLimit } = composed;
  // /healthz, /readyz, /metrics on PORT; Slack error metrics; in-flight tracking for graceful stop.
  const ops = withOps ? createOps(deps) : undefined;
  // AI agents' MCP server (MCP_ENABLED): /mcp beside /slack/events, posting proposals' cards through the app.
  // Loaded only when enabled: the MCP SDK is ~25 MiB of a replica's memory that serves no agent otherwise.
  const mcp =
    deps.config.mcp.enabled && transport.kind !== "console"
      ? [(await import("../mcp/server.js")).mcpRoute(() => slack.env)]
      : [];
  const slack: SlackApp = createSlackApp({
    deps,
    transport,
    port,
    routes: [...(ops?.routes ?? []), ...mcp],
    ...(ops
      ? {
          // Slack Web API calls are counted, and a late answer to a request abandoned at shutdown is dropped.
          fetch: instrumentSlackFetch({
            metrics: deps.metrics,
            apiUrl: deps.config.slack.apiUrl,
            drop: (url) => ops.tracker.isAbandoned(url),
          }),
        }
      : {}),
    middleware: [...(ops ? [ops.tracker.middleware] : []), ...middleware],
    ...(onFatal ? { onRejected: onFatal } : {}),
  });
  if (ops) {
    if (transport.kind !== "console") ops.attach(watchTransport(slack.receiver, transport.kind), slack);
    // Requests refused while stopping were acknowledged already: logged, counted, workflow steps completed.
    ops.tracker.onRefused((body) => slack.refused(body, "shutdown", STEP_REFUSED_SHUTDOWN));
    if (sharedLimit) {
      // Degraded but serving: without Redis each replica keeps its local share of the rate.
      ops.addCheck({ name: "redis", advisory: true, check: () => sharedLimit.problem() });
    }
  }
  return {
    ...composed,
    slack,
    ops,
    async close() {
      await slack.stop().catch(() => undefined);
      await composed.close();
    },
  };
}

export interface RunningBot {
  readonly deps: Deps;
  readonly mode: "socket" | "http" | "console";
  readonly port: number;
  /** METRICS_PORT's own /metrics server, when set. */
  readonly metricsPort?: number | undefined;
  /** Stop taking work, finish what is in flight (bounded by SHUTDOWN_TIMEOUT_MS), close the store. */
  stop(): Promise<void>;
}

export interface StartOptions {
  config: Config;
  logger: Logger;
  /** Default the real clock (the composition root's). */
  clock?: Clock;
  /**
   * Slack refused a token for good after start-up (invalid_auth …): the sentence to stop with. The
   * process stays up otherwise, so main.ts stops it; without this the error is only logged.
   */
  onFatal?: (err: TransportError) => void;
}

/** Build the bot (buildBot) with its operations and start the transport the configuration selects. */
export async function startBot({ config, logger, clock, onFatal }: StartOptions): Promise<RunningBot> {
  const transport = selectTransport(config);
  if (transport.kind === "console") {
    // The console is a tool of the checkout (tools/start.ts), not part of the built bot.
    throw new TransportError(`No Slack credentials are set. ${CONNECT_HINT}`);
  }

  const { deps, sharedLimit, slack, ops } = await buildBot({
    config,
    logger,
    ...(clock ? { clock } : {}),
    transport,
    port: config.port,
    withOps: true,
    ...(onFatal ? { onFatal } : {}),
  });
  const metricsPort = await ops.listenMetrics();
  // Listens at once; the token check and Socket Mode connect in the background (src/slack/transport/connection.ts).
  const { port } = await slack.start();
  // Schedules, alert watches and approval expiry: every replica ticks; each occurrence is claimed by one.
  const jobs = startJobs({ env: slack.env });
  // Once new Slack work is refused: stop claiming and sweeping, within the same deadline.
  ops.onStop(() => jobs.stop(config.shutdownTimeoutMs));
  logger.info({ mode: transport.kind, port }, "edgeops is running");

  return {
    deps,
    mode: transport.kind,
    port,
    metricsPort,
    async stop() {
      // Refuse new work, drain in-flight work up to SHUTDOWN_TIMEOUT_MS, answer the rest, close all.
      await ops.stop({ slack });
      // After the Edge API client closed: nothing waits on the shared limit any more.
      await sharedLimit?.close();
    },
  };
}
