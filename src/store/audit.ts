import { type Insertable, type Selectable, sql } from "kysely";
import { censor } from "../log.js";
import { compiledPerShape } from "./compiled.js";
import { parseJson, type RepoContext, readRow, type WorkScope } from "./context.js";
import type { AuditLogTable } from "./db.js";
import { guard } from "./errors.js";

export interface AuditEntryInput {
  /** Epoch ms; now() when absent. */
  at?: number;
  teamId: string;
  userId: string;
  action: string;
  target: string;
  outcome: string;
  details?: Record<string, unknown>;
}

/** An audit entry as read: its row (db.ts) with the details parsed. */
export interface AuditEntry extends Omit<Selectable<AuditLogTable>, "details"> {
  details: Record<string, unknown> | null;
}

/** Append-only: there is no update; rows leave only by age (prune). */
export interface AuditRepo {
  append(entry: AuditEntryInput): Promise<void>;
  /** Newest first; with `channelIds`, only the entries about one of those channels (details.channelId). */
  list(teamId: string, limit: number, query?: { channelIds?: readonly string[] }): Promise<AuditEntry[]>;
  /**
   * Deletes at most `batch` rows written before `before` (epoch ms), the oldest first, and says how many;
   * only the scope's workspaces when it names some.
   */
  prune(before: number, batch: number, scope?: WorkScope): Promise<number>;
}

export function toEntry(r: Selectable<AuditLogTable>): AuditEntry {
  return readRow(r, { details: parseJson<Record<string, unknown>>(r.details) });
}

/** Rows written by one statement at most (a bounded number of distinct statements to prepare). */
const MAX_BATCH = 50;

type AuditRow = Required<Omit<Insertable<AuditLogTable>, "id">>;

/** The columns an append writes, in the order an insert's values are given. */
const AUDIT_COLUMNS = ["at", "teamId", "userId", "action", "target", "outcome", "details"] as const;
// Fails to compile when a column of the row is missing above (it would not be written).
const everyColumn: Exclude<keyof AuditRow, (typeof AUDIT_COLUMNS)[number]> extends never ? true : never =
  true;
void everyColumn;

/** One row of stand-ins for an insert built once per row count (src/store/compiled.ts). */
const stoodFor = (slots: readonly unknown[]) =>
  Object.fromEntries(AUDIT_COLUMNS.map((c, i) => [c, slots[i]])) as AuditRow;

export function createAuditRepo(ctx: RepoContext): AuditRepo {
  const { db, now, engine } = ctx;
  // The channel an entry is about, read from its JSON details by the database itself.
  const channelOf =
    engine === "postgres"
      ? sql<string | null>`(details::json ->> 'channelId')`
      : sql<string | null>`json_extract(details, '$.channelId')`;
  /**
   * Appends are written in batches: every row appended during one turn of the event loop (and while a
   * batch is being written) goes into one multi-row INSERT, one commit instead of one each. append()
   * still resolves only once its row is stored, and rejects if it could not be.
   */
  let waiting: { row: AuditRow; done: (err?: unknown) => void }[] = [];
  let writing = false;

  const insertRows = compiledPerShape<never>(db, MAX_BATCH);
  const insert = (rows: AuditRow[]) =>
    insertRows(
      db,
      String(rows.length),
      rows.flatMap((r) => AUDIT_COLUMNS.map((c) => r[c])),
      (root, slots) =>
        root
          .insertInto("audit_log")
          .values(rows.map((_, i) => stoodFor(slots.slice(i * AUDIT_COLUMNS.length)))),
    );

  async function writeWaiting(): Promise<void> {
    writing = true;
    try {
      while (waiting.length > 0) {
        const batch = waiting.slice(0, MAX_BATCH);
        waiting = waiting.slice(batch.length);
        try {
          await insert(batch.map((w) => w.row));
          for (const w of batch) w.done();
        } catch (batchErr) {
          // Only the rows that can't be written fail: write the batch again row by row.
          for (const w of batch) {
            if (batch.length === 1) {
              w.done(batchErr);
              continue;
            }
            await insert([w.row]).then(
              () => w.done(),
              (err: unknown) => w.done(err),
            );
          }
        }
      }
    } finally {
      writing = false;
    }
  }

  return guard("audit", {
    append(e: AuditEntryInput): Promise<void> {
      const row: AuditRow = {
        at: e.at ?? now(),
        teamId: e.teamId,
        userId: e.userId,
        action: e.action,
        target: e.target,
        outcome: e.outcome,
        // Secret-named fields (apiKey, token, ...) are censored the same way log lines are.
        details: e.details === undefined ? null : JSON.stringify(censor(e.details)),
      };
      return new Promise<void>((resolve, reject) => {
        waiting.push({ row, done: (err) => (err === undefined ? resolve() : reject(err)) });
        if (!writing && waiting.length === 1) setImmediate(() => void writeWaiting());
      });
    },

    async list(
      teamId: string,
      limit: number,
      { channelIds }: { channelIds?: readonly string[] } = {},
    ): Promise<AuditEntry[]> {
      if (channelIds?.length === 0) return [];
      let q = db.selectFrom("audit_log").selectAll().where("teamId", "=", teamId);
      if (channelIds) q = q.where(channelOf, "in", [...channelIds]);
      const rows = await q
        .orderBy("at", "desc")
        .orderBy("id", "desc")
        .limit(Math.max(0, Math.min(limit, 1000)))
        .execute();
      return rows.map(toEntry);
    },

    async prune(before: number, batch: number, scope: WorkScope = {}): Promise<number> {
      const { teamIds } = scope;
      if (teamIds?.length === 0) return 0;
      const n = Math.max(1, Math.min(batch, 10_000));
      // Unscoped: only the `n` oldest rows by id are looked at (ids grow with time), so a table with
      // nothing to prune costs one short index read, not a scan. Scoped: the (team_id, at) index.
      const ids = teamIds
        ? db
            .selectFrom("audit_log")
            .select("id")
            .where("teamId", "in", [...teamIds])
            .where("at", "<", before)
            .orderBy("at")
            .limit(n)
        : db
            .selectFrom(db.selectFrom("audit_log").select(["id", "at"]).orderBy("id").limit(n).as("oldest"))
            .select("oldest.id")
            .where("oldest.at", "<", before);
      const res = await db.deleteFrom("audit_log").where("id", "in", ids).executeTakeFirst();
      return Number(res.numDeletedRows);
    },
  });
}
