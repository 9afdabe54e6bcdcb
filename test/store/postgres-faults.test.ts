import { connect, createServer, type Server, type Socket } from "node:net";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openStore, type Store, StoreError } from "../../src/store/index.js";
import {
  captureLogger,
  configFor,
  dropSchema,
  masterKeyB64,
  pgReachable,
  randomSchema,
  TEST_DATABASE_URL,
  tempDir,
} from "./helpers.js";

const reachable = await pgReachable();

/** A TCP proxy to PostgreSQL that can be cut, to make the database "go away" at run time. */
function proxy(target: URL): { start(port?: number): Promise<number>; cut(): Promise<void> } {
  let server: Server | undefined;
  const sockets = new Set<Socket>();
  return {
    start(port = 0) {
      server = createServer((client) => {
        const upstream = connect(Number(target.port || 5432), target.hostname);
        sockets.add(client).add(upstream);
        client.pipe(upstream).pipe(client);
        const end = () => {
          client.destroy();
          upstream.destroy();
        };
        client.on("error", end).on("close", end);
        upstream.on("error", end).on("close", end);
      });
      return new Promise((resolve) =>
        server!.listen(port, "127.0.0.1", () => resolve((server!.address() as { port: number }).port)),
      );
    },
    cut() {
      for (const s of sockets) s.destroy();
      sockets.clear();
      return new Promise((resolve) => (server ? server.close(() => resolve()) : resolve()));
    },
  };
}

describe.skipIf(!reachable)("PostgreSQL faults", () => {
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

  it("unreachable at start: a typed StoreError with a clear message and no password", async () => {
    const cap = captureLogger();
    const err = await openStore({
      config: configFor({
        DATA_DIR: dataDir,
        ENCRYPTION_KEY: masterKeyB64(),
        DATABASE_URL: "postgres://postgres:hunter2secret@127.0.0.1:1/test",
      }),
      logger: cap.logger,
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StoreError);
    const se = err as StoreError;
    expect(se.kind).toBe("unavailable");
    expect(se.message).toMatch(/Cannot reach the database at postgres:\/\/postgres@127\.0\.0\.1:1\/test/);
    expect(se.message).toMatch(/ECONNREFUSED/);
    expect(se.message + cap.text()).not.toContain("hunter2secret");
  });

  it("unreachable at run time: ping rejects, users get 'storage unavailable', and it recovers", async () => {
    const schema = randomSchema();
    schemas.push(schema);
    const p = proxy(new URL(TEST_DATABASE_URL));
    const port = await p.start();
    const url = new URL(TEST_DATABASE_URL);
    url.host = `127.0.0.1:${port}`;
    const cap = captureLogger();
    const store: Store = await openStore({
      config: configFor({ DATA_DIR: dataDir, ENCRYPTION_KEY: masterKeyB64(), DATABASE_URL: url.toString() }),
      logger: cap.logger,
      pgSchema: schema,
    });
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
    const schema = randomSchema();
    schemas.push(schema);
    const holder = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await holder.connect();
    await holder.query("select pg_advisory_lock(hashtext($1))", [`edgeops:migrate:${schema}`]);
    let opened = false;
    const opening = openStore({
      config: configFor({
        DATA_DIR: dataDir,
        ENCRYPTION_KEY: masterKeyB64(),
        DATABASE_URL: TEST_DATABASE_URL,
      }),
      logger: captureLogger().logger,
      pgSchema: schema,
    }).then((s) => {
      opened = true;
      return s;
    });
    await new Promise((r) => setTimeout(r, 500));
    expect(opened).toBe(false);
    await holder.query("select pg_advisory_unlock(hashtext($1))", [`edgeops:migrate:${schema}`]);
    await holder.end();
    const store = await opening;
    await store.ping();
    await store.close();
  });
});
