/**
 * The local console's clock: it follows this computer's clock, and `/sim clock +30m` moves it forward, so an
 * incident can be rehearsed without waiting (a temporary change's undo, an expiry, a watch's next checks).
 * The bot and the built-in simulator share it, so the simulator's traffic is read at the same moved time.
 *
 * It is a manual clock (tools/manual-clock.ts) driven by a real interval: every FOLLOW_EVERY_MS it catches up
 * with the real time that passed, firing due timers in order. The interval is deliberately not unref'd: the
 * console's timers are the manual clock's, and work waiting on one (a shutdown's drain) must keep the
 * process alive until `stop`.
 */
import type { Clock } from "../../src/clock.js";
import { createManualClock } from "../manual-clock.js";

/** How often the console's time catches up with the real clock: a timer fires at most this late. */
const FOLLOW_EVERY_MS = 20;
/**
 * `/sim clock` moves time in steps of at most this long, and stops at each timer that falls due, waiting there
 * while work is in flight (settleOn), so work a timer started (an Edge API call on loopback) ends near the time
 * it started at, as it would have, and never meets its own timeout's timer within the same step.
 */
const STEP_MS = 5_000;
/** A long move stops at most this many times (a day: every 29 s at the least), so it ends within seconds. */
const MAX_STEPS = 3_000;
const PAUSE_MS = 5;
/**
 * After a step, real time given to work still in flight (an Edge API call on loopback) before the next step, at
 * most this long: on a busy machine a 5 ms pause let a change's write span minutes of console time, so its
 * target's lease lapsed mid-write and a rehearsed undo came late.
 */
const MAX_SETTLE_MS = 2_000;
/** …and at most this long in one move (a call that sleeps on this very clock, a latency fault, never settles). */
const MAX_SETTLE_PER_MOVE_MS = 10_000;

export interface ConsoleClock extends Clock {
  /** Moves the console's time forward by `ms`: every timer due in between fires, in order. */
  moveForward(ms: number): Promise<void>;
  /** How far the console's time is ahead of this computer's clock (the sum of the moves). */
  ahead(): number;
  /** Stops following the real clock (the console is closing). */
  stop(): void;
  /** What `/sim clock` waits on between its steps (up to MAX_SETTLE_MS a step): work in flight, such as Edge calls. */
  settleOn(busy: () => boolean): void;
}

/**
 * `aheadMs`: start this far ahead of the real clock (a restart keeps what `/sim clock` moved); `onMove` is told
 * after each `/sim clock` move.
 */
export function createConsoleClock(o: { aheadMs?: number; onMove?: () => void } = {}): ConsoleClock {
  let ahead = o.aheadMs ?? 0;
  const manual = createManualClock(Date.now() + ahead);
  let followed = performance.now();
  let moving: Promise<void> = Promise.resolve();
  let busy: () => boolean = () => false;
  // One move at a time, in the order asked: catching up and a `/sim clock` never interleave their timers.
  const enqueue = (move: () => Promise<void>): Promise<void> => {
    moving = moving.then(move, move);
    return moving;
  };
  const follow = setInterval(() => {
    void enqueue(async () => {
      const at = performance.now();
      const passed = at - followed;
      followed = at;
      if (passed > 0) await manual.advance(passed);
    });
  }, FOLLOW_EVERY_MS);
  const pause = () => new Promise<void>((resolve) => setTimeout(resolve, PAUSE_MS));
  const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

  return {
    now: manual.now,
    elapsed: manual.elapsed,
    setTimeout: manual.setTimeout,
    setInterval: manual.setInterval,
    sleep: manual.sleep,
    moveForward(ms) {
      return enqueue(async () => {
        const shortest = Math.ceil(ms / MAX_STEPS);
        let settling = MAX_SETTLE_PER_MOVE_MS;
        let left = ms;
        while (left > 0) {
          const dueIn = manual.nextDueIn() ?? STEP_MS;
          const step = Math.min(left, Math.max(shortest, 1, Math.min(STEP_MS, dueIn)));
          left -= step;
          ahead += step;
          await manual.advance(step);
          // A turn of the loop lets the work a timer started begin (a call is out once its attempt starts).
          await turn();
          for (let settled = 0; busy() && settled < MAX_SETTLE_MS && settling > 0; settled += PAUSE_MS) {
            settling -= PAUSE_MS;
            await pause();
          }
        }
        o.onMove?.();
      });
    },
    ahead: () => ahead,
    stop: () => clearInterval(follow),
    settleOn(check) {
      busy = check;
    },
  };
}
