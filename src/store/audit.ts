import { censor } from "../log.js";
import type { RepoContext } from "./context.js";
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

export interface AuditEntry {
  id: number;
  at: number;
  teamId: string;
  userId: string;
  action: string;
  target: string;
  outcome: string;
  details: Record<string, unknown> | null;
}

/** Append-only: there is no update or delete. */
export interface AuditRepo {
  append(entry: AuditEntryInput): Promise<void>;
  /** Newest first. */
  list(teamId: string, limit: number): Promise<AuditEntry[]>;
}

function toEntry(r: { id: number } & Omit<AuditLogTable, "id">): AuditEntry {
  return {
    id: Number(r.id),
    at: Number(r.at),
    teamId: r.team_id,
    userId: r.user_id,
    action: r.action,
    target: r.target,
    outcome: r.outcome,
    details: r.details === null ? null : (JSON.parse(r.details) as Record<string, unknown>),
  };
}

/** Rows written by one statement at most (a bounded number of distinct statements to prepare). */
const MAX_BATCH = 50;

type AuditRow = Omit<AuditLogTable, "id">;

export function createAuditRepo(ctx: RepoContext): AuditRepo {
  const { db, now } = ctx;
  /**
   * Appends are written in batches: every row appended during one turn of the event loop (and while a
   * batch is being written) goes into one multi-row INSERT, one commit instead of one each. append()
   * still resolves only once its row is stored, and rejects if it could not be.
   */
  let waiting: { row: AuditRow; done: (err?: unknown) => void }[] = [];
  let writing = false;

  const insert = (rows: AuditRow[]) => db.insertInto("audit_log").values(rows).execute();

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
        team_id: e.teamId,
        user_id: e.userId,
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

    async list(teamId: string, limit: number): Promise<AuditEntry[]> {
      const rows = await db
        .selectFrom("audit_log")
        .selectAll()
        .where("team_id", "=", teamId)
        .orderBy("at", "desc")
        .orderBy("id", "desc")
        .limit(Math.max(0, Math.min(limit, 1000)))
        .execute();
      return rows.map(toEntry);
    },
  });
}
