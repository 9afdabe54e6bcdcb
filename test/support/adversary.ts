import type { Simulator } from "../../tools/simulator/index.js";

/**
 * Stage readings where the documents are silent (`pin`: label -> option, tools/simulator/adversary.ts) on a
 * running simulator, keeping the run's seed for every other label (the adversarial projects set one); the
 * function returned puts the simulator back as it was.
 */
export function pinReadings(sim: Simulator, pin: Record<string, unknown>): () => void {
  const seed = sim.adversary.seed;
  const options = seed === undefined ? {} : { seed };
  sim.setAdversary({ ...options, pin });
  return () => sim.setAdversary(options);
}

/** Runs `fn` while the simulator answers the readings `pin` names (pinReadings), then as before. */
export async function withReadings<T>(
  sim: Simulator,
  pin: Record<string, unknown>,
  fn: () => Promise<T>,
): Promise<T> {
  const restore = pinReadings(sim, pin);
  try {
    return await fn();
  } finally {
    restore();
  }
}
