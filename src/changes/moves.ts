import { withDeadline } from "../deadline.js";
import type { Deps } from "../deps.js";
import { EdgeApiError } from "../edge/errors.js";
import { toUserSentence, UserError } from "../errors.js";
import { inSpan } from "../ops/tracing.js";
import type {
  Approvers,
  ChangeError,
  ChangeNote,
  ChangePatch,
  ChangeRequest,
  ChangeState,
  EffectivePolicy,
  OtherRequest,
  ProposedBy,
  TransitionGuard,
} from "../store/index.js";
import { describeRequest, type ResolvedChange, resolveChange } from "./index.js";
import { type ApplyReport, type ChangeKind, type ChangeScope, isOneOff, type TargetRead } from "./kind.js";
import { LockLostError } from "./target-lock.js";

/**
 * What every path of the change engine shares (engine.ts: ask, approve, apply; undo-and-reconcile.ts:
 * sweeps, undo, reconcile): the outcomes, the moves (compare-and-set, its audit row, then the observers),
 * the audit, who owns a target, reading a target before and after a write, and the sweeps' fair pool.
 */

/** A request left `approved` this long (apply never finished) is reconciled from the current value. */
export const RECONCILE_AFTER_MS = 60_000;
/** The longest a temporary change may last. */
export const MAX_TEMPORARY_MS = 24 * 60 * 60_000;
/** A failed undo is tried again this much later, this many times in all. */
export const UNDO_RETRY_MS = 60_000;
export const UNDO_ATTEMPTS = 10;

/** How the Slack layer answers "may this person approve here?" (admins, listed users, user groups). */
export type ApproverCheck = (userId: string, approvers: Approvers) => Promise<boolean>;

export interface ChangeInput<P> {
  teamId: string;
  channelId: string;
  userId: string;
  params: P;
  /** Set by the button (or command) that carried the confirmation: the same click twice makes one request. */
  requestId: string;
  /** A temporary change: undone this long after it is applied (at most MAX_TEMPORARY_MS). */
  temporaryMs?: number;
  /**
   * When the same change (kind, parameters, duration) already waits for approval in the workspace, the
   * answer is that request instead of a second card (default). A workflow step follows its own request
   * to the end, so it says false.
   */
  joinPending?: boolean;
  /** A channel chosen by someone else (a workflow step's author): the stricter of workspace and channel policy. */
  strictPolicy?: boolean;
  /**
   * How many people besides the requester could approve this request, where the caller could count them
   * all (the policy command, through Slack): it then needs no more approvals than that (at least one), so
   * a policy nobody can meet can still be loosened.
   */
  approversReachable?: number;
  /**
   * An AI agent proposed it for `userId` (src/mcp): it always waits for a person's press. Where the policy
   * asks an approval, another person approves as usual; where it asks none, one press applies it.
   */
  proposedBy?: Omit<ProposedBy, "onePress">;
}

export type ChangeOutcome =
  | { kind: "unchanged" }
  | { kind: "duplicate"; request: ChangeRequest }
  /** The same change already waits for approval, in this request (someone else's, or an earlier one). */
  | { kind: "already_pending"; request: ChangeRequest }
  | { kind: "pending"; request: ChangeRequest; policy: EffectivePolicy }
  | { kind: "applied"; request: ChangeRequest }
  /** A temporary change whose value is already set for good: not applied (its note says by whom). */
  | { kind: "already_set"; request: ChangeRequest }
  | { kind: "failed"; request: ChangeRequest }
  /** Sent, but no answer came: the reconciler finds out whether it took effect. */
  | { kind: "unknown"; request: ChangeRequest };

