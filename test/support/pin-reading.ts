import type { Simulator } from "../../tools/simulator/index.js";

/**
 * Runs `fn` while the simulator answers the readings `pin` names where the documents are silent
 * (tools/simulator/adversary.ts: a label -> an option's index or value), then as before (its seed kept).
 */
export async function withReadings<T>(
  sim: Simulator,
  pin: Record<string, unknown>,
  fn: () => Promise<T>,
): Promise<T> {
  const seed = sim.adversary.seed;
  sim.setAdversary({ seed, pin });
  try {
    return await fn();
  } finally {
    sim.setAdversary({ seed });
  }
}
