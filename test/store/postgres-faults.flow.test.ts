import type pg from "pg";
import { describe, expect, it } from "vitest";
import { type Store, StoreError } from "../../src/store/index.js";
import { captureLogger, pgReachable, TEST_DATABASE_URL } from "../support/helpers.js";
import {
  holdMigrationLock,
  migrationLockName,
  proxiedTestDatabase,
  usePostgresFaultStores,
} from "../support/postgres-fault-store.js";

const reachable = await pgReachable();

/** The test database's URL with the sessions named after `schema` (pg_stat_activity.application_name). */
function namedUrl(schema: string): string {
  const url = new URL(TEST_DATABASE_URL);
  url.searchParams.set("application_name", schema);
  return url.toString();
}

/**
 * Resolves once a session named after `schema` (namedUrl) has run `pg_try_advisory_lock` for the schema's migration lock `count`
 * times and is done with the last one (pg_stat_activity shows its last statement and when it started):
 * the event of a store trying the lock and finding it held. Each look is a query, not a sleep.
 */
async function triesOfLock(observer: pg.Client, schema: string, count: number): Promise<void> {
  const seen = new Set<string>();
  for (let looks = 0; seen.size < count; looks++) {
    if (looks > 100_000) throw new Error(`no ${count} tries of the migration lock of ${schema}`);
    const { rows } = await observer.query<{ started: string }>(
      `select query_start::text as started from pg_stat_activity
        where application_name = $1 and state = 'idle' and query like '%pg_try_advisory_lock%'`,
      [schema],
    );
    for (const r of rows) seen.add(r.started);
  }
}

/**
 * PostgreSQL faults through the store. What waits on real time by its nature (a statement timeout, the
 * client's grace on a silent connection, the migration lock's give-up) is in postgres-faults.process.test.ts.
 */
describe.skipIf(!reachable)("PostgreSQL faults", () => {
  const stores = usePostgresFaultStores();

  it("unreachable at start: a typed StoreError with a clear message and no password", async () => {
    const cap = captureLogger();
    const err = await stores
      .open({ DATABASE_URL: "postgres://postgres:hunter2secret@127.0.0.1:1/test" }, { logger: cap.logger })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StoreError);
    const se = err as StoreError;
    expect(se.kind).toBe("unavailable");
    expect(se.message).toMatch(/Cannot reach the database at postgres:\/\/postgres@127\.0\.0\.1:1\/test/);
    expect(se.message).toMatch(/ECONNREFUSED/);
    expect(se.message + cap.text()).not.toContain("hunter2secret");
  });

  it("unreachable at run time: ping rejects, users get 'storage unavailable', and it recovers", async () => {
    const schema = stores.newSchema();
    const { proxy: p, port, url } = await proxiedTestDatabase();
    const cap = captureLogger();
    const store: Store = await stores.open({ DATABASE_URL: url }, { logger: cap.logger, pgSchema: schema });
    try {
      await store.keys.set("T1", "edge-key-before-outage", "U1");
      await p.cut();
      await expect(store.ping()).rejects.toMatchObject({ kind: "unavailable" });
      const err = (await store.keys
        .set("T1", "edge-key-during-outage", "U2")
        .catch((e: unknown) => e)) as StoreError;
      expect(err).toBeInstanceOf(StoreError);
      expect(err.kind).toBe("unavailable");
      expect(err.userMessage).toMatch(/Storage is unavailable right now/);
      expect(err.message + err.userMessage + cap.text()).not.toContain("edge-key-during-outage");
      await p.start(port);
      await store.ping();
      expect(await store.keys.get("T1")).toMatchObject({ apiKey: "edge-key-before-outage", setBy: "U1" });
    } finally {
      await p.cut();
      await store.close();
    }
  });

  it("migrations wait for the advisory lock another process holds", async () => {
    const schema = stores.newSchema();
    const holder = await holdMigrationLock(schema);
    let opened = false;
    const opening = stores.open({ DATABASE_URL: namedUrl(schema) }, { pgSchema: schema }).then((s) => {
      opened = true;
      return s;
    });
    // The store found the lock held, twice (it polls pg_try_advisory_lock): it is waiting, not opened.
    await triesOfLock(holder, schema, 2);
    expect(opened).toBe(false);
    await holder.query("select pg_advisory_unlock(hashtext($1))", [migrationLockName(schema)]);
    await holder.end();
    const store = await opening;
    await store.ping();
    await store.close();
  });
});
