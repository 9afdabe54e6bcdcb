import { createHash } from "node:crypto";
import type { Deps } from "../deps.js";
import type { EdgeApiError } from "../edge/errors.js";
import { UserError } from "../errors.js";
import type { ChangeError, ChangeRequest, EffectivePolicy, NewChangeRequest } from "../store/index.js";
import { StoreError } from "../store/index.js";
import { inFlight, leaseWithMove, type TakenLease } from "./in-flight.js";
import { resolveChange } from "./index.js";
import { type ChangeKind, type ChangeScope, sameValue, type TargetRead } from "./kind.js";
import {
  type ApproverCheck,
  alsoChangedDetail,
  annotateRequest,
  approversFor,
  audit,
  type ChangeInput,
  type ChangeOutcome,
  countState,
  type DecisionInput,
  type DecisionOutcome,
  decide,
  expireIfDue,
  loadForDecision,
  MAX_TEMPORARY_MS,
  move,
  moveToApplied,
  mustResolve,
  OTHER_SETTINGS_MOVED,
  otherOf,
  outcomeUnknown,
  ownerOf,
  pendingUndoOwner,
  type ReadBackError,
  readBack,
  readTarget,
  restoreOf,
  scopeOf,
  targetOf,
  toChangeError,
  undoSchedule,
  unknownSentence,
} from "./moves.js";
import { policyCovers } from "./policy-coverage.js";
import { policyFor } from "./stricter-policy.js";
import { LockLostError, withChangeLock } from "./target-lock.js";

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

/** Whether `policy` makes this change wait for approval (the kind may decide, as the policy change does). */
async function approvalRequired<P, V>(
  deps: Deps,
  kind: ChangeKind<P, V>,
  scope: ChangeScope,
  params: P,
  current: V | null,
  policy: EffectivePolicy,
): Promise<boolean> {
  return kind.needsApproval
    ? await kind.needsApproval(params, current, policy, deps, scope)
    : policy.approvals === "required" && policyCovers(policy.approvalsFor, kind);
}

/**
 * Why this change, asked in the scope's channel, would apply at once with nobody approving it (approvals are
 * off there, or do not cover it); undefined when it would wait for approval. Read before offering a button's
 * confirmation, so the person pressing sees its impact where no approval card will show it.
 */
