import type { Deps } from "../deps.js";
import type { WorkScope } from "../store/index.js";

/** Rows deleted by one statement, and statements per sweep: a backlog goes in short steps, never one long lock. */
const BATCH = 500;
const BATCHES_PER_SWEEP = 20;
const DAY_MS = 24 * 60 * 60_000;

/** Deletes audit rows older than AUDIT_RETENTION_DAYS, a few batches at a time; how many went. */
export async function pruneAuditLog(deps: Deps, scope: WorkScope = {}): Promise<number> {
  const before = deps.clock.now() - deps.config.store.auditRetentionDays * DAY_MS;
  return pruneInBatches((batch) => deps.store.audit.prune(before, batch, scope));
}

/**
 * Deletes Workflow Builder steps (function_executions) not updated for FUNCTION_EXECUTION_RETENTION_DAYS,
 * with their sealed tokens, a few batches at a time; how many went.
 */
export async function pruneFunctionExecutions(deps: Deps, scope: WorkScope = {}): Promise<number> {
  const before = deps.clock.now() - deps.config.store.functionExecutionRetentionDays * DAY_MS;
  return pruneInBatches((batch) => deps.store.functionExecutions.prune(before, batch, scope));
}

async function pruneInBatches(prune: (batch: number) => Promise<number>): Promise<number> {
  let pruned = 0;
  for (let i = 0; i < BATCHES_PER_SWEEP; i++) {
    const n = await prune(BATCH);
    pruned += n;
    if (n < BATCH) break;
  }
  return pruned;
}
