import { sql } from "kysely";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { systemClock } from "../../src/clock.js";
import { openStore, StoreError, storeInternals } from "../../src/store/index.js";
import {
  captureLogger,
  configFor,
  dropSchema,
  masterKeyB64,
  pgReachable,
  randomSchema,
  TEST_DATABASE_URL,
  tempDir,
} from "../support/helpers.js";
import { tcpProxy } from "../support/tcp-proxy.js";

const reachable = await pgReachable();

/**
 * PostgreSQL faults whose subject is real time: the server's statement timeout, the client's grace on a
 * connection that stopped answering, and how long start-up waits for a migration lock (the store polls it
 * on the process's own clock, as the other process holds it). Each waits well under two seconds.
 */
describe.skipIf(!reachable)("PostgreSQL faults in real time", () => {
  const schemas: string[] = [];
  let dataDir: string;
  let cleanupDir: () => Promise<void>;
  beforeAll(async () => {
    ({ dir: dataDir, cleanup: cleanupDir } = await tempDir());
  });
  afterAll(async () => {
    for (const s of schemas) await dropSchema(s);
    await cleanupDir();
  });

  it("a connection that stops answering (half-open) fails its call within the statement timeout and is replaced", async () => {
    const schema = randomSchema();
    schemas.push(schema);
    const p = tcpProxy(new URL(TEST_DATABASE_URL));
    const url = new URL(TEST_DATABASE_URL);
    url.host = `127.0.0.1:${await p.start()}`;
    const store = await openStore({
      clock: systemClock,
      config: configFor({
        DATA_DIR: dataDir,
        ENCRYPTION_KEY: masterKeyB64(),
        DATABASE_URL: url.toString(),
        DATABASE_STATEMENT_TIMEOUT_MS: "300",
      }),
      logger: captureLogger().logger,
      pgSchema: schema,
      poolSize: 1,
    });
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
    const schema = randomSchema();
    schemas.push(schema);
    const store = await openStore({
      clock: systemClock,
      config: configFor({
        DATA_DIR: dataDir,
        ENCRYPTION_KEY: masterKeyB64(),
        DATABASE_URL: TEST_DATABASE_URL,
        DATABASE_STATEMENT_TIMEOUT_MS: "250",
      }),
      logger: captureLogger().logger,
      pgSchema: schema,
    });
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
    const schema = randomSchema();
    schemas.push(schema);
    const holder = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await holder.connect();
    await holder.query("select pg_advisory_lock(hashtext($1))", [`edgeops:migrate:${schema}`]);
    try {
      const started = Date.now();
      const err = await openStore({
        clock: systemClock,
        config: configFor({
          DATA_DIR: dataDir,
          ENCRYPTION_KEY: masterKeyB64(),
          DATABASE_URL: TEST_DATABASE_URL,
        }),
        logger: captureLogger().logger,
        pgSchema: schema,
        migrationLockWaitMs: 600,
      }).catch((e: unknown) => e);
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
