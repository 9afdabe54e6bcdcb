import { cancel } from "../changes/engine.js";
import { describeRequest } from "../changes/index.js";
import { annotateRequest, UNDO_RETRY_MS, undoByHand, undoCommand } from "../changes/moves.js";
import { undoDue } from "../changes/undo-and-reconcile.js";
import { MAX_CLOCK_SKEW_MS } from "../clock.js";
import type { Deps } from "../deps.js";
import { holdLease } from "../lease.js";
import type { ChangeRequest, WorkScope } from "../store/index.js";

/** On the card of a request that was waiting when the workspace removed edgeops. */
export const UNINSTALLED_SENTENCE =
  "edgeops was removed from this workspace, so this request was cancelled and nothing changed.";

export type UninstallReason = "app_uninstalled" | "tokens_revoked";

/**
 * How long a removed workspace's Edge API key is kept for undos that fail (each retried as the undo
 * sweep retries it: UNDO_RETRY_MS apart, UNDO_ATTEMPTS in all) or are still in flight. The undo's own
 * attempts end first (about ten minutes); the grace period bounds the rest (an undo whose outcome is
 * unknown, a read that keeps failing, an apply that was in flight): when it is over, temporary changes not
 * undone yet are left in force with a sentence, and the key goes once no undo or apply is in flight.
 */
export const UNINSTALL_GRACE_MS = 15 * 60_000;
/** The removal's claim (its row's lease), renewed every third of it while a replica works on it. */
export const REMOVAL_LEASE_MS = 60_000;

/** What a removal did so far, kept on its row (store/removals.ts) across replicas and restarts. */
interface RemovalProgress {
  /** The installation, watches, schedules and waiting requests are gone (the first pass got that far). */
  stopped: boolean;
  watches: number;
  schedules: number;
  cancelled: number;
  /** Temporary changes in force when the removal started, or applied during it: each undone or left. */
  changes: string[];
  keyRemoved: boolean;
}

const FRESH: RemovalProgress = {
  stopped: false,
  watches: 0,
  schedules: 0,
  cancelled: 0,
  changes: [],
  keyRemoved: false,
};

export type RemovalOutcome =
  /** Done: nothing left to undo or in flight; the key is deleted and the audit row written. */
  | "removed"
  /** Undos are still due or in flight: the key is kept for them and the change sweeper finishes the removal. */
  | "removing"
  /** Another event (here or on another replica) started this removal: nothing done here. */
  | "already_removing"
  | "already_removed";

export interface ForgottenWorkspace {
  /** Requests that moved (pending → cancelled, temporary changes undone): their cards are redrawn. */
  readonly moved: readonly ChangeRequest[];
  readonly watches: number;
  readonly schedules: number;
  readonly keyRemoved: boolean;
  readonly outcome: RemovalOutcome;
}

/** Temporary changes undone at once per pass (the undo's own batch). */
const UNDO_BATCH = 50;
/** Bounds each loop over batches (a workspace has at most a few hundred temporary changes). */
const MAX_PASSES = 100;
/** The most temporary changes of one workspace a removal reads at once. */
const MAX_TEMPORARY = UNDO_BATCH * MAX_PASSES;
/** Removals the change sweeper takes on per tick (each is a few statements unless it finishes). */
const REMOVALS_PER_TICK = 20;

/**
 * The workspace removed edgeops (or revoked its bot token): nothing may keep acting for it. Its
 * installation goes first (no new Slack work), then its watches and schedules; waiting requests are
 * cancelled and temporary changes undone now, while the Edge API key still opens. The key is deleted
 * only once no undo is due or in flight: an undo that fails is retried with it for UNINSTALL_GRACE_MS,
 * by the change sweeper (continueRemovals), which finishes the removal. One audit row, written when the
 * key goes, says what was undone and what was left in force, and why. A reinstall starts clean: an admin
 * sets the key again.
 *
 * Slack sends app_uninstalled and tokens_revoked for one uninstall, in any order, maybe to two replicas
 * at once: the removal's row (store/removals.ts) is its record and its claim, so the first event starts
 * it and the other finds it under way (or done) and does nothing.
 */
