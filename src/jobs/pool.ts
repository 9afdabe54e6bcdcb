import type { Cancel, Clock } from "../clock.js";
import { withDeadline } from "../deadline.js";
import type { Logger } from "../log.js";
import { activeContext, type Context, inSpan, withContext } from "../ops/tracing.js";

/**
 * The bounded, fair run pool every claim-once background worker uses (the scheduler, the alert poller,
 * the change sweeper): due items wait in one queue per workspace; at most `concurrency` run at once, at
 * most `perWorkspace` of one workspace, taken in rotation (a served workspace goes to the back), so one
 * workspace's backlog or slow work leaves slots for the others. An item already waiting or running here is not queued again.
 */
export interface FairPoolOptions<T> {
  concurrency: number;
  /** Default: half of `concurrency` (at least 1). */
  perWorkspace?: number | undefined;
  id(item: T): string;
  teamId(item: T): string;
  /** Claim and run one item; true when this replica ran it. Must not throw. */
  run(item: T): Promise<boolean>;
}

export interface FairPool<T> {
  /** Queue the items not already waiting or running; resolves with how many this replica ran. */
  submit(items: readonly T[]): Promise<number>;
  /** Leave the items not started to their next tick (here or in another replica). */
  dropWaiting(): void;
  /** Stop starting items (those running finish). */
  stop(): void;
  readonly limits: { concurrency: number; perWorkspace: number };
}

export function createFairPool<T>(o: FairPoolOptions<T>): FairPool<T> {
  const concurrency = Math.max(1, o.concurrency);
  const perWorkspace = Math.min(concurrency, Math.max(1, o.perWorkspace ?? Math.floor(concurrency / 2)));
  interface Job {
    item: T;
    done: (ran: boolean) => void;
    /** The trace of the tick that submitted it: a job may start when another tick's job ends. */
    trace: Context;
  }
  /** Waiting jobs per workspace; the Map's order is the rotation. */
  const waiting = new Map<string, Job[]>();
  const queued = new Set<string>();
  const runningPerTeam = new Map<string, number>();
  let running = 0;
  let stopped = false;

  function nextJob(): Job | undefined {
    for (const [teamId, jobs] of waiting) {
      if ((runningPerTeam.get(teamId) ?? 0) >= perWorkspace) continue;
      const job = jobs.shift();
      waiting.delete(teamId);
      if (jobs.length > 0) waiting.set(teamId, jobs);
      if (job) return job;
    }
    return undefined;
  }

  function fillSlots(): void {
    while (running < concurrency && !stopped) {
      const job = nextJob();
      if (!job) return;
      const teamId = o.teamId(job.item);
      const id = o.id(job.item);
      running++;
      runningPerTeam.set(teamId, (runningPerTeam.get(teamId) ?? 0) + 1);
      void withContext(job.trace, () => o.run(job.item))
        .catch(() => false)
        .then(job.done)
        .finally(() => {
          running--;
          const left = (runningPerTeam.get(teamId) ?? 1) - 1;
          if (left > 0) runningPerTeam.set(teamId, left);
          else runningPerTeam.delete(teamId);
          queued.delete(id);
          fillSlots();
        });
    }
  }

  return {
    limits: { concurrency, perWorkspace },
    async submit(items) {
      const ran = items
        .filter((item) => !queued.has(o.id(item)))
        .map(
          (item) =>
            new Promise<boolean>((done) => {
              queued.add(o.id(item));
              const teamId = o.teamId(item);
              const jobs = waiting.get(teamId) ?? [];
              jobs.push({ item, done, trace: activeContext() });
              waiting.set(teamId, jobs);
            }),
        );
      fillSlots();
      return (await Promise.all(ran)).filter(Boolean).length;
    },
    dropWaiting() {
      for (const jobs of waiting.values())
        for (const job of jobs) {
          queued.delete(o.id(job.item));
          job.done(false);
        }
      waiting.clear();
    },
    stop() {
      stopped = true;
    },
  };
}

export interface ClaimLoopOptions<T> {
  /** For log lines: "scheduler", "alert poller". */
  name: string;
  intervalMs: number;
  /** Whose intervals tick the loop. */
  clock: Clock;
  logger: Logger;
  pool: FairPool<T>;
  /** The due items of this tick (each is claimed by the pool's `run`). */
  listDue(): Promise<readonly T[]>;
  /** Extra fields of the "started" log line. */
  startedFields?: Record<string, unknown>;
  /** Called first when stopping (e.g. cut waits short). */
  onStop?: () => void;
  /** Each tick's own work after its items ran, even when none were due; returns how many it did. */
  afterTick?: () => Promise<number>;
}

export interface ClaimLoop {
  /** List due items, submit them to the pool, then `afterTick`; resolves with how many this replica ran. */
  tick(): Promise<number>;
  /** Tick every intervalMs (a tick still listing is not overlapped; runs in flight do not hold it back). */
  start(): void;
  /** Stop ticking and starting items; wait for the ticks in flight, at most `deadlineMs` when given. */
  stop(deadlineMs?: number): Promise<void>;
  readonly stopped: boolean;
}

/** The tick loop every claim-once background worker runs around its fair pool. */
export function createClaimLoop<T>(o: ClaimLoopOptions<T>): ClaimLoop {
  const inFlight = new Set<Promise<number>>();
  let stopTicking: Cancel | undefined;
  let listing = false;
  let stopped = false;

  async function runTick(): Promise<number> {
    let due: readonly T[];
    listing = true;
    try {
      due = await o.listDue();
    } finally {
      listing = false;
    }
    const ran = due.length > 0 && !stopped ? await o.pool.submit(due) : 0;
    if (!o.afterTick || stopped) return ran;
    return ran + (await o.afterTick());
  }

  function tick(): Promise<number> {
    // One trace per tick: its listing, every run it starts, and the tick's own work after them.
    const p = inSpan(`job tick ${o.name}`, { "job.name": o.name }, runTick, { root: true }).catch(
      (err: unknown) => {
        o.logger.error({ err }, `${o.name} tick failed`);
        return 0;
      },
    );
    inFlight.add(p);
    void p.finally(() => inFlight.delete(p));
    return p;
  }

  return {
    tick,
    get stopped() {
      return stopped;
    },
    start() {
      if (stopTicking || stopped) return;
      stopTicking = o.clock.setInterval(() => {
        if (!listing) void tick();
      }, o.intervalMs);
      o.logger.info({ intervalMs: o.intervalMs, ...o.pool.limits, ...o.startedFields }, `${o.name} started`);
      void tick();
    },
    async stop(deadlineMs) {
      stopTicking?.();
      stopTicking = undefined;
      stopped = true;
      o.onStop?.();
      o.pool.stop();
      o.pool.dropWaiting();
      const drained = Promise.all([...inFlight]).then(() => undefined);
      if (deadlineMs === undefined) return drained;
      await withDeadline(o.clock, drained, deadlineMs, () =>
        o.logger.warn({ deadlineMs }, `${o.name} stopped with work still in flight`),
      );
    },
  };
}

export type ClaimWorkerOptions<T> = Omit<ClaimLoopOptions<T>, "pool"> & FairPoolOptions<T>;

/** A claim-once background worker (a job): its tick loop around its own fair pool. */
export function createClaimWorker<T>(o: ClaimWorkerOptions<T>): Pick<ClaimLoop, "tick" | "start" | "stop"> {
  const loop = createClaimLoop({ ...o, pool: createFairPool(o) });
  return { tick: loop.tick, start: loop.start, stop: loop.stop };
}
