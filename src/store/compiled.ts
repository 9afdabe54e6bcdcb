import type { CompiledQuery, Kysely, QueryResult } from "kysely";
import { LruCache } from "../lru.js";
import type { Database } from "./db.js";
import { StoreError } from "./errors.js";

/** Stands for the call's value `index` while the statement is built. */
class Slot {
  constructor(readonly index: number) {}
}

/** Each compiled parameter: the call's value at this index, or a value fixed when it was built. */
type Parameter = { slot: number } | { value: unknown };

interface Compiled<R> {
  query: CompiledQuery<R>;
  parameters: Parameter[];
}

type Compilable<R> = { compile(): CompiledQuery<R> };

function compileWithSlots<R>(
  count: number,
  build: (slots: readonly unknown[]) => Compilable<R>,
): Compiled<R> {
  const slots = Array.from({ length: count }, (_, i) => new Slot(i));
  const query = build(slots).compile();
  const parameters: Parameter[] = query.parameters.map((p) =>
    p instanceof Slot ? { slot: p.index } : { value: p },
  );
  const used = new Set(parameters.flatMap((p) => ("slot" in p ? [p.slot] : [])));
  if (used.size !== count)
    throw new StoreError("invalid", `a compiled statement uses ${used.size} of its ${count} values`);
  return { query, parameters };
}

function run<R>(on: Kysely<Database>, compiled: Compiled<R>, values: readonly unknown[]) {
  const parameters = compiled.parameters.map((p) => ("slot" in p ? values[p.slot] : p.value));
  return on.executeQuery<R>({ ...compiled.query, parameters });
}

/**
 * A statement of a fixed shape whose values change from call to call, built and compiled by Kysely once
 * and run with each call's values. Kysely otherwise builds its tree, runs the plugins over it and compiles
 * it on every call: about a tenth of the main thread's CPU per approval, more than SQLite's own work for
 * the same statements. `build` gets stand-ins for its arguments (typed as them) and must use each as a
 * value only (compared or written, never a name, a list, or a choice between shapes): a statement whose
 * shape depends on a value is built per call, or through `compiledPerShape`.
 *
 * The SQL is compiled from `db` (the store's root); `on` may be `db` or a transaction of it.
 */
export function compiledOnce<A extends readonly unknown[], R>(
  db: Kysely<Database>,
  build: (db: Kysely<Database>, ...args: A) => Compilable<R>,
): (on: Kysely<Database>, ...args: A) => Promise<QueryResult<R>> {
  let compiled: Compiled<R> | undefined;
  return (on, ...args) => {
    compiled ??= compileWithSlots(build.length - 1, (slots) => build(db, ...(slots as unknown as A)));
    return run(on, compiled, args);
  };
}

/**
 * `compiledOnce` for a statement with a few shapes (which columns a patch sets, which conditions a guard
 * adds): the caller names the shape, gives its values in the order `build` uses their stand-ins, and
 * `build` must make the same shape for the same name. At most `max` shapes are kept (least recently used
 * dropped), so a caller whose shapes are many still costs no more than building each call.
 */
export function compiledPerShape<R>(
  db: Kysely<Database>,
  max = 64,
): (
  on: Kysely<Database>,
  shape: string,
  values: readonly unknown[],
  build: (db: Kysely<Database>, slots: readonly unknown[]) => Compilable<R>,
) => Promise<QueryResult<R>> {
  const shapes = new LruCache<string, Compiled<R>>(max);
  return (on, shape, values, build) => {
    let compiled = shapes.get(shape);
    if (!compiled) {
      compiled = compileWithSlots(values.length, (slots) => build(db, slots));
      shapes.set(shape, compiled);
    }
    return run(on, compiled, values);
  };
}
