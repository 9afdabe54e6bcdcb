import { createHash } from "node:crypto";
import { withDeadline } from "../deadline.js";
import type { Deps } from "../deps.js";
import { EdgeApiError } from "../edge/errors.js";
import { toUserSentence, UserError } from "../errors.js";
import { createFairPool } from "../jobs/pool.js";
import type {
  ApprovalError,
  ApprovalPatch,
  ApprovalRequest,
  ApprovalState,
  Approvers,
  ChangeNote,
  EffectivePolicy,
  NewApprovalRequest,
  OtherRequest,
  TransitionGuard,
  WorkScope,
} from "../store/index.js";
import { StoreError } from "../store/index.js";
import { holdInFlight } from "./in-flight.js";
import { describeRequest, policyCovers, type ResolvedChange, resolveChange } from "./index.js";
import { type ApplyReport, type ChangeKind, type ChangeScope, sameValue } from "./kind.js";
import { policyFor } from "./stricter-policy.js";
import { withChangeLock } from "./target-lock.js";

/**
 * The one state machine every change goes through:
 *
 *   request → (policy) → pending → approve (CAS, only before expiry) → approved → apply once →
 *   applied | failed (Retry within the window, only if nothing changed since) | unknown (no answer:
 *   the reconciler re-reads and decides) ; pending → rejected | expired | cancelled.
 *   A temporary change (`for 30m`): applied → undoing (when due, or Undo now) → undone, the previous
 *   value put back once; left as it is when someone changed it since.
 *
 * Every move is a compare-and-set on the request's state, so clicks, replicas and workers can race and
 * exactly one of them acts.
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
}

export type ChangeOutcome =
  | { kind: "unchanged" }
  | { kind: "duplicate"; request: ApprovalRequest }
  /** The same change already waits for approval, in this request (someone else's, or an earlier one). */
  | { kind: "already_pending"; request: ApprovalRequest }
  | { kind: "pending"; request: ApprovalRequest; policy: EffectivePolicy }
  | { kind: "applied"; request: ApprovalRequest }
  | { kind: "failed"; request: ApprovalRequest }
  /** Sent, but no answer came: the reconciler finds out whether it took effect. */
  | { kind: "unknown"; request: ApprovalRequest };

export type DecisionOutcome =
  | { kind: "not_found" }
  | { kind: "self_approval"; request: ApprovalRequest }
  | { kind: "not_approver"; request: ApprovalRequest }
  | { kind: "already_decided"; request: ApprovalRequest }
  | { kind: "expired"; request: ApprovalRequest }
  | { kind: "rejected"; request: ApprovalRequest }
  /** Its requester pressed Reject: the request is withdrawn (cancelled), nothing changed. */
  | { kind: "withdrawn"; request: ApprovalRequest }
  /** Counted, but more approvers are needed. */
  | {
      kind: "approval_recorded";
      request: ApprovalRequest;
      remaining: number;
      /** Earlier approvers who are no longer approvers here: their approvals were dropped. */
      dropped?: string[];
    }
  | { kind: "already_approved"; request: ApprovalRequest }
  /** Retry refused for good: its window closed or the setting changed since; the request is closed. */
  | { kind: "retry_closed"; request: ApprovalRequest }
  /** Undo now: not a temporary change in force (any more). */
  | { kind: "not_undoable"; request: ApprovalRequest }
  | UndoOutcome
  | ChangeOutcome;

export interface DecisionInput {
  requestId: string;
  teamId: string;
  userId: string;
  isApprover: ApproverCheck;
}

const scopeOf = (r: ApprovalRequest): ChangeScope => ({
  teamId: r.teamId,
  channelId: r.channelId,
  userId: r.requesterId,
});

function mustResolve(r: ApprovalRequest): ResolvedChange {
  const c = resolveChange(r);
  if (!c)
    throw new UserError(
      "not_found",
      "This request was made by another version of edgeops and can't be handled here; make a new request.",
    );
  return c;
}

