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
