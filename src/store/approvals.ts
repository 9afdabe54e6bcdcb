import { randomBytes } from "node:crypto";
import { type ExpressionBuilder, sql } from "kysely";
import type { RepoContext, WorkScope } from "./context.js";
import type { ApprovalRequestsTable, Database } from "./db.js";
import { guard, StoreError } from "./errors.js";

export const APPROVAL_STATES = [
  "pending",
  "approved",
  "applied",
  "undoing",
  "undone",
  "failed",
  "rejected",
  "expired",
  "cancelled",
] as const;
export type ApprovalState = (typeof APPROVAL_STATES)[number];

/** The allowed moves; transition() refuses anything else. */
/** The allowed moves; transition() refuses anything else. */
export const APPROVAL_TRANSITIONS: Readonly<Record<ApprovalState, readonly ApprovalState[]>> = Object.freeze({
  pending: ["approved", "rejected", "expired", "cancelled"],
  // approved → failed also when the reconciler finds the change not in force.
  approved: ["applied", "failed"],
  // A temporary change: claimed for its undo, then undone (or left, when someone changed it since).
  applied: ["undoing"],
  // undoing → applied: the undo failed or was interrupted and is tried again.
  undoing: ["undone", "applied"],
  undone: [],
  // failed → expired when its Retry window is over, → cancelled when the setting changed since.
  // failed → applied when a slow call that the reconciler gave up on turns out to have succeeded.
  failed: ["approved", "expired", "cancelled", "applied"],
  rejected: [],
  expired: [],
  cancelled: [],
});

export interface ApprovalError {
  kind: string;
  status?: number;
  errorKey?: string;
  message: string;
  /** The sweeper's failed reads of the current value so far (it backs off, then gives up). */
  tries?: number;
}

/** Another request for the same target, as a card names it. */
export interface OtherRequest {
  id: string;
  userId: string;
  channelId: string;
  /** Its change, described by its kind (plain text). */
  change: string;
}

/** What a card says about other requests for the same target (the target's last writer, conflicts). */
export type ChangeNote =
  /** Waiting while other requests for the same target, with another value, wait too. */
  | { kind: "conflicts"; with: OtherRequest[] }
  /** A later request for the value this temporary change set took it over: no undo (until: its own). */
  | { kind: "kept"; by: OtherRequest; until: number | null }
  /** A later request set the target to another value: refused at apply, or its undo cancelled. */
  | { kind: "superseded"; by: OtherRequest };

/** Why a request was decided as it was, where the card says so. */
export type DecisionReason =
  /** Rejected by an approver, with the reason typed (may be empty). */
  | { kind: "rejected"; text: string }
  /** Withdrawn by its requester while it waited. */
  | { kind: "withdrawn" }
  /** Applied at once: the channel's policy asks no approval ("off") or not for this kind of change. */
  | { kind: "no_approval"; approvals: "off" | "not_covered" };

/** A request for a change of some kind (src/changes/kinds), moving through the states above. */
export interface ApprovalRequest {
  id: string;
  kind: string;
  teamId: string;
  channelId: string;
  requesterId: string;
  /** The kind's parameters (JSON), checked by the kind when read. */
  params: unknown;
  /** The value the request saw when it was made (JSON; null when unknown or none). */
  observed: unknown;
  state: ApprovalState;
  decidedBy: string | null;
  decidedAt: number | null;
  expiresAt: number;
  messageChannel: string | null;
  messageTs: string | null;
  attempts: number;
  lastError: ApprovalError | null;
  /** When the last attempt failed (the Retry window counts from here). */
  failedAt: number | null;
  /** Distinct approvers needed (fixed when the request was made). */
  approvalsNeeded: number;
  /** Who approved so far, in order. */
  approvedBy: string[];
  /** A temporary change is undone this long after it was applied (null: permanent). */
  undoAfterMs: number | null;
  /** When an applied temporary change will be undone. */
  undoAt: number | null;
  /** The change itself (kind, parameters, duration) where only one request for it may wait; else null. */
  twinKey: string | null;
  /** What its apply replaced, which its undo puts back; null until applied (then `observed` stands). */
  replaced?: { value: unknown } | null;
  note?: ChangeNote | null;
  /** Who undid it: a user id, or "system" (edgeops at the end of its period). */
  undoneBy?: string | null;
  reason?: DecisionReason | null;
  createdAt: number;
  updatedAt: number;
}

