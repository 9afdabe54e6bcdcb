import type { Deps } from "../deps.js";
import type { ChangeRequest } from "../store/index.js";
import {
  annotateRequest,
  type DecisionInput,
  type DecisionOutcome,
  loadForDecision,
  MAX_TEMPORARY_MS,
} from "./moves.js";
import { mayUndo } from "./undo-and-reconcile.js";

/**
 * Make permanent and Extend: the two moves on an applied temporary change's undo time that are not a state
 * move. Each is a compare-and-set on the request row guarded by state `applied` and the undo time the presser's
 * answer was decided on, so exactly one of two presses (or a press and the sweeper's undo claim) wins; the
 * winner's move is audited and announced to the change observers (the approval card redraws). Who may press
 * them: whoever may press Undo now (mayUndo).
 */

/** Make permanent: the change stays in force; its scheduled undo is cancelled. */
export async function makePermanent(deps: Deps, input: DecisionInput): Promise<DecisionOutcome> {
  const request = await loadForDecision(deps, input);
  if (!request) return { kind: "not_found" };
  const undoAt = request.undoAt;
  if (request.state !== "applied" || undoAt === null) return { kind: "not_undoable", request };
  if (!(await mayUndo(deps, request, input))) return { kind: "not_approver", request };
  const moved = await annotateRequest(
    deps,
    request.id,
    "applied",
    { undoAt: null },
    { userId: input.userId, step: "make_permanent", outcome: "permanent", details: { undoAtWas: undoAt } },
    { undoAtIs: undoAt },
  );
  if (!moved) return lost(deps, request);
  return { kind: "made_permanent", request: moved };
}

/**
 * Extend: the undo comes `byMs` later than it would (counted from now when it is already due), at most
 * MAX_TEMPORARY_MS from now; further is refused with the latest it may have (Make permanent is the way past it).
 */
export async function extendUndo(
  deps: Deps,
  input: DecisionInput & { byMs: number },
): Promise<DecisionOutcome> {
  const request = await loadForDecision(deps, input);
  if (!request) return { kind: "not_found" };
  const undoAt = request.undoAt;
  if (request.state !== "applied" || undoAt === null) return { kind: "not_undoable", request };
  if (!(await mayUndo(deps, request, input))) return { kind: "not_approver", request };
  const now = deps.clock.now();
  const to = Math.max(undoAt, now) + input.byMs;
  if (to - now > MAX_TEMPORARY_MS) return { kind: "extend_too_far", request, latest: now + MAX_TEMPORARY_MS };
  const moved = await annotateRequest(
    deps,
    request.id,
    "applied",
    { undoAt: to },
    { userId: input.userId, step: "extend", outcome: "extended", details: { from: undoAt, to } },
    { undoAtIs: undoAt },
  );
  if (!moved) return lost(deps, request);
  return { kind: "extended", request: moved, from: undoAt };
}

/** Another press, or the undo, moved it first: the request as it is now. */
async function lost(deps: Deps, request: ChangeRequest): Promise<DecisionOutcome> {
  return { kind: "already_decided", request: (await deps.store.changeRequests.get(request.id)) ?? request };
}
