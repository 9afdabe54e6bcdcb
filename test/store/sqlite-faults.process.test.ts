import { join } from "node:path";
import BetterSqlite3 from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { systemClock } from "../../src/clock.js";
import { openStore, StoreError } from "../../src/store/index.js";
import { FROZEN_LOOP_MS, watchEventLoop } from "../support/event-loop.js";
import { captureLogger, configFor, masterKeyB64, tempDir } from "../support/helpers.js";

/** Another process's connection holding the write lock of DATA_DIR's database for `ms`. */
function holdWriteLock(dataDir: string, ms: number): Promise<void> {
  const other = new BetterSqlite3(join(dataDir, "edgeops.sqlite"));
  other.exec("begin immediate");
  return new Promise((resolve) =>
    setTimeout(() => {
      other.exec("commit");
      other.close();
      resolve();
    }, ms),
  );
}

/**
 * The SQLite write lock held by another connection (as another process would): the store retries in real
 * time (src/store/db.ts, the other process's clock), so these tests wait the lock out, about a second each.
 */
describe("SQLite write lock held elsewhere", () => {
  it("a write while another connection holds the lock for 1 s waits without freezing the event loop, then succeeds", async () => {
    const { dir, cleanup } = await tempDir();
    const store = await openStore({
      clock: systemClock,
      config: configFor({ DATA_DIR: dir, ENCRYPTION_KEY: masterKeyB64() }),
      logger: captureLogger().logger,
    });
    try {
      const released = holdWriteLock(dir, 1_000);
      const loop = watchEventLoop();
      const started = performance.now();
      await store.keys.set("T1", "edge-key-while-locked", "U1");
      const waited = performance.now() - started;
      const stall = loop.stop();
      await released;
      expect(waited).toBeGreaterThanOrEqual(900);
      expect(stall).toBeLessThan(FROZEN_LOOP_MS);
      expect(await store.keys.get("T1")).toMatchObject({ apiKey: "edge-key-while-locked" });
    } finally {
      await store.close();
      await cleanup();
    }
  });

  it("a lock held past the wait: storage unavailable, and the event loop stayed free meanwhile", async () => {
    const { dir, cleanup } = await tempDir();
    const store = await openStore({
      clock: systemClock,
      config: configFor({ DATA_DIR: dir, ENCRYPTION_KEY: masterKeyB64() }),
      logger: captureLogger().logger,
      sqliteLockedWaitMs: 400,
    });
    try {
      const released = holdWriteLock(dir, 1_000);
      const loop = watchEventLoop();
      const started = performance.now();
      const err = await store.keys.set("T1", "edge-key-while-locked", "U1").catch((e: unknown) => e);
      const waited = performance.now() - started;
      const stall = loop.stop();
      await released;
      expect(err).toBeInstanceOf(StoreError);
      expect(err).toMatchObject({ kind: "unavailable", message: expect.stringContaining("SQLITE_BUSY") });
      expect(waited).toBeGreaterThanOrEqual(390);
      expect(waited).toBeLessThan(900);
      expect(stall).toBeLessThan(FROZEN_LOOP_MS);
      expect(await store.keys.get("T1")).toBeUndefined();
    } finally {
      await store.close();
      await cleanup();
    }
  });
});