export interface NewApprovalRequest {
  /** Generated (22 url-safe characters) when absent. */
  id?: string;
  kind: string;
  teamId: string;
  channelId: string;
  requesterId: string;
  params: unknown;
  observed?: unknown;
  expiresAt: number;
  /** Default 1. */
  approvalsNeeded?: number;
  /** Temporary: undo this long after applying. */
  undoAfterMs?: number | null;
  /** While this request is pending, another with the same key in the workspace fails (StoreError). */
  twinKey?: string | null;
  note?: ChangeNote | null;
}

export interface ApprovalPatch {
  decidedBy?: string | null;
  decidedAt?: number | null;
  lastError?: ApprovalError | null;
  failedAt?: number | null;
  /** Add one to the attempt count in the same statement. */
  incrementAttempts?: boolean;
  expiresAt?: number;
  approvedBy?: string[];
  undoAt?: number | null;
  /** Release the twin key: an expired request the sweeper has not moved yet gives way to a new one. */
  twinKey?: null;
  replaced?: { value: unknown } | null;
  note?: ChangeNote | null;
  undoneBy?: string | null;
  reason?: DecisionReason | null;
}

export interface TransitionGuard {
  /** Only while expires_at > this instant (approval: an expired request can't be approved). */
  notExpiredAt?: number;
  /** Only while the approvers so far are exactly these (one more approval at a time). */
  approvedBy?: string[];
  /** Only when an undo is due by this instant (undo_at <= it). */
  undoDueBy?: number;
  /** Only when no apply or undo holds the request's lease at this instant (the reconciler's takeover). */
  leaseEndedBy?: number;
}

/** Which pending requests to list: every filter given must match. */
export interface PendingQuery {
  /** Only requests made in these channels (none: an empty list). */
  channelIds?: readonly string[];
  kind?: string;
  twinKey?: string;
  limit?: number;
  newestFirst?: boolean;
}

/** The most pending requests one read returns. */
export const MAX_PENDING_LISTED = 1000;

export interface ApprovalsRepo {
  create(request: NewApprovalRequest): Promise<ApprovalRequest>;
  get(id: string): Promise<ApprovalRequest | undefined>;
  /**
   * Compare-and-set: one `UPDATE ... WHERE id = ? AND state IN (from) [AND expires_at > ?] RETURNING *`.
   * Resolves to the updated request for the single winner, undefined for everyone who lost (or when the
   * id is unknown).
   */
  transition(
    id: string,
    from: ApprovalState | readonly ApprovalState[],
    to: ApprovalState,
    patch?: ApprovalPatch,
    guard?: TransitionGuard,
  ): Promise<ApprovalRequest | undefined>;
  /** Change fields of a request while it is still in `state` (no state change); undefined when it moved on. */
  annotate(
    id: string,
    state: ApprovalState,
    patch: ApprovalPatch,
    guard?: TransitionGuard,
  ): Promise<ApprovalRequest | undefined>;
  /** Where the approval card was posted. */
  setMessage(id: string, channel: string, ts: string): Promise<boolean>;
  /** A workspace's pending requests, oldest first (newest first when asked), at most `limit` (1000). */
  listPending(teamId: string, query?: PendingQuery): Promise<ApprovalRequest[]>;
  /** How many pending requests match (the same filters; no limit). */
  countPending(teamId: string, query?: Omit<PendingQuery, "limit" | "newestFirst">): Promise<number>;
  /** Pending requests with expires_at <= now, oldest first; only the scope's workspaces when it names some. */
  listExpiredPending(now: number, limit?: number, scope?: WorkScope): Promise<ApprovalRequest[]>;
  /**
   * Requests in `state` (default approved) last updated at or before `before` whose in-flight lease (if
   * any) has ended, oldest first: applies (or undos) that never finished. Only the scope's workspaces
   * when it names some.
   */
  /** An apply or undo in flight takes the request's lease (while it is still in `state`); false: it moved on. */
  takeLease(id: string, state: ApprovalState, until: number): Promise<boolean>;
  /** Extend the lease from `from` to `to` while the request is still in `state`; false when lost. */
  renewLease(id: string, state: ApprovalState, from: number, to: number): Promise<boolean>;
  /** The work in flight is over: the lease it last held ends now. */
  endLease(id: string, until: number): Promise<void>;
  listStaleApproved(
    before: number,
    limit?: number,
    scope?: WorkScope,
    state?: ApprovalState,
  ): Promise<ApprovalRequest[]>;
  /** Applied temporary changes whose undo is due (undo_at <= now), oldest first; in the scope. */
  listDueUndo(now: number, limit?: number, scope?: WorkScope): Promise<ApprovalRequest[]>;
  countByState(teamId?: string): Promise<Record<ApprovalState, number>>;
  /** Record `requestId` as the request that set the target last (replacing any earlier one). */
  setTargetOwner(teamId: string, targetKey: string, requestId: string): Promise<void>;
  /** The request that set the target last (if edgeops set it) and when it did. */
  targetOwner(teamId: string, targetKey: string): Promise<{ requestId: string; since: number } | undefined>;
}

