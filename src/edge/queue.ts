import { createHash } from "node:crypto";
import type { Cancel, Clock } from "../clock.js";
import { activeContext, startSpan, withContext } from "../ops/tracing.js";

/**
 * Per-API-key request queues. Each key (identified by a hash, never the key itself) gets its own queue:
 * at most `ratePerSec` starts in any rolling second (a strict sliding window), at most `concurrency` in
 * flight, at most `maxQueue` waiting, retries first and background work last. A 429 pauses only that
 * key's queue. Queues of idle keys are dropped so thousands of workspaces do not leak memory.
 *
 * Our own rather than p-queue: its windows are paced by the process's own timers, so a manual clock could
 * not move them, and its single queue could not hold background starts to their share while counting them
 * when they start. Every timer here is the injected clock's.
 */

export interface RetryPolicy {
  readonly name: string;
  /** Retries after a 5xx, timeout or network error (idempotent operations only). */
  readonly retries: number;
  /** Retries after a 429 (any operation: a 429 means the request was not processed). */
  readonly rateLimitRetries: number;
  /** First backoff delay; doubles per attempt, with jitter. */
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
  /** Cap on a 429's Retry-After pause. */
  readonly maxRetryAfterMs: number;
}

export const RETRY_DEFAULT: RetryPolicy = Object.freeze({
  name: "default",
  retries: 2,
  rateLimitRetries: 3,
  baseDelayMs: 500,
  maxDelayMs: 8_000,
  maxRetryAfterMs: 60_000,
});

/** Tiny delays for tests; Retry-After is still honoured (capped at 60 s). */
export const RETRY_FAST: RetryPolicy = Object.freeze({
  name: "fast",
  retries: 2,
  rateLimitRetries: 3,
  baseDelayMs: 5,
  maxDelayMs: 20,
  maxRetryAfterMs: 60_000,
});

/**
 * RETRY_FAST retrying at once: for a manual clock that moves only when told (test worlds, the simulation),
 * where a backoff would park every retried read until the next step. The backoff on the clock is specified
 * by the queue's own tests.
 */
export const RETRY_NO_BACKOFF: RetryPolicy = Object.freeze({
  ...RETRY_FAST,
  name: "no-backoff",
  baseDelayMs: 0,
  maxDelayMs: 0,
});

/** Exponential backoff with jitter: attempt 1 → [base/2, base], attempt 2 → [base, 2·base], ... capped. */
export function backoffDelay(
  policy: Pick<RetryPolicy, "baseDelayMs" | "maxDelayMs">,
  attempt: number,
  random: () => number = Math.random,
): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}

/**
 * `Retry-After` as milliseconds: delta-seconds or an HTTP date, capped at `capMs`. Undefined when the
 * header is missing or unreadable.
 */
export function parseRetryAfter(
  header: string | undefined,
  nowMs: number,
  capMs: number,
): number | undefined {
  if (header === undefined) return undefined;
  const v = header.trim();
  if (v === "") return undefined;
  let ms: number;
  if (/^\d+(\.\d+)?$/.test(v)) {
    ms = Number(v) * 1000;
  } else {
    const at = Date.parse(v);
    if (Number.isNaN(at)) return undefined;
    ms = at - nowMs;
  }
  return Math.min(capMs, Math.max(0, Math.ceil(ms)));
}

/** The id a key's queue and log lines go by: a sha256 hex prefix, never the key itself. */
export function keyId(apiKey: string): string {
  return createHash("sha256").update(apiKey).digest("hex").slice(0, 16);
}

/**
 * The rate window: one second plus a margin, so that timer granularity (a timer may fire a millisecond
 * "early" by the wall clock) and network jitter never let the API see more than `ratePerSec` requests
 * arrive within one second.
 */
const RATE_WINDOW_MS = 1050;

export class QueueFullError extends Error {
  override readonly name = "QueueFullError";
  /** `key`: the key's own queue is full; `background`: too much background work waits on this replica. */
  constructor(
    message: string,
    readonly scope: "key" | "background" = "key",
  ) {
    super(message);
  }
}

/** Background attempts waiting or running on all keys of one replica beyond which optional ones are refused. */
export const DEFAULT_MAX_BACKGROUND = 256;

