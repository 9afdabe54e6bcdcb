import pg from "pg";
import { afterAll, beforeAll } from "vitest";
import { systemClock } from "../../src/clock.js";
import { openStore, type Store, type StoreOptions } from "../../src/store/index.js";
import {
  captureLogger,
  configFor,
  dropSchema,
  masterKeyB64,
  randomSchema,
  TEST_DATABASE_URL,
  tempDir,
} from "./helpers.js";
import { type TcpProxy, tcpProxy } from "./tcp-proxy.js";

export interface PostgresFaultStores {
  /** A fresh schema, dropped after the describe block. */
  newSchema(): string;
  /**
   * openStore with the block's data directory, a fresh master key and `env` (DATABASE_URL at least);
   * logging to a throw-away capture unless `options.logger` is given.
   */
  open(
    env: Record<string, string>,
    options?: Partial<Omit<StoreOptions, "clock" | "config">>,
  ): Promise<Store>;
}

/** For a describe block of PostgreSQL fault tests: a temporary data directory and the schemas it made, removed after the block. */
export function usePostgresFaultStores(): PostgresFaultStores {
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
  return {
    newSchema() {
      const schema = randomSchema();
      schemas.push(schema);
      return schema;
    },
    open(env, options = {}) {
      return openStore({
        clock: systemClock,
        config: configFor({ DATA_DIR: dataDir, ENCRYPTION_KEY: masterKeyB64(), ...env }),
        logger: captureLogger().logger,
        ...options,
      });
    },
  };
}

/** A listening TCP proxy in front of the test database; `url` reaches the database through it on `port`. */
export async function proxiedTestDatabase(): Promise<{ proxy: TcpProxy; port: number; url: string }> {
  const proxy = tcpProxy(new URL(TEST_DATABASE_URL));
  const port = await proxy.start();
  const url = new URL(TEST_DATABASE_URL);
  url.host = `127.0.0.1:${port}`;
  return { proxy, port, url: url.toString() };
}

/** The advisory lock that edgeops's migrations of `schema` take. */
export function migrationLockName(schema: string): string {
  return `edgeops:migrate:${schema}`;
}

/** A session of its own holding the migration lock of `schema`, as another edgeops process migrating it would. */
export async function holdMigrationLock(schema: string): Promise<pg.Client> {
  const holder = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await holder.connect();
  await holder.query("select pg_advisory_lock(hashtext($1))", [migrationLockName(schema)]);
  return holder;
}
