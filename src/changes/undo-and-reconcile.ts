import type { Deps } from "../deps.js";
import type { EdgeApiError } from "../edge/errors.js";
import type { ChangeError, ChangeRequest, WorkScope } from "../store/index.js";
import { inFlight } from "./in-flight.js";
import { type ResolvedChange, resolveChange } from "./index.js";
import { isOneOff } from "./kind.js";
import {
  approversFor,
  audit,
  countState,
  type DecisionInput,
  type DecisionOutcome,
  expireIfDue,
  loadForDecision,
  move,
  moveToApplied,
  mustResolve,
  otherOf,
  outcomeUnknown,
  ownerOf,
  RECONCILE_AFTER_MS,
  readBack,
  readForSweep,
  restoreOf,
  scopeOf,
  sweepReadFailed,
  targetOf,
  toChangeError,
  UNDO_ATTEMPTS,
  UNDO_RETRY_MS,
  type UndoOutcome,
  undoByHand,
  undoSchedule,
  unknownSentence,
} from "./moves.js";
import { LockLostError, withChangeLock } from "./target-lock.js";

/** Sweeps (expiry, reconcile), temporary changes and their undo: the engine's moves that come later. */

export const ONE_OFF_UNKNOWN_SENTENCE =
  "The Edge API never answered, and edgeops can't tell afterwards whether this ran. Check it, then Retry if it did not.";

export const NOT_APPLIED_SENTENCE =
  "The change was not in force when edgeops checked again, so it may never have reached the Edge API. Retry, or make a new request.";

/** NOT_APPLIED_SENTENCE for a kind whose read may not show a change the API accepted (notShownMeansUnknown). */
export const NOT_SHOWN_SENTENCE =
  "The change still did not show when edgeops checked again, so edgeops can't say it is in effect: check it in the bunny.net dashboard, then Retry or make a new request.";

/** The target's value now, for a sweep; a failed read is recorded on the request, for the next sweep. */
async function readForSweepOrRecord(
  deps: Deps,
  c: ResolvedChange,
  r: ChangeRequest,
  state: "approved" | "undoing",
): Promise<{ current: unknown } | { recorded: ChangeRequest | undefined }> {
  try {
    return { current: (await readForSweep(deps, c, r)).value };
  } catch (err) {
    const recorded = await sweepReadFailed(deps, r, state, err).catch((e: unknown) => {
      deps.logger.warn({ err: e, requestId: r.id }, "could not record a failed read; next sweep tries again");
      return undefined;
    });
    return { recorded };
  }
}

async function reconcileOne(deps: Deps, r: ChangeRequest): Promise<ChangeRequest | undefined> {
  const c = resolveChange(r);
  if (!c) return undefined;
  const read = await readForSweepOrRecord(deps, c, r, "approved");
  if (!("current" in read)) return read.recorded;
  const { current } = read;
  const inForce = c.kind.inForce(c.params, current);
  // Only once no apply holds the request any more (its lease ended: it finished or its replica died).
  const ended = { leaseEndedBy: deps.clock.now() };
  const audited = (outcome: "applied" | "failed") => ({
    guard: ended,
    audit: { userId: "system", step: "reconcile", outcome, details: { observedNow: current as never } },
  });
  const moved = isOneOff(c.kind, c.params)
    ? await move(
        deps,
        r.id,
        "approved",
        "failed",
        { lastError: { kind: "not_known", message: ONE_OFF_UNKNOWN_SENTENCE }, failedAt: deps.clock.now() },
        audited("failed"),
      )
    : inForce
      ? // What it replaced is what the request saw (an apply refuses a value that moved since), or what a
        // temporary change it took over would have put back.
        await moveToApplied(
          deps,
          r,
          "approved",
          { lastError: null, ...undoSchedule(deps, r) },
          targetOf(r)?.key,
          r.observed,
          audited("applied"),
        )
      : await move(
          deps,
          r.id,
          "approved",
          "failed",
          {
            lastError: {
              kind: "not_applied",
              message: c.kind.notShownMeansUnknown ? NOT_SHOWN_SENTENCE : NOT_APPLIED_SENTENCE,
            },
            failedAt: deps.clock.now(),
          },
          audited("failed"),
        );
  if (moved) countState(deps, moved.state);
  return moved;
}

// ---- temporary changes ----------------------------------------------------------------------------

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
  request: ChangeRequest,
  actorId: string,
  dueBy?: number,
): Promise<UndoOutcome | undefined> {
  const claimed = await move(
    deps,
    request.id,
    "applied",
    "undoing",
    { lastError: null, undoneBy: actorId },
    // The claim's row is the undo's outcome (finishUndo).
    { guard: { undoDueBy: dueBy ?? Number.MAX_SAFE_INTEGER }, audit: null },
  );
  if (!claimed) return undefined;
  return inFlight(deps, claimed.id, "undoing", (held) => finishUndo(held, claimed, actorId));
}

