import { type Selectable, sql } from "kysely";
import { CHANGE_STATES, type ChangeState } from "./change-requests.js";
import { parseJson, type RepoContext, readRow, updatedOne, type WorkScope } from "./context.js";
import type { FunctionExecutionsTable } from "./db.js";
import { guard, StoreError } from "./errors.js";

/**
 * A Workflow Builder step (a Slack function execution) that waits on a change request: completed once,
 * by whichever replica wins the claim, when the request reaches a state it will not leave on its own.
 */
export const FUNCTION_EXECUTION_STATES = ["waiting", "completing", "completed"] as const;
export type FunctionExecutionState = (typeof FUNCTION_EXECUTION_STATES)[number];

/** Request states a waiting step completes on: all but pending and approved (undo states count as applied). */
export const SETTLED_REQUEST_STATES: readonly ChangeState[] = CHANGE_STATES.filter(
  (state) => state !== "pending" && state !== "approved",
);

export interface FunctionExecution {
  id: string;
  teamId: string;
  callbackId: string;
  requestId: string;
  state: FunctionExecutionState;
  /** Whether an execution token is stored (sealed); read it with `token()`. */
  hasToken: boolean;
  leaseUntil: number | null;
  retryAt: number;
  attempts: number;
  /** What it was completed with: outputs, or the error sentence. */
  outcome: unknown;
  createdAt: number;
  updatedAt: number;
}

export interface NewFunctionExecution {
  id: string;
  teamId: string;
  callbackId: string;
  requestId: string;
  /** The execution's bot_access_token; sealed with the Vault, never stored in the clear. */
  token?: string | undefined;
}

export interface FunctionExecutionsRepo {
  /** Record a waiting step; a second delivery of the same execution returns the row already there. */
  create(e: NewFunctionExecution): Promise<FunctionExecution>;
  get(id: string): Promise<FunctionExecution | undefined>;
  /** The execution's token in the clear, or undefined when none was stored. Never log it. */
  token(id: string): Promise<string | undefined>;
  /**
   * Compare-and-set: waiting (retry due) or completing with a lapsed lease → completing until
   * `now + leaseMs`. The single winner gets the row; everyone else undefined.
   */
  claim(id: string, leaseMs: number): Promise<FunctionExecution | undefined>;
  /** completing → completed with what it was completed with; false when the claim was lost. */
  complete(id: string, outcome: unknown): Promise<boolean>;
  /**
   * completing → waiting, tried again at `retryAt` (Slack could not be reached), keeping `pending`, the
   * result to complete it with, for steps that do not complete from a request (an error, unchanged).
   */
  release(id: string, retryAt: number, pending?: unknown): Promise<boolean>;
  /** Steps not yet completed that wait on this request. */
  listWaitingOn(requestId: string): Promise<FunctionExecution[]>;
  /**
   * Steps that are due (waiting with retry due, or a lapsed lease) and whose request has settled or
   * whose result was kept by `release`: the ones a completion missed (the process died, Slack was
   * down). Oldest first; in the scope.
   */
  listSettleable(limit?: number, scope?: WorkScope): Promise<FunctionExecution[]>;
  /**
   * Deletes at most `batch` steps last updated before `before` (epoch ms), the oldest first, and says how
   * many: completed ones, and ones Slack stopped waiting for long ago (their sealed tokens go with them).
   * Only the scope's workspaces when it names some.
   */
  prune(before: number, batch: number, scope?: WorkScope): Promise<number>;
}

const SEAL_PURPOSE = "function_token" as const;

/** The sealed token stays in the store: a step says only whether it has one. */
function toExecution(r: Selectable<FunctionExecutionsTable>): FunctionExecution {
  return readRow(
    r,
    {
      state: r.state as FunctionExecutionState,
      hasToken: r.tokenCiphertext !== null,
      outcome: parseJson(r.outcome),
    },
    ["tokenCiphertext"],
  );
}