export type DecisionOutcome =
  | { kind: "not_found" }
  | { kind: "self_approval"; request: ChangeRequest }
  | { kind: "not_approver"; request: ChangeRequest }
  | { kind: "already_decided"; request: ChangeRequest }
  | { kind: "expired"; request: ChangeRequest }
  | { kind: "rejected"; request: ChangeRequest }
  /** Its requester pressed Reject: the request is withdrawn (cancelled), nothing changed. */
  | { kind: "withdrawn"; request: ChangeRequest }
  /** Counted, but more approvers are needed. */
  | {
      kind: "approval_recorded";
      request: ChangeRequest;
      remaining: number;
      /** Earlier approvers who are no longer approvers here: their approvals were dropped. */
      dropped?: string[];
    }
  | { kind: "already_approved"; request: ChangeRequest }
  /** Retry refused for good: its window closed or the setting changed since; the request is closed. */
  | { kind: "retry_closed"; request: ChangeRequest }
  /** Undo now, Make permanent, Extend: not a temporary change in force (any more). */
  | { kind: "not_undoable"; request: ChangeRequest }
  /** Make permanent: its scheduled undo is cancelled. */
  | { kind: "made_permanent"; request: ChangeRequest }
  /** Extend: its undo is due later. */
  | { kind: "extended"; request: ChangeRequest; from: number }
  /** Extend refused: the change would last more than MAX_TEMPORARY_MS from now (latest: the undo time it may have). */
  | { kind: "extend_too_far"; request: ChangeRequest; latest: number }
  | UndoOutcome
  | ChangeOutcome;

export interface DecisionInput {
  requestId: string;
  teamId: string;
  userId: string;
  isApprover: ApproverCheck;
}

export const scopeOf = (r: ChangeRequest): ChangeScope => ({
  teamId: r.teamId,
  channelId: r.channelId,
  userId: r.requesterId,
});

export function mustResolve(r: ChangeRequest): ResolvedChange {
  const c = resolveChange(r);
  if (!c)
    throw new UserError(
      "not_found",
      "This request was made by another version of edgeops and can't be handled here; make a new request.",
    );
  return c;
}

export async function audit(
  deps: Deps,
  r: ChangeRequest,
  userId: string,
  step: string,
  outcome: string,
  details: Record<string, unknown> = {},
) {
  const c = resolveChange(r);
  await deps.store.audit.append({
    teamId: r.teamId,
    userId,
    action: `${r.kind}.${step}`,
    target: c ? c.kind.target(c.params) : r.kind,
    outcome,
    details: {
      requestId: r.id,
      channelId: r.channelId,
      change: c ? c.kind.describe(c.params) : null,
      // What the change found and asked for, so the audit log can say before → after.
      params: r.params,
      observed: r.observed,
      ...details,
    },
  });
}

export function countState(deps: Deps, state: ChangeState | "unknown") {
  deps.metrics.approvals.inc({ state });
}

/** A move's audit row (the request is the moved one): who made it, its step and outcome, what else it says. */
export interface MoveAudit {
  userId: string;
  step: string;
  outcome: string;
  details?: Record<string, unknown>;
}

/** How a move is made: its compare-and-set's guard, and the audit row its winner writes (null: none, said why there). */
export interface MoveHow {
  guard?: TransitionGuard;
  audit: MoveAudit | null;
}

/**
 * Every state change the engine makes: the store's compare-and-set, then, for the winner only, its audit
 * row and the observers (the card, the requester's thread, workflow steps waiting on the request). The
 * one place a move is announced (a change in flight announces it when its lease ends: in-flight.ts).
 */
export async function move(
  deps: Deps,
  id: string,
  from: ChangeState | readonly ChangeState[],
  to: ChangeState,
  patch: ChangePatch,
  how: MoveHow,
): Promise<ChangeRequest | undefined> {
  const moved = await traceMove(id, from, to, () =>
    deps.store.changeRequests.transition(id, from, to, patch, how.guard),
  );
  if (!moved) return undefined;
  await auditMove(deps, moved, how.audit);
  await deps.changeObservers.notify(moved, deps.logger);
  // The move is made: a note on other cards failing must not lose what follows it (the answer).
  if (to === "rejected" || to === "expired" || to === "cancelled")
    await releaseConflicts(deps, moved).catch((err: unknown) =>
      deps.logger.warn({ err, requestId: moved.id }, "could not update the notes of conflicting requests"),
    );
  return moved;
}

