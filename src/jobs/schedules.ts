import { setMaxListeners } from "node:events";
import type { Clock } from "../clock.js";
import type { Deps } from "../deps.js";
import type { EdgeClient } from "../edge/client.js";
import { holdLease } from "../lease.js";
import type { Logger } from "../log.js";
import type { ScanWaitOptions } from "../services/dns.js";
import { nextRunAfter } from "../services/schedules.js";
import { type RunOptions, type RunResult, runSchedule } from "../slack/schedule-run.js";
import type { SlackClientFor } from "../slack/transport/clients.js";
import type { Schedule, WorkScope } from "../store/index.js";
import { createClaimWorker } from "./pool.js";

/**
 * The scheduler runs in every replica. Each tick lists due schedules and, for each, claims the
 * occurrence with a compare-and-set on next_run_at and lease_until (expected: what it read; new: the
 * next occurrence after *now*, and a lease of `leaseMs`). Only the replica whose update matched runs it,
 * so an occurrence is posted once however many replicas tick; after downtime the one claim jumps past
 * every missed occurrence, so it is posted once, not once per missed period.
 *
 * The lease: the runner renews it every leaseMs / 3 while it runs, renews it once more just before it
 * posts (and does not post if that fails: the fence) and releases it when it records the run. A replica
 * that dies mid-run stops renewing; once the lease has ended the occurrence is due again and a survivor
 * claims it (compare-and-set on the ended lease) and runs it. What remains: a replica that dies after
 * Slack accepted the post but before the run was recorded (one database write) leaves the lease to end,
 * and that occurrence is posted a second time.
 *
 * Fairness: due schedules are listed round-robin across workspaces (store listDue) and wait in one
 * queue per workspace; a bounded pool takes them in rotation, at most `perWorkspaceConcurrency` of one
 * workspace at a time, so one workspace's backlog or slow scans leave slots for the others. Runs
 * outlive the tick that queued them: the next tick lists again meanwhile (skipping what is already
 * queued or running here), so a schedule falling due is not held back by earlier, slower runs.
 */

export interface SchedulerOptions {
  deps: Deps;
  clientFor: SlackClientFor;
  /** Default deps.clock. Tests inject one and call tick() directly. */
  clock?: Clock;
  /** How often start() ticks; default 30 s. */
  intervalMs?: number;
  logger?: Logger;
  /** Due schedules read per tick; default 100 (the rest wait for the next tick). */
  batchSize?: number;
  /** Schedules run at once per replica; default 8. */
  concurrency?: number;
  /** Of those, at most this many of one workspace; default half of `concurrency` (at least 1). */
  perWorkspaceConcurrency?: number;
  /** Only these workspaces' schedules (the local console's own); default every workspace's. */
  scope?: WorkScope;
  /** Waiting for a fresh DNS scan: default up to 2 minutes, polling from 1 s with backoff. */
  scanWait?: Partial<ScanWaitOptions>;
  /**
   * How long a claimed occurrence stays this replica's without a renewal; default 60 s (renewed every
   * third of it). A replica that dies mid-run delays that occurrence by up to this plus one interval.
   */
  leaseMs?: number;
  /** Called after each run (tests, metrics). */
  onRun?: (schedule: Schedule, result: RunResult) => void;
}

export interface Scheduler {
  /**
   * List due schedules and queue them for the run pool; resolves, once they have run, with how many
   * this replica claimed and ran (schedules already queued or running here are not counted again).
   */
  tick(): Promise<number>;
  /** Tick every intervalMs (a tick still listing is not overlapped; runs in flight do not hold it back). */
  start(): void;
  /**
   * Stop ticking, cut scan waits short (summarising what exists), and wait for the tick in flight,
   * at most `deadlineMs` when given.
   */
  stop(deadlineMs?: number): Promise<void>;
}

export const SCAN_WAIT_DEFAULT = { maxWaitMs: 120_000, firstDelayMs: 1_000 } as const;
const DAY_MS = 24 * 3600_000;