async function finishUndo(deps: Deps, r: ChangeRequest, actorId: string): Promise<UndoOutcome> {
  const { kind, params } = mustResolve(r);
  const back = kind.undo?.(params, restoreOf(r));
  const target = kind.targetKey?.(params, scopeOf(r));
  let note = null as ChangeError | null;
  try {
    const left = await withChangeLock(deps, kind, scopeOf(r), params, async (locked) => {
      const seen = await readForSweep(locked, { kind, params }, r);
      const current = seen.value;
      // Only while this request is still the target's last writer (asked last, just before the write).
      const owner = target ? await ownerOf(deps, r.teamId, target, r.id) : undefined;
      if (!back || !kind.inForce(params, current) || owner) {
        const moved = await move(
          deps,
          r.id,
          "undoing",
          "undone",
          {
            lastError: {
              kind: "changed_since",
              message: owner ? TAKEN_OVER_UNDO_SENTENCE : CHANGED_SINCE_UNDO_SENTENCE,
            },
            undoAt: null,
            ...(owner ? { note: { kind: "superseded", by: otherOf(owner) } } : {}),
          },
          {
            audit: {
              userId: actorId,
              step: "undo",
              outcome: "left",
              details: { observedNow: current as never },
            },
          },
        );
        countState(deps, "undone");
        return { kind: "undone", request: moved ?? r } as const;
      }
      const report = await kind.apply(locked, scopeOf(r), back, seen);
      note = await readBack(locked, kind, scopeOf(r), back, report);
      return undefined;
    });
    if (left) return left;
  } catch (err) {
    if (outcomeUnknown(err)) {
      const lastError: ChangeError = {
        kind: "unknown",
        message: unknownSentence(err),
      };
      const noted = await deps.store.changeRequests.annotate(r.id, "undoing", { lastError });
      await audit(deps, r, actorId, "undo", "unknown", {
        error: err instanceof LockLostError ? "lock_lost" : (err as EdgeApiError).kind,
      });
      if (noted) await deps.changeObservers.notifyNoted(noted, deps.logger);
      return { kind: "undo_unknown", request: noted ?? r };
    }
    return undoFailed(deps, r, actorId, toChangeError(err));
  }
  const undone = await move(
    deps,
    r.id,
    "undoing",
    "undone",
    { lastError: note, undoAt: null },
    {
      audit: {
        userId: actorId,
        step: "undo",
        outcome: "undone",
        details: { restored: restoreOf(r) as never, ...(note ? { alsoChanged: note.message } : {}) },
      },
    },
  );
  countState(deps, "undone");
  return { kind: "undone", request: undone ?? { ...r, state: "undone" } };
}

/** Back to applied, tried again in a minute; after UNDO_ATTEMPTS, left for a person with the reason. */
async function undoFailed(
  deps: Deps,
  r: ChangeRequest,
  actorId: string,
  error: ChangeError,
): Promise<UndoOutcome> {
  const attempts = r.attempts + 1;
  const giveUp = attempts >= UNDO_ATTEMPTS;
  const lastError: ChangeError = {
    ...error,
    message: giveUp
      ? `The automatic undo failed ${attempts} times (${error.message}); ${undoByHand(r)}.`
      : `The undo failed (${error.message}); edgeops tries again in a minute.`,
  };
  deps.logger.warn({ requestId: r.id, error: error.kind, attempts }, "undo of a temporary change failed");
  const back = await move(
    deps,
    r.id,
    "undoing",
    "applied",
    { lastError, incrementAttempts: true, undoAt: giveUp ? null : deps.clock.now() + UNDO_RETRY_MS },
    {
      audit: {
        userId: actorId,
        step: "undo",
        outcome: "failed",
        details: { error: error.kind, attempts, gaveUp: giveUp },
      },
    },
  );
  return { kind: "undo_failed", request: back ?? r };
}

/**
 * Who may press Undo now (and Make permanent or Extend, which decide the same undo): the requester, or an
 * approver of the channel the change was asked in, wherever the button is pressed.
 */
export async function mayUndo(deps: Deps, request: ChangeRequest, input: DecisionInput): Promise<boolean> {
  return (
    request.requesterId === input.userId ||
    input.isApprover(input.userId, (await approversFor(deps, request)).approvers)
  );
}

/** Undo now, on the card: the requester or an approver; exactly one press acts. */
export async function undoNow(deps: Deps, input: DecisionInput): Promise<DecisionOutcome> {
  const request = await loadForDecision(deps, input);
  if (!request) return { kind: "not_found" };
  if (request.state !== "applied" || request.undoAt === null) return { kind: "not_undoable", request };
  if (!(await mayUndo(deps, request, input))) return { kind: "not_approver", request };
  const outcome = await undoOnce(deps, request, input.userId);
  return (
    outcome ?? {
      kind: "already_decided",
      request: (await deps.store.changeRequests.get(request.id)) ?? request,
    }
  );
}

