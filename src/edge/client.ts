import { Agent, type Dispatcher } from "undici";
import type { Clock } from "../clock.js";
import { withDeadline } from "../deadline.js";
import type { Logger } from "../log.js";
import { LruCache } from "../lru.js";
import { EdgeApiError } from "./errors.js";
import { type MethodOf, OPERATIONS, type Operation, type OperationName } from "./operations.js";
import {
  DEFAULT_MAX_BACKGROUND,
  KeyQueues,
  keyId,
  type QueueStats,
  RETRY_DEFAULT,
  type RetryPolicy,
} from "./queue.js";
import { execute, type RequestContext, type RequestEvent } from "./request.js";
import { dateKeyShape } from "./schemas/date-key.js";
import type { SharedLimit } from "./shared-limit.js";

/**
 * The Edge API client: one method per row of the operation table (operations.ts), all through one
 * generic caller. Arguments are checked before any request (`invalid_argument`), responses are
 * validated and normalised after; every failure is an EdgeApiError. All requests for one API key share
 * that key's rate-limited queue.
 */

export interface EdgeApiOptions {
  baseUrl: string;
  timeoutMs: number;
  ratePerSec: number;
  concurrency: number;
  maxQueue: number;
  /** Background attempts waiting or running beyond which optional ones are refused (default 256). */
  maxBackground?: number;
  /** Largest response body read (EDGE_API_MAX_BODY_BYTES); default 10 MiB. */
  maxBodyBytes?: number;
  logger: Logger;
  retry?: RetryPolicy;
  /** Default: an undici Agent with keep-alive owned (and closed) by this EdgeApi. */
  dispatcher?: Dispatcher;
  /** Called after every HTTP attempt (retries included). */
  onRequest?: (e: RequestEvent) => void;
  /** How long a call waited in its key's queue before its (first or retried) attempt started. */
  onQueueWait?: (ms: number) => void;
  /** A call refused because its key's queue was full. */
  onQueueRejected?: () => void;
  /** With REDIS_URL: the per-key start rate and 429 pauses shared by every replica (src/edge/shared-limit.ts). */
  sharedLimit?: SharedLimit;
  clock: Clock;
  random?: () => number;
}

/** One method per row of the operation table: its arguments as parameters, its answer as the promise. */
export type EdgeClient = { [K in OperationName]: MethodOf<(typeof OPERATIONS)[K]> };

export interface ForKeyOptions {
  /**
   * Background work (alert polling): its calls wait behind the key's other calls (commands), on their own
   * connections. "optional": best-effort background reads (zone checks), refused at once with kind "busy"
   * when too much background work already waits on this replica.
   */
  background?: boolean | "optional";
  /** Aborts this client's calls, waiting or sent (a change in flight whose lease is about to end). */
  signal?: AbortSignal;
  /**
   * Called right before each call that is not a GET is sent (after its turn in the key's queue): a
   * throw sends nothing and is the call's error, unchanged (the target lock's fence, changes/target-lock.ts).
   */
  beforeWrite?: () => Promise<void>;
}

export interface EdgeApi {
  forKey(apiKey: string, options?: ForKeyOptions): EdgeClient;
  queueStats(): QueueStats;
  /** Whether optional background reads (ForKeyOptions.background "optional") are being refused now. */
  backgroundFull(): boolean;
  /**
   * Refuse new calls, wait up to `deadlineMs` (default 5000) for calls in progress, then abort what is
   * left and close the dispatcher if this EdgeApi created it.
   */
  close(deadlineMs?: number): Promise<void>;
}

function invalid(operation: string, message: string): EdgeApiError {
  return new EdgeApiError({ kind: "invalid_argument", operation, message });
}

function throwError(e: EdgeApiError): never {
  throw e;
}

// ---- the API --------------------------------------------------------------------------------------

export const DEFAULT_MAX_BODY_BYTES = 10 * 1024 * 1024;