async function audit(
  deps: Deps,
  r: ApprovalRequest,
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

function countState(deps: Deps, state: ApprovalState | "unknown") {
  deps.metrics.approvals.inc({ state });
}

/**
 * Every state change the engine makes: the store's compare-and-set, then, for the winner only, the
 * observers (workflow steps waiting on the request). The one place a move is announced.
 */
async function move(
  deps: Deps,
  id: string,
  from: ApprovalState | readonly ApprovalState[],
  to: ApprovalState,
  patch: ApprovalPatch = {},
  guard: TransitionGuard = {},
): Promise<ApprovalRequest | undefined> {
  const moved = await deps.store.approvals.transition(id, from, to, patch, guard);
  if (moved) await deps.changeObservers.notify(moved, deps.logger);
  if (moved && (to === "rejected" || to === "expired" || to === "cancelled"))
    await releaseConflicts(deps, moved);
  return moved;
}

/** A request closed without applying no longer conflicts: the cards still waiting stop naming it. */
async function releaseConflicts(deps: Deps, closed: ApprovalRequest): Promise<void> {
  if (closed.note?.kind !== "conflicts") return;
  for (const { id } of closed.note.with) {
    const other = await deps.store.approvals.get(id);
    if (other?.state !== "pending" || other.note?.kind !== "conflicts") continue;
    const left = other.note.with.filter((o) => o.id !== closed.id);
    await annotateOther(deps, id, "pending", {
      note: left.length > 0 ? { kind: "conflicts", with: left } : null,
    });
  }
}

/** The compare-and-set that decides a request: the winner gets it updated, a loser the state it lost to. */
async function decide(
  deps: Deps,
  request: ApprovalRequest,
  from: ApprovalState,
  to: ApprovalState,
  patch: ApprovalPatch,
  guard: { notExpiredAt?: number } = {},
): Promise<{ won: boolean; request: ApprovalRequest }> {
  const updated = await move(deps, request.id, from, to, patch, guard);
  if (updated) return { won: true, request: updated };
  return { won: false, request: (await deps.store.approvals.get(request.id)) ?? request };
}

/**
 * Whether asking for this change would change nothing (requestChange answers "unchanged"): the value is
 * in force and no temporary change that set it is waiting to undo it. Read before offering Confirm.
 */
export async function changesNothing<P, V>(
  deps: Deps,
  kind: ChangeKind<P, V>,
  scope: ChangeScope,
  params: P,
  current: V | null,
): Promise<boolean> {
  if (!kind.inForce(params, current)) return false;
  const target = kind.targetKey?.(params, scope);
  return !(target && (await pendingUndoOwner(deps, scope.teamId, target)));
}

/**
 * A confirmed request for a change. Applied at once where the kind's policy needs no second person;
 * otherwise it waits, pending. Nothing is created when the change is already in force.
 */
export async function requestChange<P, V>(
  deps: Deps,
  kind: ChangeKind<P, V>,
  input: ChangeInput<P>,
): Promise<ChangeOutcome> {
  const existing = await deps.store.approvals.get(input.requestId);
  if (existing && existing.teamId === input.teamId) return { kind: "duplicate", request: existing };
  if (existing) throw new UserError("usage", "That button is out of date: run the command again.");

  const scope: ChangeScope = { teamId: input.teamId, channelId: input.channelId, userId: input.userId };
  if (input.temporaryMs !== undefined && !(input.temporaryMs > 0 && input.temporaryMs <= MAX_TEMPORARY_MS))
    throw new UserError("usage", "A temporary change lasts from 1 minute to 24 hours, e.g. `for 30m`.");
  const current = await kind.readCurrent(deps, scope, input.params);
  const target = kind.targetKey?.(input.params, scope);
  // The value is in force: nothing to ask, unless a temporary change set it and would undo it. Then this
  // request takes the target over (applied without a write) and that undo is cancelled.
  const takenOver = kind.inForce(input.params, current)
    ? target && (await pendingUndoOwner(deps, input.teamId, target))
    : undefined;
  if (kind.inForce(input.params, current) && !takenOver) return { kind: "unchanged" };
  const restores = takenOver ? restoreOf(takenOver) : current;
  if (input.temporaryMs !== undefined && kind.undo?.(input.params, restores as V | null) === undefined)
    throw new UserError(
      "usage",
      `${kind.describe(input.params)} can't be temporary: edgeops can't tell what to put back. Ask without \`for\`.`,
    );

  const policy = await policyFor(deps, input.teamId, input.channelId, input.strictPolicy === true);
  const required = kind.needsApproval
    ? await kind.needsApproval(input.params, current, policy, deps, scope)
    : policy.approvals === "required" && policyCovers(policy.approvalsFor, kind);
  // Where it would wait for approval, one request for the same change waits and a second asker is
  // pointed at it; the store's unique twin key decides between two asking at the same instant. Applied
  // at once here, the change is simply applied.
  const twinKey = required && input.joinPending !== false ? twinKeyOf(kind.name, input) : null;
  if (twinKey) {
    const twin = await pendingTwin(deps, input.teamId, twinKey);
    // The same button pressed twice at once: the other press made this very request.
    if (twin?.id === input.requestId) return { kind: "duplicate", request: twin };
    if (twin) return joinTwin(deps, twin, input.userId);
  }
  // Waiting beside requests for the same target with another value: both cards say so.
  const conflicts =
    required && target
      ? (await waitingRequests(deps, input.teamId, kind.name)).filter(
          (r) =>
            r.id !== input.requestId &&
            targetOf(r)?.key === target &&
            JSON.stringify(canonical(r.params)) !== JSON.stringify(canonical(input.params)),
        )
      : [];
  const created = await createRequest(deps, input, twinKey, {
    id: input.requestId,
    kind: kind.name,
    teamId: input.teamId,
    channelId: input.channelId,
    requesterId: input.userId,
    params: input.params,
    observed: current,
    expiresAt: deps.now() + policy.expiryMinutes * 60_000,
    approvalsNeeded: policy.approvalsNeeded,
    undoAfterMs: input.temporaryMs ?? null,
    twinKey,
    ...(conflicts.length > 0 ? { note: { kind: "conflicts", with: conflicts.map(otherOf) } } : {}),
  });
  if ("outcome" in created) return created.outcome;
  const { request } = created;
  for (const other of conflicts) {
    const listed = other.note?.kind === "conflicts" ? other.note.with : [];
    await annotateOther(deps, other.id, "pending", {
      note: { kind: "conflicts", with: [...listed, otherOf(request)] },
    });
  }
  countState(deps, "pending");
  await audit(deps, request, input.userId, "request", "pending", {
    approvals: required ? "required" : "not required",
    observed: current,
    ...(input.temporaryMs !== undefined ? { temporaryMs: input.temporaryMs } : {}),
  });
  if (required) return { kind: "pending", request, policy };

  // Nobody approved it: the requester is not recorded as its approver, the card and audit say why.
  const approvals = policy.approvals === "off" ? "off" : "not_covered";
  const approved = await decide(deps, request, "pending", "approved", {
    decidedAt: deps.now(),
    reason: { kind: "no_approval", approvals },
  });
  if (!approved.won) return { kind: "duplicate", request: approved.request };
  countState(deps, "approved");
  await audit(
    deps,
    approved.request,
    input.userId,
    "no_approval",
    approvals === "off" ? "approvals off" : "not required for this change",
  );
  return applyApproved(deps, approved.request, input.userId);
}

async function joinTwin(deps: Deps, twin: ApprovalRequest, userId: string): Promise<ChangeOutcome> {
  await audit(deps, twin, userId, "request", "already pending");
  return { kind: "already_pending", request: twin };
}

/** The workspace's requests of one kind still waiting for approval (not expired), oldest first. */
export async function waitingRequests(
  deps: Deps,
  teamId: string,
  kindName: string,
): Promise<ApprovalRequest[]> {
  const now = deps.now();
  return (await deps.store.approvals.listPending(teamId, { kind: kindName })).filter(
    (r) => r.expiresAt > now,
  );
}

/** The change itself, kind, parameters (in a canonical key order) and duration, as one bounded key. */
function twinKeyOf<P>(kindName: string, input: ChangeInput<P>): string {
  const text = `${kindName}\n${JSON.stringify(canonical(input.params))}\n${input.temporaryMs ?? ""}`;
  return createHash("sha256").update(text).digest("base64url");
}

/** Parameters in a canonical key order, so two spellings of one change compare equal. */
const canonical = (v: unknown): unknown =>
  Array.isArray(v)
    ? v.map(canonical)
    : v !== null && typeof v === "object"
      ? Object.fromEntries(
          Object.entries(v)
            .filter(([, x]) => x !== undefined)
            .sort(([a], [b]) => (a < b ? -1 : 1))
            .map(([k, x]) => [k, canonical(x)]),
        )
      : v;

// ---- who owns a target ------------------------------------------------------------------------------

/** The target a stored request sets, for kinds that have one. */
function targetOf(r: ApprovalRequest): { key: string; change: ResolvedChange } | undefined {
  const change = resolveChange(r);
  const key = change?.kind.targetKey?.(change.params, scopeOf(r));
  return change && key ? { key, change } : undefined;
}

/** What an undo of this request puts back: the value its apply replaced (the value seen, before it applied). */
export function restoreOf(r: ApprovalRequest): unknown {
  return r.replaced ? r.replaced.value : r.observed;
}

function otherOf(r: ApprovalRequest): OtherRequest {
  return { id: r.id, userId: r.requesterId, channelId: r.channelId, change: describeRequest(r) };
}

/** The request that set the target last, when it is not `exceptId`; `since`: when it did. */
async function ownerOf(
  deps: Deps,
  teamId: string,
  target: string,
  exceptId?: string,
  since = 0,
): Promise<ApprovalRequest | undefined> {
  const owner = await deps.store.approvals.targetOwner(teamId, target);
  return owner && owner.requestId !== exceptId && owner.since >= since
    ? deps.store.approvals.get(owner.requestId)
    : undefined;
}

/** The temporary change that set the target last and whose undo is still to come, if any. */
async function pendingUndoOwner(deps: Deps, teamId: string, target: string, exceptId?: string) {
  const owner = await ownerOf(deps, teamId, target, exceptId);
  return owner?.state === "applied" && owner.undoAt !== null ? owner : undefined;
}

/** A note on another request (no move): stored while it is still in `state`, and its card redrawn. */
async function annotateOther(deps: Deps, id: string, state: ApprovalState, patch: ApprovalPatch) {
  const noted = await deps.store.approvals.annotate(id, state, patch);
  if (noted) await deps.changeObservers.notifyNoted(noted, deps.logger);
  return noted;
}

/**
 * Before a request's move to applied: what its undo will put back. The value its apply replaced; but
 * where that value was set by a temporary change still to be undone, what that change would have put
 * back (the earlier change is taken over, not stacked).
 */
async function replacedBy(
  deps: Deps,
  r: ApprovalRequest,
  target: string,
  replaced: unknown,
): Promise<{ patch: ApprovalPatch; previous?: { request: ApprovalRequest; kept: boolean } }> {
  const previous = await pendingUndoOwner(deps, r.teamId, target, r.id);
  const prevChange = previous && resolveChange(previous);
  if (!previous || !prevChange?.kind.inForce(prevChange.params, replaced))
    return { patch: { replaced: { value: replaced } } };
  // Kept: the value was already the one asked for, so the apply wrote nothing.
  const kept = prevChange.kind.inForce(resolveChange(r)?.params, replaced);
  return { patch: { replaced: { value: restoreOf(previous) } }, previous: { request: previous, kept } };
}

/**
 * After the move to applied: the request is the target's last writer. A temporary change it took over
 * is not undone any more; its card says who kept the value (and until when) or set another one.
 */
async function recordOwner(
  deps: Deps,
  applied: ApprovalRequest,
  target: string,
  actorId: string,
  previous: { request: ApprovalRequest; kept: boolean } | undefined,
): Promise<void> {
  await deps.store.approvals.setTargetOwner(applied.teamId, target, applied.id);
  if (!previous) return;
  const by = otherOf(applied);
  const { kept } = previous;
  const note: ChangeNote = kept ? { kind: "kept", by, until: applied.undoAt } : { kind: "superseded", by };
  const cancelled = await annotateOther(deps, previous.request.id, "applied", { undoAt: null, note });
  if (cancelled)
    await audit(deps, cancelled, actorId, "undo", kept ? "kept" : "superseded", { by: applied.id });
}

/** The request waiting for approval with this twin key (expired ones too, when asked), if any. */
async function pendingTwin(
  deps: Deps,
  teamId: string,
  twinKey: string,
  expiredToo = false,
): Promise<ApprovalRequest | undefined> {
  const now = deps.now();
  return (await deps.store.approvals.listPending(teamId, { twinKey })).find(
    (r) => expiredToo || r.expiresAt > now,
  );
}

/**
 * Stores a new request. Refused by the store when the same button made it already (a duplicate) or
 * when a request for the same change waits (joined); one that expired but is still pending (the
 * sweeper has not moved it yet) releases the key and the request is stored after all.
 */
async function createRequest<P>(
  deps: Deps,
  input: ChangeInput<P>,
  twinKey: string | null,
  fields: NewApprovalRequest,
): Promise<{ request: ApprovalRequest } | { outcome: ChangeOutcome }> {
  for (let attempt = 0; ; attempt++) {
    try {
      return { request: await deps.store.approvals.create(fields) };
    } catch (err) {
      if (!(err instanceof StoreError)) throw err;
      const raced = await deps.store.approvals.get(input.requestId);
      if (raced) return { outcome: { kind: "duplicate", request: raced } };
      const holder = twinKey ? await pendingTwin(deps, input.teamId, twinKey, true) : undefined;
      if (holder && holder.expiresAt > deps.now())
        return { outcome: await joinTwin(deps, holder, input.userId) };
      if (!holder || attempt > 0) throw err;
      // Expired, not yet moved by the sweeper (which will, and will update its card): it gives way.
      await deps.store.approvals.annotate(holder.id, "pending", { twinKey: null });
    }
  }
}

/** When an applied temporary change is due to be undone. */
function undoSchedule(deps: Deps, r: ApprovalRequest): { undoAt?: number } {
  return r.undoAfterMs === null ? {} : { undoAt: deps.now() + r.undoAfterMs };
}

/** Neither a yes nor a no: the call may have reached the Edge API (or its read-back failed). */
function outcomeUnknown(err: unknown): boolean {
  if (err instanceof ReadBackError) return err.kind === "unknown";
  return err instanceof EdgeApiError && (err.kind === "timeout" || err.kind === "network");
}

/** Other settings moved with a write: the request says which, and offers no Retry. */
export const OTHER_SETTINGS_MOVED = "other_settings_moved";

function toApprovalError(err: unknown): ApprovalError {
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

/** The API accepted a write, but a read right after does not show it (`unknown`: the read failed). */
class ReadBackError extends Error {
  constructor(
    readonly kind: "not_applied" | "unknown",
    message: string,
    readonly alsoChanged: string[] = [],
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

const alsoChangedSentence = (moved: string[]) =>
  `Other settings moved with this change: ${moved.join("; ")}. edgeops did not set them back: check them in the bunny.net dashboard.`;

/**
 * Right after a write the API accepted: read the target back. The change counts as made only when the
 * read shows it (else ReadBackError); one-off kinds can't be read back. Returns the note for the
 * request when other settings moved with it.
 */
async function readBack<P, V>(
  deps: Deps,
  kind: ChangeKind<P, V>,
  scope: ChangeScope,
  params: P,
  report: ApplyReport | undefined,
): Promise<ApprovalError | null> {
  const moved = report?.alsoChanged ?? [];
  const also = moved.length > 0 ? ` ${alsoChangedSentence(moved)}` : "";
  if (kind.oneOff) return null;
  let current: V | null;
  try {
    current = await kind.readCurrent(deps, scope, params);
  } catch (err) {
    throw new ReadBackError(
      "unknown",
      `The Edge API accepted the change, but reading it back failed: ${toUserSentence(err)} edgeops reads it again shortly to tell whether it took effect.${also}`,
      moved,
      { cause: err },
    );
  }
  if (!kind.inForce(params, current))
    throw new ReadBackError(
      "not_applied",
      `The Edge API accepted the change, but reading it back right after shows ${kind.valueLabel?.(current) ?? "another value"}: it is not in effect.${also}`,
      moved,
    );
  return moved.length > 0 ? { kind: OTHER_SETTINGS_MOVED, message: alsoChangedSentence(moved) } : null;
}

/** The single application of an approved request, then approved → applied | failed. Only a CAS winner calls it. */
async function applyApproved(deps: Deps, request: ApprovalRequest, actorId: string): Promise<ChangeOutcome> {
  const flight = await holdInFlight(deps, request.id, "approved");
  try {
    return await applyHeld(flight.deps, request, actorId);
  } finally {
    await flight.end();
  }
}

/** applyApproved's work, while the request's in-flight lease is held. */
async function applyHeld(deps: Deps, request: ApprovalRequest, actorId: string): Promise<ChangeOutcome> {
  const { kind, params } = mustResolve(request);
  const target = kind.targetKey?.(params, scopeOf(request));
  let replaced: unknown = request.observed;
  // Set inside the target lock (a closure): typed so TypeScript does not narrow it to null here.
  let note = null as ApprovalError | null;
  try {
    // One writer per target: the check, the write and its read-back hold the target's lock.
    const moved = await withChangeLock(deps, kind, scopeOf(request), params, async () => {
      if (target) {
        // Refused when the value moved since the request was made (another request, the dashboard).
        replaced = await kind.readCurrent(deps, scopeOf(request), params);
        if (!kind.inForce(params, replaced) && !sameValue(replaced, request.observed))
          return { now: replaced };
      }
      if (!target || !kind.inForce(params, replaced)) {
        const report = await kind.apply(deps, scopeOf(request), params);
        note = await readBack(deps, kind, scopeOf(request), params, report);
      }
      return undefined;
    });
    if (moved && target) return refuseStale(deps, request, actorId, target, moved.now);
  } catch (err) {
    if (outcomeUnknown(err)) {
      deps.logger.warn(
        { err, requestId: request.id },
        "change sent but not answered; the reconciler decides",
      );
      const lastError: ApprovalError = {
        kind: "unknown",
        message: err instanceof ReadBackError ? err.message : UNKNOWN_OUTCOME_SENTENCE,
      };
      const noted = await deps.store.approvals.annotate(request.id, "approved", {
        lastError,
        incrementAttempts: true,
      });
      countState(deps, "unknown");
      await audit(deps, request, actorId, "apply", "unknown", {
        error: (err as EdgeApiError | ReadBackError).kind,
        ...alsoChangedDetail(err),
      });
      return { kind: "unknown", request: noted ?? { ...request, lastError } };
    }
    const lastError = toApprovalError(err);
    deps.logger.warn({ err, requestId: request.id, kind: request.kind }, "change failed");
    const failed = await move(deps, request.id, "approved", "failed", {
      lastError,
      failedAt: deps.now(),
      incrementAttempts: true,
    });
    countState(deps, "failed");
    await audit(deps, request, actorId, "apply", "failed", {
      status: lastError.status ?? null,
      // Not "errorKey": a field named like a key is censored as a secret when the entry is stored.
      apiError: lastError.errorKey ?? null,
      error: lastError.kind,
      reason: lastError.message,
      ...alsoChangedDetail(err),
    });
    return { kind: "failed", request: failed ?? { ...request, state: "failed", lastError } };
  }
  const owning = target ? await replacedBy(deps, request, target, replaced) : undefined;
  // From failed too: the reconciler may have given up on a call that was only slow, and it did succeed.
  const applied = await move(deps, request.id, ["approved", "failed"], "applied", {
    lastError: note,
    incrementAttempts: true,
    ...undoSchedule(deps, request),
    ...owning?.patch,
  });
  if (applied && target) await recordOwner(deps, applied, target, actorId, owning?.previous);
  countState(deps, "applied");
  await audit(deps, request, actorId, "apply", "applied", note ? { alsoChanged: note.message } : {});
  return { kind: "applied", request: applied ?? { ...request, state: "applied" } };
}

const alsoChangedDetail = (err: unknown) =>
  err instanceof ReadBackError && err.alsoChanged.length > 0 ? { alsoChanged: err.alsoChanged } : {};

/**
 * The value moved since the request was made: not applied (Retry stays, for when it moves back). Where
 * another request set it, the card says which.
 */
async function refuseStale(
  deps: Deps,
  request: ApprovalRequest,
  actorId: string,
  target: string,
  current: unknown,
): Promise<ChangeOutcome> {
  const { kind, params } = mustResolve(request);
  const label = (v: unknown) => (kind.valueLabel ? kind.valueLabel(v) : JSON.stringify(v ?? null));
  const lastError: ApprovalError = {
    kind: "changed_since",
    message: `${kind.describe(params)} was not applied: ${kind.target(params)} changed from ${label(request.observed)} to ${label(current)} since this request was made, so edgeops left it as it is. To change it anyway, ask again: ${kind.askAgain(params)}`,
  };
  const supersededBy = await ownerOf(deps, request.teamId, target, request.id, request.createdAt);
  const failed = await move(deps, request.id, "approved", "failed", {
    lastError,
    failedAt: deps.now(),
    incrementAttempts: true,
    ...(supersededBy ? { note: { kind: "superseded", by: otherOf(supersededBy) } } : {}),
  });
  countState(deps, "failed");
  await audit(deps, request, actorId, "apply", "refused", {
    reason: "changed_since",
    observedNow: current as never,
    ...(supersededBy ? { supersededBy: supersededBy.id } : {}),
  });
  return { kind: "failed", request: failed ?? { ...request, state: "failed", lastError } };
}

async function loadForDecision(deps: Deps, input: DecisionInput) {
  const request = await deps.store.approvals.get(input.requestId);
  if (!request || request.teamId !== input.teamId) return undefined;
  return request;
}

/** Expire a pending request whose time is up; the request for the one caller that did it. */
export async function expireIfDue(
  deps: Deps,
  request: ApprovalRequest,
): Promise<ApprovalRequest | undefined> {
  if (request.state !== "pending" || request.expiresAt > deps.now()) return undefined;
  const expired = await move(deps, request.id, "pending", "expired", {
    decidedAt: deps.now(),
  });
  if (expired) {
    countState(deps, "expired");
    await audit(deps, expired, "system", "expire", "expired");
  }
  return expired;
}

async function approversFor(
  deps: Deps,
  r: ApprovalRequest,
): Promise<{ approvers: Approvers; approvals: string }> {
  const policy = await deps.store.policies.getEffective(r.teamId, r.channelId);
  const { kind } = mustResolve(r);
  return {
    approvals: policy.approvals,
    approvers: kind.approvers === "admins" ? { kind: "admins" } : policy.approvers,
  };
}

/** Approve: the requester and non-approvers are refused; one approver wins the CAS (before expiry) and applies. */
export async function approve(deps: Deps, input: DecisionInput): Promise<DecisionOutcome> {
  const request = await loadForDecision(deps, input);
  if (!request) return { kind: "not_found" };
  if (request.state !== "pending") return { kind: "already_decided", request };
  const expired = await expireIfDue(deps, request);
  if (expired) return { kind: "expired", request: expired };
  if (request.requesterId === input.userId) return { kind: "self_approval", request };
  if (!(await input.isApprover(input.userId, (await approversFor(deps, request)).approvers)))
    return { kind: "not_approver", request };
  return recordApproval(deps, request, input.userId, input.isApprover);
}

export const APPROVALS_DROPPED_SENTENCE =
  "An earlier approval no longer counts: that person is no longer an approver here, so another approver is needed.";

/**
 * One more distinct approver, by compare-and-set on the approvers so far: the Nth moves the request to
 * approved and applies it; earlier ones are recorded. Expiry is part of every compare-and-set, so a slow
 * approver lookup can't approve a request that expired meanwhile. A lost race re-reads and tries again.
 */
async function recordApproval(
  deps: Deps,
  first: ApprovalRequest,
  userId: string,
  isApprover: ApproverCheck,
): Promise<DecisionOutcome> {
  let request = first;
  for (let attempt = 0; attempt < 100; attempt++) {
    if (request.state !== "pending") return { kind: "already_decided", request };
    const expired = await expireIfDue(deps, request);
    if (expired) return { kind: "expired", request: expired };
    if (request.state === "pending" && request.expiresAt <= deps.now()) return { kind: "expired", request };
    if (request.approvedBy.includes(userId)) return { kind: "already_approved", request };
    let approvedBy = [...request.approvedBy, userId];
    const guard = { notExpiredAt: deps.now(), approvedBy: request.approvedBy };
    let dropped: string[] = [];
    if (approvedBy.length >= request.approvalsNeeded) {
      // The final approval: the earlier ones count only if those people are still approvers now.
      const rule = (await approversFor(deps, request)).approvers;
      const still = await Promise.all(request.approvedBy.map((id) => isApprover(id, rule)));
      dropped = request.approvedBy.filter((_, i) => !still[i]);
      approvedBy = [...request.approvedBy.filter((_, i) => still[i]), userId];
    }
    if (approvedBy.length >= request.approvalsNeeded) {
      const approved = await move(
        deps,
        request.id,
        "pending",
        "approved",
        { decidedBy: userId, decidedAt: deps.now(), approvedBy },
        guard,
      );
      if (approved) {
        countState(deps, "approved");
        await audit(deps, approved, userId, "approve", "approved", { approvedBy });
        return applyApproved(deps, approved, userId);
      }
    } else {
      const recorded = await deps.store.approvals.annotate(
        request.id,
        "pending",
        {
          approvedBy,
          ...(dropped.length > 0
            ? { lastError: { kind: "approvals_dropped", message: APPROVALS_DROPPED_SENTENCE } }
            : {}),
        },
        guard,
      );
      if (recorded) {
        await audit(deps, recorded, userId, "approve", "recorded", {
          approvedBy,
          needed: recorded.approvalsNeeded,
          ...(dropped.length > 0 ? { dropped } : {}),
        });
        return {
          kind: "approval_recorded",
          request: recorded,
          remaining: recorded.approvalsNeeded - approvedBy.length,
          ...(dropped.length > 0 ? { dropped } : {}),
        };
      }
    }
    const latest = await deps.store.approvals.get(request.id);
    if (!latest) return { kind: "not_found" };
    request = latest;
  }
  return { kind: "already_decided", request };
}

/**
 * Reject: approvers only, or the requester, whose Reject withdraws the request; the CAS decides between
 * a reject and an approve that race.
 */
export async function reject(deps: Deps, input: DecisionInput): Promise<DecisionOutcome> {
  const request = await loadForDecision(deps, input);
  if (!request) return { kind: "not_found" };
  if (request.state !== "pending") return { kind: "already_decided", request };
  const expired = await expireIfDue(deps, request);
  if (expired) return { kind: "expired", request: expired };
  if (request.requesterId === input.userId) {
    const withdrawn = await decide(deps, request, "pending", "cancelled", {
      decidedBy: input.userId,
      decidedAt: deps.now(),
      reason: { kind: "withdrawn" },
    });
    if (!withdrawn.won) return { kind: "already_decided", request: withdrawn.request };
    countState(deps, "cancelled");
    await audit(deps, withdrawn.request, input.userId, "withdraw", "cancelled");
    return { kind: "withdrawn", request: withdrawn.request };
  }
  if (!(await input.isApprover(input.userId, (await approversFor(deps, request)).approvers)))
    return { kind: "not_approver", request };
  const rejected = await decide(deps, request, "pending", "rejected", {
    decidedBy: input.userId,
    decidedAt: deps.now(),
  });
  if (!rejected.won) return { kind: "already_decided", request: rejected.request };
  countState(deps, "rejected");
  await audit(deps, rejected.request, input.userId, "reject", "rejected");
  return { kind: "rejected", request: rejected.request };
}

/** The rejecter's reason, added after the rejection (theirs only): the request as it is now, or undefined. */
export async function setRejectReason(
  deps: Deps,
  input: { requestId: string; teamId: string; userId: string; text: string },
): Promise<ApprovalRequest | undefined> {
  const request = await deps.store.approvals.get(input.requestId);
  if (request?.teamId !== input.teamId || request.state !== "rejected" || request.decidedBy !== input.userId)
    return undefined;
  const noted = await deps.store.approvals.annotate(request.id, "rejected", {
    reason: { kind: "rejected", text: input.text },
  });
  if (noted) await audit(deps, noted, input.userId, "reject", "reason", { reason: input.text });
  return noted;
}

/**
 * Retry a failed request: approvers only (or the requester where approvals are off); within the
 * request's expiry window counted from its failure, and only while the setting is still what the
 * request saw when it was made. Each press that wins failed → approved makes one attempt.
 */
export async function retry(deps: Deps, input: DecisionInput): Promise<DecisionOutcome> {
  const request = await loadForDecision(deps, input);
  if (!request) return { kind: "not_found" };
  if (request.state !== "failed") return { kind: "already_decided", request };
  const { kind, params } = mustResolve(request);
  const rule = await approversFor(deps, request);
  const requesterMayRetry =
    kind.approvers === "policy" && rule.approvals === "off" && request.requesterId === input.userId;
  if (!requesterMayRetry && !(await input.isApprover(input.userId, rule.approvers)))
    return { kind: "not_approver", request };

  if (request.lastError?.kind === OTHER_SETTINGS_MOVED)
    return closeFailed(deps, request, input.userId, "cancelled", {
      kind: OTHER_SETTINGS_MOVED,
      message: `${request.lastError.message} Not retried: check the zone, then make a new request with ${kind.askAgain(params)}.`,
    });
  const windowMs = Math.max(0, request.expiresAt - request.createdAt);
  const failedAt = request.failedAt ?? request.updatedAt;
  if (deps.now() > failedAt + windowMs) {
    return closeFailed(deps, request, input.userId, "expired", {
      kind: "retry_window",
      message: `The time to retry this request is over (${Math.round(windowMs / 60_000)} minutes after it failed): make a new request with ${kind.askAgain(params)}.`,
    });
  }
  const current = await kind.readCurrent(deps, scopeOf(request), params);
  if (!sameValue(current, request.observed)) {
    return closeFailed(deps, request, input.userId, "cancelled", {
      kind: "changed_since",
      message: `The setting changed since this request was made, so it was not retried: make a new request with ${kind.askAgain(params)}.`,
    });
  }
  const approved = await decide(deps, request, "failed", "approved", { decidedBy: input.userId });
  if (!approved.won) return { kind: "already_decided", request: approved.request };
  await audit(deps, approved.request, input.userId, "retry", "approved");
  return applyApproved(deps, approved.request, input.userId);
}

async function closeFailed(
  deps: Deps,
  request: ApprovalRequest,
  userId: string,
  to: "expired" | "cancelled",
  lastError: ApprovalError,
): Promise<DecisionOutcome> {
  const closed = await decide(deps, request, "failed", to, { lastError, decidedAt: deps.now() });
  if (!closed.won) return { kind: "already_decided", request: closed.request };
  countState(deps, to);
  await audit(deps, closed.request, userId, "retry", to, { reason: lastError.kind });
  return { kind: "retry_closed", request: closed.request };
}

/** Cancel a pending request whose card could not be posted; `sentence` says why, to whoever asked. */
export async function cancel(
  deps: Deps,
  request: ApprovalRequest,
  reason: string,
  sentence?: string,
): Promise<void> {
  const cancelled = await move(deps, request.id, "pending", "cancelled", {
    decidedAt: deps.now(),
    ...(sentence ? { lastError: { kind: "cancelled", message: sentence } } : {}),
  });
  if (cancelled) {
    countState(deps, "cancelled");
    await audit(deps, cancelled, request.requesterId, "cancel", "cancelled", { reason });
  }
}

/** Pending requests whose time is up (in the scope's workspaces), expired by whichever replica wins each CAS. */
export async function expireDue(deps: Deps, scope: WorkScope = {}, limit = 100): Promise<ApprovalRequest[]> {
  const due = await deps.store.approvals.listExpiredPending(deps.now(), limit, scope);
  return sweepFairly(deps, due, "could not expire a request; next sweep tries again", (r) =>
    expireIfDue(deps, r),
  );
}

export const ONE_OFF_UNKNOWN_SENTENCE =
  "The Edge API never answered, and edgeops can't tell afterwards whether this ran. Check it, then Retry if it did not.";

export const NOT_APPLIED_SENTENCE =
  "The change was not in force when edgeops checked again, so it may never have reached the Edge API. Retry, or make a new request.";

/**
 * Requests left `approved` for over a minute (the apply's answer was lost, its `applied` write failed,
 * or the process died between the compare-and-set and the call): re-read the current value and move
 * each to applied (in force) or failed (with Retry). Whichever replica wins each CAS reports it.
 */
export async function reconcileStale(
  deps: Deps,
  scope: WorkScope = {},
  limit = 50,
): Promise<ApprovalRequest[]> {
  const stale = await deps.store.approvals.listStaleApproved(deps.now() - RECONCILE_AFTER_MS, limit, scope);
  return sweepFairly(deps, stale, "could not reconcile a request; next sweep tries again", (r) =>
    reconcileOne(deps, r),
  );
}

async function reconcileOne(deps: Deps, r: ApprovalRequest): Promise<ApprovalRequest | undefined> {
  const c = resolveChange(r);
  if (!c) return undefined;
  let current: unknown;
  try {
    current = await readForSweep(deps, c, r);
  } catch (err) {
    return sweepReadFailed(deps, r, "approved", err).catch((e: unknown) => {
      deps.logger.warn({ err: e, requestId: r.id }, "could not record a failed read; next sweep tries again");
      return undefined;
    });
  }
  const inForce = c.kind.inForce(c.params, current);
  // Only once no apply holds the request any more (its lease ended: it finished or its replica died).
  const ended = { leaseEndedBy: deps.now() };
  const moved = c.kind.oneOff
    ? await move(
        deps,
        r.id,
        "approved",
        "failed",
        { lastError: { kind: "not_known", message: ONE_OFF_UNKNOWN_SENTENCE }, failedAt: deps.now() },
        ended,
      )
    : inForce
      ? await move(deps, r.id, "approved", "applied", { lastError: null, ...undoSchedule(deps, r) }, ended)
      : await move(
          deps,
          r.id,
          "approved",
          "failed",
          { lastError: { kind: "not_applied", message: NOT_APPLIED_SENTENCE }, failedAt: deps.now() },
          ended,
        );
  if (!moved) return undefined;
  const target = moved.state === "applied" ? targetOf(moved) : undefined;
  if (target) await recordOwner(deps, moved, target.key, "system", undefined);
  countState(deps, moved.state);
  await audit(deps, moved, "system", "reconcile", moved.state, { observedNow: current as never });
  return moved;
}

/** How long the sweeper waits for one read of the current value (one slow workspace must not hold it). */
export const SWEEP_READ_DEADLINE_MS = 15_000;
/** A request whose current value can't be read is tried again a minute later, this many times in all. */
export const SWEEP_READ_ATTEMPTS = 5;

async function readForSweep(deps: Deps, c: ResolvedChange, r: ApprovalRequest): Promise<unknown> {
  const read = await withDeadline(
    c.kind.readCurrent(deps, scopeOf(r), c.params).then((value) => ({ value })),
    SWEEP_READ_DEADLINE_MS,
    () => undefined,
  );
  if (!read)
    throw new UserError(
      "unavailable",
      `The Edge API did not answer within ${SWEEP_READ_DEADLINE_MS / 1000} seconds.`,
    );
  return read.value;
}

/**
 * The sweeper could not read a stale request's current value: it backs off (the request's last update
 * moves, so it is stale again a minute later) and, after SWEEP_READ_ATTEMPTS, ends it with a sentence:
 * an apply as failed (with Retry), an undo as applied with no undo left (undo it by hand).
 */
async function sweepReadFailed(
  deps: Deps,
  r: ApprovalRequest,
  state: "approved" | "undoing",
  err: unknown,
): Promise<ApprovalRequest | undefined> {
  const tries = (r.lastError?.tries ?? 0) + 1;
  if (tries < SWEEP_READ_ATTEMPTS) {
    deps.logger.warn(
      { err, requestId: r.id, tries },
      "could not read the current value to reconcile; tried again in a minute",
    );
    const previous = r.lastError ?? { kind: "unknown", message: UNKNOWN_OUTCOME_SENTENCE };
    await deps.store.approvals.annotate(r.id, state, { lastError: { ...previous, tries } });
    return undefined;
  }
  const { kind, params } = mustResolve(r);
  const reason = toUserSentence(err);
  const ended = { leaseEndedBy: deps.now() };
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
            failedAt: deps.now(),
          },
          ended,
        )
      : await move(
          deps,
          r.id,
          "undoing",
          "applied",
          {
            lastError: {
              kind: "undo_gave_up",
              message: `The automatic undo could not be finished: the current value could not be read ${tries} times (${reason}); check it and undo it by hand with ${kind.askAgain(params)}.`,
            },
            undoAt: null,
          },
          ended,
        );
  if (moved) {
    countState(deps, moved.state);
    await audit(deps, moved, "system", "reconcile", moved.state, { reason: "unreadable", tries });
  }
  return moved;
}

// ---- temporary changes ----------------------------------------------------------------------------

export type UndoOutcome =
  /** Put back; or left as it is (lastError `changed_since`) because someone changed it since. */
  | { kind: "undone"; request: ApprovalRequest }
  /** The undo call failed: tried again later (the request is applied again, with the reason). */
  | { kind: "undo_failed"; request: ApprovalRequest }
  /** Sent, no answer: the reconciler decides. */
  | { kind: "undo_unknown"; request: ApprovalRequest };

export const TAKEN_OVER_UNDO_SENTENCE =
  "Not undone: a later request set this since, so edgeops left it as that request has it.";

export const CHANGED_SINCE_UNDO_SENTENCE =
  "Not undone: the setting was changed since this change was applied (in the dashboard, or by another request), so edgeops left it as it is.";

/**
 * Undo an applied temporary change once: the caller that wins applied → undoing puts the previous
 * value back, unless the setting no longer has the value this change set (someone changed it since),
 * in which case it is left alone and the request says why. `dueBy`: only if its time has come
 * (the sweeper); absent: Undo now.
 */
async function undoOnce(
  deps: Deps,
  request: ApprovalRequest,
  actorId: string,
  dueBy?: number,
): Promise<UndoOutcome | undefined> {
  const claimed = await move(
    deps,
    request.id,
    "applied",
    "undoing",
    { lastError: null, undoneBy: actorId },
    { undoDueBy: dueBy ?? Number.MAX_SAFE_INTEGER },
  );
  if (!claimed) return undefined;
  const flight = await holdInFlight(deps, claimed.id, "undoing");
  try {
    return await finishUndo(flight.deps, claimed, actorId);
  } finally {
    await flight.end();
  }
}

async function finishUndo(deps: Deps, r: ApprovalRequest, actorId: string): Promise<UndoOutcome> {
  const { kind, params } = mustResolve(r);
  const back = kind.undo?.(params, restoreOf(r));
  const target = kind.targetKey?.(params, scopeOf(r));
  let note = null as ApprovalError | null;
  try {
    const left = await withChangeLock(deps, kind, scopeOf(r), params, async () => {
      const current = await readForSweep(deps, { kind, params }, r);
      // Only while this request is still the target's last writer (asked last, just before the write).
      const owner = target ? await ownerOf(deps, r.teamId, target, r.id) : undefined;
      if (!back || !kind.inForce(params, current) || owner) {
        const moved = await move(deps, r.id, "undoing", "undone", {
          lastError: {
            kind: "changed_since",
            message: owner ? TAKEN_OVER_UNDO_SENTENCE : CHANGED_SINCE_UNDO_SENTENCE,
          },
          undoAt: null,
          ...(owner ? { note: { kind: "superseded", by: otherOf(owner) } } : {}),
        });
        countState(deps, "undone");
        await audit(deps, r, actorId, "undo", "left", { observedNow: current as never });
        return { kind: "undone", request: moved ?? r } as const;
      }
      const report = await kind.apply(deps, scopeOf(r), back);
      note = await readBack(deps, kind, scopeOf(r), back, report);
      return undefined;
    });
    if (left) return left;
  } catch (err) {
    if (outcomeUnknown(err)) {
      const lastError: ApprovalError = {
        kind: "unknown",
        message: err instanceof ReadBackError ? err.message : UNKNOWN_OUTCOME_SENTENCE,
      };
      const noted = await deps.store.approvals.annotate(r.id, "undoing", { lastError });
      await audit(deps, r, actorId, "undo", "unknown", { error: (err as EdgeApiError).kind });
      return { kind: "undo_unknown", request: noted ?? r };
    }
    return undoFailed(deps, r, actorId, toApprovalError(err));
  }
  const undone = await move(deps, r.id, "undoing", "undone", {
    lastError: note,
    undoAt: null,
  });
  countState(deps, "undone");
  await audit(deps, r, actorId, "undo", "undone", {
    restored: restoreOf(r) as never,
    ...(note ? { alsoChanged: note.message } : {}),
  });
  return { kind: "undone", request: undone ?? { ...r, state: "undone" } };
}

/** Back to applied, tried again in a minute; after UNDO_ATTEMPTS, left for a person with the reason. */
async function undoFailed(
  deps: Deps,
  r: ApprovalRequest,
  actorId: string,
  error: ApprovalError,
): Promise<UndoOutcome> {
  const attempts = r.attempts + 1;
  const giveUp = attempts >= UNDO_ATTEMPTS;
  const { kind, params } = mustResolve(r);
  const lastError: ApprovalError = {
    ...error,
    message: giveUp
      ? `The automatic undo failed ${attempts} times (${error.message}); undo it by hand with ${kind.askAgain(params)}.`
      : `The undo failed (${error.message}); edgeops tries again in a minute.`,
  };
  deps.logger.warn({ requestId: r.id, error: error.kind, attempts }, "undo of a temporary change failed");
  const back = await move(deps, r.id, "undoing", "applied", {
    lastError,
    incrementAttempts: true,
    undoAt: giveUp ? null : deps.now() + UNDO_RETRY_MS,
  });
  await audit(deps, r, actorId, "undo", "failed", { error: error.kind, attempts, gaveUp: giveUp });
  return { kind: "undo_failed", request: back ?? r };
}

/** Undo now, on the card: the requester or an approver; exactly one press acts. */
export async function undoNow(deps: Deps, input: DecisionInput): Promise<DecisionOutcome> {
  const request = await loadForDecision(deps, input);
  if (!request) return { kind: "not_found" };
  if (request.state !== "applied" || request.undoAt === null) return { kind: "not_undoable", request };
  if (
    request.requesterId !== input.userId &&
    !(await input.isApprover(input.userId, (await approversFor(deps, request)).approvers))
  )
    return { kind: "not_approver", request };
  const outcome = await undoOnce(deps, request, input.userId);
  return (
    outcome ?? { kind: "already_decided", request: (await deps.store.approvals.get(request.id)) ?? request }
  );
}

/** Temporary changes whose time is up, each undone by whichever replica wins its claim. */
export async function undoDue(deps: Deps, scope: WorkScope = {}, limit = 50): Promise<ApprovalRequest[]> {
  const due = await deps.store.approvals.listDueUndo(deps.now(), limit, scope);
  return sweepFairly(
    deps,
    due,
    "undo of a temporary change could not run; next sweep tries again",
    async (r) => (await undoOnce(deps, r, "system", deps.now()))?.request,
  );
}

/**
 * Run `one` on each due request round-robin over workspaces, a few at once, one per workspace: one
 * workspace's slow or failing rows (its reads are slow, its key's queue is full) leave the others' on
 * time. Resolves once all ran, with what they moved, in the order they finished.
 */
async function sweepFairly(
  deps: Deps,
  due: readonly ApprovalRequest[],
  failed: string,
  one: (r: ApprovalRequest) => Promise<ApprovalRequest | undefined>,
): Promise<ApprovalRequest[]> {
  const moved: ApprovalRequest[] = [];
  const pool = createFairPool<ApprovalRequest>({
    concurrency: SWEEP_CONCURRENCY,
    perWorkspace: 1,
    id: (r) => r.id,
    teamId: (r) => r.teamId,
    async run(r) {
      try {
        const done = await one(r);
        if (done) moved.push(done);
        return done !== undefined;
      } catch (err) {
        deps.logger.warn({ err, requestId: r.id }, failed);
        return false;
      }
    },
  });
  await pool.submit(due);
  return moved;
}

/** Due undos run at once, at most one of each workspace. */
export const SWEEP_CONCURRENCY = 4;

/**
 * Undos left `undoing` for over a minute (no answer, or the process died mid-undo): claimed again by
 * compare-and-set on their last update and finished from the current value, so each is done once.
 */
export async function reconcileStaleUndos(
  deps: Deps,
  scope: WorkScope = {},
  limit = 50,
): Promise<ApprovalRequest[]> {
  const stale = await deps.store.approvals.listStaleApproved(
    deps.now() - RECONCILE_AFTER_MS,
    limit,
    scope,
    "undoing",
  );
  return sweepFairly(deps, stale, "could not reconcile an undo; next sweep tries again", (r) =>
    reconcileUndoOne(deps, r),
  );
}

async function reconcileUndoOne(deps: Deps, r: ApprovalRequest): Promise<ApprovalRequest | undefined> {
  const c = resolveChange(r);
  const back = c?.kind.undo?.(c.params, restoreOf(r));
  if (!c || !back) return undefined;
  let current: unknown;
  try {
    current = await readForSweep(deps, c, r);
  } catch (err) {
    return sweepReadFailed(deps, r, "undoing", err).catch((e: unknown) => {
      deps.logger.warn({ err: e, requestId: r.id }, "could not record a failed read; next sweep tries again");
      return undefined;
    });
  }
  if (!c.kind.inForce(back, current)) {
    // Not put back (or changed again): applied, due now, so the next sweep's undo decides once more.
    return move(deps, r.id, "undoing", "applied", { undoAt: deps.now() }, { leaseEndedBy: deps.now() });
  }
  const undone = await move(
    deps,
    r.id,
    "undoing",
    "undone",
    { lastError: null, undoAt: null },
    { leaseEndedBy: deps.now() },
  );
  if (!undone) return undefined;
  countState(deps, "undone");
  await audit(deps, undone, "system", "reconcile", "undone");
  return undone;
}