export async function forgetWorkspace(
  deps: Deps,
  teamId: string,
  reason: UninstallReason,
): Promise<ForgottenWorkspace> {
  const { store } = deps;
  const since = deps.clock.now();
  const until = since + REMOVAL_LEASE_MS;
  const existing = await store.removals.get(teamId);
  let started = false;
  if (!existing) started = await store.removals.start(teamId, reason, since, until, FRESH);
  else if (existing.finishedAt !== null && (await cameBack(deps, teamId, existing.finishedAt)))
    started = await store.removals.restart(teamId, existing.finishedAt, reason, since, until, FRESH);
  if (!started) {
    const current = (await store.removals.get(teamId)) ?? existing;
    const outcome = current?.finishedAt == null ? "already_removing" : "already_removed";
    deps.logger.info(
      { teamId, event: reason, startedBy: current?.event, since: current?.since, outcome },
      "this workspace's removal was started by another event: nothing more to do for this one",
    );
    return { moved: [], watches: 0, schedules: 0, keyRemoved: false, outcome };
  }
  const pass = await runPass(deps, { teamId, event: reason, since, progress: FRESH }, until, true);
  return {
    moved: pass.moved,
    watches: pass.progress.watches,
    schedules: pass.progress.schedules,
    keyRemoved: pass.progress.keyRemoved,
    outcome: pass.finished ? "removed" : "removing",
  };
}

/**
 * The change sweeper's step (src/jobs/change-sweeps.ts), in every replica: each removal under way that no
 * replica holds is claimed and taken one pass further (its temporary changes made due, or left in force
 * once its grace period is over), and finished once nothing is due or in flight. The undos themselves
 * are the undo sweep's. Returns how many removals this replica finished.
 */
export async function continueRemovals(deps: Deps, scope: WorkScope = {}): Promise<number> {
  const { store } = deps;
  let finished = 0;
  for (const removal of await store.removals.listUnclaimed(deps.clock.now(), REMOVALS_PER_TICK, scope)) {
    const now = deps.clock.now();
    const until = now + REMOVAL_LEASE_MS;
    if (!(await store.removals.claim(removal.teamId, now, until))) continue;
    try {
      // Read again once claimed: another replica's pass may have recorded more since the list was read.
      const claimed = (await store.removals.get(removal.teamId)) ?? removal;
      const progress = { ...FRESH, ...(claimed.progress as Partial<RemovalProgress>) };
      if ((await runPass(deps, { ...claimed, progress }, until, false)).finished) finished++;
    } catch (err) {
      deps.logger.warn(
        { err, teamId: removal.teamId },
        "could not take a workspace's removal further; the next sweep tries again",
      );
    }
  }
  return finished;
}

/** A workspace that came back after its removal finished: installed again, or a key set since. */
async function cameBack(deps: Deps, teamId: string, finishedAt: number): Promise<boolean> {
  if (await deps.store.installations.findByTeam(teamId)) return true;
  const key = await deps.store.keys.info(teamId);
  return key !== undefined && key.setAt > finishedAt;
}

interface Removal {
  teamId: string;
  event: string;
  since: number;
  progress: RemovalProgress;
}

interface Pass {
  moved: ChangeRequest[];
  progress: RemovalProgress;
  finished: boolean;
}

/**
 * One pass over a claimed removal (claimed until `first`), holding its claim while it runs; then finish
 * it (its audit row) when the pass found nothing due or in flight, else let go of the claim.
 */
async function runPass(deps: Deps, removal: Removal, first: number, fromEvent: boolean): Promise<Pass> {
  const { store, logger } = deps;
  const { teamId } = removal;
  const lease = holdLease({
    first,
    leaseMs: REMOVAL_LEASE_MS,
    clock: deps.clock,
    renew: (from, to) => store.removals.renew(teamId, from, to),
    onError: (err) => logger.warn({ err, teamId }, "could not renew the claim on a workspace's removal"),
  });
  let pass: { moved: ChangeRequest[]; progress: RemovalProgress; settled: boolean };
  try {
    pass = await removalPass(deps, removal, fromEvent);
  } catch (err) {
    await store.removals.release(teamId, await lease.end()).catch(() => undefined);
    throw err;
  }
  const until = await lease.end();
  const at = deps.clock.now();
  if (!pass.settled || !(await store.removals.finish(teamId, until, at))) {
    await store.removals.release(teamId, until);
    return { moved: pass.moved, progress: pass.progress, finished: false };
  }
  await auditRemoval(deps, { ...removal, progress: pass.progress }, at);
  return { moved: pass.moved, progress: pass.progress, finished: true };
}

