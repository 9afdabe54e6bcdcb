import { randomBytes } from "node:crypto";
import { sql } from "kysely";
import type { RepoContext } from "./context.js";
import type { ApprovalRequestsTable } from "./db.js";
import { guard, StoreError } from "./errors.js";

export const APPROVAL_STATES = [
  "pending",
  "approved",
  "applied",
  "failed",
  "rejected",
  "expired",
  "cancelled",
] as const;
export type ApprovalState = (typeof APPROVAL_STATES)[number];

/** The allowed moves; transition() refuses anything else. */
export const APPROVAL_TRANSITIONS: Readonly<Record<ApprovalState, readonly ApprovalState[]>> = Object.freeze({
  pending: ["approved", "rejected", "expired", "cancelled"],
  approved: ["applied", "failed"],
  failed: ["approved"],
  applied: [],
  rejected: [],
  expired: [],
  cancelled: [],
});

export interface ApprovalError {
  kind: string;
  status?: number;
  errorKey?: string;
  message: string;
}

export interface ApprovalRequest {
  id: string;
  teamId: string;
  channelId: string;
  requesterId: string;
  shieldZoneId: number;
  /** Bot category, 0..7. */
  category: number;
  /** Requested action, 0..2. */
  requestedAction: number;
  /** The category's action when the request was made (null when unknown). */
  previousAction: number | null;
  state: ApprovalState;
  decidedBy: string | null;
  decidedAt: number | null;
  expiresAt: number;
  messageChannel: string | null;
  messageTs: string | null;
  attempts: number;
  lastError: ApprovalError | null;
  createdAt: number;
  updatedAt: number;
}

export interface NewApprovalRequest {
  /** Generated (22 url-safe characters) when absent. */
  id?: string;
  teamId: string;
  channelId: string;
  requesterId: string;
  shieldZoneId: number;
  category: number;
  requestedAction: number;
  previousAction?: number | null;
  expiresAt: number;
}

export interface ApprovalPatch {
  decidedBy?: string | null;
  decidedAt?: number | null;
  lastError?: ApprovalError | null;
  /** Add one to the attempt count in the same statement. */
  incrementAttempts?: boolean;
  expiresAt?: number;
}

export interface ApprovalsRepo {
  create(request: NewApprovalRequest): Promise<ApprovalRequest>;
  get(id: string): Promise<ApprovalRequest | undefined>;
  /**
   * Compare-and-set: one `UPDATE ... WHERE id = ? AND state IN (from) RETURNING *`. Resolves to the
   * updated request for the single winner, undefined for everyone who lost (or when the id is unknown).
   */
  transition(
    id: string,
    from: ApprovalState | readonly ApprovalState[],
    to: ApprovalState,
    patch?: ApprovalPatch,
  ): Promise<ApprovalRequest | undefined>;
  /** Where the approval card was posted. */
  setMessage(id: string, channel: string, ts: string): Promise<boolean>;
  listPending(teamId: string): Promise<ApprovalRequest[]>;
  /** Pending requests with expires_at <= now, oldest first. */
  listExpiredPending(now: number, limit?: number): Promise<ApprovalRequest[]>;
  countByState(teamId?: string): Promise<Record<ApprovalState, number>>;
}

export function newId(): string {
  return randomBytes(16).toString("base64url");
}

function toRequest(r: ApprovalRequestsTable): ApprovalRequest {
  return {
    id: r.id,
    teamId: r.team_id,
    channelId: r.channel_id,
    requesterId: r.requester_id,
    shieldZoneId: Number(r.shield_zone_id),
    category: Number(r.category),
    requestedAction: Number(r.requested_action),
    previousAction: r.previous_action === null ? null : Number(r.previous_action),
    state: r.state as ApprovalState,
    decidedBy: r.decided_by,
    decidedAt: r.decided_at === null ? null : Number(r.decided_at),
    expiresAt: Number(r.expires_at),
    messageChannel: r.message_channel,
    messageTs: r.message_ts,
    attempts: Number(r.attempts),
    lastError: r.last_error === null ? null : (JSON.parse(r.last_error) as ApprovalError),
    createdAt: Number(r.created_at),
    updatedAt: Number(r.updated_at),
  };
}

function invalid(message: string): StoreError {
  return new StoreError("invalid", message);
}

function checkInt(name: string, v: unknown, min: number, max: number): void {
  if (typeof v !== "number" || !Number.isInteger(v) || v < min || v > max) {
    throw invalid(`${name} must be a whole number from ${min} to ${max}`);
  }
}

