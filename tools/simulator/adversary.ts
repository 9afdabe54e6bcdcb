/**
 * Where the Edge API's documents are silent (order, spelling, case, absent fields, periods, date forms), the
 * simulator has to answer something. The friendly simulator answers the convenient reading; an adversarial one
 * (a seed: `EDGE_SIMULATOR_SEED`, `startSimulator({ adversary: { seed } })`, `/sim strict <seed>`) picks, for
 * each silent point, any reading the documents allow, preferring the least convenient. docs/simulator.md lists
 * every such point, what each mode does and which test covers it.
 *
 * Every choice is a pure function of (seed, label, salt): the same request gets the same answer whatever order
 * requests arrive in, so a failing seed replays. A test pins one label to one option to stage a single reading.
 */

export interface AdversaryOptions {
  /** Absent: the friendly simulator (every choice is its first option; nothing shuffled, nothing dropped). */
  seed?: number | undefined;
  /** Label -> the option to answer, whatever the seed (an index into that label's options, or the option itself). */
  pin?: Record<string, unknown>;
}

export interface Adversary {
  /** The seed; undefined on the friendly simulator. */
  readonly seed: number | undefined;
  /** Whether any unconvenient reading may be chosen (a seed, or a pin). */
  readonly strict: boolean;
  /**
   * One of `options` for this silent point. Friendly: `options[0]` (so list the convenient reading first).
   * `salt` varies the choice per request or item (e.g. a zone id), else one choice holds for the whole run.
   */
  choose<T>(label: string, options: readonly T[], salt?: string | number): T;
  /** Whether to take the inconvenient branch, with probability `p` on a seed. Friendly: false. Pinned: the pin. */
  chance(label: string, p: number, salt?: string | number): boolean;
  /** `items` in an order the documents allow (any). Friendly: unchanged. Pinned "reverse": reversed. */
  order<T>(label: string, items: readonly T[], salt?: string | number): T[];
}

/** The parsed `EDGE_SIMULATOR_SEED`: undefined when unset or empty; throws for anything else than a whole number. */
export function seedFromEnv(raw: string | undefined): number | undefined {
  if (raw === undefined || raw.trim() === "") return undefined;
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n < 0) {
    throw new Error(`EDGE_SIMULATOR_SEED must be a whole number from 0 (got "${raw}")`);
  }
  return n;
}

/** FNV-1a over the text, then a mulberry32 step: a well-spread 32-bit value per (seed, label, salt). */
function hash(seed: number, label: string, salt: string | number | undefined, extra = 0): number {
  let h = 0x811c9dc5 ^ (seed >>> 0);
  const text = `${label}\u0000${salt ?? ""}\u0000${extra}`;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  let t = (h + 0x6d2b79f5) >>> 0;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
}

export function createAdversary(options: AdversaryOptions = {}): Adversary {
  const { seed } = options;
  const pins = options.pin ?? {};
  const pinned = (label: string) => Object.hasOwn(pins, label);
  return {
    seed,
    strict: seed !== undefined || Object.keys(pins).length > 0,
    choose<T>(label: string, choices: readonly T[], salt?: string | number): T {
      if (choices.length === 0) throw new Error(`adversary: no options for ${label}`);
      if (pinned(label)) {
        const pin = pins[label];
        if (typeof pin === "number" && Number.isInteger(pin) && pin >= 0 && pin < choices.length) {
          return choices[pin] as T;
        }
        const found = choices.find((c) => Object.is(c, pin) || JSON.stringify(c) === JSON.stringify(pin));
        if (found === undefined)
          throw new Error(`adversary: pin ${JSON.stringify(pin)} is not an option of ${label}`);
        return found;
      }
      if (seed === undefined) return choices[0] as T;
      return choices[Math.floor(hash(seed, label, salt) * choices.length)] as T;
    },
    chance(label: string, p: number, salt?: string | number): boolean {
      if (pinned(label)) return pins[label] === true;
      if (seed === undefined) return false;
      return hash(seed, label, salt) < p;
    },
    order<T>(label: string, items: readonly T[], salt?: string | number): T[] {
      const out = [...items];
      if (pinned(label)) {
        if (pins[label] === "reverse") out.reverse();
        else if (pins[label] !== "as-is") throw new Error(`adversary: ${label} takes "reverse" or "as-is"`);
        return out;
      }
      if (seed === undefined) return out;
      // Fisher-Yates from the hash: the same (seed, label, salt) always gives the same order.
      for (let i = out.length - 1; i > 0; i--) {
        const j = Math.floor(hash(seed, label, salt, i) * (i + 1));
        [out[i], out[j]] = [out[j] as T, out[i] as T];
      }
      return out;
    },
  };
}

export const FRIENDLY: Adversary = createAdversary();