export function createFunctionExecutionsRepo(ctx: RepoContext): FunctionExecutionsRepo {
  const { db, vault, now } = ctx;

  const due = () => {
    const at = now();
    return sql<boolean>`((function_executions.state = 'waiting' and function_executions.retry_at <= ${at}) or (function_executions.state = 'completing' and function_executions.lease_until <= ${at}))`;
  };

  return guard("functionExecutions", {
    async create(e: NewFunctionExecution): Promise<FunctionExecution> {
      if (!e.id || !e.teamId || !e.callbackId || !e.requestId)
        throw new StoreError("invalid", "id, teamId, callbackId and requestId are required");
      const at = now();
      await db
        .insertInto("function_executions")
        .values({
          id: e.id,
          teamId: e.teamId,
          callbackId: e.callbackId,
          requestId: e.requestId,
          tokenCiphertext: e.token ? vault.seal(e.teamId, SEAL_PURPOSE, e.token) : null,
          state: "waiting",
          leaseUntil: null,
          retryAt: at,
          attempts: 0,
          outcome: null,
          createdAt: at,
          updatedAt: at,
        })
        .onConflict((oc) => oc.column("id").doNothing())
        .execute();
      const row = await db
        .selectFrom("function_executions")
        .selectAll()
        .where("id", "=", e.id)
        .executeTakeFirstOrThrow();
      return toExecution(row);
    },

    async get(id: string): Promise<FunctionExecution | undefined> {
      const r = await db
        .selectFrom("function_executions")
        .selectAll()
        .where("id", "=", id)
        .executeTakeFirst();
      return r ? toExecution(r) : undefined;
    },

    async token(id: string): Promise<string | undefined> {
      const r = await db
        .selectFrom("function_executions")
        .select(["teamId", "tokenCiphertext"])
        .where("id", "=", id)
        .executeTakeFirst();
      if (!r?.tokenCiphertext) return undefined;
      return vault.open(r.teamId, SEAL_PURPOSE, r.tokenCiphertext);
    },

    async claim(id: string, leaseMs: number): Promise<FunctionExecution | undefined> {
      const r = await db
        .updateTable("function_executions")
        .set((eb) => ({
          state: "completing",
          leaseUntil: now() + leaseMs,
          attempts: eb("attempts", "+", 1),
          updatedAt: now(),
        }))
        .where("id", "=", id)
        .where(due())
        .returningAll()
        .executeTakeFirst();
      return r ? toExecution(r) : undefined;
    },

    async complete(id: string, outcome: unknown): Promise<boolean> {
      const r = await db
        .updateTable("function_executions")
        .set({ state: "completed", leaseUntil: null, outcome: JSON.stringify(outcome), updatedAt: now() })
        .where("id", "=", id)
        .where("state", "=", "completing")
        .executeTakeFirst();
      return updatedOne(r);
    },

    async release(id: string, retryAt: number, pending?: unknown): Promise<boolean> {
      const r = await db
        .updateTable("function_executions")
        .set({
          state: "waiting",
          leaseUntil: null,
          retryAt: retryAt,
          updatedAt: now(),
          ...(pending !== undefined ? { outcome: JSON.stringify(pending) } : {}),
        })
        .where("id", "=", id)
        .where("state", "=", "completing")
        .executeTakeFirst();
      return updatedOne(r);
    },

    async listWaitingOn(requestId: string): Promise<FunctionExecution[]> {
      const rows = await db
        .selectFrom("function_executions")
        .selectAll()
        .where("requestId", "=", requestId)
        .where("state", "!=", "completed")
        .orderBy("createdAt")
        .orderBy("id")
        .execute();
      return rows.map(toExecution);
    },

    async listSettleable(limit = 50, scope: WorkScope = {}): Promise<FunctionExecution[]> {
      const { teamIds } = scope;
      if (teamIds?.length === 0) return [];
      let q = db
        .selectFrom("function_executions")
        .leftJoin("approval_requests", "approval_requests.id", "function_executions.requestId")
        .selectAll("function_executions")
        .where((eb) =>
          eb.or([
            eb("approval_requests.state", "in", [...SETTLED_REQUEST_STATES]),
            eb("function_executions.outcome", "is not", null),
          ]),
        )
        .where(due());
      if (teamIds) q = q.where("function_executions.teamId", "in", teamIds);
      const rows = await q
        .orderBy("function_executions.updatedAt")
        .orderBy("function_executions.id")
        .limit(limit)
        .execute();
      return rows.map(toExecution);
    },

    async prune(before: number, batch: number, scope: WorkScope = {}): Promise<number> {
      const { teamIds } = scope;
      if (teamIds?.length === 0) return 0;
      let ids = db
        .selectFrom("function_executions")
        .select("id")
        .where("updatedAt", "<", before)
        .orderBy("updatedAt")
        .limit(Math.max(1, Math.min(batch, 10_000)));
      if (teamIds) ids = ids.where("teamId", "in", [...teamIds]);
      const res = await db.deleteFrom("function_executions").where("id", "in", ids).executeTakeFirst();
      return Number(res.numDeletedRows);
    },
  });
}
