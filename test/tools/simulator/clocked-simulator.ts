import { afterEach, beforeEach, expect } from "vitest";
import { SIM_API_KEY, type Simulator, startSimulator } from "../../../tools/simulator/index.js";
import { steppedClock } from "../../support/clock.js";

/**
 * A fresh, friendly simulator for each test on a clock the test moves: `now` is set back to `start` before each test,
 * and the simulator is closed after it. Use the returned object inside hooks and tests only.
 */
export function useClockedSimulator(start: number): { now: number; sim: Simulator } {
  const s = { now: start, sim: undefined as unknown as Simulator };
  beforeEach(async () => {
    s.now = start;
    // The simulator's own story, on its friendly readings whatever EDGE_SIMULATOR_SEED says (each adversarial
    // reading has its own test).
    s.sim = await startSimulator({ clock: steppedClock(() => s.now), adversary: {} });
  });
  afterEach(async () => {
    await s.sim.close();
  });
  return s;
}

export const SIM_HEADERS = { AccessKey: SIM_API_KEY, "content-type": "application/json" };

/** GET `path` from the simulator with its key: the JSON of a 200 answer (the test fails on any other). */
export async function simJson<T>(sim: Simulator, path: string): Promise<T> {
  const res = await fetch(`${sim.url}${path}`, { headers: SIM_HEADERS });
  expect(res.status, `${path}: ${res.status}`).toBe(200);
  return (await res.json()) as T;
}
