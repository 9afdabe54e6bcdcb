import { expireDue, reconcileStale, reconcileStaleUndos, undoDue } from "../changes/engine.js";
import { pruneAuditLog } from "../services/audit-retention.js";
import type { ApprovalRequest, WorkScope } from "../store/index.js";
import { updateCard } from "./change-requests.js";
import type { SlackEnv } from "./edge-commands/types.js";
import { settleMissedSteps } from "./functions/completion.js";

export interface ApprovalSweeper {
  /**
   * Expire every pending request whose time is up, settle approved requests whose apply never finished
   * (the reconciler), and update their cards; returns how many this replica moved.
   */
  sweep(): Promise<number>;
  start(): void;
  stop(): Promise<void>;
}

/**
 * Expiry without a click and the reconciler, in every replica: each due request is moved by whichever
 * replica wins its compare-and-set, and that one updates the card. Runs at start, so requests that expired while the
 * bot was down are closed after a restart.
 */
export interface ApprovalSweeperOptions {
  /** Default 15 s. */
  intervalMs?: number;
  /** Only these workspaces' requests (the local console's own); default every workspace's. */
  scope?: WorkScope;
}

export function createApprovalSweeper(env: SlackEnv, options: ApprovalSweeperOptions = {}): ApprovalSweeper {
  const { intervalMs = 15_000, scope = {} } = options;
  const logger = env.deps.logger.child({ job: "approval-expiry" });
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<number> | undefined;

  async function updateCards(requests: ApprovalRequest[]) {
    for (const request of requests) {
      try {
        await updateCard(await env.clientFor(request.teamId), request, logger);
      } catch (err) {
        logger.warn({ err, requestId: request.id }, "could not update a card");
      }
    }
  }

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
    await updateCards(expired);
    if (expired.length > 0) logger.info({ expired: expired.length }, "expired approval requests");
    // Approved requests whose apply never finished: re-read and settle them (same claim-once CAS).
    const settled = await reconcileStale(env.deps, scope);
    await updateCards(settled);
    if (settled.length > 0)
      logger.info(
        { settled: settled.map((r) => ({ id: r.id, state: r.state })) },
        "reconciled approved requests",
      );
    // Temporary changes whose time is up, and undos that never finished.
    const undone = [...(await undoDue(env.deps, scope)), ...(await reconcileStaleUndos(env.deps, scope))];
    await updateCards(undone);
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
