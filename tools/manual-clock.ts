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
  /** How long until the next timer falls due (undefined: none waits). */
  nextDueIn(): number | undefined;
}

export function createManualClock(startMs: number): ManualClock {
  const fake = FakeTimers.createClock(startMs, 100_000);
  /** When each timer next falls due (fake-timers keeps its own schedule private). */
  const due = new Map<object, number>();
  const clock: ManualClock = {
    now: () => fake.now,
    elapsed: () => fake.now - startMs,
    setTimeout(fn, ms) {
      const key = {};
      due.set(key, fake.now + Math.max(0, ms));
      const id = fake.setTimeout(() => {
        due.delete(key);
        fn();
      }, ms);
      return () => {
        due.delete(key);
        fake.clearTimeout(id);
      };
    },
    setInterval(fn, ms) {
      const key = {};
      const every = Math.max(1, ms);
      due.set(key, fake.now + every);
      const id = fake.setInterval(() => {
        due.set(key, fake.now + every);
        fn();
      }, ms);
      return () => {
        due.delete(key);
        fake.clearInterval(id);
      };
    },
    sleep: (ms, signal) => sleepOn(clock.setTimeout, ms, signal),
    async advance(ms) {
      await fake.tickAsync(ms);
    },
    async advanceTo(epochMs) {
      if (epochMs > fake.now) await fake.tickAsync(epochMs - fake.now);
    },
    pending: () => fake.countTimers(),
    nextDueIn() {
      let first: number | undefined;
      for (const at of due.values()) if (first === undefined || at < first) first = at;
      return first === undefined ? undefined : Math.max(0, first - fake.now);
    },
  };
  return clock;
}