export function newId(): string {
  return randomBytes(16).toString("base64url");
}

const parseJson = (v: string | null): unknown => (v === null ? null : JSON.parse(v));

export function toRequest(r: ApprovalRequestsTable): ApprovalRequest {
  // Rows written before change kinds existed carry a bot-category change in their own columns.
  const params =
    r.params === null
      ? {
          shieldZoneId: Number(r.shield_zone_id),
          category: Number(r.category),
          action: Number(r.requested_action),
        }
      : parseJson(r.params);
  const observed =
    r.params === null
      ? r.previous_action === null
        ? null
        : Number(r.previous_action)
      : parseJson(r.observed);
  return {
    id: r.id,
    kind: r.kind ?? "bot_category",
    teamId: r.team_id,
    channelId: r.channel_id,
    requesterId: r.requester_id,
    params,
    observed,
    state: r.state as ApprovalState,
    decidedBy: r.decided_by,
    decidedAt: r.decided_at === null ? null : Number(r.decided_at),
    expiresAt: Number(r.expires_at),
    messageChannel: r.message_channel,
    messageTs: r.message_ts,
    attempts: Number(r.attempts),
    lastError: r.last_error === null ? null : (JSON.parse(r.last_error) as ApprovalError),
    failedAt: r.failed_at === null || r.failed_at === undefined ? null : Number(r.failed_at),
    approvalsNeeded: Number(r.approvals_needed ?? 1),
    approvedBy: JSON.parse(r.approved_by ?? "[]") as string[],
    undoAfterMs: r.undo_after_ms === null || r.undo_after_ms === undefined ? null : Number(r.undo_after_ms),
    undoAt: r.undo_at === null || r.undo_at === undefined ? null : Number(r.undo_at),
    twinKey: r.twin_key ?? null,
    replaced: r.replaced ? (JSON.parse(r.replaced) as { value: unknown }) : null,
    note: r.note ? (JSON.parse(r.note) as ChangeNote) : null,
    undoneBy: r.undone_by ?? null,
    reason: r.reason ? (JSON.parse(r.reason) as DecisionReason) : null,
    createdAt: Number(r.created_at),
    updatedAt: Number(r.updated_at),
  };
}

/**
 * The bot-category columns of migration 1 are still written for bot-category requests, so a replica of
 * the previous version can read them during a rolling deploy; other kinds leave them at 0.
 */
