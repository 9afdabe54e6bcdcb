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

export function createAuditRepo(ctx: RepoContext): AuditRepo {
  const { db, now } = ctx;
  return guard("audit", {
    async append(e: AuditEntryInput): Promise<void> {
      await db
        .insertInto("audit_log")
        .values({
          at: e.at ?? now(),
          team_id: e.teamId,
          user_id: e.userId,
          action: e.action,
          target: e.target,
          outcome: e.outcome,
          // Secret-named fields (apiKey, token, ...) are censored the same way log lines are.
          details: e.details === undefined ? null : JSON.stringify(censor(e.details)),
        })
        .execute();
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
