import type { AllMiddlewareArgs, AnyMiddlewareArgs, Middleware } from "@slack/bolt";
import type { Clock } from "../clock.js";
import { withDeadline } from "../deadline.js";
import type { Logger } from "../log.js";
import type { Metrics } from "./metrics.js";
import { postEphemeral, responseUrlOf } from "./response-url.js";
import { stopTracing } from "./tracing.js";

/**
 * Graceful shutdown. A Bolt global middleware counts every Slack request whose listeners are still
 * working (listeners ack at once and keep working in the same call, so awaiting `next()` covers the
 * whole answer). On stop: refuse new requests with a sentence, wait for the ones in flight up to
 * SHUTDOWN_TIMEOUT_MS, answer those still unfinished through their response_url with a sentence
 * (and silence their late answers), then close the Edge client, the Slack receiver and the store.
 */

export const RESTARTING_NEW = "edgeops is restarting; run the command again in a minute.";
export const RESTARTING_UNFINISHED =
  "edgeops is restarting and could not finish this; run the command again in a minute.";

interface Work {
  readonly kind: string;
  readonly responseUrl: string | undefined;
  readonly started: number;
}

export interface WorkTracker {
  /** Register first among global middleware: tracks work and refuses new work once stopping. */
  readonly middleware: Middleware<AnyMiddlewareArgs>;
  readonly stopping: boolean;
  inFlight(): number;
  /** Track work that does not come from a Slack request (scheduled runs, sweepers). */
  track<T>(kind: string, work: () => Promise<T>): Promise<T>;
  /** True for a response_url already answered with RESTARTING_UNFINISHED. */
  isAbandoned(url: string): boolean;
  beginStop(): void;
  /** Told of every request refused while stopping (after its sentence), e.g. to log, count and settle it. */
  onRefused(handler: (body: unknown) => Promise<void>): void;
  /** Resolve true when nothing is in flight, false when `timeoutMs` passed first. */
  drain(timeoutMs: number): Promise<boolean>;
  /** Answer everything still in flight with RESTARTING_UNFINISHED; returns how many were unfinished. */
  abandon(): Promise<number>;
}

export interface WorkTrackerOptions {
  logger: Logger;
  metrics: Pick<Metrics, "slackInFlight" | "shutdownAbandoned">;
  /** Posts to response_urls (unwrapped: not silenced by isAbandoned). */
  fetch?: typeof fetch;
  clock: Clock;
}

function firstInputBlockId(body: unknown): string | undefined {
  const values = (body as { view?: { state?: { values?: Record<string, unknown> } } } | undefined)?.view
    ?.state?.values;
  return values ? Object.keys(values)[0] : undefined;
}

function kindOf(body: unknown): string {
  if (!body || typeof body !== "object") return "unknown";
  const b = body as { command?: unknown; type?: unknown };
  if (typeof b.command === "string") return "command";
  return typeof b.type === "string" ? b.type : "unknown";
}