function legacyColumns(req: NewApprovalRequest) {
  const p = (req.kind === "bot_category" ? req.params : {}) as Record<string, unknown>;
  const int = (v: unknown) => (typeof v === "number" && Number.isInteger(v) ? v : 0);
  return {
    shield_zone_id: int(p.shieldZoneId),
    category: int(p.category),
    requested_action: int(p.action),
    previous_action: req.kind === "bot_category" && typeof req.observed === "number" ? req.observed : null,
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

  const patchColumns = (eb: ExpressionBuilder<Database, "approval_requests">, patch: ApprovalPatch) => ({
    updated_at: now(),
    ...(patch.decidedBy !== undefined ? { decided_by: patch.decidedBy } : {}),
    ...(patch.decidedAt !== undefined ? { decided_at: patch.decidedAt } : {}),
    ...(patch.expiresAt !== undefined ? { expires_at: patch.expiresAt } : {}),
    ...(patch.failedAt !== undefined ? { failed_at: patch.failedAt } : {}),
    ...(patch.approvedBy !== undefined ? { approved_by: JSON.stringify(patch.approvedBy) } : {}),
    ...(patch.undoAt !== undefined ? { undo_at: patch.undoAt } : {}),
    ...(patch.twinKey !== undefined ? { twin_key: patch.twinKey } : {}),
    ...(patch.replaced !== undefined
      ? { replaced: patch.replaced === null ? null : JSON.stringify(patch.replaced) }
      : {}),
    ...(patch.note !== undefined ? { note: patch.note === null ? null : JSON.stringify(patch.note) } : {}),
    ...(patch.undoneBy !== undefined ? { undone_by: patch.undoneBy } : {}),
    ...(patch.reason !== undefined
      ? { reason: patch.reason === null ? null : JSON.stringify(patch.reason) }
      : {}),
    ...(patch.lastError !== undefined
      ? { last_error: patch.lastError === null ? null : JSON.stringify(patch.lastError) }
      : {}),
    ...(patch.incrementAttempts ? { attempts: eb("attempts", "+", 1) } : {}),
  });

  const pendingWhere = (teamId: string, q: PendingQuery) => {
    let sel = db.selectFrom("approval_requests").where("team_id", "=", teamId).where("state", "=", "pending");
    if (q.channelIds) sel = sel.where("channel_id", "in", [...q.channelIds]);
    if (q.kind !== undefined) sel = sel.where("kind", "=", q.kind);
    if (q.twinKey !== undefined) sel = sel.where("twin_key", "=", q.twinKey);
    return sel;
  };

  return guard("approvals", {
    async create(req: NewApprovalRequest): Promise<ApprovalRequest> {
      if (!req.teamId || !req.channelId || !req.requesterId)
        throw invalid("teamId, channelId and requesterId are required");
      if (!req.kind || !/^[a-z_]{1,40}$/.test(req.kind)) throw invalid("kind must be a change kind's name");
      if (req.params === undefined) throw invalid("params are required");
      checkInt("expiresAt", req.expiresAt, 0, Number.MAX_SAFE_INTEGER);
      if (req.approvalsNeeded !== undefined) checkInt("approvalsNeeded", req.approvalsNeeded, 1, 10);
      const at = now();
      const row: ApprovalRequestsTable = {
        id: req.id ?? newId(),
        team_id: req.teamId,
        channel_id: req.channelId,
        requester_id: req.requesterId,
        ...legacyColumns(req),
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
        kind: req.kind,
        params: JSON.stringify(req.params),
        observed: req.observed === undefined ? null : JSON.stringify(req.observed),
        failed_at: null,
        approvals_needed: req.approvalsNeeded ?? 1,
        approved_by: "[]",
        undo_after_ms: req.undoAfterMs ?? null,
        undo_at: null,
        twin_key: req.twinKey ?? null,
        replaced: null,
        note: req.note ? JSON.stringify(req.note) : null,
        lease_until: null,
        undone_by: null,
        reason: null,
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
      guard: TransitionGuard = {},
    ): Promise<ApprovalRequest | undefined> {
      const froms = typeof from === "string" ? [from] : [...from];
      if (froms.length === 0) throw invalid("transition needs at least one state to move from");
      for (const f of froms) {
        if (!APPROVAL_TRANSITIONS[f]?.includes(to))
          throw invalid(`An approval request cannot go from ${f} to ${to}`);
      }
      let q = db
        .updateTable("approval_requests")
        .set((eb) => ({ state: to, ...patchColumns(eb, patch) }))
        .where("id", "=", id)
        .where("state", "in", froms);
      if (guard.notExpiredAt !== undefined) q = q.where("expires_at", ">", guard.notExpiredAt);
      if (guard.approvedBy !== undefined) q = q.where("approved_by", "=", JSON.stringify(guard.approvedBy));
      if (guard.undoDueBy !== undefined) q = q.where("undo_at", "<=", guard.undoDueBy);
      const endedBy = guard.leaseEndedBy;
      if (endedBy !== undefined)
        q = q.where((eb) => eb.or([eb("lease_until", "is", null), eb("lease_until", "<=", endedBy)]));
      const r = await q.returningAll().executeTakeFirst();
      return r ? toRequest(r) : undefined;
    },

    async annotate(id: string, state: ApprovalState, patch: ApprovalPatch, guard: TransitionGuard = {}) {
      let q = db
        .updateTable("approval_requests")
        .set((eb) => patchColumns(eb, patch))
        .where("id", "=", id)
        .where("state", "=", state);
      if (guard.notExpiredAt !== undefined) q = q.where("expires_at", ">", guard.notExpiredAt);
      if (guard.approvedBy !== undefined) q = q.where("approved_by", "=", JSON.stringify(guard.approvedBy));
      const r = await q.returningAll().executeTakeFirst();
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

    async listPending(teamId: string, query: PendingQuery = {}): Promise<ApprovalRequest[]> {
      if (query.channelIds?.length === 0) return [];
      const order = query.newestFirst ? "desc" : "asc";
      const rows = await pendingWhere(teamId, query)
        .selectAll()
        .orderBy("created_at", order)
        .orderBy("id", order)
        .limit(Math.max(0, Math.min(query.limit ?? MAX_PENDING_LISTED, MAX_PENDING_LISTED)))
        .execute();
      return rows.map(toRequest);
    },

    async countPending(teamId: string, query: PendingQuery = {}): Promise<number> {
      if (query.channelIds?.length === 0) return 0;
      const row = await pendingWhere(teamId, query).select(sql<number>`count(*)`.as("n")).executeTakeFirst();
      return Number(row?.n ?? 0);
    },

    async listExpiredPending(at: number, limit = 100, scope: WorkScope = {}): Promise<ApprovalRequest[]> {
      const { teamIds } = scope;
      if (teamIds?.length === 0) return [];
      let q = db
        .selectFrom("approval_requests")
        .selectAll()
        .where("state", "=", "pending")
        .where("expires_at", "<=", at);
      if (teamIds) q = q.where("team_id", "in", teamIds);
      const rows = await q.orderBy("expires_at").orderBy("id").limit(limit).execute();
      return rows.map(toRequest);
    },

    async listDueUndo(at: number, limit = 100, scope: WorkScope = {}): Promise<ApprovalRequest[]> {
      const { teamIds } = scope;
      if (teamIds?.length === 0) return [];
      let q = db
        .selectFrom("approval_requests")
        .selectAll()
        .where("state", "=", "applied")
        .where("undo_at", "<=", at);
      if (teamIds) q = q.where("team_id", "in", teamIds);
      const rows = await q.orderBy("undo_at").orderBy("id").limit(limit).execute();
      return rows.map(toRequest);
    },

    async listStaleApproved(
      before: number,
      limit = 100,
      scope: WorkScope = {},
      state: ApprovalState = "approved",
    ): Promise<ApprovalRequest[]> {
      const { teamIds } = scope;
      if (teamIds?.length === 0) return [];
      let q = db
        .selectFrom("approval_requests")
        .selectAll()
        .where("state", "=", state)
        .where("updated_at", "<=", before)
        .where((eb) => eb.or([eb("lease_until", "is", null), eb("lease_until", "<=", now())]));
      if (teamIds) q = q.where("team_id", "in", teamIds);
      const rows = await q.orderBy("updated_at").orderBy("id").limit(limit).execute();
      return rows.map(toRequest);
    },

    async takeLease(id: string, state: ApprovalState, until: number): Promise<boolean> {
      const r = await db
        .updateTable("approval_requests")
        .set({ lease_until: until })
        .where("id", "=", id)
        .where("state", "=", state)
        .executeTakeFirst();
      return Number(r.numUpdatedRows) > 0;
    },

    async renewLease(id: string, state: ApprovalState, from: number, to: number): Promise<boolean> {
      const r = await db
        .updateTable("approval_requests")
        .set({ lease_until: to })
        .where("id", "=", id)
        .where("state", "=", state)
        .where("lease_until", "=", from)
        .executeTakeFirst();
      return Number(r.numUpdatedRows) > 0;
    },

    async endLease(id: string, until: number): Promise<void> {
      await db
        .updateTable("approval_requests")
        .set({ lease_until: null })
        .where("id", "=", id)
        .where("lease_until", "=", until)
        .execute();
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

    async setTargetOwner(teamId: string, targetKey: string, requestId: string): Promise<void> {
      await db
        .insertInto("change_targets")
        .values({ team_id: teamId, target_key: targetKey, request_id: requestId, updated_at: now() })
        .onConflict((oc) =>
          oc.columns(["team_id", "target_key"]).doUpdateSet({ request_id: requestId, updated_at: now() }),
        )
        .execute();
    },

    async targetOwner(teamId: string, targetKey: string) {
      const r = await db
        .selectFrom("change_targets")
        .select(["request_id", "updated_at"])
        .where("team_id", "=", teamId)
        .where("target_key", "=", targetKey)
        .executeTakeFirst();
      return r ? { requestId: r.request_id, since: Number(r.updated_at) } : undefined;
    },
  });
}
