import { cancel } from "../changes/engine.js";
import { undoDue } from "../changes/undo-and-reconcile.js";
import type { Deps } from "../deps.js";
import type { ChangeRequest } from "../store/index.js";

/** On the card of a request that was waiting when the workspace removed edgeops. */
export const UNINSTALLED_SENTENCE =
  "edgeops was removed from this workspace, so this request was cancelled and nothing changed.";

export type UninstallReason = "app_uninstalled" | "tokens_revoked";

export interface ForgottenWorkspace {
  /** Requests that moved (pending → cancelled, temporary changes undone): their cards are redrawn. */
  readonly moved: readonly ChangeRequest[];
  readonly watches: number;
  readonly schedules: number;
  readonly keyRemoved: boolean;
}

/** Temporary changes undone at once per pass (the undo's own batch). */
const UNDO_BATCH = 50;
/** Bounds each loop over batches (a workspace has at most a few hundred temporary changes). */
const MAX_PASSES = 100;

/**
 * The workspace removed edgeops (or revoked its bot token): nothing may keep acting for it. Its
 * installation goes first (no new Slack work), then its watches and schedules; waiting requests are
 * cancelled and temporary changes undone now, while the Edge API key still opens; then the key is
 * deleted. The audit log keeps the workspace's history and says what happened. A reinstall starts clean:
 * an admin sets the key again.
 */
export async function forgetWorkspace(
  deps: Deps,
  teamId: string,
  reason: UninstallReason,
): Promise<ForgottenWorkspace> {
  const { store } = deps;
  await store.installations.deleteInstallation({
    teamId,
    enterpriseId: undefined,
    isEnterpriseInstall: false,
  });

  let watches = 0;
  for (const w of await store.watches.list(teamId)) if (await store.watches.remove(teamId, w.id)) watches++;
  let schedules = 0;
  for (const s of await store.schedules.list(teamId))
    if (await store.schedules.remove(teamId, s.id)) schedules++;

  const moved: ChangeRequest[] = [];
  for (const r of await store.changeRequests.listPending(teamId)) {
    await cancel(deps, r, reason, UNINSTALLED_SENTENCE);
    const after = await store.changeRequests.get(r.id);
    if (after?.state === "cancelled") moved.push(after);
  }

  // Every applied temporary change of the workspace is due now; each undo is claimed once, as the
  // sweeper's. A failed undo is due again a minute later (and finds no key): it ends with its sentence.
  const scope = { teamIds: [teamId] };
  const now = deps.clock.now();
  for (let pass = 0; pass < MAX_PASSES; pass++) {
    const later = (await store.changeRequests.listDueUndo(Number.MAX_SAFE_INTEGER, UNDO_BATCH, scope)).filter(
      (r) => r.undoAt !== null && r.undoAt > now,
    );
    if (later.length === 0) break;
    for (const r of later) await store.changeRequests.annotate(r.id, "applied", { undoAt: now });
  }
  for (let pass = 0; pass < MAX_PASSES; pass++) {
    const undone = await undoDue(deps, scope, UNDO_BATCH);
    if (undone.length === 0) break;
    moved.push(...undone);
  }

  const keyRemoved = await store.keys.remove(teamId);
  await store.audit.append({
    teamId,
    userId: "slack",
    action: "app.uninstalled",
    target: "installation",
    outcome: "ok",
    details: {
      event: reason,
      keyRemoved,
      watches,
      schedules,
      cancelled: moved.filter((r) => r.state === "cancelled").length,
      undone: moved.filter((r) => r.state === "undone").length,
    },
  });
  deps.logger.info(
    { teamId, event: reason, keyRemoved, watches, schedules, requests: moved.length },
    "the workspace removed edgeops: its installation, key and background work are gone",
  );
  return { moved, watches, schedules, keyRemoved };
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
