import { composeDeps, startJobs } from "./app/compose.js";
import type { Config } from "./config.js";
import type { Deps } from "./deps.js";
import { TransportError } from "./errors.js";
import type { Logger } from "./log.js";
import { createOps } from "./ops/index.js";
import { createSlackApp } from "./slack/app.js";
import { STEP_REFUSED_SHUTDOWN } from "./slack/refused.js";
import { instrumentSlackFetch } from "./slack/transport/slack-fetch.js";
import { CONNECT_HINT, selectTransport } from "./slack/transport/transport.js";
import { watchTransport } from "./slack/transport/transport-state.js";

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
  now?: () => number;
  /**
   * Slack refused a token for good after start-up (invalid_auth …): the sentence to stop with. The
   * process stays up otherwise, so main.ts stops it; without this the error is only logged.
   */
  onFatal?: (err: TransportError) => void;
}

/** Build every dependency once (src/app/compose.ts) and start the transport the configuration selects. */
export async function startBot({
  config,
  logger,
  now = Date.now,
  onFatal,
}: StartOptions): Promise<RunningBot> {
  const transport = selectTransport(config);
  if (transport.kind === "console") {
    // The console is a tool of the checkout (tools/start.ts), not part of the built bot.
    throw new TransportError(`No Slack credentials are set. ${CONNECT_HINT}`);
  }

  const { deps, sharedLimit } = await composeDeps({ config, logger, now });
  // /healthz, /readyz, /metrics on PORT; Slack error metrics; in-flight tracking for graceful stop.
  const ops = createOps(deps);
  const slack = createSlackApp({
    deps,
    transport,
    port: config.port,
    routes: ops.routes,
    // Slack Web API calls are counted, and a late answer to a request abandoned at shutdown is dropped.
    fetch: instrumentSlackFetch({
      metrics: deps.metrics,
      apiUrl: config.slack.apiUrl,
      drop: (url) => ops.tracker.isAbandoned(url),
    }),
    middleware: [ops.tracker.middleware],
    ...(onFatal ? { onRejected: onFatal } : {}),
  });
  ops.attach(watchTransport(slack.receiver, transport.kind), slack);
  // Requests refused while stopping were acknowledged already: logged, counted, workflow steps completed.
  ops.tracker.onRefused((body) => slack.refused(body, "shutdown", STEP_REFUSED_SHUTDOWN));
  if (sharedLimit) {
    // Degraded but serving: without Redis each replica keeps its local share of the rate.
    ops.addCheck({ name: "redis", advisory: true, check: () => sharedLimit.problem() });
  }
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