/**
 * Stop the workspace's work (once), bring its temporary changes' undos forward (or, once the grace period
 * is over, leave those not undone in force), undo what is due when the event itself runs the pass, and
 * delete the key when nothing is due or in flight any more (`settled`).
 */
async function removalPass(
  deps: Deps,
  removal: Removal,
  fromEvent: boolean,
): Promise<{ moved: ChangeRequest[]; progress: RemovalProgress; settled: boolean }> {
  const { store } = deps;
  const { teamId, since } = removal;
  const progress: RemovalProgress = { ...removal.progress, changes: [...removal.progress.changes] };
  const moved: ChangeRequest[] = [];
  if (!progress.stopped) {
    const stopped = await stopWorkspace(deps, teamId, removal.event as UninstallReason);
    moved.push(...stopped.cancelled);
    progress.watches += stopped.watches;
    progress.schedules += stopped.schedules;
    progress.cancelled += stopped.cancelled.length;
    progress.stopped = true;
    await store.removals.record(teamId, progress);
  }

  const scope = { teamIds: [teamId] };
  const now = deps.clock.now();
  const graceOver = now >= since + UNINSTALL_GRACE_MS;
  const temporary = await temporaryChanges(deps, removal);
  for (const r of temporary) if (!progress.changes.includes(r.id)) progress.changes.push(r.id);
  await store.removals.record(teamId, progress);
  for (const r of temporary) {
    if (graceOver) await leaveInForce(deps, r);
    // Due now; an undo that failed keeps its retry time (UNDO_RETRY_MS) after the event's own pass.
    else if (r.undoAt !== null && r.undoAt > now + (fromEvent ? 0 : UNDO_RETRY_MS))
      await store.changeRequests.annotate(r.id, "applied", { undoAt: now });
  }
  if (fromEvent && !graceOver) {
    // Each undo is claimed once, as the sweeper's; one that fails is due again later, with the key.
    for (let pass = 0; pass < MAX_PASSES; pass++) {
      const undone = await undoDue(deps, scope, UNDO_BATCH);
      if (undone.length === 0) break;
      moved.push(...undone);
    }
  }

  const counts = await store.changeRequests.countByState(teamId);
  const due = (await temporaryChanges(deps, removal)).length;
  const settled = due === 0 && counts.undoing === 0 && counts.approved === 0;
  if (settled) {
    // A key set after the removal started (the workspace came back) is not this removal's to delete.
    // "After" by more than the replicas' clocks may differ: the key's time is another replica's clock.
    if (await store.keys.remove(teamId, since + MAX_CLOCK_SKEW_MS)) progress.keyRemoved = true;
    await store.removals.record(teamId, progress);
  } else {
    deps.logger.info(
      { teamId, due, undoing: counts.undoing, applying: counts.approved, graceOver },
      "a removed workspace's key is kept while its undos are due or in flight",
    );
  }
  return { moved, progress, settled };
}

/** The workspace's installation, watches, schedules and waiting requests go. */
async function stopWorkspace(deps: Deps, teamId: string, reason: UninstallReason) {
  const { store } = deps;
  await store.installations.deleteInstallation({
    teamId,
    enterpriseId: undefined,
    isEnterpriseInstall: false,
  });
  let watches = 0;
  for (const w of await store.watches.list(teamId))
    if (await store.watches.remove(teamId, w.id, "forget")) watches++;
  let schedules = 0;
  for (const s of await store.schedules.list(teamId))
    if (await store.schedules.remove(teamId, s.id)) schedules++;
  const cancelled: ChangeRequest[] = [];
  for (const r of await store.changeRequests.listPending(teamId)) {
    await cancel(deps, r, reason, UNINSTALLED_SENTENCE);
    const after = await store.changeRequests.get(r.id);
    if (after?.state === "cancelled") cancelled.push(after);
  }
  return { watches, schedules, cancelled };
}

/**
 * The workspace's applied temporary changes still to be undone (due now or later), made before the
 * removal started (a workspace that came back meanwhile keeps its new ones).
 */
async function temporaryChanges(deps: Deps, removal: Removal): Promise<ChangeRequest[]> {
  const all = await deps.store.changeRequests.listDueUndo(Number.MAX_SAFE_INTEGER, MAX_TEMPORARY, {
    teamIds: [removal.teamId],
  });
  // Made before the removal started, by the clock of whichever replica made it (hence the allowance).
  return all.filter((r) => r.createdAt <= removal.since + MAX_CLOCK_SKEW_MS);
}

