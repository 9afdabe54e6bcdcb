import {
  type Expression,
  type ExpressionBuilder,
  type Kysely,
  type QueryCreator,
  type Selectable,
  type SqlBool,
  sql,
  type Updateable,
} from "kysely";
import { CHANGE_STATES, CHANGE_TRANSITIONS, type ChangeState } from "../changes/state-machine.js";
import { compiledOnce, compiledPerShape } from "./compiled.js";
import { newId, parseJson, type RepoContext, readRow, updatedOne, type WorkScope } from "./context.js";
import type { ChangeRequestsTable, Database } from "./db.js";
import { guard, StoreError } from "./errors.js";
import { moveLease, takeLease } from "./lease.js";

export { CHANGE_STATES, CHANGE_TRANSITIONS, type ChangeState } from "../changes/state-machine.js";

export interface ChangeError {
  kind: string;
  status?: number;
  errorKey?: string;
  message: string;
  /** The sweeper's failed reads of the current value so far (it backs off, then gives up). */
  tries?: number;
  /** With other_settings_moved: those settings, as the target names them (a shield zone's field names). */
  moved?: string[];
}

/** Another request for the same target, as a card names it. */
export interface OtherRequest {
  id: string;
  userId: string;
  channelId: string;
  /** Its change, described by its kind (plain text). */
  change: string;
  /** Temporary: undone this long after it is applied. */
  temporaryMs?: number;
  /** It asks for the same value as the request whose note names it (for good where that one is temporary, or the other way). */
  sameValue?: boolean;
}

/** What a card says about other requests for the same target (the target's last writer, conflicts). */
export type ChangeNote =
  /** Waiting while other requests for the same target wait too: with another value, or the same one asked apart. */
  | { kind: "conflicts"; with: OtherRequest[] }
  /** A later request for the value this temporary change set took it over: no undo (until: its own). */
  | { kind: "kept"; by: OtherRequest; until: number | null }
  /** A later request set the target to another value: refused at apply, or its undo cancelled. */
  | { kind: "superseded"; by: OtherRequest }
  /**
   * A temporary change whose apply found its value already set for good (by `by`, or outside edgeops
   * when null): not applied, as its undo would put back the same value and call it undone.
   */
  | { kind: "already_set"; setting: string; value: string; by: OtherRequest | null };

/** Why a request was decided as it was, where the card says so. */
export type DecisionReason =
  /** Rejected by an approver, with the reason typed (may be empty). */
  | { kind: "rejected"; text: string }
  /** Withdrawn by its requester while it waited. */
  | { kind: "withdrawn" }
  /** Applied at once: the channel's policy asks no approval ("off") or not for this kind of change. */
  | { kind: "no_approval"; approvals: "off" | "not_covered" };

/**
 * An AI agent proposed the change for its requester (through the MCP server, src/mcp): the agent's name,
 * its token's id (never the token) and the reason it gave. Its card says so, and it always waits for a
 * person to press a button, even where approvals are off.
 */
export interface ProposedBy {
  agent: string;
  agentId: string;
  reason: string;
  /**
   * The channel's policy asks no approval for this change: it still waits, for one press by a person (its
   * requester, whose agent proposed it, or an approver) instead of applying at once.
   */
  onePress?: boolean;
}

/** The columns of migration 1 that only old bot-category rows are read from (toRequest). */
type LegacyColumns = "shieldZoneId" | "category" | "requestedAction" | "previousAction";

/**
 * A request for a change of some kind (src/changes/kinds), moving through the states above: its row
 * (db.ts) with the JSON columns read, without the legacy columns and the in-flight lease.
 */
export interface ChangeRequest
  extends Omit<
    Selectable<ChangeRequestsTable>,
    | LegacyColumns
    | "leaseUntil"
    | "params"
    | "observed"
    | "state"
    | "lastError"
    | "approvedBy"
    | "replaced"
    | "note"
    | "undoneBy"
    | "reason"
    | "proposedBy"
  > {
  /** The kind's parameters (JSON), checked by the kind when read. */
  params: unknown;
  /** The value the request saw when it was made (JSON; null when unknown or none). */
  observed: unknown;
  state: ChangeState;
  lastError: ChangeError | null;
  /** Who approved so far, in order. */
  approvedBy: string[];
  /** What its apply replaced, which its undo puts back; null until applied (then `observed` stands). */
  replaced?: { value: unknown } | null;
  note?: ChangeNote | null;
  /** Who undid it: a user id, or "system" (edgeops at the end of its period). */
  undoneBy?: string | null;
  reason?: DecisionReason | null;
  proposedBy?: ProposedBy | null;
}

