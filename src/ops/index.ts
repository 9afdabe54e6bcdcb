import type { CustomRoute } from "@slack/bolt";
import type { Deps } from "../deps.js";
import {
  metricsHandler,
  type OpsRoutesOptions,
  opsRoutes,
  type ReadinessCheck,
  UNAVAILABLE,
} from "./health.js";
import { type MetricsServer, startMetricsServer } from "./metrics-server.js";
import { createWorkTracker, gracefulStop, type StopReport, type WorkTracker } from "./shutdown.js";

export type { ReadinessCheck } from "./health.js";
export { RESTARTING_NEW, RESTARTING_UNFINISHED, type StopReport, type WorkTracker } from "./shutdown.js";

/** Whether Slack can reach the app: undefined when it can, otherwise what is wrong. */
export interface TransportWatch {
  problem(): string | undefined;
  close(): void;
}

/**
 * Everything operations adds to a running bot, built once in bot.ts: the /healthz, /readyz and
 * /metrics routes, the in-flight tracking middleware and the graceful stop. Ops knows nothing of
 * Slack's transport: bot.ts hands it the watches (src/slack/transport/transport-state.ts).
 */
export interface Ops {
  readonly routes: CustomRoute[];
  readonly tracker: WorkTracker;
  /**
   * Watch the Slack transport for readiness; call after createSlackApp, before start. `connection`
   * says whether Slack has answered the token check yet (src/slack/transport/connection.ts).
   */
  attach(transport: TransportWatch, connection?: { problem(): string | undefined }): void;
  /** With METRICS_PORT: serve /metrics on its own port; the port it got, or undefined. */
  listenMetrics(): Promise<number | undefined>;
  /** Add a readiness check (e.g. the scheduler's). */
  addCheck(check: ReadinessCheck): void;
  /** Run before draining (e.g. stop claiming scheduled runs). */
  onStop(hook: () => Promise<void> | void): void;
  stop(parts: { slack: { stop(): Promise<void> } }): Promise<StopReport>;
}

export function createOps(deps: Deps): Ops {
  const { metrics, logger, store, edge, config } = deps;
  const tracker = createWorkTracker({
    logger: logger.child({ component: "shutdown" }),
    metrics,
    clock: deps.clock,
  });
  let transport: TransportWatch | undefined;
  let connection: { problem(): string | undefined } | undefined;
  let metricsServer: MetricsServer | undefined;
  const hooks: (() => Promise<void> | void)[] = [];
  const opsLogger = logger.child({ component: "ops" });
  let storeFailing = false;
  const checks: ReadinessCheck[] = [
    {
      name: "store",
      // The driver's message names hosts, ports and users: the log gets it, once per outage.
      check: async () => {
        try {
          await store.ping();
          storeFailing = false;
          return undefined;
        } catch (err) {
          if (!storeFailing) opsLogger.error({ err }, "the store does not answer");
          storeFailing = true;
          return UNAVAILABLE;
        }
      },
    },
    {
      name: "slack",
      check: () => {
        if (!transport) return "not started";
        const problems = [connection?.problem(), transport.problem()].filter((p) => p !== undefined);
        return problems.length > 0 ? problems.join("; ") : undefined;
      },
    },
  ];
  const routeOptions: OpsRoutesOptions = {
    metrics,
    edge,
    checks,
    stopping: () => tracker.stopping,
    inFlight: () => tracker.inFlight(),
    logger: opsLogger,
    clock: deps.clock,
    metricsToken: config.metrics.token,
    metricsOnPort: config.metrics.port === 0,
  };
  const routes = opsRoutes(routeOptions);
  return {
    routes,
    tracker,
    attach(transportWatch, slackConnection) {
      transport = transportWatch;
      connection = slackConnection;
    },
    async listenMetrics() {
      if (config.metrics.port === 0) return undefined;
      metricsServer = await startMetricsServer({
        port: config.metrics.port,
        handler: metricsHandler(routeOptions),
        logger: opsLogger,
      });
      return metricsServer.port;
    },
    addCheck: (check) => void checks.push(check),
    onStop: (hook) => void hooks.push(hook),
    async stop({ slack }) {
      const report = await gracefulStop({
        tracker,
        slack,
        edge,
        store,
        logger: logger.child({ component: "shutdown" }),
        timeoutMs: config.shutdownTimeoutMs,
        beforeDrain: hooks,
        clock: deps.clock,
      });
      transport?.close();
      await metricsServer?.close();
      return report;
    },
  };
}
