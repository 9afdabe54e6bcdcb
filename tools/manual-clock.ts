import FakeTimers from "@sinonjs/fake-timers";
import { type Clock, sleepOn } from "../src/clock.js";

/**
 * A Clock that moves only when told (tests, the console's `/sim clock`): `advance` runs every timer that
 * falls due in order, letting promises and I/O settle between them, so a 30-minute temporary change or a
 * lapsed lease takes milliseconds. Nothing here touches the process's own timers.
 */
export interface ManualClock extends Clock {
  /** Move time forward by `ms`, firing each due timer at its time. */
  advance(ms: number): Promise<void>;
  /** Move time to `epochMs` (forward only). */
  advanceTo(epochMs: number): Promise<void>;
  /** Timers waiting to fire. */
  pending(): number;
}

export function createManualClock(startMs: number): ManualClock {
  const fake = FakeTimers.createClock(startMs, 100_000);
  const clock: ManualClock = {
    now: () => fake.now,
    elapsed: () => fake.now - startMs,
    setTimeout(fn, ms) {
      const id = fake.setTimeout(fn, ms);
      return () => fake.clearTimeout(id);
    },
    setInterval(fn, ms) {
      const id = fake.setInterval(fn, ms);
      return () => fake.clearInterval(id);
    },
    sleep: (ms, signal) => sleepOn(clock.setTimeout, ms, signal),
    async advance(ms) {
      await fake.tickAsync(ms);
    },
    async advanceTo(epochMs) {
      if (epochMs > fake.now) await fake.tickAsync(epochMs - fake.now);
    },
    pending: () => fake.countTimers(),
  };
  return clock;
}
