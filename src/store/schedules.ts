import type { ExpressionBuilder, Selectable } from "kysely";
import { listRoundRobin, newClockRow, setFailing } from "./clock.js";
import { parseJson, type RepoContext, readRow, updatedOne, type WorkScope } from "./context.js";
import type { Database, SchedulesTable } from "./db.js";
import { guard, StoreError } from "./errors.js";
import { moveLease } from "./lease.js";
import { insertIfRoom, type RoomLimits } from "./room.js";

export type ScheduleKind = "dns";

/** A schedule as the domain reads it: its row (db.ts), with the kind, the failing flag and the snapshot read. */
export interface Schedule extends Omit<Selectable<SchedulesTable>, "kind" | "failing" | "snapshot"> {
  kind: ScheduleKind;
  failing: boolean;
  /** The previous run's summary (e.g. its records), for diffs. */
  snapshot: unknown;
}

/** What a new schedule is made from; the rest starts empty. */
export interface NewSchedule
  extends Pick<
    Schedule,
    "teamId" | "channelId" | "createdBy" | "kind" | "target" | "spec" | "timezone" | "nextRunAt"
  > {
  id?: string;
}

export interface ScheduleRun {
  at: number;
  outcome: string;
  error?: string | null;
  /** Replaces the stored snapshot when given. */
  snapshot?: unknown;
}

/**
 * The lease part of a claim: the lease the claimer read (null: none) and the one it takes. Lease times
 * only grow for a schedule (a new lease starts after the old one ended), so a lease time also names
 * its holder: renewing, and recording the run, compare it.
 */
export interface LeaseChange {
  expected: number | null;
  until: number | null;
}

/** Schedules allowed in one channel and in one workspace. */
export type ScheduleLimits = RoomLimits;

export type CreateIfRoomResult =
  | { kind: "created"; schedule: Schedule }
  /** The same schedule (channel, kind, target, spec, time zone) already exists; nothing was stored. */
  | { kind: "exists"; schedule: Schedule }
  /** The channel or the workspace already holds its limit; nothing was stored. */
  | { kind: "full"; scope: "channel" | "workspace"; limit: number };

export interface SchedulesRepo {
  create(schedule: NewSchedule): Promise<Schedule>;
  /**
   * Create unless the same schedule exists or the channel or workspace is full. The look, the counts and
   * the insert are one critical section per workspace across connections and replicas (PostgreSQL: a
   * transaction holding an advisory lock on the team; SQLite: BEGIN IMMEDIATE), so racing creates can
   * never exceed a limit.
   */
  createIfRoom(schedule: NewSchedule, limits: ScheduleLimits): Promise<CreateIfRoomResult>;
  list(teamId: string, channelId?: string): Promise<Schedule[]>;
  get(id: string): Promise<Schedule | undefined>;
  /** Only within the team; true when removed. */
  remove(teamId: string, id: string): Promise<boolean>;
  /**
   * Due: next_run_at <= now with no lease, or a lease that ended (its run was lost) at or before now;
   * round-robin across workspaces: every workspace's soonest, then every workspace's second soonest, and
   * so on (soonest first within a round), so one workspace's backlog cannot fill the batch. Only the
   * scope's workspaces when it names some. A schedule whose run holds a live lease is not due.
   */
  listDue(now: number, limit: number, scope?: WorkScope): Promise<Schedule[]>;
  /**
   * Compare-and-set on next_run_at and lease_until: `UPDATE ... SET next_run_at = new, lease_until =
   * lease.until WHERE id = ? AND next_run_at = expected AND lease_until IS lease.expected` (and, with a
   * scope, `AND team_id IN (...)`). True for the single claimer of this occurrence. Without `lease`, the
   * row must hold no lease and keeps none.
   */
  claim(
    id: string,
    expectedNextRunAt: number,
    newNextRunAt: number,
    scope?: WorkScope,
    lease?: LeaseChange,
  ): Promise<boolean>;
  /**
   * Extend a lease still held (lease_until = `leaseUntil`, not yet past `now`) to `newLeaseUntil`. False
   * when it ended or another replica took the occurrence over: the caller must not post.
   */
  renewLease(id: string, leaseUntil: number, newLeaseUntil: number, now: number): Promise<boolean>;
  /**
   * Record a run. With `leaseUntil` (the scheduler's runs), only while that lease is still the row's, and
   * the lease is released with it; false when it was not (another replica owns the occurrence now).
   */
  recordRun(id: string, run: ScheduleRun, leaseUntil?: number): Promise<boolean>;
  markFailing(id: string, reason: string): Promise<boolean>;
  clearFailing(id: string): Promise<boolean>;
}

function toSchedule(r: Selectable<SchedulesTable>): Schedule {
  return readRow(r, {
    kind: r.kind as ScheduleKind,
    failing: r.failing === 1,
    snapshot: parseJson(r.snapshot),
  });
}

