import { RETRY_NO_BACKOFF } from "../../src/edge/queue.js";
import { createManualClock, type ManualClock } from "./clock.js";
import { type Harness, type HarnessOptions, startHarness } from "./harness.js";
import { useStarted } from "./use-harness.js";

/** Where a world's manual clock starts: a fixed moment, so dates on cards and in logs repeat run to run. */
export const WORLD_START = Date.UTC(2026, 7, 20, 10, 0, 30);

export interface World extends Harness {
  /** The one clock of the bot, its store, its Edge client and the simulator; time moves only with advance. */
  clock: ManualClock;
}

/**
 * The in-process world for flow tests: the Edge API simulator, the fake Slack and the bot's real receiver
 * (signed requests) in this process, all on one manual clock. A 30-minute temporary change, a lapsed lease or
 * an Edge call that outlasts its timeout takes `await world.clock.advance(ms)`, not minutes.
 */
export async function startWorld(
  options: Omit<HarnessOptions, "clock"> & { start?: number } = {},
): Promise<World> {
  const { start, ...rest } = options;
  const clock = createManualClock(start ?? WORLD_START);
  const h = await startHarness({
    edgeRetry: RETRY_NO_BACKOFF,
    ...rest,
    clock,
    simulatorOnClock: rest.sim === undefined,
  });
  return Object.assign(h, { clock });
}

/** One world for the enclosing describe block (useStarted): faults and Slack calls cleared after each test. */
export function useWorld(options: Parameters<typeof startWorld>[0] = {}): World {
  return useStarted(() => startWorld(options));
}
