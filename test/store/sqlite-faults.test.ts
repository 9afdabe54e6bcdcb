import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import { openStore, StoreError, storeInternals } from "../../src/store/index.js";
import { captureLogger, configFor, masterKeyB64, tempDir } from "./helpers.js";

describe("SQLite specifics", () => {
  it("uses WAL mode in DATA_DIR/edgeops.sqlite", async () => {
    const { dir, cleanup } = await tempDir();
    try {
      const store = await openStore({
        config: configFor({ DATA_DIR: dir, ENCRYPTION_KEY: masterKeyB64() }),
        logger: captureLogger().logger,
      });
      const { db } = storeInternals(store).context;
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