export interface KeyQueuesOptions {
  ratePerSec: number;
  concurrency: number;
  maxQueue: number;
  /**
   * Every timer and reading of the queues: the rate windows (on `elapsed`), pauses, idle-drops and the
   * queue-wait reading, so a manual clock moves a key's windows too.
   */
  clock: Clock;
  /** Until this replica's queue is through: also the wait for the shared limit (Redis), when there is one. */
  onQueueWait?: ((ms: number) => void) | undefined;
  onQueueRejected?: (() => void) | undefined;
  /**
   * Background attempts (waiting or running, all keys) beyond which an optional one is refused at once
   * (default DEFAULT_MAX_BACKGROUND): a burst of best-effort reads (zone checks for thousands of workspaces
   * seen at once) neither grows memory without bound nor holds commands for seconds.
   */
  maxBackground?: number | undefined;
  /**
   * A further wait before each attempt starts, after the key's queue let it through: the shared limit
   * across replicas (SharedLimit.acquireStart). Its returned function is called when the attempt ends.
   */
  gate?: ((id: string, signal?: AbortSignal) => Promise<() => void>) | undefined;
}

/**
 * Of a key's starts in a window, background work may use this share: the rest is kept for people's
 * commands, so a zone check's ten reads never leave the next command of the workspace waiting a window.
 */
const BACKGROUND_RATE_SHARE = 0.6;

/** Retries jump ahead (they were let through once already); background attempts wait behind the rest. */
const PRIORITY = { retry: 1, normal: 0, background: -1 } as const;

/**
 * A strict sliding window: at most `cap` starts in any `RATE_WINDOW_MS`, read on `elapsed` (a duration,
 * so a wall-clock step never holds or frees a key).
 */
class StartWindow {
  /**
   * The starts inside the window: each from when its request left, or still `leaving` (let go, not yet
   * sent: it holds its place however long it takes to leave).
   */
  readonly #starts: { at: number; leaving: boolean }[] = [];

  constructor(readonly cap: number) {}

  /** How long until another start fits: 0 when one fits now. Drops the starts that left the window. */
  waitMs(now: number): number {
    let kept = 0;
    let oldest = Number.POSITIVE_INFINITY;
    for (const s of this.#starts) {
      if (!s.leaving && now - s.at >= RATE_WINDOW_MS) continue;
      this.#starts[kept++] = s;
      if (!s.leaving) oldest = Math.min(oldest, s.at);
    }
    this.#starts.length = kept;
    if (kept < this.cap) return 0;
    // Every start still leaving: asked again a window on (or when one of them ends, which pumps the key).
    return oldest === Number.POSITIVE_INFINITY ? RATE_WINDOW_MS : oldest + RATE_WINDOW_MS - now;
  }

  /** Records a start let go at `now`; the function returned counts it from when its request left. */
  record(now: number): (leftAt: number) => void {
    const start = { at: now, leaving: true };
    this.#starts.push(start);
    return (leftAt) => {
      if (!start.leaving) return;
      start.leaving = false;
      start.at = leftAt;
    };
  }
}

interface Waiting {
  priority: number;
  /** A background first attempt: held to the key's background share (starts a window and slots). */
  background: boolean;
  /** Runs the attempt; `left` tells the windows when its request left. */
  start: (left: () => void) => void;
}

interface Entry {
  /** Attempts waiting to start, by priority, first come first within one. */
  waiting: Waiting[];
  /** Attempts started and not yet ended. */
  running: number;
  /** Of `running`, background first attempts. */
  backgroundRunning: number;
  window: StartWindow;
  /**
   * Background first attempts' own window: at most BACKGROUND_RATE_SHARE of the key's starts, and one
   * fewer at once than the key's concurrency, so a command always finds a slot and a start. Made with the
   * key's first background attempt (most keys only ever see commands).
   */
  backgroundWindow: StartWindow | undefined;
  /** Wakes the key when a start leaves its window, while attempts wait for one (`at` on `elapsed`). */
  wake: { at: number; cancel: Cancel } | undefined;
  /** Calls in progress for this key, including ones sleeping between retries. */
  active: number;
  pauseTimer: Cancel | undefined;
  pausedUntil: number;
  /** Drops the idle entry once its last rate window has passed (so the rate cap survives idleness). */
  dropTimer: Cancel | undefined;
}

export interface QueueStats {
  keys: number;
  waiting: number;
  inFlight: number;
}

export class KeyQueues {
  readonly #entries = new Map<string, Entry>();
  readonly #options: KeyQueuesOptions;
  #idleWaiters: (() => void)[] = [];
  #totalActive = 0;
  /** Background attempts waiting or running, all keys. */
  #background = 0;

  constructor(options: KeyQueuesOptions) {
    this.#options = options;
  }

