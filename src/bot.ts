import { createPoller } from "./alerts/poller.js";
import { ChangeObservers } from "./changes/observers.js";
import type { Config } from "./config.js";
import type { Deps } from "./deps.js";
import { createEdgeApi } from "./edge/client.js";
import { createSharedLimit } from "./edge/shared-limit.js";
import { createChangeSweeper } from "./jobs/change-sweeps.js";
import type { Logger } from "./log.js";
import { createOps } from "./ops/index.js";
import { createMetrics } from "./ops/metrics.js";
import { createScheduler } from "./scheduler/index.js";
import { createSlackApp } from "./slack/app.js";
import { STEP_REFUSED_SHUTDOWN } from "./slack/refused.js";
import { selectTransport, type TransportError } from "./slack/transport.js";
import { openStore } from "./store/index.js";

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

/** Build every dependency once from the configuration and start the transport it selects. */
export async function startBot({
  config,
  logger,
  now = Date.now,
  onFatal,
}: StartOptions): Promise<RunningBot> {
  const transport = selectTransport(config);
  if (transport.kind === "console") {
    const { startConsoleBot } = await import("./console/index.js");
    return startConsoleBot({ config, logger, now });
  }

  const store = await openStore({ config, logger, now });
  const metrics = createMetrics();
  const sharedLimit = config.redis.url
    ? createSharedLimit({
        redisUrl: config.redis.url,
        ratePerSec: config.edge.ratePerSec,
        concurrency: config.edge.concurrency,
        requestTimeoutMs: config.edge.timeoutMs,
        expectedReplicas: config.redis.expectedReplicas,
        logger,
      })
    : undefined;
  const edge = createEdgeApi({
    baseUrl: config.edge.baseUrl,
    timeoutMs: config.edge.timeoutMs,
    ratePerSec: config.edge.ratePerSec,
    concurrency: config.edge.concurrency,
    maxQueue: config.edge.maxQueue,
    maxBodyBytes: config.edge.maxBodyBytes,
    logger: logger.child({ component: "edge" }),
    now,
    onRequest: (e) => {
      metrics.edgeRequests.inc({ operation: e.operation, status: String(e.status ?? e.kind ?? "unknown") });
      metrics.edgeLatency.observe({ operation: e.operation }, e.durationMs / 1000);
    },
    onQueueWait: (ms) => metrics.queueWait.observe(ms / 1000),
    onQueueRejected: () => metrics.queueRejections.inc(),
    ...(sharedLimit ? { sharedLimit } : {}),
  });
  const deps: Deps = { config, logger, store, edge, metrics, now, changeObservers: new ChangeObservers() };
  // /healthz, /readyz, /metrics on PORT; Slack error metrics; in-flight tracking for graceful stop.
  const ops = createOps(deps);
  const slack = createSlackApp({
    deps,
    transport,
    port: config.port,
    routes: ops.routes,
    fetch: ops.slackFetch,
    middleware: [ops.tracker.middleware],
    ...(onFatal ? { onRejected: onFatal } : {}),
  });
  ops.attach(slack.app, transport.kind, slack);
  // Requests refused while stopping were acknowledged already: logged, counted, workflow steps completed.
  ops.tracker.onRefused((body) => slack.refused(body, "shutdown", STEP_REFUSED_SHUTDOWN));
  if (sharedLimit) {
    // Degraded but serving: without Redis each replica keeps its local share of the rate.
    ops.addCheck({ name: "redis", advisory: true, check: () => sharedLimit.problem() });
  }
  const metricsPort = await ops.listenMetrics();
  // Listens at once; the token check and Socket Mode connect in the background (src/slack/connection.ts).
  const { port } = await slack.start();
  // Scheduled DNS summaries: every replica ticks; each occurrence is claimed by one (src/scheduler).
  const scheduler = createScheduler({
    deps,
    clientFor: slack.env.clientFor,
    now,
    logger,
    intervalMs: config.schedules.intervalMs,
    leaseMs: config.schedules.leaseMs,
  });
  scheduler.start();
  // Alerts: every replica polls; each watch evaluation is claimed by one (src/alerts/poller.ts).
  const poller = createPoller({ deps, clientFor: slack.env.clientFor, now, logger });
  poller.start();
  // Approval requests expire without a click, in every replica, also after a restart.
  const sweeper = createChangeSweeper(slack.env);
  sweeper.start();
  // Once new Slack work is refused: stop claiming schedules and watches and sweeping, within the same deadline.
  ops.onStop(() =>
    Promise.all([
      scheduler.stop(config.shutdownTimeoutMs),
      poller.stop(config.shutdownTimeoutMs),
      sweeper.stop(),
    ]).then(() => undefined),
  );
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
