/**
 * The simulation's only source of chance: mulberry32, a 32-bit seeded PRNG. Nothing in tools/simulate calls
 * Math.random; a run replaces Math.random (the engine's lock jitter, the client's retry jitter) with one of
 * these for its duration, so a seed replays the same choices.
 */
export interface Rng {
  /** [0, 1) */
  next(): number;
  /** An integer in [lo, hi] (inclusive). */
  int(lo: number, hi: number): number;
  /** True with probability p. */
  chance(p: number): boolean;
  pick<T>(xs: readonly T[]): T;
}

export function mulberry32(seed: number): Rng {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const rng: Rng = {
    next,
    int: (lo, hi) => lo + Math.floor(next() * (hi - lo + 1)),
    chance: (p) => next() < p,
    pick: (xs) => {
      const x = xs[Math.floor(next() * xs.length)];
      if (x === undefined) throw new Error("pick from an empty list");
      return x;
    },
  };
  return rng;
}

/** Math.random replaced by a seeded PRNG while `work` runs (restored after, whatever happens). */
export async function withSeededRandom<T>(seed: number, work: () => Promise<T>): Promise<T> {
  const original = Math.random;
  const rng = mulberry32(seed ^ 0x9e3779b9);
  Math.random = rng.next;
  try {
    return await work();
  } finally {
    Math.random = original;
  }
}