/**
 * A won move's (or a note's) audit row, written before any card is told: whoever sees the card redrawn
 * finds the row in /edge audit. The move is made whatever the audit does: a row that can't be written is
 * logged, and the cards and the answer still follow.
 */
async function auditMove(deps: Deps, r: ChangeRequest, row: MoveAudit | null): Promise<void> {
  if (!row) return;
  await audit(deps, r, row.userId, row.step, row.outcome, row.details).catch((err: unknown) =>
    deps.logger.error(
      { err, requestId: r.id, action: `${r.kind}.${row.step}`, outcome: row.outcome },
      "could not write the audit row of a change's move",
    ),
  );
}

/**
 * A move as a span of the trace that made it (src/ops/tracing.ts): the request, the states the
 * compare-and-set moves from (change.from), the state it moves to, whether this move won it and the
 * request's kind (known from the winner's row).
 */
function traceMove<T extends ChangeRequest | undefined | { moved?: ChangeRequest | undefined }>(
  id: string,
  from: ChangeState | readonly ChangeState[],
  to: ChangeState,
  compareAndSet: () => Promise<T>,
): Promise<T> {
  const froms = typeof from === "string" ? [from] : [...from];
  return inSpan(
    `change move ${to}`,
    { "change.request_id": id, "change.from": froms, "change.to": to },
    async (span) => {
      const out = await compareAndSet();
      const moved = out && "moved" in out ? out.moved : (out as ChangeRequest | undefined);
      span.setAttribute("change.won", moved !== undefined);
      if (moved) span.setAttribute("change.kind", moved.kind);
      return out;
    },
  );
}

/** A request closed without applying no longer conflicts: the cards still waiting stop naming it. */
export async function releaseConflicts(deps: Deps, closed: ChangeRequest): Promise<void> {
  if (closed.note?.kind !== "conflicts") return;
  for (const { id } of closed.note.with) {
    const other = await deps.store.changeRequests.get(id);
    if (other?.state !== "pending" || other.note?.kind !== "conflicts") continue;
    const left = other.note.with.filter((o) => o.id !== closed.id);
    await annotateRequest(deps, id, "pending", {
      note: left.length > 0 ? { kind: "conflicts", with: left } : null,
    });
  }
}

/** The compare-and-set that decides a request: the winner gets it updated, a loser the state it lost to. */
export async function decide(
  deps: Deps,
  request: ChangeRequest,
  from: ChangeState,
  to: ChangeState,
  patch: ChangePatch,
  how: { guard?: { notExpiredAt?: number }; audit: MoveAudit },
): Promise<{ won: boolean; request: ChangeRequest }> {
  const updated = await move(deps, request.id, from, to, patch, how);
  if (updated) return { won: true, request: updated };
  return { won: false, request: (await deps.store.changeRequests.get(request.id)) ?? request };
}

// ---- who owns a target ------------------------------------------------------------------------------

/** The target a stored request sets, for kinds that have one. */
export function targetOf(r: ChangeRequest): { key: string; change: ResolvedChange } | undefined {
  const change = resolveChange(r);
  const key = change?.kind.targetKey?.(change.params, scopeOf(r));
  return change && key ? { key, change } : undefined;
}

/** What an undo of this request puts back: the value its apply replaced (the value seen, before it applied). */
export function restoreOf(r: ChangeRequest): unknown {
  return r.replaced ? r.replaced.value : r.observed;
}

/**
 * The command that undoes an applied change by hand: the one that asks for the value its undo puts back
 * (kind.undo's parameters), never the one that asked for the change (which would apply it again).
 * Undefined when the kind can't say what to put back.
 */
export function undoCommand(r: ChangeRequest): string | undefined {
  const c = resolveChange(r);
  const back = c?.kind.undo?.(c.params, restoreOf(r));
  return c && back !== undefined ? c.kind.askAgain(back) : undefined;
}