/** The grace period is over: no more undo; the request says so and how to undo it by hand. */
async function leaveInForce(deps: Deps, r: ChangeRequest): Promise<void> {
  const minutes = UNINSTALL_GRACE_MS / 60_000;
  const last = r.lastError ? ` The last attempt: ${r.lastError.message}` : "";
  const message = `Not undone: edgeops was removed from this workspace and stopped trying to undo this change ${minutes} minutes later, so it is still in force; ${undoByHand(r)}.${last}`;
  await annotateRequest(
    deps,
    r.id,
    "applied",
    { undoAt: null, lastError: { ...(r.lastError ?? {}), kind: "left_in_force", message } },
    { userId: "system", step: "undo", outcome: "left_in_force", details: { reason: "uninstalled" } },
  );
}

/** Why an applied temporary change was not undone, as its request says. */
function whyLeft(r: ChangeRequest): string {
  if (r.lastError) return r.lastError.message;
  if (r.note?.kind === "kept" || r.note?.kind === "superseded")
    return `A later request set it since (${r.note.by.change}), so its undo was cancelled.`;
  return `It was ${r.state} when the workspace's key was deleted.`;
}

/** The removal's one audit row: what went, what was undone and what was left in force, with why. */
async function auditRemoval(deps: Deps, removal: Removal, at: number): Promise<void> {
  const { progress, teamId } = removal;
  const undone: Record<string, unknown>[] = [];
  const leftInForce: Record<string, unknown>[] = [];
  for (const id of progress.changes) {
    const r = await deps.store.changeRequests.get(id);
    if (!r) continue;
    const change = describeRequest(r);
    if (r.state === "undone")
      undone.push({ requestId: id, change, ...(r.lastError ? { note: r.lastError.message } : {}) });
    else
      leftInForce.push({
        requestId: id,
        change,
        state: r.state,
        why: whyLeft(r),
        ...(r.lastError?.status !== undefined ? { status: r.lastError.status } : {}),
        undoBy: undoCommand(r) ?? null,
      });
  }
  await deps.store.audit.append({
    teamId,
    userId: "slack",
    action: "app.uninstalled",
    target: "installation",
    outcome: leftInForce.length > 0 ? "left_in_force" : "ok",
    details: {
      event: removal.event,
      since: removal.since,
      keyRemoved: progress.keyRemoved,
      watches: progress.watches,
      schedules: progress.schedules,
      cancelled: progress.cancelled,
      undone: undone.length,
      undoneChanges: undone,
      leftInForce,
    },
  });
  deps.logger.info(
    {
      teamId,
      event: removal.event,
      keyRemoved: progress.keyRemoved,
      undone: undone.length,
      leftInForce: leftInForce.length,
      tookMs: at - removal.since,
    },
    "the workspace removed edgeops: its installation, key and background work are gone",
  );
}

/**
 * The workspaces of an enterprise edgeops can name: those with an installation of their own in it, and
 * those Slack named in the event (`named`). Workspaces served only through the org-wide install leave
 * no record of their enterprise, so only the named one is found among them.
 */
export async function enterpriseTeams(deps: Deps, enterpriseId: string, named: readonly string[]) {
  return [...new Set([...(await deps.store.installations.teamsOfEnterprise(enterpriseId)), ...named])];
}

/**
 * An org-wide (Enterprise Grid) install removed: its installation (and so its tokens) goes, and each of
 * `teamIds` (enterpriseTeams) is forgotten as one workspace is.
 */
export async function forgetEnterprise(
  deps: Deps,
  enterpriseId: string,
  teamIds: readonly string[],
  reason: UninstallReason,
): Promise<{ moved: readonly ChangeRequest[] }> {
  await deps.store.installations.deleteInstallation({
    enterpriseId,
    teamId: undefined,
    isEnterpriseInstall: true,
  });
  deps.logger.info(
    { enterpriseId, event: reason, workspaces: teamIds.length },
    "the enterprise removed its org-wide install of edgeops: its installation is gone",
  );
  const moved: ChangeRequest[] = [];
  for (const teamId of teamIds) moved.push(...(await forgetWorkspace(deps, teamId, reason)).moved);
  return { moved };
}