export interface NewChangeRequest {
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
  proposedBy?: ProposedBy | null;
}

export interface ChangePatch {
  decidedBy?: string | null;
  decidedAt?: number | null;
  lastError?: ChangeError | null;
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
  /**
   * The in-flight lease (src/changes/in-flight.ts), set with the move: null ends it (the move out of the
   * state the lease holds needs it no more).
   */
  leaseUntil?: number | null;
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
  /** Only while its undo time is exactly this (null: none), as read before (Make permanent, Extend). */
  undoAtIs?: number | null;
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

export interface ChangeRequestsRepo {
  create(request: NewChangeRequest): Promise<ChangeRequest>;
  get(id: string): Promise<ChangeRequest | undefined>;
  /**
   * Compare-and-set: one `UPDATE ... WHERE id = ? AND state IN (from) [AND expires_at > ?] RETURNING *`.
   * Resolves to the updated request for the single winner, undefined for everyone who lost (or when the
   * id is unknown).
   */
  transition(
    id: string,
    from: ChangeState | readonly ChangeState[],
    to: ChangeState,
    patch?: ChangePatch,
    guard?: TransitionGuard,
  ): Promise<ChangeRequest | undefined>;
  /**
   * The move to applied and the target's owner record, in one transaction: `transition` to applied; when it
   * wins, the request becomes the target's last writer, and the temporary change it takes over (`takeOver`,
   * while still applied) gets its patch (its undo cancelled). Both happen or neither.
   */
  transitionToOwner(
    id: string,
    from: ChangeState | readonly ChangeState[],
    patch: ChangePatch,
    guard: TransitionGuard,
    own: { teamId: string; targetKey: string; takeOver?: { id: string; patch: ChangePatch } },
  ): Promise<{ moved?: ChangeRequest; takenOver?: ChangeRequest }>;
  /** Change fields of a request while it is still in `state` (no state change); undefined when it moved on. */
  annotate(
    id: string,
    state: ChangeState,
    patch: ChangePatch,
    guard?: TransitionGuard,
  ): Promise<ChangeRequest | undefined>;
  /** Where the approval card was posted. */
  setMessage(id: string, channel: string, ts: string): Promise<boolean>;
  /** A workspace's pending requests, oldest first (newest first when asked), at most `limit` (1000). */
  listPending(teamId: string, query?: PendingQuery): Promise<ChangeRequest[]>;
  /** How many pending requests match (the same filters; no limit). */
  countPending(teamId: string, query?: Omit<PendingQuery, "limit" | "newestFirst">): Promise<number>;
  /** Pending requests with expires_at <= now, oldest first; only the scope's workspaces when it names some. */
  listExpiredPending(now: number, limit?: number, scope?: WorkScope): Promise<ChangeRequest[]>;
  /**
   * Requests in `state` (default approved) last updated at or before `before` whose in-flight lease (if
   * any) has ended, oldest first: applies (or undos) that never finished. Only the scope's workspaces
   * when it names some.
   */
  /** An apply or undo in flight takes the request's lease (while it is still in `state`); false: it moved on. */
  takeLease(id: string, state: ChangeState, until: number): Promise<boolean>;
  /** Extend the lease from `from` to `to` while the request is still in `state`; false when lost. */
  renewLease(id: string, state: ChangeState, from: number, to: number): Promise<boolean>;
  /** The work in flight is over: the lease it last held ends now. */
  endLease(id: string, until: number): Promise<void>;
  listStaleApproved(
    before: number,
    limit?: number,
    scope?: WorkScope,
    state?: ChangeState,
  ): Promise<ChangeRequest[]>;
  /** Applied temporary changes whose undo is due (undo_at <= now), oldest first; in the scope. */
  listDueUndo(now: number, limit?: number, scope?: WorkScope): Promise<ChangeRequest[]>;
  /** Applied temporary changes whose undo comes after `after` and by `by` (after < undo_at <= by), soonest first; in the scope. */
  listUndoSoon(after: number, by: number, limit?: number, scope?: WorkScope): Promise<ChangeRequest[]>;
  countByState(teamId?: string): Promise<Record<ChangeState, number>>;
  /** Record `requestId` as the request that set the target last (replacing any earlier one). */
  setTargetOwner(teamId: string, targetKey: string, requestId: string): Promise<void>;
  /** The request that set the target last (if edgeops set it) and when it did. */
  targetOwner(teamId: string, targetKey: string): Promise<{ requestId: string; since: number } | undefined>;
}

/**
 * A stored request as the domain reads it: the row's own fields, its JSON columns parsed. Rows written
 * before change kinds existed (params null) carry a bot-category change in the columns of migration 1.
 */
export function toRequest(row: Selectable<ChangeRequestsTable>): ChangeRequest {
  const legacy = row.params === null;
  const { shieldZoneId, category, requestedAction, previousAction } = row;
  return readRow(
    row,
    {
      params: legacy ? { shieldZoneId, category, action: requestedAction } : parseJson(row.params),
      observed: legacy ? previousAction : parseJson(row.observed),
      state: row.state as ChangeState,
      lastError: parseJson<ChangeError>(row.lastError),
      approvedBy: JSON.parse(row.approvedBy) as string[],
      replaced: parseJson<{ value: unknown }>(row.replaced),
      note: parseJson<ChangeNote>(row.note),
      reason: parseJson<DecisionReason>(row.reason),
      proposedBy: parseJson<ProposedBy>(row.proposedBy),
    },
    ["shieldZoneId", "category", "requestedAction", "previousAction", "leaseUntil"],
  );
}

/**
 * The bot-category columns of migration 1 are still written for bot-category requests, so a replica of
 * the previous version can read them during a rolling deploy; other kinds leave them at 0.
 */
function legacyColumns(req: NewChangeRequest) {
  const p = (req.kind === "bot_category" ? req.params : {}) as Record<string, unknown>;
  const int = (v: unknown) => (typeof v === "number" && Number.isInteger(v) ? v : 0);
  return {
    shieldZoneId: int(p.shieldZoneId),
    category: int(p.category),
    requestedAction: int(p.action),
    previousAction: req.kind === "bot_category" && typeof req.observed === "number" ? req.observed : null,
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

/** The columns a patch writes besides `attempts` (patchEntries). */
type PatchedColumn = (keyof ChangeRequestsTable & keyof ChangePatch) | "updatedAt";

type GuardCondition = keyof TransitionGuard | "undoAtIsNull";

export function createChangeRequestsRepo(ctx: RepoContext): ChangeRequestsRepo {
  const { db, now } = ctx;

  /**
   * The columns a patch writes besides the state, in one order, each with its value (`attempts` is
   * written as itself plus one, no value): a transition's or an annotation's shape is these names.
   */
  const patchEntries = (patch: ChangePatch): [column: PatchedColumn, value: unknown][] => {
    const json = (v: unknown) => (v === null ? null : JSON.stringify(v));
    const entries: [PatchedColumn, unknown][] = [["updatedAt", now()]];
    if (patch.decidedBy !== undefined) entries.push(["decidedBy", patch.decidedBy]);
    if (patch.decidedAt !== undefined) entries.push(["decidedAt", patch.decidedAt]);
    if (patch.expiresAt !== undefined) entries.push(["expiresAt", patch.expiresAt]);
    if (patch.failedAt !== undefined) entries.push(["failedAt", patch.failedAt]);
    if (patch.approvedBy !== undefined) entries.push(["approvedBy", JSON.stringify(patch.approvedBy)]);
    if (patch.undoAt !== undefined) entries.push(["undoAt", patch.undoAt]);
    if (patch.twinKey !== undefined) entries.push(["twinKey", patch.twinKey]);
    if (patch.replaced !== undefined) entries.push(["replaced", json(patch.replaced)]);
    if (patch.note !== undefined) entries.push(["note", json(patch.note)]);
    if (patch.undoneBy !== undefined) entries.push(["undoneBy", patch.undoneBy]);
    if (patch.reason !== undefined) entries.push(["reason", json(patch.reason)]);
    if (patch.lastError !== undefined) entries.push(["lastError", json(patch.lastError)]);
    if (patch.leaseUntil !== undefined) entries.push(["leaseUntil", patch.leaseUntil]);
    return entries;
  };

  const pendingWhere = (teamId: string, q: PendingQuery) => {
    let sel = db.selectFrom("approval_requests").where("teamId", "=", teamId).where("state", "=", "pending");
    if (q.channelIds) sel = sel.where("channelId", "in", [...q.channelIds]);
    if (q.kind !== undefined) sel = sel.where("kind", "=", q.kind);
    if (q.twinKey !== undefined) sel = sel.where("twinKey", "=", q.twinKey);
    return sel;
  };

  /** No apply or undo holds the request's lease at this instant. */
  const leaseEndedBy = (at: number) => (eb: ExpressionBuilder<Database, "approval_requests">) =>
    eb.or([eb("leaseUntil", "is", null), eb("leaseUntil", "<=", at)]);

  /**
   * The sweeper's reads: requests in `state` whose `column` is at or before `by` (and, when given, whose
   * lease ended by `leaseEnded`), that column's oldest first, at most `limit`, in the scope.
   */
  const listDue = async (
    state: ChangeState,
    column: "expiresAt" | "undoAt" | "updatedAt",
    by: number,
    limit: number,
    { teamIds }: WorkScope,
    leaseEnded?: number,
  ): Promise<ChangeRequest[]> => {
    if (teamIds?.length === 0) return [];
    let q = db.selectFrom("approval_requests").selectAll().where("state", "=", state).where(column, "<=", by);
    if (leaseEnded !== undefined) q = q.where(leaseEndedBy(leaseEnded));
    if (teamIds) q = q.where("teamId", "in", teamIds);
    const rows = await q.orderBy(column).orderBy("id").limit(limit).execute();
    return rows.map(toRequest);
  };

  /**
   * A transition's or an annotation's guard as conditions, each with the values it compares (every one
   * given must hold; none: always). `undoAtIs` null is a condition without a value.
   */
  const guardEntries = (guard: TransitionGuard): [condition: GuardCondition, values: unknown[]][] => {
    const all: [GuardCondition, unknown[]][] = [];
    if (guard.notExpiredAt !== undefined) all.push(["notExpiredAt", [guard.notExpiredAt]]);
    if (guard.approvedBy !== undefined) all.push(["approvedBy", [JSON.stringify(guard.approvedBy)]]);
    if (guard.undoDueBy !== undefined) all.push(["undoDueBy", [guard.undoDueBy]]);
    if (guard.leaseEndedBy !== undefined) all.push(["leaseEndedBy", [guard.leaseEndedBy]]);
    if (guard.undoAtIs !== undefined)
      all.push(guard.undoAtIs === null ? ["undoAtIsNull", []] : ["undoAtIs", [guard.undoAtIs]]);
    return all;
  };

  const guardCondition = (
    eb: ExpressionBuilder<Database, "approval_requests">,
    condition: GuardCondition,
    value: () => unknown,
  ): Expression<SqlBool> => {
    switch (condition) {
      case "notExpiredAt":
        return eb("expiresAt", ">", value() as number);
      case "approvedBy":
        return eb("approvedBy", "=", value() as string);
      case "undoDueBy":
        return eb("undoAt", "<=", value() as number);
      case "leaseEndedBy":
        return leaseEndedBy(value() as number)(eb);
      case "undoAtIsNull":
        return eb("undoAt", "is", null);
      case "undoAtIs":
        return eb("undoAt", "=", value() as number);
    }
  };

  const updateRequest = compiledPerShape<Selectable<ChangeRequestsTable>>(db);

  /** A compare-and-set's patch, guard, shape (its name for compiledPerShape) and values in order. */
  const casOf = (
    id: string,
    froms: readonly ChangeState[],
    to: ChangeState | undefined,
    patch: ChangePatch,
    guard: TransitionGuard,
  ) => {
    const columns = patchEntries(patch);
    const conditions = guardEntries(guard);
    const shape = `${froms.join(",")}>${to ?? ""}|${columns.map(([c]) => c).join(",")}${
      patch.incrementAttempts ? ",attempts+1" : ""
    }|${conditions.map(([c]) => c).join(",")}`;
    const values = [...columns.map(([, v]) => v), id, ...conditions.flatMap(([, v]) => v)];
    return { columns, conditions, shape, values };
  };

  /** The compare-and-set's UPDATE … RETURNING *, taking its values from `value` in casOf's order. */
  const casStatement = (
    root: QueryCreator<Database>,
    froms: readonly ChangeState[],
    to: ChangeState | undefined,
    patch: ChangePatch,
    cas: ReturnType<typeof casOf>,
    value: () => unknown,
  ) =>
    root
      .updateTable("approval_requests")
      .set((eb) => {
        const set: Record<string, unknown> = to === undefined ? {} : { state: to };
        for (const [column] of cas.columns) set[column] = value();
        if (patch.incrementAttempts) set.attempts = eb("attempts", "+", 1);
        return set as Updateable<ChangeRequestsTable>;
      })
      .where("id", "=", value() as string)
      .where("state", "in", froms)
      .where((eb) => eb.and(cas.conditions.map(([c]) => guardCondition(eb, c, value))))
      .returningAll();

  /**
   * The compare-and-set of a request (a transition to `to`, or an annotation while in `froms` when `to`
   * is undefined), on the store or inside a transaction; compiled once per shape.
   */
  const updateOn = async (
    on: Kysely<Database>,
    id: string,
    froms: readonly ChangeState[],
    to: ChangeState | undefined,
    patch: ChangePatch,
    guard: TransitionGuard,
  ): Promise<ChangeRequest | undefined> => {
    const cas = casOf(id, froms, to, patch, guard);
    const { rows } = await updateRequest(on, cas.shape, cas.values, (root, slots) => {
      let next = 0;
      return casStatement(root, froms, to, patch, cas, () => slots[next++]);
    });
    const r = rows[0];
    return r ? toRequest(r) : undefined;
  };

  const moveToOwner = compiledPerShape<Selectable<ChangeRequestsTable>>(db);

  /**
   * transitionToOwner without a request to take over, on PostgreSQL: the move and the owner's row in one
   * statement (the owner's insert reads the moved row, so it happens only for the winner, and both or
   * neither do, as in the transaction), one round trip where begin, two statements and commit took four.
   */
  const moveToOwnerInOne = async (
    id: string,
    froms: readonly ChangeState[],
    patch: ChangePatch,
    guard: TransitionGuard,
    own: { teamId: string; targetKey: string },
  ): Promise<ChangeRequest | undefined> => {
    const cas = casOf(id, froms, "applied", patch, guard);
    const values = [...cas.values, own.teamId, own.targetKey];
    const { rows } = await moveToOwner(db, cas.shape, values, (root, slots) => {
      let next = 0;
      const value = () => slots[next++];
      return root
        .with("moved", (qc) => casStatement(qc, froms, "applied", patch, cas, value))
        .with("owner", (qc) =>
          qc
            .insertInto("change_targets")
            .columns(["teamId", "targetKey", "requestId", "updatedAt"])
            .expression((eb) =>
              eb
                .selectFrom("moved")
                .select([
                  sql<string>`cast(${value()} as text)`.as("teamId"),
                  sql<string>`cast(${value()} as text)`.as("targetKey"),
                  "moved.id",
                  "moved.updatedAt",
                ]),
            )
            .onConflict((oc) =>
              oc.columns(["teamId", "targetKey"]).doUpdateSet((eb) => ({
                requestId: eb.ref("excluded.requestId"),
                updatedAt: eb.ref("excluded.updatedAt"),
              })),
            ),
        )
        .selectFrom("moved")
        .selectAll();
    });
    const r = rows[0];
    return r ? toRequest(r) : undefined;
  };

  /** The states a transition to `to` may move from, each one checked against the state machine. */
  const checkedFroms = (from: ChangeState | readonly ChangeState[], to: ChangeState): ChangeState[] => {
    const froms = typeof from === "string" ? [from] : [...from];
    if (froms.length === 0) throw invalid("transition needs at least one state to move from");
    for (const f of froms) {
      if (!CHANGE_TRANSITIONS[f]?.includes(to))
        throw invalid(`A change request cannot go from ${f} to ${to}`);
    }
    return froms;
  };

  /** The compare-and-set of a request's state (transition), on the store or inside a transaction. */
  const transitionOn = async (
    on: Kysely<Database>,
    id: string,
    from: ChangeState | readonly ChangeState[],
    to: ChangeState,
    patch: ChangePatch,
    guard: TransitionGuard,
  ): Promise<ChangeRequest | undefined> => {
    return updateOn(on, id, checkedFroms(from, to), to, patch, guard);
  };

  const annotateOn = (
    on: Kysely<Database>,
    id: string,
    state: ChangeState,
    patch: ChangePatch,
    guard: TransitionGuard = {},
  ): Promise<ChangeRequest | undefined> => updateOn(on, id, [state], undefined, patch, guard);

  const selectById = compiledOnce(db, (root, id: string) =>
    root.selectFrom("approval_requests").selectAll().where("id", "=", id),
  );

  const upsertOwner = compiledOnce(
    db,
    (root, teamId: string, targetKey: string, requestId: string, at: number) =>
      root
        .insertInto("change_targets")
        .values({ teamId, targetKey, requestId, updatedAt: at })
        .onConflict((oc) => oc.columns(["teamId", "targetKey"]).doUpdateSet({ requestId, updatedAt: at })),
  );

  const selectOwner = compiledOnce(db, (root, teamId: string, targetKey: string) =>
    root
      .selectFrom("change_targets")
      .select(["requestId", "updatedAt"])
      .where("teamId", "=", teamId)
      .where("targetKey", "=", targetKey),
  );

  const setOwnerOn = async (on: Kysely<Database>, teamId: string, targetKey: string, requestId: string) => {
    await upsertOwner(on, teamId, targetKey, requestId, now());
  };

  return guard("changeRequests", {
    async create(req: NewChangeRequest): Promise<ChangeRequest> {
      if (!req.teamId || !req.channelId || !req.requesterId)
        throw invalid("teamId, channelId and requesterId are required");
      if (!req.kind || !/^[a-z_]{1,40}$/.test(req.kind)) throw invalid("kind must be a change kind's name");
      if (req.params === undefined) throw invalid("params are required");
      checkInt("expiresAt", req.expiresAt, 0, Number.MAX_SAFE_INTEGER);
      if (req.approvalsNeeded !== undefined) checkInt("approvalsNeeded", req.approvalsNeeded, 1, 10);
      const at = now();
      const row: Selectable<ChangeRequestsTable> = {
        id: req.id ?? newId(),
        teamId: req.teamId,
        channelId: req.channelId,
        requesterId: req.requesterId,
        ...legacyColumns(req),
        state: "pending",
        decidedBy: null,
        decidedAt: null,
        expiresAt: req.expiresAt,
        messageChannel: null,
        messageTs: null,
        attempts: 0,
        lastError: null,
        createdAt: at,
        updatedAt: at,
        kind: req.kind,
        params: JSON.stringify(req.params),
        observed: req.observed === undefined ? null : JSON.stringify(req.observed),
        failedAt: null,
        approvalsNeeded: req.approvalsNeeded ?? 1,
        approvedBy: "[]",
        undoAfterMs: req.undoAfterMs ?? null,
        undoAt: null,
        twinKey: req.twinKey ?? null,
        replaced: null,
        note: req.note ? JSON.stringify(req.note) : null,
        leaseUntil: null,
        undoneBy: null,
        reason: null,
        proposedBy: req.proposedBy ? JSON.stringify(req.proposedBy) : null,
      };
      await db.insertInto("approval_requests").values(row).execute();
      return toRequest(row);
    },

    async get(id: string): Promise<ChangeRequest | undefined> {
      const r = (await selectById(db, id)).rows[0];
      return r ? toRequest(r) : undefined;
    },

    transition: (
      id: string,
      from: ChangeState | readonly ChangeState[],
      to: ChangeState,
      patch: ChangePatch = {},
      guard: TransitionGuard = {},
    ) => transitionOn(db, id, from, to, patch, guard),

    transitionToOwner: async (id, from, patch, guard, own) => {
      if (ctx.engine === "postgres" && !own.takeOver) {
        const moved = await moveToOwnerInOne(id, checkedFroms(from, "applied"), patch, guard, own);
        return moved ? { moved } : {};
      }
      return db.transaction().execute(async (trx) => {
        const moved = await transitionOn(trx, id, from, "applied", patch, guard);
        if (!moved) return {};
        await setOwnerOn(trx, own.teamId, own.targetKey, id);
        const takenOver =
          own.takeOver && (await annotateOn(trx, own.takeOver.id, "applied", own.takeOver.patch));
        return takenOver ? { moved, takenOver } : { moved };
      });
    },

    annotate: (id: string, state: ChangeState, patch: ChangePatch, guard: TransitionGuard = {}) =>
      annotateOn(db, id, state, patch, guard),

    async setMessage(id: string, channel: string, ts: string): Promise<boolean> {
      const r = await db
        .updateTable("approval_requests")
        .set({ messageChannel: channel, messageTs: ts, updatedAt: now() })
        .where("id", "=", id)
        .executeTakeFirst();
      return updatedOne(r);
    },

    async listPending(teamId: string, query: PendingQuery = {}): Promise<ChangeRequest[]> {
      if (query.channelIds?.length === 0) return [];
      const order = query.newestFirst ? "desc" : "asc";
      const rows = await pendingWhere(teamId, query)
        .selectAll()
        .orderBy("createdAt", order)
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

    listExpiredPending: (at: number, limit = 100, scope: WorkScope = {}) =>
      listDue("pending", "expiresAt", at, limit, scope),

    listDueUndo: (at: number, limit = 100, scope: WorkScope = {}) =>
      listDue("applied", "undoAt", at, limit, scope),

    async listUndoSoon(after: number, by: number, limit = 100, { teamIds }: WorkScope = {}) {
      if (teamIds?.length === 0) return [];
      let q = db
        .selectFrom("approval_requests")
        .selectAll()
        .where("state", "=", "applied")
        .where("undoAt", ">", after)
        .where("undoAt", "<=", by);
      if (teamIds) q = q.where("teamId", "in", teamIds);
      const rows = await q.orderBy("undoAt").orderBy("id").limit(limit).execute();
      return rows.map(toRequest);
    },

    listStaleApproved: (
      before: number,
      limit = 100,
      scope: WorkScope = {},
      state: ChangeState = "approved",
    ) => listDue(state, "updatedAt", before, limit, scope, now()),

    takeLease: (id: string, state: ChangeState, until: number) =>
      takeLease(db, "approval_requests", { id, state }, until),

    renewLease: (id: string, state: ChangeState, from: number, to: number) =>
      moveLease(db, "approval_requests", { id, state }, from, to),

    async endLease(id: string, until: number): Promise<void> {
      await moveLease(db, "approval_requests", { id }, until, null);
    },

    async countByState(teamId?: string): Promise<Record<ChangeState, number>> {
      let q = db
        .selectFrom("approval_requests")
        .select(["state", sql<number>`count(*)`.as("n")])
        .groupBy("state");
      if (teamId !== undefined) q = q.where("teamId", "=", teamId);
      const rows = await q.execute();
      const out = Object.fromEntries(CHANGE_STATES.map((s) => [s, 0])) as Record<ChangeState, number>;
      for (const r of rows) if (r.state in out) out[r.state as ChangeState] = Number(r.n);
      return out;
    },

    setTargetOwner: (teamId: string, targetKey: string, requestId: string) =>
      setOwnerOn(db, teamId, targetKey, requestId),

    async targetOwner(teamId: string, targetKey: string) {
      const r = (await selectOwner(db, teamId, targetKey)).rows[0];
      return r ? { requestId: r.requestId, since: Number(r.updatedAt) } : undefined;
    },
  });
}