/** "undo it by hand with <the undoing command>", or where to look when there is none. */
export function undoByHand(r: ChangeRequest): string {
  const command = undoCommand(r);
  return command ? `undo it by hand with ${command}` : "put it back by hand in the bunny.net dashboard";
}

export function otherOf(r: ChangeRequest): OtherRequest {
  return {
    id: r.id,
    userId: r.requesterId,
    channelId: r.channelId,
    change: describeRequest(r),
    ...(r.undoAfterMs !== null ? { temporaryMs: r.undoAfterMs } : {}),
  };
}

/**
 * Once a request is applied, those that waited beside it for another value can never apply (their value
 * moved since they were asked): they are closed as superseded, so their cards lose Approve. Those for the
 * same value stop naming it.
 */
export async function closeSuperseded(deps: Deps, applied: ChangeRequest): Promise<void> {
  if (applied.note?.kind !== "conflicts") return;
  for (const o of applied.note.with) {
    const other = await deps.store.changeRequests.get(o.id);
    if (other?.state !== "pending") continue;
    if (o.sameValue) {
      if (other.note?.kind !== "conflicts") continue;
      const left = other.note.with.filter((x) => x.id !== applied.id);
      await annotateRequest(deps, other.id, "pending", {
        note: left.length > 0 ? { kind: "conflicts", with: left } : null,
      });
      continue;
    }
    const closed = await move(
      deps,
      other.id,
      "pending",
      "cancelled",
      { decidedAt: deps.clock.now(), note: { kind: "superseded", by: otherOf(applied) } },
      { audit: { userId: "system", step: "cancel", outcome: "superseded", details: { by: applied.id } } },
    );
    if (!closed) continue;
    countState(deps, "cancelled");
    await releaseConflicts(deps, other);
  }
}

/** The request that set the target last, when it is not `exceptId`; `since`: when it did. */
export async function ownerOf(
  deps: Deps,
  teamId: string,
  target: string,
  exceptId?: string,
  since = 0,
): Promise<ChangeRequest | undefined> {
  const owner = await deps.store.changeRequests.targetOwner(teamId, target);
  return owner && owner.requestId !== exceptId && owner.since >= since
    ? deps.store.changeRequests.get(owner.requestId)
    : undefined;
}

/** The temporary change that set the target last and whose undo is still to come, if any. */
export async function pendingUndoOwner(deps: Deps, teamId: string, target: string, exceptId?: string) {
  const owner = await ownerOf(deps, teamId, target, exceptId);
  return owner?.state === "applied" && owner.undoAt !== null ? owner : undefined;
}

/**
 * A note on a request (no move): stored while it is still in `state` (and `guard` holds), then its audit row
 * (if it has one), then its card redrawn.
 */
export async function annotateRequest(
  deps: Deps,
  id: string,
  state: ChangeState,
  patch: ChangePatch,
  row: MoveAudit | null = null,
  guard?: TransitionGuard,
) {
  const noted = await deps.store.changeRequests.annotate(id, state, patch, guard);
  if (noted) {
    await auditMove(deps, noted, row);
    await deps.changeObservers.notifyNoted(noted, deps.logger);
  }
  return noted;
}

/**
 * Before a request's move to applied: what its undo will put back. The value its apply replaced; but
 * where that value was set by a temporary change still to be undone, what that change would have put
 * back (the earlier change is taken over, not stacked).
 */
export async function replacedBy(
  deps: Deps,
  r: ChangeRequest,
  target: string,
  replaced: unknown,
): Promise<{ patch: ChangePatch; previous?: { request: ChangeRequest; kept: boolean } }> {
  const previous = await pendingUndoOwner(deps, r.teamId, target, r.id);
  const prevChange = previous && resolveChange(previous);
  if (!previous || !prevChange?.kind.inForce(prevChange.params, replaced))
    return { patch: { replaced: { value: replaced } } };
  // Kept: the value was already the one asked for, so the apply wrote nothing.
  const kept = prevChange.kind.inForce(resolveChange(r)?.params, replaced);
  return { patch: { replaced: { value: restoreOf(previous) } }, previous: { request: previous, kept } };
}

