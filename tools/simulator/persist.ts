/**
 * The simulator's state as JSON text and back, so a process that restarts (the console on the same DATA_DIR)
 * carries on where it stopped: access lists and their dated history, settings, bot categories, staged attacks
 * and app statuses, purges and restarts, DNS scans. Maps and sets are tagged; a zone configuration history
 * keeps each configuration's key and is compiled again on the way back.
 */
import { createState, type SimulatorState } from "./seed.js";
import { configFromKey } from "./zone-history.js";

const FORMAT = 1;

export class SavedStateError extends Error {}

/** Reads the holder's own value: a library may give Set or Map a toJSON, which runs before a replacer sees it. */
function encode(this: Record<string, unknown>, key: string, value: unknown): unknown {
  const raw = this[key];
  if (raw instanceof Map) return { $map: [...raw] };
  if (raw instanceof Set) return { $set: [...raw] };
  return value;
}

function decode(_key: string, value: unknown): unknown {
  if (value !== null && typeof value === "object" && !Array.isArray(value)) {
    const o = value as Record<string, unknown>;
    if (Array.isArray(o.$map) && Object.keys(o).length === 1) return new Map(o.$map as [unknown, unknown][]);
    if (Array.isArray(o.$set) && Object.keys(o).length === 1) return new Set(o.$set);
  }
  return value;
}

/** The state as JSON text (`restoreState` reads it back). */
export function saveState(state: SimulatorState): string {
  const configHistory = new Map(
    [...state.configHistory].map(([zoneId, epochs]) => [
      zoneId,
      epochs.map((e) => ({ untilMinute: e.untilMinute, key: e.config.key })),
    ]),
  );
  return JSON.stringify({ format: FORMAT, state: { ...state, configHistory } }, encode);
}

const kindOf = (v: unknown) =>
  v instanceof Map
    ? "map"
    : v instanceof Set
      ? "set"
      : Array.isArray(v)
        ? "array"
        : v === null
          ? "null"
          : typeof v;

/**
 * The state saved by `saveState`, checked against a fresh state of the same seed: every field the fresh one has,
 * of the same kind. Throws `SavedStateError` saying what is wrong (the caller starts fresh).
 */
export function restoreState(text: string, seed: number, now: number): SimulatorState {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text, decode);
  } catch (err) {
    throw new SavedStateError(`not JSON (${err instanceof Error ? err.message : String(err)})`);
  }
  const saved = parsed as { format?: unknown; state?: Record<string, unknown> } | null;
  if (saved === null || typeof saved !== "object" || saved.format !== FORMAT)
    throw new SavedStateError(`not a simulator state of format ${FORMAT}`);
  const state = saved.state;
  if (state === undefined || state === null || typeof state !== "object")
    throw new SavedStateError("it holds no state");
  const fresh = createState(seed, now) as unknown as Record<string, unknown>;
  if (state.seed !== seed)
    throw new SavedStateError(`it was made with seed ${String(state.seed)}, not ${seed}`);
  for (const [field, value] of Object.entries(fresh)) {
    if (value === undefined) continue;
    if (kindOf(state[field]) !== kindOf(value))
      throw new SavedStateError(`its ${field} is ${kindOf(state[field])}, not ${kindOf(value)}`);
  }
  const history = state.configHistory as Map<number, Array<{ untilMinute: number; key: string }>>;
  try {
    state.configHistory = new Map(
      [...history].map(([zoneId, epochs]) => [
        zoneId,
        epochs.map((e) => {
          if (typeof e.untilMinute !== "number") throw new Error("an epoch without its minute");
          return { untilMinute: e.untilMinute, config: configFromKey(e.key) };
        }),
      ]),
    );
  } catch (err) {
    throw new SavedStateError(
      `its zone history cannot be read (${err instanceof Error ? err.message : String(err)})`,
    );
  }
  return state as unknown as SimulatorState;
}
