import { SWEEPS, type SweepKind } from "../changes/undo-and-reconcile.js";
import type { Deps } from "../deps.js";
import type { Logger } from "../log.js";
import { pruneAuditLog, pruneFunctionExecutions } from "../services/audit-retention.js";
import { continueRemovals } from "../services/uninstall.js";
import type { SlackEnv } from "../slack/edge-commands/types.js";
import { settleMissedSteps } from "../slack/functions/completion.js";
import type { ChangeRequest, WorkScope } from "../store/index.js";
import { createClaimWorker, createFairPool, type FairPoolOptions } from "./pool.js";

/** Due requests moved at once, at most one of each workspace. */
export const SWEEP_CONCURRENCY = 4;

/** A request due in one of the engine's sweeps (src/changes/undo-and-reconcile.ts). */
interface DueRequest {
  kind: SweepKind;
  request: ChangeRequest;
}

const EVERY_SWEEP = Object.keys(SWEEPS) as SweepKind[];

async function listDue(
  deps: Deps,
  kinds: readonly SweepKind[],
  scope: WorkScope,
  limit?: number,
): Promise<DueRequest[]> {
  const lists = await Promise.all(
    kinds.map(async (kind) =>
      (await SWEEPS[kind].listDue(deps, scope, limit)).map((request) => ({ kind, request })),
    ),
  );
  return lists.flat();
}

/**
 * Move each due request round-robin over workspaces, a few at once, one per workspace: one workspace's
 * slow or failing rows (its reads are slow, its key's queue is full) leave the others' on time. A failed
 * move is logged with its sweep's sentence and left for the next sweep.
 */
function movedFairly(
  deps: Deps,
  logger: Logger,
  onMoved: (kind: SweepKind, moved: ChangeRequest) => void,
): FairPoolOptions<DueRequest> {
  return {
    concurrency: SWEEP_CONCURRENCY,
    perWorkspace: 1,
    id: (d) => d.request.id,
    teamId: (d) => d.request.teamId,
    async run({ kind, request }) {
      const sweep = SWEEPS[kind];
      try {
        const moved = await sweep.moveOne(deps, request);
        if (moved) onMoved(kind, moved);
        return moved !== undefined;
      } catch (err) {
        logger.warn({ err, requestId: request.id }, sweep.failed);
        return false;
      }
    },
  };
}

/** One sweep alone on a fair pool of its own, as the sweeper moves it: what moved, in the order it finished. */
async function sweepAlone(
  kind: SweepKind,
  deps: Deps,
  scope: WorkScope = {},
  limit?: number,
): Promise<ChangeRequest[]> {
  const moved: ChangeRequest[] = [];
  const pool = createFairPool(movedFairly(deps, deps.logger, (_, r) => moved.push(r)));
  await pool.submit(await listDue(deps, [kind], scope, limit));
  return moved;
}

export const expireDue = (deps: Deps, scope?: WorkScope, limit?: number) =>
  sweepAlone("expire", deps, scope, limit);
export const reconcileStale = (deps: Deps, scope?: WorkScope, limit?: number) =>
  sweepAlone("reconcile", deps, scope, limit);
export const undoDue = (deps: Deps, scope?: WorkScope, limit?: number) =>
  sweepAlone("undo", deps, scope, limit);
export const reconcileStaleUndos = (deps: Deps, scope?: WorkScope, limit?: number) =>
  sweepAlone("reconcile-undo", deps, scope, limit);

export interface ChangeSweeper {
  /**
   * One tick: expire every pending request whose time is up, settle approved requests whose apply never
   * finished (the reconciler), undo temporary changes that are due, then take removed workspaces' removals
   * further and complete missed workflow steps; returns how many requests and steps this replica moved.
   */
  sweep(): Promise<number>;
  start(): void;
  stop(): Promise<void>;
}

export interface ChangeSweeperOptions {
  /** Default 15 s. */
  intervalMs?: number;
  /** Only these workspaces' requests (the local console's own); default every workspace's. */
  scope?: WorkScope;
}

/**
 * Expiry without a click, the reconciler and temporary changes' undo, in every replica, on the jobs' claim
 * loop: each tick lists every sweep's due requests, and each is moved on the fair pool by whichever replica
 * wins its compare-and-set; its card is redrawn by the card observer (src/slack/change-requests.ts
 * redrawCardsOnChange). After the moves, every tick takes removed workspaces' removals further (their key
 * is deleted once their undos settled: services/uninstall.ts continueRemovals), completes missed workflow
 * steps and prunes the audit log. Ticks at start, so requests that expired while the bot was down are closed after a restart.
 */
export function createChangeSweeper(env: SlackEnv, options: ChangeSweeperOptions = {}): ChangeSweeper {
  const { intervalMs = 15_000, scope = {} } = options;
  const logger = env.deps.logger.child({ job: "approval-expiry" });
  /** Requests moved since the last summary line, by sweep. */
  let moved: Partial<Record<SweepKind, number>> = {};

  /**
   * Audit rows past AUDIT_RETENTION_DAYS and workflow steps past FUNCTION_EXECUTION_RETENTION_DAYS; each
   * failure is its own, not the sweep's.
   */
  async function pruneOldAudit(): Promise<void> {
    const pruned = await pruneAuditLog(env.deps, scope).catch((err: unknown) => {
      logger.warn({ err }, "could not prune the audit log");
      return 0;
    });
    if (pruned > 0) logger.info({ pruned }, "pruned audit rows past their retention");
    const steps = await pruneFunctionExecutions(env.deps, scope).catch((err: unknown) => {
      logger.warn({ err }, "could not prune the workflow steps");
      return 0;
    });
    if (steps > 0) logger.info({ steps }, "pruned workflow steps past their retention");
  }

  /** Removed workspaces: each taken a pass further, and finished (key deleted) once its undos settled. */
  async function continueRemovedWorkspaces(): Promise<void> {
    const finished = await continueRemovals(env.deps, scope).catch((err: unknown) => {
      logger.warn({ err }, "could not continue the removals of uninstalled workspaces");
      return 0;
    });
    if (finished > 0) logger.info({ finished }, "finished the removals of uninstalled workspaces");
  }

  async function afterMoves(): Promise<number> {
    // After this tick's undos: a removed workspace whose undos all settled loses its key now.
    await continueRemovedWorkspaces();
    // Workflow steps whose request settled but that were not completed (a replica died, Slack failed).
    const steps = await settleMissedSteps(env, scope);
    if (Object.keys(moved).length > 0 || steps > 0)
      logger.info({ moved, steps }, "change sweep moved requests");
    moved = {};
    await pruneOldAudit();
    return steps;
  }

  const worker = createClaimWorker<DueRequest>({
    name: "change sweeper",
    intervalMs,
    clock: env.deps.clock,
    logger,
    ...movedFairly(env.deps, logger, (kind) => {
      moved[kind] = (moved[kind] ?? 0) + 1;
    }),
    listDue: () => listDue(env.deps, EVERY_SWEEP, scope),
    afterTick: afterMoves,
  });
  return { sweep: worker.tick, start: worker.start, stop: () => worker.stop() };
}