export function createWorkTracker(options: WorkTrackerOptions): WorkTracker {
  const { logger, metrics } = options;
  const { clock } = options;
  const now = clock.now;
  const post = options.fetch ?? globalThis.fetch;
  const work = new Set<Work>();
  const abandoned = new Set<string>();
  let idleWaiters: (() => void)[] = [];
  let stopping = false;
  let refusedHandler: ((body: unknown) => Promise<void>) | undefined;

  const finish = (w: Work) => {
    work.delete(w);
    metrics.slackInFlight.set(work.size);
    if (work.size === 0) {
      const waiters = idleWaiters;
      idleWaiters = [];
      for (const w of waiters) w();
    }
  };

  const say = (url: string, text: string) => postEphemeral(post, url, text, logger, "the shutdown sentence");

  async function refuse(args: AnyMiddlewareArgs & AllMiddlewareArgs, kind: string): Promise<void> {
    const ack = "ack" in args && typeof args.ack === "function" ? args.ack : undefined;
    logger.info({ kind }, "refused a Slack request: shutting down");
    // A modal submitted now keeps its values open with the sentence on its first input, rather than
    // closing as if it had been saved.
    const inputBlock = kind === "view_submission" ? firstInputBlockId(args.body) : undefined;
    if (ack && inputBlock) {
      await (ack as (r: { response_action: "errors"; errors: Record<string, string> }) => Promise<void>)({
        response_action: "errors",
        errors: { [inputBlock]: "edgeops is restarting; submit again in a minute." },
      });
      return;
    }
    // Commands and clicks hear it through response_url: over HTTP the receiver has already given their
    // (empty) ack (src/slack/transport/threaded-receiver.ts).
    if (ack) await (ack as () => Promise<void>)();
    const url = responseUrlOf(args.body);
    if (url && (kind === "command" || kind === "block_actions")) await say(url, RESTARTING_NEW);
    await refusedHandler?.(args.body).catch((err: unknown) =>
      logger.warn({ err }, "could not settle a request refused while stopping"),
    );
  }

  const middleware: Middleware<AnyMiddlewareArgs> = async (args) => {
    const kind = kindOf(args.body);
    if (stopping) {
      await refuse(args, kind);
      return;
    }
    const w: Work = { kind, responseUrl: responseUrlOf(args.body), started: now() };
    work.add(w);
    metrics.slackInFlight.set(work.size);
    try {
      await args.next();
    } finally {
      finish(w);
    }
  };

  return {
    middleware,
    get stopping() {
      return stopping;
    },
    inFlight: () => work.size,
    async track(kind, fn) {
      const w: Work = { kind, responseUrl: undefined, started: now() };
      work.add(w);
      try {
        return await fn();
      } finally {
        finish(w);
      }
    },
    isAbandoned: (url) => abandoned.has(url),
    beginStop() {
      stopping = true;
    },
    onRefused(handler) {
      refusedHandler = handler;
    },
    drain(timeoutMs) {
      if (work.size === 0) return Promise.resolve(true);
      return new Promise<boolean>((resolve) => {
        const cancel = clock.setTimeout(() => {
          idleWaiters = idleWaiters.filter((w) => w !== done);
          resolve(false);
        }, timeoutMs);
        const done = () => {
          cancel();
          resolve(true);
        };
        idleWaiters.push(done);
      });
    },
    async abandon() {
      const left = [...work];
      for (const w of left) if (w.responseUrl) abandoned.add(w.responseUrl);
      metrics.shutdownAbandoned.inc(left.length);
      await Promise.all(
        left.map(async (w) => {
          logger.warn(
            { kind: w.kind, runningMs: now() - w.started, answered: Boolean(w.responseUrl) },
            "shutdown timeout: work left unfinished",
          );
          if (w.responseUrl) await say(w.responseUrl, RESTARTING_UNFINISHED);
        }),
      );
      return left.length;
    },
  };
}

export interface StopParts {
  tracker: WorkTracker;
  slack: { stop(): Promise<void> };
  edge: { close(deadlineMs?: number): Promise<void> };
  store: { close(): Promise<void> };
  logger: Logger;
  timeoutMs: number;
  /** Runs after new work is refused and before waiting (e.g. stop the scheduler claiming runs). */
  beforeDrain?: (() => Promise<void> | void)[];
  clock: Clock;
}

export interface StopReport {
  drained: boolean;
  abandoned: number;
  ms: number;
}

/** Stop taking work, let what is in flight finish within `timeoutMs`, answer the rest, close everything. */
export async function gracefulStop(parts: StopParts): Promise<StopReport> {
  const { clock } = parts;
  const now = clock.now;
  const { tracker, logger } = parts;
  const started = now();
  tracker.beginStop();
  for (const hook of parts.beforeDrain ?? []) {
    try {
      await hook();
    } catch (err) {
      logger.warn({ err }, "a shutdown hook failed");
    }
  }
  logger.info({ inFlight: tracker.inFlight(), timeoutMs: parts.timeoutMs }, "draining in-flight work");
  const drained = await tracker.drain(Math.max(0, parts.timeoutMs - (now() - started)));
  const abandoned = drained ? 0 : await tracker.abandon();
  // Drained: queued Edge calls from other work (scheduled runs) get the time that is left.
  // Not drained: the time is up, abort what is left now.
  await parts.edge
    .close(drained ? Math.max(0, parts.timeoutMs - (now() - started)) : 0)
    .catch((err: unknown) => logger.warn({ err }, "closing the Edge API client failed"));
  await withTimeout(clock, parts.slack.stop(), 3000).catch((err: unknown) =>
    logger.warn({ err }, "stopping the Slack receiver failed"),
  );
  await parts.store.close().catch((err: unknown) => logger.warn({ err }, "closing the store failed"));
  const report = { drained, abandoned, ms: now() - started };
  logger.info(report, "edgeops stopped");
  // Last: the spans of the drain itself are sent too (nothing when tracing is off).
  await withTimeout(clock, stopTracing(), 3000).catch((err: unknown) =>
    logger.warn({ err }, "sending the last traces failed"),
  );
  return report;
}

function withTimeout(clock: Clock, p: Promise<void>, ms: number): Promise<void> {
  return withDeadline(clock, p, ms, () => undefined);
}
