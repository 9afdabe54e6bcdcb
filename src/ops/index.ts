import type { App, CustomRoute } from "@slack/bolt";
import type { FetchFunction } from "@slack/web-api";
import type { Deps } from "../deps.js";
import { opsRoutes, type ReadinessCheck } from "./health.js";
import { createWorkTracker, gracefulStop, type StopReport, type WorkTracker } from "./shutdown.js";
import { instrumentSlackFetch } from "./slack-fetch.js";
import { type TransportWatch, watchTransport } from "./transport-state.js";

export type { ReadinessCheck } from "./health.js";
export { RESTARTING_NEW, RESTARTING_UNFINISHED, type StopReport, type WorkTracker } from "./shutdown.js";

/**
 * Everything operations adds to a running bot, built once in bot.ts: the /healthz, /readyz and
 * /metrics routes, the instrumented fetch for Slack clients, the in-flight tracking middleware and
 * the graceful stop.
 */
export interface Ops {
  readonly routes: CustomRoute[];
  readonly slackFetch: FetchFunction;
  readonly tracker: WorkTracker;
  /** Watch the Slack transport for readiness; call after createSlackApp, before start. */
  attach(app: App, kind: "http" | "socket"): void;
  /** Add a readiness check (e.g. the scheduler's). */
  addCheck(check: ReadinessCheck): void;
  /** Run before draining (e.g. stop claiming scheduled runs). */
  onStop(hook: () => Promise<void> | void): void;
  stop(parts: { slack: { stop(): Promise<void> } }): Promise<StopReport>;
}

export function createOps(deps: Deps): Ops {
  const { metrics, logger, store, edge, config } = deps;
  const tracker = createWorkTracker({ logger: logger.child({ component: "shutdown" }), metrics });
  const slackFetch = instrumentSlackFetch({
    metrics,
    apiUrl: config.slack.apiUrl,
    drop: (url) => tracker.isAbandoned(url),
  });
  let transport: TransportWatch | undefined;
  const hooks: (() => Promise<void> | void)[] = [];
  const checks: ReadinessCheck[] = [
    {
      name: "store",
      check: async () => {
        try {
          await store.ping();
          return undefined;
        } catch (err) {
          return err instanceof Error ? err.message : "the store does not answer";
        }
      },
    },
    { name: "slack", check: () => (transport ? transport.problem() : "not started") },
  ];
  const routes = opsRoutes({
    metrics,
    edge,
    checks,
    stopping: () => tracker.stopping,
    inFlight: () => tracker.inFlight(),
    logger: logger.child({ component: "ops" }),
  });
  return {
    routes,
    slackFetch,
    tracker,
    attach(app, kind) {
      transport = watchTransport(app, kind);
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
        now: deps.now,
      });
      transport?.close();
      return report;
    },
  };
}
