import { randomBytes } from "node:crypto";
import type { Kysely } from "kysely";
import type { Logger } from "../log.js";
import type { Database, Engine } from "./db.js";
import type { Vault } from "./vault.js";

/** What every repository gets. */
export interface RepoContext {
  db: Kysely<Database>;
  engine: Engine;
  vault: Vault;
  logger: Logger;
  now: () => number;
}

/**
 * The workspaces whose background work (schedules, approval expiry, reconciliation) a process may claim:
 * the local console claims only its own simulated workspace's. Absent teamIds: every workspace.
 */
export interface WorkScope {
  readonly teamIds?: readonly string[] | undefined;
}

/**
 * A row as the domain reads it: `row` itself, with the columns in `read` replaced (JSON parsed, flags
 * and unions read) and those in `drop` removed. In place rather than copied: the CamelCasePlugin builds
 * each row key by key, which leaves a wide row a dictionary-mode object, and copying those (spread)
 * made 100-row change-request lists about twice as slow as the query alone.
 */
export function readRow<Row extends object, Read extends object, Drop extends keyof Row = never>(
  row: Row,
  read: Read,
  drop: readonly Drop[] = [],
): Omit<Row, keyof Read | Drop> & Read {
  for (const column of drop) delete (row as Partial<Row>)[column];
  return Object.assign(row, read) as unknown as Omit<Row, keyof Read | Drop> & Read;
}

export function parseJson<T>(text: string | null): T | null {
  return text === null ? null : (JSON.parse(text) as T);
}

/** A row id: 22 url-safe characters. */
export function newId(): string {
  return randomBytes(16).toString("base64url");
}

/** An UPDATE by id (or a compare-and-set) changed its one row. */
export const updatedOne = (result: { numUpdatedRows: bigint }): boolean =>
  Number(result.numUpdatedRows) === 1;