export async function appliesWithoutApproval<P, V>(
  deps: Deps,
  kind: ChangeKind<P, V>,
  scope: ChangeScope,
  params: P,
  current: V | null,
): Promise<"off" | "not_covered" | undefined> {
  const policy = await policyFor(deps, scope.teamId, scope.channelId, false);
  if (await approvalRequired(deps, kind, scope, params, current, policy)) return undefined;
  return policy.approvals === "off" ? "off" : "not_covered";
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
  const existing = await deps.store.changeRequests.get(input.requestId);
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
  const approvalsNeeded =
    input.approversReachable === undefined
      ? policy.approvalsNeeded
      : Math.max(1, Math.min(policy.approvalsNeeded, input.approversReachable));
  const policyRequires = await approvalRequired(deps, kind, scope, input.params, current, policy);
  // An agent's proposal always waits for a person: where the policy asks no approval, for one press.
  const onePress = input.proposedBy !== undefined && !policyRequires;
  const required = policyRequires || onePress;
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
  // Waiting beside requests for the same target, with another value or the same one asked apart (for good
  // and for a while): both cards say so.
  const conflicts =
    required && target
      ? (await waitingRequests(deps, input.teamId, kind.name)).filter(
          (r) => r.id !== input.requestId && targetOf(r)?.key === target,
        )
      : [];
  const sameValue = (r: ChangeRequest) =>
    JSON.stringify(canonical(r.params)) === JSON.stringify(canonical(input.params));
  const noted = (r: ChangeRequest, other: ChangeRequest) => ({
    ...otherOf(r),
    ...(sameValue(other) ? { sameValue: true } : {}),
  });
  // The workspace removed edgeops while this request was being asked (its read was slow): nothing is
  // asked, so its removal has nothing new to undo and its key nothing more to carry.
  const removal = await deps.store.removals.get(input.teamId);
  if (removal && removal.finishedAt === null)
    throw new UserError("no_key", "edgeops is being removed from this workspace, so nothing was asked.");
  const created = await createRequest(deps, input, twinKey, {
    id: input.requestId,
    kind: kind.name,
    teamId: input.teamId,
    channelId: input.channelId,
    requesterId: input.userId,
    params: input.params,
    observed: current,
    expiresAt: deps.clock.now() + policy.expiryMinutes * 60_000,
    approvalsNeeded: onePress ? 1 : approvalsNeeded,
    undoAfterMs: input.temporaryMs ?? null,
    ...(input.proposedBy ? { proposedBy: { ...input.proposedBy, ...(onePress ? { onePress } : {}) } } : {}),
    twinKey,
    ...(conflicts.length > 0 ? { note: { kind: "conflicts", with: conflicts.map((r) => noted(r, r)) } } : {}),
  });
  if ("outcome" in created) return created.outcome;
  const { request } = created;
  countState(deps, "pending");
  await audit(deps, request, input.userId, "request", "pending", {
    approvals: onePress ? "one press (proposed by an agent)" : required ? "required" : "not required",
    ...(input.proposedBy ? { agent: input.proposedBy.agent, agentId: input.proposedBy.agentId } : {}),
    ...(required && approvalsNeeded < policy.approvalsNeeded
      ? { approvalsNeeded, policyNeeds: policy.approvalsNeeded, approversReachable: input.approversReachable }
      : {}),
    observed: current,
    ...(input.temporaryMs !== undefined ? { temporaryMs: input.temporaryMs } : {}),
  });
  // The other waiting cards name this one: a note, so one that can't be stored leaves the request as it is.
  for (const other of conflicts) {
    const listed = other.note?.kind === "conflicts" ? other.note.with : [];
    await annotateRequest(deps, other.id, "pending", {
      note: { kind: "conflicts", with: [...listed, noted(request, other)] },
    }).catch((err: unknown) =>
      deps.logger.warn({ err, requestId: other.id }, "could not note a conflicting request on its card"),
    );
  }
  if (required) return { kind: "pending", request, policy };

  // Nobody approved it: the requester is not recorded as its approver, the card and audit say why.
  const approvals = policy.approvals === "off" ? "off" : "not_covered";
  const lease = leaseWithMove(deps);
  const approved = await decide(
    deps,
    request,
    "pending",
    "approved",
    { decidedAt: deps.clock.now(), reason: { kind: "no_approval", approvals }, ...lease.patch },
    {
      audit: {
        userId: input.userId,
        step: "no_approval",
        outcome: approvals === "off" ? "approvals off" : "not required for this change",
      },
    },
  );
  if (!approved.won) return { kind: "duplicate", request: approved.request };
  countState(deps, "approved");
  return applyApproved(deps, approved.request, input.userId, lease.taken);
}

async function joinTwin(deps: Deps, twin: ChangeRequest, userId: string): Promise<ChangeOutcome> {
  await audit(deps, twin, userId, "request", "already pending");
  return { kind: "already_pending", request: twin };
}

