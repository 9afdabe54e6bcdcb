import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import { StoreError, storeInternals } from "../../src/store/index.js";
import { pgReachable, TEST_DATABASE_URL } from "../support/helpers.js";
import {
  holdMigrationLock,
  proxiedTestDatabase,
  usePostgresFaultStores,
} from "../support/postgres-fault-store.js";

const reachable = await pgReachable();

/**
 * PostgreSQL faults whose subject is real time: the server's statement timeout, the client's grace on a
 * connection that stopped answering, and how long start-up waits for a migration lock (the store polls it
 * on the process's own clock, as the other process holds it). Each waits well under two seconds.
 */
describe.skipIf(!reachable)("PostgreSQL faults in real time", () => {
  const stores = usePostgresFaultStores();

  it("a connection that stops answering (half-open) fails its call within the statement timeout and is replaced", async () => {
    const schema = stores.newSchema();
    const { proxy: p, url } = await proxiedTestDatabase();
    const store = await stores.open(
      { DATABASE_URL: url, DATABASE_STATEMENT_TIMEOUT_MS: "300" },
      { pgSchema: schema, poolSize: 1 },
    );
    try {
      await store.keys.set("T1", "edge-key-before-stall", "U1");
      p.stall();
      const started = Date.now();
      const err = await store.keys.get("T1").catch((e: unknown) => e);
      const waited = Date.now() - started;
      expect(err).toBeInstanceOf(StoreError);
      expect((err as StoreError).kind).toBe("unavailable");
      // 300 ms statement timeout + the client's 1 s grace, with room for a loaded machine.
      expect(waited).toBeGreaterThanOrEqual(1_200);
      expect(waited).toBeLessThan(4_000);
      // That silent connection was closed, not lent out again: the next call gets a fresh one at once.
      const again = Date.now();
      expect(await store.keys.get("T1")).toMatchObject({ apiKey: "edge-key-before-stall" });
      expect(Date.now() - again).toBeLessThan(1_000);
    } finally {
      p.resume();
      await p.cut();
      await store.close();
    }
  });

  it("the server cancels a statement after DATABASE_STATEMENT_TIMEOUT_MS", async () => {
    const schema = stores.newSchema();
    const store = await stores.open(
      { DATABASE_URL: TEST_DATABASE_URL, DATABASE_STATEMENT_TIMEOUT_MS: "250" },
      { pgSchema: schema },
    );
    try {
      const db = storeInternals(store).rawDb;
      const shown = await sql<{ statement_timeout: string }>`show statement_timeout`.execute(db);
      expect(shown.rows[0]?.statement_timeout).toBe("250ms");
      const started = Date.now();
      await expect(sql`select pg_sleep(5)`.execute(db)).rejects.toThrow(/statement timeout/);
      expect(Date.now() - started).toBeLessThan(2_000);
      await store.ping();
    } finally {
      await store.close();
    }
  });

  it("migrations give up, with a sentence, on a migration lock held for too long", async () => {
    const schema = stores.newSchema();
    const holder = await holdMigrationLock(schema);
    try {
      const started = Date.now();
      const err = await stores
        .open({ DATABASE_URL: TEST_DATABASE_URL }, { pgSchema: schema, migrationLockWaitMs: 600 })
        .catch((e: unknown) => e);
      const waited = Date.now() - started;
      expect(waited).toBeGreaterThanOrEqual(590);
      expect(waited).toBeLessThan(3_000);
      expect(err).toBeInstanceOf(StoreError);
      expect(err).toMatchObject({
        kind: "migration",
        message: expect.stringContaining(
          `Another edgeops process has held the migration lock of schema "${schema}"`,
        ),
      });
    } finally {
      await holder.end();
    }
  });
});
