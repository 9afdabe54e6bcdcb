import { afterAll, afterEach, beforeAll } from "vitest";
import { type Harness, type HarnessOptions, startHarness } from "./harness.js";

/**
 * One harness (or world) for the enclosing describe block: started before its first test, closed after its
 * last, and (unless `resetEach` is false) the simulator's faults and the fake Slack's calls cleared after each
 * test. The object returned is filled in when it starts, so use it inside hooks and tests only.
 */
export function useStarted<H extends Harness>(start: () => Promise<H>, { resetEach = true } = {}): H {
  const h = {} as H;
  beforeAll(async () => {
    Object.assign(h, await start());
  });
  if (resetEach)
    afterEach(() => {
      h.sim.clearFaults();
      h.slack.clear();
    });
  afterAll(async () => {
    await h.close?.();
  });
  return h;
}

/** useStarted for a harness on the real clock. */
export const useHarness = (options: HarnessOptions = {}, reset: { resetEach?: boolean } = {}): Harness =>
  useStarted(() => startHarness(options), reset);