export function createApprovalsRepo(ctx: RepoContext): ApprovalsRepo {
  const { db, now } = ctx;

  return guard("approvals", {
    async create(req: NewApprovalRequest): Promise<ApprovalRequest> {
      checkInt("category", req.category, 0, 7);
      checkInt("requestedAction", req.requestedAction, 0, 2);
      if (req.previousAction != null) checkInt("previousAction", req.previousAction, 0, 2);
      checkInt("shieldZoneId", req.shieldZoneId, 0, Number.MAX_SAFE_INTEGER);
      if (!req.teamId || !req.channelId || !req.requesterId)
        throw invalid("teamId, channelId and requesterId are required");
      const at = now();
      const row: ApprovalRequestsTable = {
        id: req.id ?? newId(),
        team_id: req.teamId,
        channel_id: req.channelId,
        requester_id: req.requesterId,
        shield_zone_id: req.shieldZoneId,
        category: req.category,
        requested_action: req.requestedAction,
        previous_action: req.previousAction ?? null,
        state: "pending",
        decided_by: null,
        decided_at: null,
        expires_at: req.expiresAt,
        message_channel: null,
        message_ts: null,
        attempts: 0,
        last_error: null,
        created_at: at,
        updated_at: at,
      };
      await db.insertInto("approval_requests").values(row).execute();
      return toRequest(row);
    },

    async get(id: string): Promise<ApprovalRequest | undefined> {
      const r = await db.selectFrom("approval_requests").selectAll().where("id", "=", id).executeTakeFirst();
      return r ? toRequest(r) : undefined;
    },

    async transition(
      id: string,
      from: ApprovalState | readonly ApprovalState[],
      to: ApprovalState,
      patch: ApprovalPatch = {},
    ): Promise<ApprovalRequest | undefined> {
      const froms = typeof from === "string" ? [from] : [...from];
      if (froms.length === 0) throw invalid("transition needs at least one state to move from");
      for (const f of froms) {
        if (!APPROVAL_TRANSITIONS[f]?.includes(to))
          throw invalid(`An approval request cannot go from ${f} to ${to}`);
      }
      const r = await db
        .updateTable("approval_requests")
        .set((eb) => ({
          state: to,
          updated_at: now(),
          ...(patch.decidedBy !== undefined ? { decided_by: patch.decidedBy } : {}),
          ...(patch.decidedAt !== undefined ? { decided_at: patch.decidedAt } : {}),
          ...(patch.expiresAt !== undefined ? { expires_at: patch.expiresAt } : {}),
          ...(patch.lastError !== undefined
            ? { last_error: patch.lastError === null ? null : JSON.stringify(patch.lastError) }
            : {}),
          ...(patch.incrementAttempts ? { attempts: eb("attempts", "+", 1) } : {}),
        }))
        .where("id", "=", id)
        .where("state", "in", froms)
        .returningAll()
        .executeTakeFirst();
      return r ? toRequest(r) : undefined;
    },

    async setMessage(id: string, channel: string, ts: string): Promise<boolean> {
      const r = await db
        .updateTable("approval_requests")
        .set({ message_channel: channel, message_ts: ts, updated_at: now() })
        .where("id", "=", id)
        .executeTakeFirst();
      return Number(r.numUpdatedRows) === 1;
    },

    async listPending(teamId: string): Promise<ApprovalRequest[]> {
      const rows = await db
        .selectFrom("approval_requests")
        .selectAll()
        .where("team_id", "=", teamId)
        .where("state", "=", "pending")
        .orderBy("created_at")
        .orderBy("id")
        .execute();
      return rows.map(toRequest);
    },

    async listExpiredPending(at: number, limit = 100): Promise<ApprovalRequest[]> {
      const rows = await db
        .selectFrom("approval_requests")
        .selectAll()
        .where("state", "=", "pending")
        .where("expires_at", "<=", at)
        .orderBy("expires_at")
        .orderBy("id")
        .limit(limit)
        .execute();
      return rows.map(toRequest);
    },

    async countByState(teamId?: string): Promise<Record<ApprovalState, number>> {
      let q = db
        .selectFrom("approval_requests")
        .select(["state", sql<number>`count(*)`.as("n")])
        .groupBy("state");
      if (teamId !== undefined) q = q.where("team_id", "=", teamId);
      const rows = await q.execute();
      const out = Object.fromEntries(APPROVAL_STATES.map((s) => [s, 0])) as Record<ApprovalState, number>;
      for (const r of rows) if (r.state in out) out[r.state as ApprovalState] = Number(r.n);
      return out;
    },
  });
}
