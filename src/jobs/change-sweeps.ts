import type { RunEach } from "../changes/moves.js";
import * as sweeps from "../changes/undo-and-reconcile.js";
import type { Deps } from "../deps.js";
import { pruneAuditLog } from "../services/audit-retention.js";
import type { SlackEnv } from "../slack/edge-commands/types.js";
import { settleMissedSteps } from "../slack/functions/completion.js";
import type { ApprovalRequest, WorkScope } from "../store/index.js";
import { createFairPool } from "./pool.js";

/** Due requests run at once, at most one of each workspace. */
export const SWEEP_CONCURRENCY = 4;

/**
 * Run each due request round-robin over workspaces, a few at once, one per workspace: one workspace's
 * slow or failing rows (its reads are slow, its key's queue is full) leave the others' on time. Resolves
 * once all ran, with what they moved, in the order they finished.
 */
function fairly(deps: Deps): RunEach {
  return async (due, failed, one) => {
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
  };
}

/** The engine's sweeps (src/changes/undo-and-reconcile.ts), each on the fair pool. */
export const expireDue = (deps: Deps, scope: WorkScope = {}, limit?: number) =>
  sweeps.expireDue(deps, scope, limit, fairly(deps));
export const reconcileStale = (deps: Deps, scope: WorkScope = {}, limit?: number) =>
  sweeps.reconcileStale(deps, scope, limit, fairly(deps));
export const undoDue = (deps: Deps, scope: WorkScope = {}, limit?: number) =>
  sweeps.undoDue(deps, scope, limit, fairly(deps));
export const reconcileStaleUndos = (deps: Deps, scope: WorkScope = {}, limit?: number) =>
  sweeps.reconcileStaleUndos(deps, scope, limit, fairly(deps));

export interface ChangeSweeper {
  /**
   * Expire every pending request whose time is up, settle approved requests whose apply never finished
   * (the reconciler), undo temporary changes that are due; returns how many this replica moved.
   */
  sweep(): Promise<number>;
  start(): void;
  stop(): Promise<void>;
}

/**
 * Expiry without a click and the reconciler, in every replica: each due request is claimed on the engine's
 * fair pool and moved by whichever replica wins its compare-and-set; its card is redrawn by the card
 * observer (src/slack/change-requests.ts redrawCardsOnChange). Runs at start, so requests that expired
 * while the bot was down are closed after a restart.
 */
export interface ChangeSweeperOptions {
  /** Default 15 s. */
  intervalMs?: number;
  /** Only these workspaces' requests (the local console's own); default every workspace's. */
  scope?: WorkScope;
}

export function createChangeSweeper(env: SlackEnv, options: ChangeSweeperOptions = {}): ChangeSweeper {
  const { intervalMs = 15_000, scope = {} } = options;
  const logger = env.deps.logger.child({ job: "approval-expiry" });
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<number> | undefined;

  /** Audit rows past AUDIT_RETENTION_DAYS; its failure is its own, not the sweep's. */
  async function pruneOldAudit(): Promise<void> {
    const pruned = await pruneAuditLog(env.deps, scope).catch((err: unknown) => {
      logger.warn({ err }, "could not prune the audit log");
      return 0;
    });
    if (pruned > 0) logger.info({ pruned }, "pruned audit rows past their retention");
  }

  async function sweepOnce(): Promise<number> {
    const expired = await expireDue(env.deps, scope);
    if (expired.length > 0) logger.info({ expired: expired.length }, "expired approval requests");
    // Approved requests whose apply never finished: re-read and settle them (same claim-once CAS).
    const settled = await reconcileStale(env.deps, scope);
    if (settled.length > 0)
      logger.info(
        { settled: settled.map((r) => ({ id: r.id, state: r.state })) },
        "reconciled approved requests",
      );
    // Temporary changes whose time is up, and undos that never finished.
    const undone = [...(await undoDue(env.deps, scope)), ...(await reconcileStaleUndos(env.deps, scope))];
    if (undone.length > 0)
      logger.info({ undone: undone.map((r) => ({ id: r.id, state: r.state })) }, "undid temporary changes");
    // Workflow steps whose request settled but that were not completed (a replica died, Slack failed).
    const steps = await settleMissedSteps(env, scope);
    if (steps > 0) logger.info({ steps }, "completed workflow steps");
    await pruneOldAudit();
    return expired.length + settled.length + undone.length + steps;
  }

  const sweep = () => {
    running ??= sweepOnce().finally(() => {
      running = undefined;
    });
    return running;
  };

  return {
    sweep,
    start() {
      const tick = () =>
        void sweep().catch((err: unknown) => logger.warn({ err }, "approval expiry sweep failed"));
      tick();
      timer = setInterval(tick, intervalMs);
      timer.unref();
    },
    async stop() {
      clearInterval(timer);
      await running?.catch(() => undefined);
    },
  };
}
