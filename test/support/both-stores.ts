import { describe, it } from "vitest";
import type { HarnessOptions } from "./harness.js";
import { dropSchema, IN_CI, pgReachable, randomSchema } from "./helpers.js";

/** Whether the PostgreSQL tests run: PostgreSQL answers here, or CI (where it must). */
export const postgresTests = (await pgReachable()) || IN_CI;

/** `run` on PostgreSQL, in a fresh schema dropped afterwards. */
export async function onPostgres(run: (options: HarnessOptions) => Promise<void>): Promise<void> {
  const schema = randomSchema();
  try {
    await run({ pgSchema: schema });
  } finally {
    await dropSchema(schema).catch(() => undefined);
  }
}

/** One body, two tests: `<name> (SQLite)` and, where PostgreSQL runs, `<name> (PostgreSQL)`. */
export function onBothStores(
  name: string,
  run: (options: HarnessOptions) => Promise<void>,
  timeoutMs?: number,
): void {
  it(`${name} (SQLite)`, () => run({}), timeoutMs);
  it.runIf(postgresTests)(`${name} (PostgreSQL)`, () => onPostgres(run), timeoutMs);
}

/** `describe(title)` with one body run twice: `on SQLite` and, where PostgreSQL runs, `on PostgreSQL`. */
export function describeOnBothStores(
  title: string,
  run: (options: HarnessOptions) => Promise<void>,
  timeoutMs?: number,
): void {
  describe(title, () => {
    it("on SQLite", () => run({}), timeoutMs);
    it.runIf(postgresTests)("on PostgreSQL", () => onPostgres(run), timeoutMs);
  });
}
