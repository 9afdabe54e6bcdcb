import { type Clock, systemClock } from "../../src/clock.js";

export { createManualClock, type ManualClock } from "../../tools/manual-clock.js";

/**
 * A clock whose epoch time is whatever `read()` says (a test's own `let now = T0`, moved by hand) and whose
 * timers run in real time: for tests that step the time of day between direct calls to a job's tick().
 * Where timers themselves must move (a lease lapsing, a pause ending), use createManualClock.
 */
export function steppedClock(read: () => number): Clock {
  return { ...systemClock, now: read };
}

/**
 * Resolves when the bot next sets a timer of exactly `ms` on `clock` (a queue's pause after a 429, a lease's
 * renewal): the moment after which moving a manual clock by `ms` lets it fire. Watches that one timer only.
 */
export function nextTimer(clock: Clock, ms: number): Promise<void> {
  const set = clock.setTimeout;
  return new Promise((resolve) => {
    clock.setTimeout = (fn, delay) => {
      const cancel = set(fn, delay);
      if (delay === ms) {
        clock.setTimeout = set;
        resolve();
      }
      return cancel;
    };
  });
}
