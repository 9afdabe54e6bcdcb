/**
 * Time, in one place. Every module in src takes a Clock from the composition root (src/app/compose.ts)
 * instead of reading the wall clock or starting timers itself, so a test (or the local console) can run a
 * day of schedules, leases and pacing in milliseconds with a manual clock (tools/manual-clock.ts).
 * test/clock.test.ts refuses setTimeout, setInterval, Date.now, new Date(), performance.now and node:timers
 * anywhere else in src, and Biome the timer globals.
 */

/** Stops a timer; calling it again, or after the timer fired, does nothing. */
export type Cancel = () => void;

export interface Clock {
  /** Milliseconds since the Unix epoch: what is stored, compared with stored times and shown. */
  now(): number;
  /** A monotonic reading in milliseconds, for how long something took (never stored). */
  elapsed(): number;
  /** Run `fn` once after `ms`. A timer never keeps the process alive (work that awaits one does: sleep). */
  setTimeout(fn: () => void, ms: number): Cancel;
  /** Run `fn` every `ms`. A timer never keeps the process alive. */
  setInterval(fn: () => void, ms: number): Cancel;
  /**
   * Resolve after `ms`; with `signal`, reject with its reason as soon as it aborts. The process stays alive
   * while something sleeps: the sleeper is work still to finish.
   */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/** Sleep on any clock's timers: the one implementation of sleep, for every Clock. */
export function sleepOn(setTimer: Clock["setTimeout"], ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.reject(signal.reason);
  return new Promise<void>((resolve, reject) => {
    const onAbort = () => {
      cancel();
      reject(signal?.reason);
    };
    const cancel = setTimer(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** A real timer; one that keeps the process alive only for a sleep (someone awaits it). */
function realTimer(keepAlive: boolean): Clock["setTimeout"] {
  return (fn, ms) => {
    const t = setTimeout(fn, ms);
    if (!keepAlive) t.unref();
    return () => clearTimeout(t);
  };
}

/** The real clock: the process's wall clock and timers. */
export const systemClock: Clock = {
  now: () => Date.now(),
  elapsed: () => performance.now(),
  setTimeout: realTimer(false),
  setInterval(fn, ms) {
    const t = setInterval(fn, ms);
    t.unref();
    return () => clearInterval(t);
  },
  sleep: (ms, signal) => sleepOn(realTimer(true), ms, signal),
};

/**
 * The most two replicas' clocks may differ by (keep them in sync, e.g. with NTP): times one replica wrote
 * are compared with another's clock only with this much allowance (a lapsed lock, a key set "after").
 */
export const MAX_CLOCK_SKEW_MS = 90_000;
