import { afterAll, afterEach, beforeAll } from "vitest";
import { type Harness, type HarnessOptions, startHarness } from "./harness.js";

/**
 * One harness for the enclosing describe block: started before its first test, closed after its last, and
 * (unless `resetEach` is false) the simulator's faults and the fake Slack's calls cleared after each test.
 * The object returned is filled in when the harness starts, so use it inside hooks and tests only.
 */
export function useHarness(options: HarnessOptions = {}, { resetEach = true } = {}): Harness {
  const h = {} as Harness;
  beforeAll(async () => {
    Object.assign(h, await startHarness(options));
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