  /** Hold the key's queue for the whole of a call (all its attempts), so it is not dropped mid-call. */
  acquire(id: string): () => void {
    const entry = this.#entry(id);
    if (entry.dropTimer) {
      entry.dropTimer();
      entry.dropTimer = undefined;
    }
    entry.active++;
    this.#totalActive++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      entry.active--;
      this.#totalActive--;
      this.#maybeDrop(id, entry);
      if (this.#totalActive === 0) {
        const waiters = this.#idleWaiters;
        this.#idleWaiters = [];
        for (const w of waiters) w();
      }
    };
  }

  /**
   * Run one attempt through the key's queue. A first attempt is refused with QueueFullError when
   * `maxQueue` are already waiting; retries (`retry: true`) jump ahead and are never refused. An aborted
   * `signal` takes a waiting attempt out of the queue (rejecting with the signal's reason), and answers a
   * running one's caller at once. A `background` attempt (alert polling) waits behind every other waiting
   * attempt of the key, so people's commands go first. An `optional` background attempt is refused with
   * QueueFullError (scope "background") when `maxBackground` background attempts are already waiting or
   * running on this replica.
   */
  run<T>(
    id: string,
    task: (leaving: () => void) => Promise<T>,
    retry: boolean,
    signal?: AbortSignal,
    background: boolean | "optional" = false,
  ): Promise<T> {
    const entry = this.#entry(id);
    if (!retry && entry.waiting.length >= this.#options.maxQueue) {
      this.#options.onQueueRejected?.();
      return Promise.reject(new QueueFullError(`queue for key ${id} is full`));
    }
    if (background === "optional" && !retry && this.backgroundFull()) {
      this.#options.onQueueRejected?.();
      return Promise.reject(new QueueFullError("too much background work is waiting", "background"));
    }
    const enqueuedAt = this.#options.clock.now();
    const gate = this.#options.gate;
    // The queue starts an attempt from whichever call ended last: the attempt runs in its own caller's trace.
    const caller = activeContext();
    const waitSpan = startSpan("edge queue wait", {
      "edge.queue.waiting": entry.waiting.length,
      "edge.queue.in_flight": entry.running,
      "edge.queue.priority": retry ? "retry" : background ? "background" : "normal",
    });
    let waiting = true;
    const endWait = () => {
      if (waiting) waitSpan.end();
      waiting = false;
    };
    const attempt = (leaving: () => void) =>
      withContext(caller, async () => {
        let settle: (() => void) | undefined;
        try {
          settle = await gate?.(id, signal);
        } finally {
          endWait();
        }
        this.#options.onQueueWait?.(Math.max(0, this.#options.clock.now() - enqueuedAt));
        try {
          return await task(leaving);
        } finally {
          settle?.();
        }
      });
    const run = new Promise<T>((resolve, reject) => {
      if (signal?.aborted) {
        reject(signal.reason);
        return;
      }
      const item: Waiting = {
        priority: retry ? PRIORITY.retry : background ? PRIORITY.background : PRIORITY.normal,
        background: Boolean(background) && !retry,
        start: (left) => {
          signal?.removeEventListener("abort", onAbortWaiting);
          // An attempt that ends without saying its request left (refused before writing, or a task that
          // does not tell) counts from its end: whether it sent anything is not known here.
          const ended = attempt(left).finally(() => {
            left();
            entry.running--;
            if (item.background) entry.backgroundRunning--;
            this.#pump(entry);
          });
          if (!signal) {
            ended.then(resolve, reject);
            return;
          }
          // As a waiting one: the caller is answered when the signal aborts, whatever the attempt still does.
          const onAbort = () => reject(signal.reason);
          signal.addEventListener("abort", onAbort, { once: true });
          ended.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
        },
      };
      const onAbortWaiting = () => {
        entry.waiting.splice(entry.waiting.indexOf(item), 1);
        if (entry.waiting.length === 0) this.#cancelWake(entry);
        reject(signal?.reason);
      };
      signal?.addEventListener("abort", onAbortWaiting, { once: true });
      const behind = entry.waiting.findIndex((w) => w.priority < item.priority);
      if (behind === -1) entry.waiting.push(item);
      else entry.waiting.splice(behind, 0, item);
      this.#pump(entry);
    });
    // Taken out of the queue before its turn (aborted): the wait ends there.
    run.catch(endWait);
    if (!background) return run;
    this.#background++;
    return run.finally(() => {
      this.#background--;
    });
  }

  /** Pause the key's queue for `ms` (extends, never shortens, a pause already running). */
  pause(id: string, ms: number): void {
    const entry = this.#entry(id);
    const until = this.#options.clock.now() + ms;
    if (entry.pauseTimer && until <= entry.pausedUntil) return;
    entry.pauseTimer?.();
    entry.pausedUntil = until;
    entry.pauseTimer = this.#options.clock.setTimeout(() => {
      entry.pauseTimer = undefined;
      this.#pump(entry);
      this.#maybeDrop(id, entry);
    }, ms);
  }

  isPaused(id: string): boolean {
    return this.#entries.get(id)?.pauseTimer !== undefined;
  }

  stats(): QueueStats {
    let waiting = 0;
    let inFlight = 0;
    for (const e of this.#entries.values()) {
      waiting += e.waiting.length;
      inFlight += e.running;
    }
    return { keys: this.#entries.size, waiting, inFlight };
  }

  /** Whether an optional background attempt would be refused now (maxBackground reached). */
  backgroundFull(): boolean {
    return this.#background >= (this.#options.maxBackground ?? DEFAULT_MAX_BACKGROUND);
  }

  /** Resolves when no call is in progress on any key. */
  whenIdle(): Promise<void> {
    if (this.#totalActive === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  /**
   * Stop every pause timer and let paused queues run again, so attempts still waiting start, see the
   * aborted signal of a closing client and settle (their callers are never left hanging).
   */
  close(): void {
    for (const e of this.#entries.values()) {
      e.pauseTimer?.();
      e.dropTimer?.();
      e.pauseTimer = undefined;
      e.dropTimer = undefined;
      this.#pump(e);
    }
  }

  /** Start what the key's slots, windows and pause let start now; else wake when a window lets one. */
  #pump(entry: Entry): void {
    const { concurrency } = this.#options;
    while (entry.pauseTimer === undefined && entry.running < concurrency && entry.waiting.length > 0) {
      const now = this.#options.clock.elapsed();
      const next = entry.waiting[0] as Waiting;
      // Background first attempts are the last in line: when the first one waiting cannot start, none can.
      if (next.background && entry.backgroundRunning >= Math.max(1, concurrency - 1)) break;
      const waitMs = Math.max(
        entry.window.waitMs(now),
        next.background ? this.#backgroundWindow(entry).waitMs(now) : 0,
      );
      if (waitMs > 0) {
        this.#wakeIn(entry, now, waitMs);
        break;
      }
      entry.waiting.shift();
      const moves = [entry.window.record(now)];
      if (next.background) moves.push(this.#backgroundWindow(entry).record(now));
      entry.running++;
      if (next.background) entry.backgroundRunning++;
      // The window counts what the API sees: a start the process was slow to send (a stall between here and
      // the socket, the shared limit's gate) holds its place until its request leaves, and from then on.
      next.start(() => {
        const leftAt = this.#options.clock.elapsed();
        for (const move of moves) move(leftAt);
      });
    }
    if (entry.waiting.length === 0) this.#cancelWake(entry);
  }

  /** One timer a key: kept if it wakes the key soon enough, else set again (a command behind a background window). */
  #wakeIn(entry: Entry, now: number, ms: number): void {
    if (entry.wake && entry.wake.at <= now + ms) return;
    this.#cancelWake(entry);
    const cancel = this.#options.clock.setTimeout(() => {
      entry.wake = undefined;
      this.#pump(entry);
    }, Math.ceil(ms));
    entry.wake = { at: now + ms, cancel };
  }

  #cancelWake(entry: Entry): void {
    entry.wake?.cancel();
    entry.wake = undefined;
  }

  #entry(id: string): Entry {
    let entry = this.#entries.get(id);
    if (!entry) {
      entry = {
        waiting: [],
        running: 0,
        backgroundRunning: 0,
        window: new StartWindow(this.#options.ratePerSec),
        backgroundWindow: undefined,
        wake: undefined,
        active: 0,
        pauseTimer: undefined,
        pausedUntil: 0,
        dropTimer: undefined,
      };
      this.#entries.set(id, entry);
    }
    return entry;
  }

  #backgroundWindow(entry: Entry): StartWindow {
    entry.backgroundWindow ??= new StartWindow(
      Math.max(1, Math.floor(this.#options.ratePerSec * BACKGROUND_RATE_SHARE)),
    );
    return entry.backgroundWindow;
  }

  #maybeDrop(id: string, entry: Entry): void {
    if (entry.active !== 0 || entry.pauseTimer !== undefined || entry.dropTimer !== undefined) return;
    entry.dropTimer = this.#options.clock.setTimeout(() => {
      entry.dropTimer = undefined;
      if (entry.active === 0 && entry.pauseTimer === undefined && this.#entries.get(id) === entry) {
        this.#entries.delete(id);
      }
    }, RATE_WINDOW_MS + 50);
  }
}
