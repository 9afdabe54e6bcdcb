import type { Clock } from "../../src/clock.js";
import { openStore, type Store } from "../../src/store/index.js";
import {
  captureLogger,
  configFor,
  dropSchema,
  masterKeyB64,
  randomSchema,
  TEST_DATABASE_URL,
  tempDir,
} from "./helpers.js";

/**
 * A store of its own on `engine` (SQLite in a temporary directory, or PostgreSQL in a fresh schema) on
 * `clock`; `close` closes it and removes its directory and schema.
 */
export async function openTestStore(
  engine: "sqlite" | "postgres",
  clock: Clock,
): Promise<{ store: Store; close(): Promise<void> }> {
  const dir = await tempDir();
  const schema = engine === "postgres" ? randomSchema() : undefined;
  const store = await openStore({
    config: configFor({
      DATA_DIR: dir.dir,
      ENCRYPTION_KEY: masterKeyB64(),
      ...(engine === "postgres" ? { DATABASE_URL: TEST_DATABASE_URL } : {}),
    }),
    logger: captureLogger().logger,
    clock,
    ...(schema ? { pgSchema: schema } : {}),
  });
  return {
    store,
    async close() {
      await store.close();
      if (schema) await dropSchema(schema);
      await dir.cleanup();
    },
  };
}