/**
 * The move to applied, as one transaction with the owner record: the request becomes the target's last
 * writer (replacedBy: what its undo puts back), and a temporary change it took over is not undone any more;
 * that change's card says who kept the value (and until when) or set another one. Both happen or neither,
 * so no earlier undo can fall due over a value this request set.
 */
export async function moveToApplied(
  deps: Deps,
  r: ChangeRequest,
  from: ChangeState | readonly ChangeState[],
  patch: ChangePatch,
  target: string | undefined,
  replaced: unknown,
  how: { guard: TransitionGuard; audit: MoveAudit },
): Promise<ChangeRequest | undefined> {
  if (!target) return move(deps, r.id, from, "applied", patch, how);
  const owning = await replacedBy(deps, r, target, replaced);
  const previous = owning.previous;
  const by = otherOf(r);
  const note: ChangeNote | undefined = previous
    ? previous.kept
      ? { kind: "kept", by, until: patch.undoAt ?? null }
      : { kind: "superseded", by }
    : undefined;
  const { moved, takenOver } = await traceMove(r.id, from, "applied", () =>
    deps.store.changeRequests.transitionToOwner(r.id, from, { ...patch, ...owning.patch }, how.guard, {
      teamId: r.teamId,
      targetKey: target,
      ...(previous && note ? { takeOver: { id: previous.request.id, patch: { undoAt: null, note } } } : {}),
    }),
  );
  // Both rows before either card is told.
  if (moved) await auditMove(deps, moved, how.audit);
  if (takenOver)
    await auditMove(deps, takenOver, {
      userId: how.audit.userId,
      step: "undo",
      outcome: previous?.kept ? "kept" : "superseded",
      details: { by: r.id },
    });
  if (moved) {
    await deps.changeObservers.notify(moved, deps.logger);
    // Applied: closing the others (which an approval would refuse anyway) must not lose what follows.
    await closeSuperseded(deps, moved).catch((err: unknown) =>
      deps.logger.warn({ err, requestId: moved.id }, "could not close the requests this one superseded"),
    );
  }
  if (takenOver) await deps.changeObservers.notifyNoted(takenOver, deps.logger);
  return moved;
}

/** When an applied temporary change is due to be undone. */
export function undoSchedule(deps: Deps, r: ChangeRequest): { undoAt?: number } {
  return r.undoAfterMs === null ? {} : { undoAt: deps.clock.now() + r.undoAfterMs };
}

/** Neither a yes nor a no: the call may have reached the Edge API (or its read-back failed). */
export function outcomeUnknown(err: unknown): boolean {
  if (err instanceof ReadBackError) return err.kind === "unknown";
  if (err instanceof LockLostError) return true;
  return err instanceof EdgeApiError && (err.kind === "timeout" || err.kind === "network");
}

/** Other settings moved with a write: the request says which, and offers no Retry. */
export const OTHER_SETTINGS_MOVED = "other_settings_moved";

export function toChangeError(err: unknown): ChangeError {
  if (err instanceof ReadBackError)
    return { kind: err.alsoChanged.length > 0 ? OTHER_SETTINGS_MOVED : err.kind, message: err.message };
  return {
    kind: err instanceof EdgeApiError || err instanceof UserError ? err.kind : "internal",
    message: toUserSentence(err),
    ...(err instanceof EdgeApiError && err.status !== undefined ? { status: err.status } : {}),
    ...(err instanceof EdgeApiError && err.errorKey ? { errorKey: err.errorKey } : {}),
  };
}

export const UNKNOWN_OUTCOME_SENTENCE =
  "Not known yet: the Edge API did not answer in time. edgeops is checking whether the change took effect.";