export function createScheduler(options: SchedulerOptions): Scheduler {
  const { deps, clientFor } = options;
  const clock = options.clock ?? deps.clock;
  const now = clock.now;
  const intervalMs = options.intervalMs ?? 30_000;
  const leaseMs = Math.max(1_000, options.leaseMs ?? 60_000);
  const batchSize = options.batchSize ?? 100;
  const scope = options.scope ?? {};
  const concurrency = options.concurrency ?? 8;
  const logger = (options.logger ?? deps.logger).child({ component: "scheduler" });
  const stopping = new AbortController();
  // Every scan wait in progress (up to one a run) listens for the stop: more than Node's warning threshold.
  setMaxListeners(0, stopping.signal);

  // Scan waits are cut short when stopping: a wait in progress answers with the scan read last; a run
  // that has not started waiting reads the scan once instead (runSchedule's signal).
  const wait: ScanWaitOptions = {
    maxWaitMs: options.scanWait?.maxWaitMs ?? SCAN_WAIT_DEFAULT.maxWaitMs,
    firstDelayMs: options.scanWait?.firstDelayMs ?? SCAN_WAIT_DEFAULT.firstDelayMs,
    clock: options.scanWait?.clock ?? clock,
    signal: stopping.signal,
  };

  /** Claim one occurrence; the lease time when this replica won it. */
  async function claim(s: Schedule, at: number): Promise<number | undefined> {
    let next: number;
    try {
      // A lost run taken over before its next occurrence is due keeps that next occurrence.
      next = s.nextRunAt > at ? s.nextRunAt : nextRunAfter(s, at);
    } catch (err) {
      // A stored spec that no longer computes (e.g. a time zone gone from ICU): look again tomorrow.
      logger.error({ err, jobId: s.id }, "schedule's next run cannot be computed");
      const won = await deps.store.schedules.claim(s.id, s.nextRunAt, at + DAY_MS, scope, {
        expected: s.leaseUntil,
        until: null,
      });
      if (won) {
        await deps.store.schedules.markFailing(
          s.id,
          "The schedule's time could not be computed; remove it and create it again.",
        );
        await deps.store.schedules.recordRun(s.id, {
          at,
          outcome: "error",
          error: "next run not computable",
        });
        deps.metrics.schedulerRuns.inc({ outcome: "error" });
      }
      return undefined;
    }
    const until = at + leaseMs;
    const won = await deps.store.schedules.claim(s.id, s.nextRunAt, next, scope, {
      expected: s.leaseUntil,
      until,
    });
    if (won && s.leaseUntil !== null)
      logger.warn({ jobId: s.id, leaseEndedAt: s.leaseUntil }, "took over an occurrence whose run was lost");
    return won ? until : undefined;
  }

  /** A due schedule waiting for (or holding) a run slot, with the tick that listed it. */
  interface Job {
    schedule: Schedule;
    trigger: NonNullable<RunOptions["trigger"]>;
  }

  /** Claim the occurrence, then run it; true when this replica ran it. Never throws. */
  async function runJob(job: Job): Promise<boolean> {
    const s = job.schedule;
    try {
      // The time the slot was taken: a job that waited for one is computed from then.
      const at = now();
      const leaseUntil = await claim(s, at);
      if (leaseUntil === undefined) return false;
      // Aborts the run's Edge calls once its claim ended: the schedule was removed (its workspace
      // uninstalled edgeops, whose key must not be used after its undos settled) or another replica runs it.
      const claimEnded = new AbortController();
      const lease = holdLease({
        first: leaseUntil,
        leaseMs,
        clock,
        async renew(from, to, renewedAt) {
          const mine = await deps.store.schedules.renewLease(s.id, from, to, renewedAt);
          if (!mine) claimEnded.abort(new Error("the schedule's claim ended: removed, or run elsewhere"));
          return mine;
        },
        onError: (err) => logger.warn({ err, jobId: s.id }, "could not renew the schedule's lease"),
      });
      try {
        const result = await runSchedule(s, {
          deps,
          client: () => clientFor(s.teamId),
          logger,
          now: at,
          wait,
          signal: stopping.signal,
          claimEnded: claimEnded.signal,
          trigger: job.trigger,
          lease,
        });
        options.onRun?.(s, result);
      } finally {
        // Also when the run threw before recording: the heartbeat stops, the lease ends on its own.
        void lease.end();
      }
      return true;
    } catch (err) {
      logger.warn({ err, jobId: s.id }, "claiming a due schedule failed");
      return false;
    }
  }

  /** The due schedules of a tick, sharing one scan start per (workspace, zone). */
  async function listDue(): Promise<Job[]> {
    const due = await deps.store.schedules.listDue(now(), batchSize, scope);
    const triggers = new Map<string, Promise<unknown>>();
    const trigger = (teamId: string, zoneId: number, edge: EdgeClient) => {
      const key = `${teamId}:${zoneId}`;
      let p = triggers.get(key);
      if (!p) {
        p = edge.triggerDnsScan(zoneId);
        triggers.set(key, p);
      }
      return p;
    };
    return due.map((schedule) => ({ schedule, trigger }));
  }

  return createClaimWorker<Job>({
    name: "scheduler",
    intervalMs,
    clock,
    logger,
    onStop: () => stopping.abort(),
    concurrency,
    perWorkspace: options.perWorkspaceConcurrency,
    id: (j) => j.schedule.id,
    teamId: (j) => j.schedule.teamId,
    run: runJob,
    listDue,
  });
}
