/**
 * The one composition root: every dependency is built here, once, from the configuration; src/app/bot.ts
 * adds the Slack app and ops (buildBot). The bot's start, the local console (tools/console), the test
 * harness and the bench use it, so a new dependency or background job is wired in one place for all of them.
 */
import { ChangeObservers } from "../changes/observers.js";
import { type Clock, systemClock } from "../clock.js";
import type { Config } from "../config.js";
import type { Deps } from "../deps.js";
import { createEdgeApi, type EdgeApi } from "../edge/client.js";
import type { RetryPolicy } from "../edge/queue.js";
import { createSharedLimit, type SharedLimit } from "../edge/shared-limit.js";
import { createPoller } from "../jobs/alerts.js";
import { createChangeSweeper } from "../jobs/change-sweeps.js";
import { createScheduler } from "../jobs/schedules.js";
import { createUndoHeadsUp } from "../jobs/undo-heads-up.js";
import type { Logger } from "../log.js";
import { createMetrics, type Metrics } from "../ops/metrics.js";
import { cardRedrawer } from "../slack/change-requests.js";
import type { SlackEnv } from "../slack/edge-commands/types.js";
import { openStore, type StoreOptions, type WorkScope } from "../store/index.js";

export interface EdgeClientOptions {
  config: Config;
  logger: Logger;
  /** The client's clock (timeouts, pauses after a 429, Retry-After). */
  clock: Clock;
  /** Counts every request, queue wait and refusal. */
  metrics?: Metrics;
  sharedLimit?: SharedLimit;
  /** Default config.edge.baseUrl (the console points a second client at its simulator). */
  baseUrl?: string;
  /** Default config.edge.timeoutMs (tests shorten it). */
  timeoutMs?: number;
  /** Default RETRY_DEFAULT (tests use RETRY_FAST). */
  retry?: RetryPolicy;
}

/** An Edge API client configured from config.edge. */
export function createEdgeClient(o: EdgeClientOptions): EdgeApi {
  const { config, metrics } = o;
  return createEdgeApi({
    baseUrl: o.baseUrl ?? config.edge.baseUrl,
    timeoutMs: o.timeoutMs ?? config.edge.timeoutMs,
    ratePerSec: config.edge.ratePerSec,
    concurrency: config.edge.concurrency,
    maxQueue: config.edge.maxQueue,
    maxBodyBytes: config.edge.maxBodyBytes,
    logger: o.logger,
    clock: o.clock,
    ...(o.retry ? { retry: o.retry } : {}),
    ...(metrics
      ? {
          onRequest: (e) => {
            metrics.edgeRequests.inc({
              operation: e.operation,
              status: String(e.status ?? e.kind ?? "unknown"),
            });
            metrics.edgeLatency.observe({ operation: e.operation }, e.durationMs / 1000);
          },
          onQueueWait: (ms) => metrics.queueWait.observe(ms / 1000),
          onQueueRejected: () => metrics.queueRejections.inc(),
        }
      : {}),
    ...(o.sharedLimit ? { sharedLimit: o.sharedLimit } : {}),
  });
}

export interface ComposeOptions {
  config: Config;
  logger: Logger;
  /** The one clock of the store, the Edge client, the services and the jobs (tests move it); default the real one. */
  clock?: Clock;
  /** PostgreSQL schema (tests, the console's own); default "public". */
  pgSchema?: string;
  /** PostgreSQL connections per store; default the store's own (tests of several replicas use fewer). */
  poolSize?: number;
  /** Told of every statement the store runs (tests count what a flow costs). */
  onStoreStatement?: StoreOptions["onStatement"];
  /** The process-wide default metrics (CPU, memory …); off where several bots share a process. Default on. */
  processMetrics?: boolean;
  /** A ready Edge API client (the console's, which also routes its simulator's key); otherwise one from config. */
  edge?: EdgeApi;
  /** For the client built from config: what tests shorten. */
  edgeOptions?: Pick<EdgeClientOptions, "timeoutMs" | "retry">;
}

export interface Composed {
  deps: Deps;
  /** With REDIS_URL: the rate shared by every replica; closed after the Edge client. */
  sharedLimit: SharedLimit | undefined;
  /** Close what was built here (the Edge client unless it was given, the shared limit, the store). */
  close(): Promise<void>;
}

/** Store, metrics, shared limit, Edge client and change observers: what every service and listener uses. */
export async function composeDeps(o: ComposeOptions): Promise<Composed> {
  const { config, logger } = o;
  const clock = o.clock ?? systemClock;
  const store = await openStore({
    config,
    logger,
    clock,
    ...(o.pgSchema ? { pgSchema: o.pgSchema } : {}),
    ...(o.poolSize !== undefined ? { poolSize: o.poolSize } : {}),
    ...(o.onStoreStatement ? { onStatement: o.onStoreStatement } : {}),
  });
  const metrics = createMetrics({ defaults: o.processMetrics !== false });
  const sharedLimit =
    !o.edge && config.redis.url
      ? createSharedLimit({
          redisUrl: config.redis.url,
          ratePerSec: config.edge.ratePerSec,
          concurrency: config.edge.concurrency,
          requestTimeoutMs: config.edge.timeoutMs,
          expectedReplicas: config.redis.expectedReplicas,
          logger,
        })
      : undefined;
  const edge =
    o.edge ??
    createEdgeClient({
      config,
      logger,
      clock,
      metrics,
      ...(sharedLimit ? { sharedLimit } : {}),
      ...o.edgeOptions,
    });
  const deps: Deps = { config, logger, store, edge, metrics, clock, changeObservers: new ChangeObservers() };
  return {
    deps,
    sharedLimit,
    async close() {
      if (!o.edge) await edge.close();
      await sharedLimit?.close();
      await store.close();
    },
  };
}

export interface Jobs {
  /** Stop claiming work; finish what is running within `deadlineMs`. */
  stop(deadlineMs: number): Promise<void>;
}

/**
 * The background work every replica runs: scheduled DNS summaries, alert watches, approval expiry.
 * Each occurrence is claimed by one replica; `scope` keeps the console to its own workspace.
 */
export function startJobs({ env, scope }: { env: SlackEnv; scope?: WorkScope }): Jobs {
  const { deps } = env;
  const { config, logger, clock } = deps;
  const scoped = scope ? { scope } : {};
  const scheduler = createScheduler({
    deps,
    clientFor: env.clientFor,
    clock,
    logger,
    intervalMs: config.schedules.intervalMs,
    leaseMs: config.schedules.leaseMs,
    ...scoped,
  });
  const poller = createPoller({
    deps,
    clientFor: env.clientFor,
    clock,
    logger,
    redrawCard: cardRedrawer(env),
    ...scoped,
  });
  const sweeper = createChangeSweeper(env, scoped);
  const headsUp = createUndoHeadsUp(env, scoped);
  scheduler.start();
  poller.start();
  sweeper.start();
  headsUp.start();
  return {
    async stop(deadlineMs) {
      await Promise.all([
        scheduler.stop(deadlineMs),
        poller.stop(deadlineMs),
        sweeper.stop(),
        headsUp.stop(deadlineMs),
      ]);
    },
  };
}