/** The sentence on a request whose outcome is not known yet (outcomeUnknown's errors). */
export const unknownSentence = (err: unknown) =>
  err instanceof ReadBackError || err instanceof LockLostError ? err.message : UNKNOWN_OUTCOME_SENTENCE;

/** The API accepted a write, but a read right after does not show it (`unknown`: the read failed). */
export class ReadBackError extends Error {
  constructor(
    readonly kind: "not_applied" | "unknown",
    message: string,
    readonly alsoChanged: string[] = [],
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export const alsoChangedSentence = (moved: string[]) =>
  `Other settings moved with this change: ${moved.join("; ")}. edgeops did not set them back: check them in the bunny.net dashboard.`;

/**
 * Right after a write the API accepted: read the target back. The change counts as made only when the
 * read shows it (else ReadBackError); one-off kinds can't be read back. Returns the note for the
 * request when other settings moved with it.
 */
export async function readBack<P, V>(
  deps: Deps,
  kind: ChangeKind<P, V>,
  scope: ChangeScope,
  params: P,
  report: ApplyReport<V> | undefined,
): Promise<ChangeError | null> {
  const moved = report?.alsoChanged ?? [];
  const also = moved.length > 0 ? ` ${alsoChangedSentence(moved)}` : "";
  if (isOneOff(kind, params)) return null;
  let current: V | null;
  try {
    current = report?.after ? report.after.value : await kind.readCurrent(deps, scope, params);
  } catch (err) {
    throw new ReadBackError(
      "unknown",
      `The Edge API accepted the change, but reading it back failed: ${toUserSentence(err)} edgeops reads it again shortly to tell whether it took effect.${also}`,
      moved,
      { cause: err },
    );
  }
  if (!kind.inForce(params, current) && kind.notShownMeansUnknown)
    throw new ReadBackError(
      "unknown",
      `Not known yet: the Edge API accepted the change, but reading it back right after does not show it (${kind.valueLabel?.(current) ?? "another value"}). edgeops reads it again shortly to tell whether it took effect.${also}`,
      moved,
    );
  if (!kind.inForce(params, current))
    throw new ReadBackError(
      "not_applied",
      `The Edge API accepted the change, but reading it back right after shows ${kind.valueLabel?.(current) ?? "another value"}: it is not in effect.${also}`,
      moved,
    );
  if (moved.length === 0) return report?.caveat ? { kind: "no_effect", message: report.caveat } : null;
  const fields = report?.alsoChangedFields ?? [];
  return {
    kind: OTHER_SETTINGS_MOVED,
    message: [report?.caveat, alsoChangedSentence(moved)].filter(Boolean).join(" "),
    ...(fields.length > 0 ? { moved: fields } : {}),
  };
}

export const alsoChangedDetail = (err: unknown) =>
  err instanceof ReadBackError && err.alsoChanged.length > 0 ? { alsoChanged: err.alsoChanged } : {};

export async function loadForDecision(deps: Deps, input: DecisionInput) {
  const request = await deps.store.changeRequests.get(input.requestId);
  if (!request || request.teamId !== input.teamId) return undefined;
  return request;
}

/** Expire a pending request whose time is up; the request for the one caller that did it. */
export async function expireIfDue(deps: Deps, request: ChangeRequest): Promise<ChangeRequest | undefined> {
  if (request.state !== "pending" || request.expiresAt > deps.clock.now()) return undefined;
  const expired = await move(
    deps,
    request.id,
    "pending",
    "expired",
    { decidedAt: deps.clock.now() },
    { audit: { userId: "system", step: "expire", outcome: "expired" } },
  );
  if (expired) countState(deps, "expired");
  return expired;
}

export async function approversFor(
  deps: Deps,
  r: ChangeRequest,
): Promise<{ approvers: Approvers; approvals: string }> {
  const policy = await deps.store.policies.getEffective(r.teamId, r.channelId);
  const { kind } = mustResolve(r);
  return {
    approvals: policy.approvals,
    approvers: kind.approvers === "admins" ? { kind: "admins" } : policy.approvers,
  };
}

/** How long the sweeper waits for one read of the current value (one slow workspace must not hold it). */
export const SWEEP_READ_DEADLINE_MS = 15_000;
/** A request whose current value can't be read is tried again a minute later, this many times in all. */
export const SWEEP_READ_ATTEMPTS = 5;

/** The target as the kind reads it before a change (its readTarget, else its readCurrent). */
export async function readTarget<P, V>(
  deps: Deps,
  kind: ChangeKind<P, V>,
  scope: ChangeScope,
  params: P,
): Promise<TargetRead<V>> {
  return kind.readTarget
    ? kind.readTarget(deps, scope, params)
    : { value: await kind.readCurrent(deps, scope, params) };
}

export async function readForSweep(
  deps: Deps,
  c: ResolvedChange,
  r: ChangeRequest,
): Promise<TargetRead<unknown>> {
  const read = await withDeadline(
    deps.clock,
    readTarget(deps, c.kind, scopeOf(r), c.params).then((target) => ({ target })),
    SWEEP_READ_DEADLINE_MS,
    () => undefined,
  );
  if (!read)
    throw new UserError(
      "unavailable",
      `The Edge API did not answer within ${SWEEP_READ_DEADLINE_MS / 1000} seconds.`,
    );
  return read.target;
}

/**
 * The sweeper could not read a stale request's current value: it backs off (the request's last update
 * moves, so it is stale again a minute later) and, after SWEEP_READ_ATTEMPTS, ends it with a sentence:
 * an apply as failed (with Retry), an undo as applied with no undo left (undo it by hand).
 */
export async function sweepReadFailed(
  deps: Deps,
  r: ChangeRequest,
  state: "approved" | "undoing",
  err: unknown,
): Promise<ChangeRequest | undefined> {
  const tries = (r.lastError?.tries ?? 0) + 1;
  if (tries < SWEEP_READ_ATTEMPTS) {
    deps.logger.warn(
      { err, requestId: r.id, tries },
      "could not read the current value to reconcile; tried again in a minute",
    );
    const previous = r.lastError ?? { kind: "unknown", message: UNKNOWN_OUTCOME_SENTENCE };
    await deps.store.changeRequests.annotate(r.id, state, { lastError: { ...previous, tries } });
    return undefined;
  }
  const { kind, params } = mustResolve(r);
  const reason = toUserSentence(err);
  const ended = { leaseEndedBy: deps.clock.now() };
  const audited = (outcome: string): MoveHow => ({
    guard: ended,
    audit: { userId: "system", step: "reconcile", outcome, details: { reason: "unreadable", tries } },
  });
  const moved =
    state === "approved"
      ? await move(
          deps,
          r.id,
          "approved",
          "failed",
          {
            lastError: {
              kind: "not_known",
              message: `edgeops could not find out whether this change took effect: the current value could not be read ${tries} times (${reason}). Check it, then Retry, or make a new request with ${kind.askAgain(params)}.`,
            },
            failedAt: deps.clock.now(),
          },
          audited("failed"),
        )
      : await move(
          deps,
          r.id,
          "undoing",
          "applied",
          {
            lastError: {
              kind: "undo_gave_up",
              message: `The automatic undo could not be finished: the current value could not be read ${tries} times (${reason}); check it and ${undoByHand(r)}.`,
            },
            undoAt: null,
          },
          audited("applied"),
        );
  if (moved) countState(deps, moved.state);
  return moved;
}

export type UndoOutcome =
  /** Put back; or left as it is (lastError `changed_since`) because someone changed it since. */
  | { kind: "undone"; request: ChangeRequest }
  /** The undo call failed: tried again later (the request is applied again, with the reason). */
  | { kind: "undo_failed"; request: ChangeRequest }
  /** Sent, no answer: the reconciler decides. */
  | { kind: "undo_unknown"; request: ChangeRequest };
