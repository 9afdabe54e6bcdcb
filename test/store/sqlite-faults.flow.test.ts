import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import { systemClock } from "../../src/clock.js";
import { openStore, StoreError, storeInternals } from "../../src/store/index.js";
import { captureLogger, configFor, masterKeyB64, tempDir } from "../support/helpers.js";

/**
 * SQLite's own behaviour through the store. A write lock held by another connection is waited out in real
 * time (the store's retry runs on the process's clock, as the other process's transaction does): those
 * tests are in sqlite-faults.process.test.ts.
 */
describe("SQLite specifics", () => {
  it("uses WAL mode in DATA_DIR/edgeops.sqlite", async () => {
    const { dir, cleanup } = await tempDir();
    try {
      const store = await openStore({
        clock: systemClock,
        config: configFor({ DATA_DIR: dir, ENCRYPTION_KEY: masterKeyB64() }),
        logger: captureLogger().logger,
      });
      const db = storeInternals(store).rawDb;
      const r = await sql<{ journal_mode: string }>`pragma journal_mode`.execute(db);
      expect(r.rows[0]?.journal_mode).toBe("wal");
      expect(store.engine).toBe("sqlite");
      await store.close();
    } finally {
      await cleanup();
    }
  });

  it("a DATA_DIR that cannot hold a database: a typed StoreError naming it", async () => {
    const { dir, cleanup } = await tempDir();
    try {
      const notADir = join(dir, "file");
      await writeFile(notADir, "x");
      const err = await openStore({
        clock: systemClock,
        config: configFor({ DATA_DIR: notADir, ENCRYPTION_KEY: masterKeyB64() }),
        logger: captureLogger().logger,
      }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(StoreError);
      expect(err).toMatchObject({
        kind: "unavailable",
        message: expect.stringContaining(`DATA_DIR=${notADir}`),
      });
    } finally {
      await cleanup();
    }
  });
});