export function createEdgeApi(options: EdgeApiOptions): EdgeApi {
  const { clock } = options;
  const ownsDispatcher = options.dispatcher === undefined;
  const dispatcher =
    options.dispatcher ??
    new Agent({ keepAliveTimeout: 10_000, keepAliveMaxTimeout: 60_000, connections: 128 });
  // Background reads get connections of their own: a backlog of them never delays a person's command
  // waiting for a connection behind them. One for each background read the queues admit at once
  // (maxBackground): at 32 a cold minute's zone checks waited on connections, not on their keys.
  const backgroundDispatcher =
    options.dispatcher ??
    new Agent({
      keepAliveTimeout: 10_000,
      keepAliveMaxTimeout: 60_000,
      connections: options.maxBackground ?? DEFAULT_MAX_BACKGROUND,
    });
  const queues = new KeyQueues({
    ratePerSec: options.ratePerSec,
    concurrency: options.concurrency,
    maxQueue: options.maxQueue,
    maxBackground: options.maxBackground,
    clock,
    onQueueWait: options.onQueueWait,
    onQueueRejected: options.onQueueRejected,
    gate: options.sharedLimit
      ? (id, signal) => (options.sharedLimit as SharedLimit).acquireStart(id, signal)
      : undefined,
  });
  /**
   * Each call in progress has a signal of its own, aborted by close() from this set: a shared long-lived
   * signal would carry a listener per waiting call (the key's queue, the attempt), and adding or removing one
   * scans them all, so a backlog of thousands of calls grew quadratic in CPU.
   */
  const calls = new Set<AbortController>();
  const logger = options.logger.child({ component: "edge" });
  let closed = false;
  // Each form of date key edgeops cannot read is logged once (not every answer that carries it).
  const unreadableShapes = new Set<string>();
  function noteUnreadableKeys(operation: string, keys: readonly string[]): void {
    const fresh = [...new Set(keys.map(dateKeyShape))].filter((k) => !unreadableShapes.has(k));
    if (fresh.length === 0 || unreadableShapes.size >= 100) return;
    for (const k of fresh) unreadableShapes.add(k);
    logger.warn(
      { op: operation, unreadable: keys.slice(0, 5), forms: fresh },
      "edge answer has date keys edgeops cannot read; shown as written",
    );
  }

  /** A call's own signal: aborted by close() or by its client's `signal`; `done` lets go of both. */
  function callSignal(clientSignal: AbortSignal | undefined): { signal: AbortSignal; done: () => void } {
    const call = new AbortController();
    const onClientAbort = () => call.abort(clientSignal?.reason);
    // No call starts once close() began (requestFor refuses it), so only the client's signal can be aborted yet.
    if (clientSignal?.aborted) onClientAbort();
    else {
      calls.add(call);
      clientSignal?.addEventListener("abort", onClientAbort, { once: true });
    }
    return {
      signal: call.signal,
      done() {
        calls.delete(call);
        clientSignal?.removeEventListener("abort", onClientAbort);
      },
    };
  }

  /**
   * Clients without a signal or a write hook hold nothing of their call: one per key and lane serves every
   * command (building one binds a method per operation, ~30 µs, on every command's path otherwise).
   */
  const plainClients = new LruCache<string, EdgeClient>(256);

  function forKey(apiKey: string, forKeyOptions: ForKeyOptions = {}): EdgeClient {
    if (forKeyOptions.signal || forKeyOptions.beforeWrite) return buildClient(apiKey, forKeyOptions);
    const lane = String(forKeyOptions.background ?? false);
    const cacheKey = `${lane}:${apiKey}`;
    const known = plainClients.get(cacheKey);
    if (known) return known;
    const client = buildClient(apiKey, forKeyOptions);
    plainClients.set(cacheKey, client);
    return client;
  }

  function buildClient(apiKey: string, forKeyOptions: ForKeyOptions): EdgeClient {
    const hasKey = typeof apiKey === "string" && apiKey.trim() !== "";
    const id = hasKey ? keyId(apiKey) : "none";
    const ctx: Omit<RequestContext, "closing"> = {
      baseUrl: options.baseUrl,
      apiKey: hasKey ? apiKey : "",
      keyId: id,
      timeoutMs: options.timeoutMs,
      maxBodyBytes: options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
      dispatcher: forKeyOptions.background ? backgroundDispatcher : dispatcher,
      retry: options.retry ?? RETRY_DEFAULT,
      queues,
      shared: options.sharedLimit,
      logger,
      clock,
      random: options.random ?? Math.random,
      onRequest: options.onRequest,
      background: forKeyOptions.background ?? false,
      beforeWrite: forKeyOptions.beforeWrite,
    };

    /** One method of the client: the row's arguments checked (nothing sent otherwise), then the call. */
    function bind(operation: OperationName): (...args: unknown[]) => Promise<unknown> {
      const row: Operation = OPERATIONS[operation];
      return async (...args) => {
        const spec = requestFor(operation, row, args);
        const call = callSignal(forKeyOptions.signal);
        const out = await execute({ ...ctx, closing: call.signal }, spec).finally(call.done);
        if (!row.answer) return row.statusIsTheAnswer ? undefined : out;
        const fail = (kind: "invalid_response" | "not_ready", message: string) =>
          new EdgeApiError({ kind, operation, subject: spec.subject, message: `${operation}: ${message}` });
        try {
          return row.answer(out, spec.input, {
            data: (d) => d ?? throwError(fail("invalid_response", "the Edge API answer had no data")),
            noteUnreadableKeys: (keys) => noteUnreadableKeys(operation, keys),
            notReady: () =>
              throwError(
                fail(
                  "not_ready",
                  "the Edge API answered 202 Accepted (an AcceptedResult) instead of the thing asked for",
                ),
              ),
          });
        } catch (err) {
          if (err instanceof EdgeApiError) throw err;
          throw new EdgeApiError({
            kind: "invalid_response",
            operation,
            subject: spec.subject,
            message: `${operation}: the Edge API answer could not be read`,
            cause: err,
          });
        }
      };
    }

    function requestFor(operation: string, row: Operation, args: unknown[]) {
      if (!hasKey) {
        throw invalid(
          operation,
          "No Edge API key is set for this workspace: an admin can set one with /edge key.",
        );
      }
      if (closed) {
        throw new EdgeApiError({
          kind: "network",
          operation,
          message: `${operation}: the Edge API client is shut down`,
        });
      }
      const checked = row.input.safeParse(
        Object.fromEntries(Object.keys(row.input.shape).map((name, i) => [name, args[i]])),
      );
      if (!checked.success)
        throw invalid(operation, checked.error.issues[0]?.message ?? "Invalid arguments.");
      const input = checked.data;
      return {
        input,
        operation,
        method: row.method,
        pathTemplate: row.path,
        path: row.path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(String(input[name]))),
        query: row.query?.(input),
        body: row.body?.(input),
        subject: row.subject?.(input),
        idempotent: row.idempotent ?? row.method === "GET",
        schema: row.schema,
        allowEmptyBody: row.allowEmptyBody,
        statusIsTheAnswer: row.statusIsTheAnswer,
        answerAbsent: row.answerAbsent,
      };
    }

    return Object.fromEntries(
      (Object.keys(OPERATIONS) as OperationName[]).map((name) => [name, bind(name)]),
    ) as unknown as EdgeClient;
  }

  return {
    forKey,
    queueStats: () => queues.stats(),
    backgroundFull: () => queues.backgroundFull(),
    async close(deadlineMs = 5000) {
      if (closed) return;
      closed = true;
      await withDeadline(clock, queues.whenIdle(), deadlineMs, () => undefined);
      const closedReason = new Error("edge client closed");
      for (const call of calls) call.abort(closedReason);
      queues.close();
      if (ownsDispatcher)
        await Promise.all([dispatcher, backgroundDispatcher].map((d) => d.destroy().catch(() => undefined)));
    },
  };
}
