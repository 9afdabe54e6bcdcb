import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import pg from "pg";
import { type Config, loadConfig } from "../../src/config.js";
import { createLogger, type Logger } from "../../src/log.js";

export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL || "postgres://postgres@127.0.0.1:5432/test";
export const IN_CI = process.env.CI === "true";

/** A logger whose JSON lines are kept in memory. */
export function captureLogger(level = "debug"): {
  logger: Logger;
  text: () => string;
  lines: () => Record<string, unknown>[];
} {
  const chunks: string[] = [];
  const destination = new Writable({
    write(chunk, _enc, cb) {
      chunks.push(String(chunk));
      cb();
    },
  });
  const logger = createLogger({ level, destination });
  const text = () => chunks.join("");
  return {
    logger,
    text,
    lines: () =>
      text()
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>),
  };
}

export async function tempDir(
  prefix = "edgeops-store-",
): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

export function masterKeyB64(): string {
  return randomBytes(32).toString("base64");
}

export function configFor(env: Record<string, string | undefined>): Config {
  return loadConfig(env);
}

/** Whether PostgreSQL answers within a couple of seconds. */
export async function pgReachable(url = TEST_DATABASE_URL): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2_000 });
  try {
    await client.connect();
    await client.query("select 1");
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

export function randomSchema(): string {
  return `edgeops_test_${randomBytes(6).toString("hex")}`;
}

export async function dropSchema(schema: string, url = TEST_DATABASE_URL): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(`drop schema if exists "${schema}" cascade`);
  } finally {
    await client.end();
  }
}

export async function pgQuery<T = Record<string, unknown>>(
  sqlText: string,
  params: unknown[] = [],
): Promise<T[]> {
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await client.connect();
  try {
    return (await client.query(sqlText, params)).rows as T[];
  } finally {
    await client.end();
  }
}