async function reconcileUndoOne(deps: Deps, r: ChangeRequest): Promise<ChangeRequest | undefined> {
  const c = resolveChange(r);
  const back = c?.kind.undo?.(c.params, restoreOf(r));
  if (!c || !back) return undefined;
  const read = await readForSweepOrRecord(deps, c, r, "undoing");
  if (!("current" in read)) return read.recorded;
  const { current } = read;
  if (!c.kind.inForce(back, current)) {
    // Not put back (or changed again): applied, due now, so the next sweep's undo decides once more.
    return move(
      deps,
      r.id,
      "undoing",
      "applied",
      { undoAt: deps.clock.now() },
      // Not audited: the next undo, due now, writes the row of what it does.
      { guard: { leaseEndedBy: deps.clock.now() }, audit: null },
    );
  }
  const undone = await move(
    deps,
    r.id,
    "undoing",
    "undone",
    { lastError: null, undoAt: null },
    {
      guard: { leaseEndedBy: deps.clock.now() },
      audit: { userId: "system", step: "reconcile", outcome: "undone" },
    },
  );
  if (undone) countState(deps, "undone");
  return undone;
}

// ---- the sweeps ----------------------------------------------------------------------------------

export type SweepKind = "expire" | "reconcile" | "undo" | "reconcile-undo";

/**
 * One of the engine's sweeps as data, for the job that runs them (src/jobs/change-sweeps.ts): how to list
 * its due requests and how to move one. Each lists requests of its own state, so a request is due in at
 * most one sweep at a time.
 */
export interface Sweep {
  /** Its due requests in the scope's workspaces, at most `limit`. */
  listDue(deps: Deps, scope: WorkScope, limit?: number): Promise<ChangeRequest[]>;
  /** Move one due request; what it moved, when this replica won the move. */
  moveOne(deps: Deps, r: ChangeRequest): Promise<ChangeRequest | undefined>;
  /** Logged when `moveOne` throws; the request is left for the next sweep. */
  failed: string;
}

export const SWEEPS: Readonly<Record<SweepKind, Sweep>> = {
  /** Pending requests whose time is up, expired by whichever replica wins each CAS. */
  expire: {
    listDue: (deps, scope, limit = 100) =>
      deps.store.changeRequests.listExpiredPending(deps.clock.now(), limit, scope),
    moveOne: expireIfDue,
    failed: "could not expire a request; next sweep tries again",
  },
  /**
   * Requests left `approved` for over a minute (the apply's answer was lost, its `applied` write failed,
   * or the process died between the compare-and-set and the call): re-read the current value and move
   * each to applied (in force) or failed (with Retry).
   */
  reconcile: {
    listDue: (deps, scope, limit = 50) =>
      deps.store.changeRequests.listStaleApproved(deps.clock.now() - RECONCILE_AFTER_MS, limit, scope),
    moveOne: reconcileOne,
    failed: "could not reconcile a request; next sweep tries again",
  },
  /** Temporary changes whose time is up, each undone by whichever replica wins its claim. */
  undo: {
    listDue: (deps, scope, limit = 50) =>
      deps.store.changeRequests.listDueUndo(deps.clock.now(), limit, scope),
    moveOne: async (deps, r) => (await undoOnce(deps, r, "system", deps.clock.now()))?.request,
    failed: "undo of a temporary change could not run; next sweep tries again",
  },
  /**
   * Undos left `undoing` for over a minute (no answer, or the process died mid-undo): claimed again by
   * compare-and-set on their last update and finished from the current value, so each is done once.
   */
  "reconcile-undo": {
    listDue: (deps, scope, limit = 50) =>
      deps.store.changeRequests.listStaleApproved(
        deps.clock.now() - RECONCILE_AFTER_MS,
        limit,
        scope,
        "undoing",
      ),
    moveOne: reconcileUndoOne,
    failed: "could not reconcile an undo; next sweep tries again",
  },
};

/** The due temporary changes of `scope`, undone one after another (one workspace's uninstall). */
export async function undoDue(deps: Deps, scope: WorkScope, limit?: number): Promise<ChangeRequest[]> {
  const { listDue, moveOne, failed } = SWEEPS.undo;
  const undone: ChangeRequest[] = [];
  for (const r of await listDue(deps, scope, limit)) {
    try {
      const moved = await moveOne(deps, r);
      if (moved) undone.push(moved);
    } catch (err) {
      deps.logger.warn({ err, requestId: r.id }, failed);
    }
  }
  return undone;
}
