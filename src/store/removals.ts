import type { Selectable } from "kysely";
import { type RepoContext, readRow, type WorkScope } from "./context.js";
import type { WorkspaceRemovalsTable } from "./db.js";
import { guard } from "./errors.js";
import { moveLease } from "./lease.js";

/**
 * A workspace being removed (it uninstalled edgeops or revoked its bot token), remembered across replicas
 * and restarts until its Edge API key is deleted (services/uninstall.ts). The row is also the removal's
 * claim: whoever works on it (the event's listener, then the change sweeper) holds its lease, so one
 * removal of a workspace runs at a time however many events arrive, on whichever replica.
 */
export interface WorkspaceRemoval
  extends Omit<Selectable<WorkspaceRemovalsTable>, "progress" | "leaseUntil"> {
  /** What the removal did so far (its shape is the service's). */
  progress: unknown;
}

export interface RemovalsRepo {
  get(teamId: string): Promise<WorkspaceRemoval | undefined>;
  /**
   * Start removing the workspace, claimed until `until`: true for the one caller that started it; false
   * when a removal of the workspace is already recorded (under way, or finished: see `restart`).
   */
  start(teamId: string, event: string, since: number, until: number, progress: unknown): Promise<boolean>;
  /** Start again a removal that finished at `finishedAt` (the workspace came back since); true for one caller. */
  restart(
    teamId: string,
    finishedAt: number,
    event: string,
    since: number,
    until: number,
    progress: unknown,
  ): Promise<boolean>;
  /** Removals under way that nobody holds at `now`, oldest first; in the scope. */
  listUnclaimed(now: number, limit?: number, scope?: WorkScope): Promise<WorkspaceRemoval[]>;
  /** Take an unfinished removal nobody holds at `now`, until `until`; true when taken. */
  claim(teamId: string, now: number, until: number): Promise<boolean>;
  /** Extend the holder's lease from `from` to `to`; false when it is no longer the holder's. */
  renew(teamId: string, from: number, to: number): Promise<boolean>;
  /** Record what it did so far, while it is unfinished. */
  record(teamId: string, progress: unknown): Promise<void>;
  /** Let go of the claim held until `until` (the removal stays under way). */
  release(teamId: string, until: number): Promise<void>;
  /** Mark it finished at `at`, if the claim held until `until` is still the caller's; true for one caller. */
  finish(teamId: string, until: number, at: number): Promise<boolean>;
}

export function createRemovalsRepo(ctx: RepoContext): RemovalsRepo {
  const { db } = ctx;
  const toRemoval = (row: Selectable<WorkspaceRemovalsTable>): WorkspaceRemoval =>
    readRow(row, { progress: JSON.parse(row.progress) as unknown }, ["leaseUntil"]);

  return guard("removals", {
    async get(teamId: string) {
      const row = await db
        .selectFrom("workspace_removals")
        .selectAll()
        .where("teamId", "=", teamId)
        .executeTakeFirst();
      return row && toRemoval(row);
    },

    async start(teamId: string, event: string, since: number, until: number, progress: unknown) {
      const r = await db
        .insertInto("workspace_removals")
        .values({
          teamId,
          event,
          since,
          leaseUntil: until,
          finishedAt: null,
          progress: JSON.stringify(progress),
        })
        .onConflict((oc) => oc.column("teamId").doNothing())
        .executeTakeFirst();
      return Number(r.numInsertedOrUpdatedRows ?? 0) > 0;
    },

    async restart(
      teamId: string,
      finishedAt: number,
      event: string,
      since: number,
      until: number,
      progress: unknown,
    ) {
      const r = await db
        .updateTable("workspace_removals")
        .set({ event, since, leaseUntil: until, finishedAt: null, progress: JSON.stringify(progress) })
        .where("teamId", "=", teamId)
        .where("finishedAt", "=", finishedAt)
        .executeTakeFirst();
      return Number(r.numUpdatedRows) > 0;
    },

    async listUnclaimed(now: number, limit = 20, { teamIds }: WorkScope = {}) {
      if (teamIds?.length === 0) return [];
      let q = db
        .selectFrom("workspace_removals")
        .selectAll()
        .where("finishedAt", "is", null)
        .where((eb) => eb.or([eb("leaseUntil", "is", null), eb("leaseUntil", "<=", now)]));
      if (teamIds) q = q.where("teamId", "in", teamIds);
      const rows = await q.orderBy("since").orderBy("teamId").limit(limit).execute();
      return rows.map(toRemoval);
    },

    async claim(teamId: string, now: number, until: number) {
      const r = await db
        .updateTable("workspace_removals")
        .set({ leaseUntil: until })
        .where("teamId", "=", teamId)
        .where("finishedAt", "is", null)
        .where((eb) => eb.or([eb("leaseUntil", "is", null), eb("leaseUntil", "<=", now)]))
        .executeTakeFirst();
      return Number(r.numUpdatedRows) > 0;
    },

    renew: (teamId: string, from: number, to: number) =>
      moveLease(db, "workspace_removals", { teamId }, from, to),

    async record(teamId: string, progress: unknown) {
      await db
        .updateTable("workspace_removals")
        .set({ progress: JSON.stringify(progress) })
        .where("teamId", "=", teamId)
        .where("finishedAt", "is", null)
        .execute();
    },

    async release(teamId: string, until: number) {
      await moveLease(db, "workspace_removals", { teamId }, until, null);
    },

    async finish(teamId: string, until: number, at: number) {
      const r = await db
        .updateTable("workspace_removals")
        .set({ finishedAt: at, leaseUntil: null })
        .where("teamId", "=", teamId)
        .where("leaseUntil", "=", until)
        .where("finishedAt", "is", null)
        .executeTakeFirst();
      return Number(r.numUpdatedRows) > 0;
    },
  });
}