export function createSchedulesRepo(ctx: RepoContext): SchedulesRepo {
  const { db, now } = ctx;

  function newRow(s: NewSchedule): Selectable<SchedulesTable> {
    if (s.kind !== "dns") throw new StoreError("invalid", `Unknown schedule kind "${String(s.kind)}"`);
    if (!Number.isSafeInteger(s.nextRunAt))
      throw new StoreError("invalid", "nextRunAt must be epoch milliseconds");
    return {
      ...newClockRow(s, now()),
      spec: s.spec,
      timezone: s.timezone,
      nextRunAt: s.nextRunAt,
      leaseUntil: null,
      lastRunAt: null,
      lastOutcome: null,
      snapshot: null,
    };
  }

  return guard("schedules", {
    async create(s: NewSchedule): Promise<Schedule> {
      const row = newRow(s);
      await db.insertInto("schedules").values(row).execute();
      return toSchedule(row);
    },

    async createIfRoom(s: NewSchedule, limits: ScheduleLimits): Promise<CreateIfRoomResult> {
      const result = await insertIfRoom(ctx, {
        table: "schedules",
        row: newRow(s),
        sameColumns: ["teamId", "channelId", "kind", "target", "spec", "timezone"],
        limits,
        read: toSchedule,
      });
      return result.kind === "full" ? result : { kind: result.kind, schedule: result.item };
    },

    async list(teamId: string, channelId?: string): Promise<Schedule[]> {
      let q = db.selectFrom("schedules").selectAll().where("teamId", "=", teamId);
      if (channelId !== undefined) q = q.where("channelId", "=", channelId);
      const rows = await q.orderBy("createdAt").orderBy("id").execute();
      return rows.map(toSchedule);
    },

    async get(id: string): Promise<Schedule | undefined> {
      const r = await db.selectFrom("schedules").selectAll().where("id", "=", id).executeTakeFirst();
      return r ? toSchedule(r) : undefined;
    },

    async remove(teamId: string, id: string): Promise<boolean> {
      const r = await db
        .deleteFrom("schedules")
        .where("id", "=", id)
        .where("teamId", "=", teamId)
        .executeTakeFirst();
      return Number(r.numDeletedRows) === 1;
    },

    async listDue(at: number, limit: number, scope: WorkScope = {}): Promise<Schedule[]> {
      // Due: no lease and its time has come, or a lease that ended (its run was lost).
      const due = (eb: ExpressionBuilder<Database, "schedules">) =>
        eb.or([
          eb.and([eb("leaseUntil", "is", null), eb("nextRunAt", "<=", at)]),
          eb("leaseUntil", "<=", at),
        ]);
      return (await listRoundRobin(db, "schedules", "nextRunAt", due, limit, scope)).map(toSchedule);
    },

    async claim(
      id: string,
      expectedNextRunAt: number,
      newNextRunAt: number,
      scope: WorkScope = {},
      lease: LeaseChange = { expected: null, until: null },
    ): Promise<boolean> {
      const { teamIds } = scope;
      if (teamIds?.length === 0) return false;
      if (lease.until !== null && !Number.isSafeInteger(lease.until))
        throw new StoreError("invalid", "lease must be epoch milliseconds");
      let q = db
        .updateTable("schedules")
        .set({ nextRunAt: newNextRunAt, leaseUntil: lease.until })
        .where("id", "=", id)
        .where("nextRunAt", "=", expectedNextRunAt)
        .where("leaseUntil", lease.expected === null ? "is" : "=", lease.expected);
      if (teamIds) q = q.where("teamId", "in", teamIds);
      return updatedOne(await q.executeTakeFirst());
    },

    async renewLease(id: string, leaseUntil: number, newLeaseUntil: number, at: number): Promise<boolean> {
      // A lease that ended by `at` is no longer held: another replica may take the occurrence over.
      if (leaseUntil <= at) return false;
      return moveLease(db, "schedules", { id }, leaseUntil, newLeaseUntil);
    },

    async recordRun(id: string, run: ScheduleRun, leaseUntil?: number): Promise<boolean> {
      let q = db
        .updateTable("schedules")
        .set({
          lastRunAt: run.at,
          lastOutcome: run.outcome,
          lastError: run.error ?? null,
          ...(run.snapshot !== undefined ? { snapshot: JSON.stringify(run.snapshot) } : {}),
          ...(leaseUntil !== undefined ? { leaseUntil: null } : {}),
        })
        .where("id", "=", id);
      if (leaseUntil !== undefined) q = q.where("leaseUntil", "=", leaseUntil);
      return updatedOne(await q.executeTakeFirst());
    },

    markFailing: (id: string, reason: string) => setFailing(db, "schedules", id, reason),
    clearFailing: (id: string) => setFailing(db, "schedules", id, null),
  });
}