/** The workspace's requests of one kind still waiting for approval (not expired), oldest first. */
export async function waitingRequests(
  deps: Deps,
  teamId: string,
  kindName: string,
): Promise<ChangeRequest[]> {
  const now = deps.clock.now();
  return (await deps.store.changeRequests.listPending(teamId, { kind: kindName })).filter(
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

/** The request waiting for approval with this twin key (expired ones too, when asked), if any. */
async function pendingTwin(
  deps: Deps,
  teamId: string,
  twinKey: string,
  expiredToo = false,
): Promise<ChangeRequest | undefined> {
  const now = deps.clock.now();
  return (await deps.store.changeRequests.listPending(teamId, { twinKey })).find(
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
  fields: NewChangeRequest,
): Promise<{ request: ChangeRequest } | { outcome: ChangeOutcome }> {
  for (let attempt = 0; ; attempt++) {
    try {
      return { request: await deps.store.changeRequests.create(fields) };
    } catch (err) {
      if (!(err instanceof StoreError)) throw err;
      const raced = await deps.store.changeRequests.get(input.requestId);
      // The store made it and its answer was lost (not refused as a second copy): it is this request.
      if (
        raced &&
        err.kind === "unavailable" &&
        raced.state === "pending" &&
        raced.requesterId === input.userId
      )
        return { request: raced };
      if (raced) return { outcome: { kind: "duplicate", request: raced } };
      const holder = twinKey ? await pendingTwin(deps, input.teamId, twinKey, true) : undefined;
      if (holder && holder.expiresAt > deps.clock.now())
        return { outcome: await joinTwin(deps, holder, input.userId) };
      if (!holder || attempt > 0) throw err;
      // Expired, not yet moved by the sweeper (which will, and will update its card): it gives way.
      await deps.store.changeRequests.annotate(holder.id, "pending", { twinKey: null });
    }
  }
}

/**
 * The single application of an approved request, then approved → applied | failed. Only a CAS winner calls
 * it, with the in-flight lease its move to approved took (leaseWithMove).
 */
async function applyApproved(
  deps: Deps,
  request: ChangeRequest,
  actorId: string,
  taken: TakenLease,
): Promise<ChangeOutcome> {
  return inFlight(deps, request.id, "approved", (held) => applyHeld(held, request, actorId), taken);
}

/** applyApproved's work, while the request's in-flight lease is held. */
async function applyHeld(deps: Deps, request: ChangeRequest, actorId: string): Promise<ChangeOutcome> {
  const { kind, params } = mustResolve(request);
  const target = kind.targetKey?.(params, scopeOf(request));
  let replaced: unknown = request.observed;
  let before: TargetRead<unknown> | undefined;
  // Set inside the target lock (a closure): typed so TypeScript does not narrow them here.
  let note = null as ChangeError | null;
  let applied = undefined as ChangeRequest | undefined | { storeFailed: unknown };
  try {
    // One writer per target: the check, the write and its read-back hold the target's lock.
    const moved = await withChangeLock(deps, kind, scopeOf(request), params, async (locked) => {
      if (target) {
        // Refused when the value moved since the request was made (another request, the dashboard).
        before = await readTarget(locked, kind, scopeOf(request), params);
        replaced = before.value;
        if (!kind.inForce(params, replaced) && !sameValue(replaced, request.observed))
          return { now: replaced };
        // A temporary change finding its value set for good (not by a temporary change it takes over):
        // applied, its undo would put back that same value and say "undone" while the zone keeps it.
        if (
          request.undoAfterMs !== null &&
          kind.inForce(params, replaced) &&
          !(await pendingUndoOwner(locked, request.teamId, target, request.id))
        )
          return { alreadySet: replaced };
      }
      if (!target || !kind.inForce(params, replaced)) {
        const report = await kind.apply(locked, scopeOf(request), params, before);
        note = await readBack(locked, kind, scopeOf(request), params, report);
      }
      // Still the target's only writer: its next writer reads the new owner (and what an undo puts back).
      applied = await markApplied(locked, request, actorId, target, replaced, note).catch((err: unknown) => ({
        storeFailed: err,
      }));
      return undefined;
    });
    if (moved && target && "alreadySet" in moved)
      return refuseAlreadySet(deps, request, actorId, target, moved.alreadySet);
    if (moved && target) return refuseStale(deps, request, actorId, target, moved.now);
  } catch (err) {
    if (outcomeUnknown(err)) {
      deps.logger.warn(
        { err, requestId: request.id },
        "change sent but not answered; the reconciler decides",
      );
      const lastError: ChangeError = {
        kind: "unknown",
        message: unknownSentence(err),
      };
      const noted = await deps.store.changeRequests.annotate(request.id, "approved", {
        lastError,
        incrementAttempts: true,
      });
      countState(deps, "unknown");
      await audit(deps, request, actorId, "apply", "unknown", {
        error: err instanceof LockLostError ? "lock_lost" : (err as EdgeApiError | ReadBackError).kind,
        ...alsoChangedDetail(err),
      });
      if (noted) await deps.changeObservers.notifyNoted(noted, deps.logger);
      return { kind: "unknown", request: noted ?? { ...request, lastError } };
    }
    const lastError = toChangeError(err);
    deps.logger.warn({ err, requestId: request.id, kind: request.kind }, "change failed");
    const failed = await move(
      deps,
      request.id,
      "approved",
      "failed",
      { lastError, failedAt: deps.clock.now(), incrementAttempts: true },
      {
        audit: {
          userId: actorId,
          step: "apply",
          outcome: "failed",
          details: {
            status: lastError.status ?? null,
            // Not "errorKey": a field named like a key is censored as a secret when the entry is stored.
            apiError: lastError.errorKey ?? null,
            error: lastError.kind,
            reason: lastError.message,
            ...alsoChangedDetail(err),
          },
        },
      },
    );
    countState(deps, "failed");
    return { kind: "failed", request: failed ?? { ...request, state: "failed", lastError } };
  }
  // Not an apply error: the change was made and its record failed. Not "nothing changed": not known yet,
  // and the reconciler settles it from the value it reads once the store answers again.
  if (applied && "storeFailed" in applied) return recordFailed(deps, request, actorId, applied.storeFailed);
  countState(deps, "applied");
  return { kind: "applied", request: applied ?? { ...request, state: "applied" } };
}

export const RECORD_FAILED_SENTENCE =
  "Not known yet: the Edge API took the change, but edgeops could not record it. It checks the value again shortly and says whether it is in force.";

/** The write was made and read back, but its move to applied failed (the store): the request says so, if it can. */
async function recordFailed(
  deps: Deps,
  request: ChangeRequest,
  actorId: string,
  err: unknown,
): Promise<ChangeOutcome> {
  deps.logger.warn({ err, requestId: request.id }, "change made but not recorded; the reconciler settles it");
  const lastError: ChangeError = { kind: "unknown", message: RECORD_FAILED_SENTENCE };
  try {
    // The move may have been made and only its answer lost: then it is applied, and the card says so.
    const stored = await deps.store.changeRequests.get(request.id);
    if (stored?.state === "applied") {
      countState(deps, "applied");
      await audit(deps, stored, actorId, "apply", "applied");
      await deps.changeObservers.notify(stored, deps.logger);
      return { kind: "applied", request: stored };
    }
    countState(deps, "unknown");
    const noted = await deps.store.changeRequests.annotate(request.id, "approved", { lastError });
    await audit(deps, request, actorId, "apply", "unknown", { error: "not_recorded" });
    if (noted) await deps.changeObservers.notifyNoted(noted, deps.logger);
    return { kind: "unknown", request: noted ?? { ...request, lastError } };
  } catch (e) {
    deps.logger.warn({ err: e, requestId: request.id }, "could not note the unrecorded change either");
    return { kind: "unknown", request: { ...request, lastError } };
  }
}

/**
 * The change is made: the move to applied, and the request becomes the target's owner (one transaction).
 * The move ends the flight's lease too: applied, the request is nothing the reconciler takes over.
 */
async function markApplied(
  deps: Deps,
  request: ChangeRequest,
  actorId: string,
  target: string | undefined,
  replaced: unknown,
  note: ChangeError | null,
): Promise<ChangeRequest | undefined> {
  const { flightLease } = deps;
  // From failed too: the reconciler may have given up on a call that was only slow, and it did succeed.
  const moved = await moveToApplied(
    deps,
    request,
    ["approved", "failed"],
    {
      lastError: note,
      incrementAttempts: true,
      ...undoSchedule(deps, request),
      ...(flightLease ? { leaseUntil: null } : {}),
    },
    target,
    replaced,
    {
      guard: {},
      audit: {
        userId: actorId,
        step: "apply",
        outcome: "applied",
        details: {
          // What the apply found (the audit's "before"), which is not always what the request saw.
          ...(target ? { observed: replaced as never } : {}),
          ...(note ? { [note.kind === "no_effect" ? "noEffect" : "alsoChanged"]: note.message } : {}),
        },
      },
    },
  );
  if (moved) flightLease?.endedByMove();
  return moved;
}

/** A value as its kind names it ("High"), else as JSON. */
// biome-ignore lint/suspicious/noExplicitAny: any kind's value type
const valueWords = (kind: ChangeKind<any, any>, v: unknown): string =>
  kind.valueLabel ? kind.valueLabel(v) : JSON.stringify(v ?? null);

/**
 * The value moved since the request was made: not applied (Retry stays, for when it moves back). Where
 * another request set it, the card says which.
 */
async function refuseStale(
  deps: Deps,
  request: ChangeRequest,
  actorId: string,
  target: string,
  current: unknown,
): Promise<ChangeOutcome> {
  const { kind, params } = mustResolve(request);
  const label = (v: unknown) => valueWords(kind, v);
  const lastError: ChangeError = {
    kind: "changed_since",
    message: `${kind.describe(params)} was not applied: ${kind.target(params)} changed from ${label(request.observed)} to ${label(current)} since this request was made, so edgeops left it as it is. To change it anyway, ask again: ${kind.askAgain(params)}`,
  };
  const supersededBy = await ownerOf(deps, request.teamId, target, request.id, request.createdAt);
  const failed = await move(
    deps,
    request.id,
    "approved",
    "failed",
    {
      lastError,
      failedAt: deps.clock.now(),
      incrementAttempts: true,
      ...(supersededBy ? { note: { kind: "superseded", by: otherOf(supersededBy) } } : {}),
    },
    {
      audit: {
        userId: actorId,
        step: "apply",
        outcome: "refused",
        details: {
          reason: "changed_since",
          observedNow: current as never,
          ...(supersededBy ? { supersededBy: supersededBy.id } : {}),
        },
      },
    },
  );
  countState(deps, "failed");
  return { kind: "failed", request: failed ?? { ...request, state: "failed", lastError } };
}

/**
 * A temporary change whose value is already set for good: not applied (nothing to set, nothing to
 * undo). The card says by which request (the target's last writer, where it set this value), else that
 * it was set outside edgeops.
 */
async function refuseAlreadySet(
  deps: Deps,
  request: ChangeRequest,
  actorId: string,
  target: string,
  current: unknown,
): Promise<ChangeOutcome> {
  const { kind, params } = mustResolve(request);
  const owner = await ownerOf(deps, request.teamId, target, request.id);
  const ownerChange = owner && resolveChange(owner);
  const by = owner && ownerChange?.kind.inForce(ownerChange.params, current) ? otherOf(owner) : null;
  const value = valueWords(kind, current);
  const cancelled = await move(
    deps,
    request.id,
    "approved",
    "cancelled",
    { note: { kind: "already_set", setting: kind.target(params), value, by } },
    {
      audit: {
        userId: actorId,
        step: "apply",
        outcome: "already_set",
        details: {
          observed: current as never,
          reason: `${kind.target(params)} is already ${value}, permanently${by ? "" : " (set outside edgeops)"}: this temporary change was not applied, so there is nothing to undo.`,
          ...(by ? { setBy: by.id } : {}),
        },
      },
    },
  );
  countState(deps, "cancelled");
  return { kind: "already_set", request: cancelled ?? { ...request, state: "cancelled" } };
}

/** The pending, unexpired request to approve or reject (one whose time is up expires now), or the outcome that ends it. */
async function pendingForDecision(
  deps: Deps,
  input: DecisionInput,
): Promise<{ request: ChangeRequest } | { ended: DecisionOutcome }> {
  const request = await loadForDecision(deps, input);
  if (!request) return { ended: { kind: "not_found" } };
  if (request.state !== "pending") return { ended: { kind: "already_decided", request } };
  const expired = await expireIfDue(deps, request);
  if (expired) return { ended: { kind: "expired", request: expired } };
  return { request };
}

/** Approve: the requester and non-approvers are refused; one approver wins the CAS (before expiry) and applies. */
export async function approve(deps: Deps, input: DecisionInput): Promise<DecisionOutcome> {
  const pending = await pendingForDecision(deps, input);
  if ("ended" in pending) return pending.ended;
  const { request } = pending;
  // An agent's proposal where the policy asks no approval: its requester's own press confirms it.
  const ownPress = request.proposedBy?.onePress === true && request.requesterId === input.userId;
  if (request.requesterId === input.userId && !ownPress) return { kind: "self_approval", request };
  if (!ownPress && !(await input.isApprover(input.userId, (await approversFor(deps, request)).approvers)))
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
  first: ChangeRequest,
  userId: string,
  isApprover: ApproverCheck,
): Promise<DecisionOutcome> {
  let request = first;
  for (let attempt = 0; attempt < 100; attempt++) {
    if (request.state !== "pending") return { kind: "already_decided", request };
    const expired = await expireIfDue(deps, request);
    if (expired) return { kind: "expired", request: expired };
    if (request.state === "pending" && request.expiresAt <= deps.clock.now())
      return { kind: "expired", request };
    if (request.approvedBy.includes(userId)) return { kind: "already_approved", request };
    let approvedBy = [...request.approvedBy, userId];
    const guard = { notExpiredAt: deps.clock.now(), approvedBy: request.approvedBy };
    let dropped: string[] = [];
    if (approvedBy.length >= request.approvalsNeeded && request.approvedBy.length > 0) {
      // The final approval: the earlier ones count only if those people are still approvers now (with
      // none earlier, as for every one-approval request, there is nobody to check and no rule to read).
      const rule = (await approversFor(deps, request)).approvers;
      const still = await Promise.all(request.approvedBy.map((id) => isApprover(id, rule)));
      dropped = request.approvedBy.filter((_, i) => !still[i]);
      approvedBy = [...request.approvedBy.filter((_, i) => still[i]), userId];
    }
    if (approvedBy.length >= request.approvalsNeeded) {
      const lease = leaseWithMove(deps);
      const approved = await move(
        deps,
        request.id,
        "pending",
        "approved",
        { decidedBy: userId, decidedAt: deps.clock.now(), approvedBy, ...lease.patch },
        { guard, audit: { userId, step: "approve", outcome: "approved", details: { approvedBy } } },
      );
      if (approved) {
        countState(deps, "approved");
        return applyApproved(deps, approved, userId, lease.taken);
      }
    } else {
      const recorded = await deps.store.changeRequests.annotate(
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
        await deps.changeObservers.notifyNoted(recorded, deps.logger);
        return {
          kind: "approval_recorded",
          request: recorded,
          remaining: recorded.approvalsNeeded - approvedBy.length,
          ...(dropped.length > 0 ? { dropped } : {}),
        };
      }
    }
    const latest = await deps.store.changeRequests.get(request.id);
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
  const pending = await pendingForDecision(deps, input);
  if ("ended" in pending) return pending.ended;
  const { request } = pending;
  if (request.requesterId === input.userId) {
    const withdrawn = await decide(
      deps,
      request,
      "pending",
      "cancelled",
      { decidedBy: input.userId, decidedAt: deps.clock.now(), reason: { kind: "withdrawn" } },
      { audit: { userId: input.userId, step: "withdraw", outcome: "cancelled" } },
    );
    if (!withdrawn.won) return { kind: "already_decided", request: withdrawn.request };
    countState(deps, "cancelled");
    return { kind: "withdrawn", request: withdrawn.request };
  }
  if (!(await input.isApprover(input.userId, (await approversFor(deps, request)).approvers)))
    return { kind: "not_approver", request };
  const rejected = await decide(
    deps,
    request,
    "pending",
    "rejected",
    { decidedBy: input.userId, decidedAt: deps.clock.now() },
    { audit: { userId: input.userId, step: "reject", outcome: "rejected" } },
  );
  if (!rejected.won) return { kind: "already_decided", request: rejected.request };
  countState(deps, "rejected");
  return { kind: "rejected", request: rejected.request };
}

/** The rejecter's reason, added after the rejection (theirs only): the request as it is now, or undefined. */
export async function setRejectReason(
  deps: Deps,
  input: { requestId: string; teamId: string; userId: string; text: string },
): Promise<ChangeRequest | undefined> {
  const request = await deps.store.changeRequests.get(input.requestId);
  if (request?.teamId !== input.teamId || request.state !== "rejected" || request.decidedBy !== input.userId)
    return undefined;
  return annotateRequest(
    deps,
    request.id,
    "rejected",
    { reason: { kind: "rejected", text: input.text } },
    { userId: input.userId, step: "reject", outcome: "reason", details: { reason: input.text } },
  );
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
  if (deps.clock.now() > failedAt + windowMs) {
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
  const lease = leaseWithMove(deps);
  const approved = await decide(
    deps,
    request,
    "failed",
    "approved",
    { decidedBy: input.userId, ...lease.patch },
    { audit: { userId: input.userId, step: "retry", outcome: "approved" } },
  );
  if (!approved.won) return { kind: "already_decided", request: approved.request };
  return applyApproved(deps, approved.request, input.userId, lease.taken);
}

async function closeFailed(
  deps: Deps,
  request: ChangeRequest,
  userId: string,
  to: "expired" | "cancelled",
  lastError: ChangeError,
): Promise<DecisionOutcome> {
  const closed = await decide(
    deps,
    request,
    "failed",
    to,
    { lastError, decidedAt: deps.clock.now() },
    { audit: { userId, step: "retry", outcome: to, details: { reason: lastError.kind } } },
  );
  if (!closed.won) return { kind: "already_decided", request: closed.request };
  countState(deps, to);
  return { kind: "retry_closed", request: closed.request };
}

/** Cancel a pending request whose card could not be posted; `sentence` says why, to whoever asked. */
export async function cancel(
  deps: Deps,
  request: ChangeRequest,
  reason: string,
  sentence?: string,
): Promise<void> {
  const cancelled = await move(
    deps,
    request.id,
    "pending",
    "cancelled",
    {
      decidedAt: deps.clock.now(),
      ...(sentence ? { lastError: { kind: "cancelled", message: sentence } } : {}),
    },
    { audit: { userId: request.requesterId, step: "cancel", outcome: "cancelled", details: { reason } } },
  );
  if (cancelled) countState(deps, "cancelled");
}

export {
  type ApproverCheck,
  type ChangeInput,
  type ChangeOutcome,
  type DecisionInput,
  type DecisionOutcome,
  MAX_TEMPORARY_MS,
} from "./moves.js";
