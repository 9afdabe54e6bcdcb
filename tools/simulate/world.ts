import { AsyncLocalStorage } from "node:async_hooks";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Composed, composeDeps, createEdgeClient } from "../../src/app/compose.js";
import { ChangeObservers } from "../../src/changes/observers.js";
import { type Cancel, type Clock, sleepOn } from "../../src/clock.js";
import { type Config, loadConfig } from "../../src/config.js";
import type { Deps } from "../../src/deps.js";
import type { EdgeApi, EdgeClient } from "../../src/edge/client.js";
import { EdgeApiError } from "../../src/edge/errors.js";
import { OPERATIONS } from "../../src/edge/operations.js";
import { RETRY_NO_BACKOFF } from "../../src/edge/queue.js";
import { createLogger, type Logger } from "../../src/log.js";
import { createMetrics, type Metrics } from "../../src/ops/metrics.js";
import type { ChangeRequest, Store } from "../../src/store/index.js";
import { StoreError } from "../../src/store/index.js";
import { createManualClock, type ManualClock } from "../manual-clock.js";
import { type Simulator, type SimulatorState, startSimulator } from "../simulator/index.js";
import type { Fault } from "./plan.js";

/**
 * The simulation's world: one Edge API simulator and one store per replica slot for a whole batch of runs
 * (each run gets a fresh workspace and the simulator's data back as seeded), one manual clock per run, and
 * per run 2–3 replicas of the engine, each its own Deps (its own store connection, Edge client, change
 * observers) seeing the shared clock through its own offset. Each replica's store and Edge client are
 * wrapped so every store write and every Edge call is a fault point: the wrappers pass each call through to
 * the real module and, where the plan says so, crash the replica there, fail the call, or hold it.
 */

export const SIM_EDGE_KEY = "sim-simulation-key-4b7e19d2";
/** The Edge API key of one run's workspace. */
export const runKey = (team: string) => `${SIM_EDGE_KEY}-${team}`;
const ENCRYPTION_KEY = Buffer.alloc(32, 9).toString("base64");
/** Each run's clock starts this far after the previous run's: every lease of an earlier run has ended. */
const RUN_EPOCH_STEP = 10 * 24 * 3600_000;
const EPOCH = Date.UTC(2026, 7, 20, 10, 0, 0);

/** The op (a scheduler step's call into the engine) a fault point belongs to, through async context. */
export interface OpState {
  step: number;
  label: string;
  inc: Incarnation;
  fault?: Fault;
  /** Fault points passed so far: all, store writes, Edge calls. */
  points: number;
  storePoints: number;
  edgePoints: number;
  done: boolean;
  /** Its replica died while it ran (it never ends). */
  lost: boolean;
  outcome?: string;
}

interface OpContext {
  op: OpState;
  /** The request whose in-flight lease this code holds (apply: approved; undo: undoing). */
  hold?: { requestId: string; phase: string; id: number };
}

let holds = 0;

export const opContext = new AsyncLocalStorage<OpContext>();

export interface Incarnation {
  id: number;
  slot: number;
  dead: boolean;
  /** Resolves when it dies. */
  died: Promise<void>;
  die: () => void;
  timers: Set<Cancel>;
  deps: Deps;
  edgeApi: EdgeApi;
}

export interface EdgeWrite {
  inc: number;
  step: number;
  operation: string;
  /** The request whose apply or undo made it, and which (from its in-flight lease). */
  requestId?: string;
  phase?: string;
  /** Which in-flight lease (one per apply or undo attempt). */
  holdId?: number;
  /** The call reached the Edge API (it answered, or its answer was lost after it was done). */
  reached: boolean;
  /** The target's last applied request (by the store's moves) when the write was made. */
  lastApplied?: string | undefined;
  at: number;
}

export interface Trace {
  /** Requests moved to applied, in the order the store made the moves. */
  applied: { id: string; at: number }[];
  /** Every successful transition (id, from → to). */
  transitions: { id: string; to: string; at: number }[];
  edgeWrites: EdgeWrite[];
  /** What each request's card was last told (any replica's observers). */
  card: Map<string, ChangeRequest>;
  crashes: string[];
  faultsHit: string[];
  /** A fault hit an audit append or a transition (the audit or cards may lag the store for that reason). */
  storeFaultHit: boolean;
  /** sim.requests.length when the store last deleted the workspace's Edge API key (an uninstall's end). */
  keyRemovedAtRequest?: number;
  log: string[];
}

export function newTrace(): Trace {
  return {
    applied: [],
    transitions: [],
    edgeWrites: [],
    card: new Map(),
    crashes: [],
    faultsHit: [],
    storeFaultHit: false,
    log: [],
  };
}

export interface Batch {
  sim: Simulator;
  config: Config;
  logger: Logger;
  metrics: Metrics;
  slots: Composed[];
  /** The current run's clock and replicas' offsets (the slot stores' clocks read them). */
  current: { clock: StepClock; skews: number[] };
  runs: number;
  initial: Pick<SimulatorState, "accessLists" | "shieldZones" | "nextAccessListId">;
  close(): Promise<void>;
}

const NEVER = new Promise<never>(() => {});

/** A Clock that reads another clock through an indirection: the batch's stores and simulator outlive a run's clock. */
function delegatingClock(get: () => Clock, offset: () => number): Clock {
  return {
    now: () => get().now() + offset(),
    elapsed: () => get().elapsed(),
    setTimeout: (fn, ms) => get().setTimeout(fn, ms),
    setInterval: (fn, ms) => get().setInterval(fn, ms),
    sleep: (ms, signal) => get().sleep(ms, signal),
  };
}

export interface BatchOptions {
  store: "sqlite" | "postgres";
  pgSchema?: string;
  /**
   * "own" (default): each replica its own store connection (SQLite: its own handle on the file, whose
   * lock waits are real time). "shared": one connection for all, each replica still its own Store
   * wrapper and clock offset (faster: no SQLITE_BUSY waits).
   */
  connections?: "own" | "shared";
}

/** The run's manual clock, which also tells when the step moving it (advance or advanceTo) has ended. */
export interface StepClock extends ManualClock {
  /** Resolves once no step is moving the clock (at once when none is). */
  stepEnded(): Promise<void>;
}

function stepClock(startMs: number): StepClock {
  const clock = createManualClock(startMs);
  const { advance, advanceTo } = clock;
  let step: Promise<void> = Promise.resolve();
  const moving = (p: Promise<void>) => {
    step = p.catch(() => undefined);
    return p;
  };
  return Object.assign(clock, {
    advance: (ms: number) => moving(advance(ms)),
    advanceTo: (epochMs: number) => moving(advanceTo(epochMs)),
    stepEnded: () => step,
  });
}

export async function startBatch(options: BatchOptions) {
  const current = { clock: stepClock(EPOCH), skews: [0, 0, 0] };
  const simClock = delegatingClock(
    () => current.clock,
    () => 0,
  );
  const sim = await startSimulator({ apiKeys: [SIM_EDGE_KEY], scanDurationMs: 50, clock: simClock });
  const dataDir = mkdtempSync(join(tmpdir(), "edgeops-simulate-"));
  const env: Record<string, string> = {
    EDGE_API_URL: sim.url,
    DATA_DIR: dataDir,
    ENCRYPTION_KEY,
    SLACK_BOT_TOKEN: "xoxb-simulate-0000",
    SLACK_SIGNING_SECRET: "simulate-signing-secret-0123456789",
    EDGE_API_RATE_PER_SEC: "1000",
    LOG_LEVEL: "silent",
  };
  if (options.store === "postgres")
    env.DATABASE_URL = process.env.TEST_DATABASE_URL || "postgres://postgres@127.0.0.1:5432/test";
  const config = loadConfig(env);
  const logger = createLogger({ level: process.env.SIMULATE_LOG ?? "silent" });
  const metrics = createMetrics({ defaults: false });
  const slots: Composed[] = [];
  const connections = options.connections ?? "own";
  for (let slot = 0; slot < (connections === "own" ? 3 : 1); slot++) {
    // The replica's offset: the acting op's replica (one connection shared by all), else the slot's.
    const clock = delegatingClock(
      () => current.clock,
      () => current.skews[opContext.getStore()?.op.inc.slot ?? slot] ?? 0,
    );
    slots.push(
      await composeDeps({
        config,
        logger,
        clock,
        processMetrics: false,
        poolSize: 2,
        ...(options.pgSchema ? { pgSchema: options.pgSchema } : {}),
        edgeOptions: { timeoutMs: 2000, retry: RETRY_NO_BACKOFF },
      }),
    );
  }
  const initial = structuredClone({
    accessLists: sim.state.accessLists,
    shieldZones: sim.state.shieldZones,
    nextAccessListId: sim.state.nextAccessListId,
  });
  const batch: Batch = {
    sim,
    config,
    logger,
    metrics,
    slots,
    current,
    runs: 0,
    initial,
    async close() {
      for (const s of slots) await s.close();
      await sim.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
  return batch;
}

/** A fresh clock for the next run (later than every earlier run's), the simulator's data as seeded. */
export function resetForRun(batch: Batch, skews: number[]): StepClock {
  batch.runs++;
  batch.current.clock = stepClock(EPOCH + batch.runs * RUN_EPOCH_STEP);
  batch.current.skews = [...skews, 0, 0, 0];
  const fresh = structuredClone(batch.initial);
  batch.sim.state.accessLists = fresh.accessLists;
  batch.sim.state.shieldZones = fresh.shieldZones;
  batch.sim.state.nextAccessListId = fresh.nextAccessListId;
  batch.sim.clearFaults();
  batch.sim.clearRequests();
  return batch.current.clock;
}

/** Store methods that write (fault points); every other method is a read and passes through. */
const WRITES =
  /^(create|transition|annotate|set|take|renew|end|release|remove|delete|append|upsert|add|claim|record|clear|put|save|mark)/;

export interface RunWorld {
  batch: Batch;
  /** Every incarnation of every replica in this run. */
  all: Incarnation[];
  clock: StepClock;
  trace: Trace;
  /** Moves while the simulation watches: bumped by every call through a wrapper. */
  progress: { n: number; parked: number; edgeInFlight: number; storeInFlight: number };
  targetOf: (requestId: string) => string | undefined;
  incarnations: number;
}

function kill(world: RunWorld, inc: Incarnation, why: string) {
  if (inc.dead) return;
  inc.dead = true;
  inc.die();
  for (const cancel of inc.timers) cancel();
  inc.timers.clear();
  world.trace.crashes.push(`r${inc.slot}#${inc.id}: ${why}`);
}

/** A replica's view of the shared clock: its own offset; its timers are dropped once it is dead. */
function replicaClock(world: RunWorld, inc: () => Incarnation, skew: number): Clock {
  const shared = world.clock;
  const timer =
    (every: boolean) =>
    (fn: () => void, ms: number): Cancel => {
      const me = inc();
      if (me.dead) return () => {};
      const ctx = opContext.getStore();
      const run = () => {
        if (me.dead) return;
        if (ctx) opContext.run(ctx, fn);
        else fn();
      };
      let cancel: Cancel = () => {};
      const wrapped = every
        ? run
        : () => {
            me.timers.delete(cancel);
            run();
          };
      const stop = every ? shared.setInterval(wrapped, ms) : shared.setTimeout(wrapped, ms);
      cancel = () => {
        me.timers.delete(cancel);
        stop();
      };
      me.timers.add(cancel);
      return cancel;
    };
  const view: Clock = {
    now: () => shared.now() + skew,
    elapsed: () => shared.elapsed(),
    setTimeout: timer(false),
    setInterval: timer(true),
    sleep: (ms, signal) => sleepOn(view.setTimeout, ms, signal),
  };
  return view;
}

function pathPattern(operation: string): { method: string; path: RegExp } | undefined {
  const row = (OPERATIONS as Record<string, { method: string; path: string }>)[operation];
  if (!row) return undefined;
  const body = row.path.replace(/[.*+?^$()|[\]\\]/g, "\\$&").replace(/\\?\{[^}]+\\?\}/g, "[^/]+");
  return { method: row.method, path: new RegExp(`^${body.replace(/\{[^}]+\}/g, "[^/]+")}/?$`) };
}

/** The op this call belongs to, and whether the plan's fault is due at this point. */
function faultHere(inc: Incarnation, kind: "store" | "edge"): Fault | undefined {
  const ctx = opContext.getStore();
  const op = ctx?.op;
  if (!op?.fault || op.inc !== inc) return undefined;
  // A crash counts every fault point; a store fault only store writes; an Edge fault only Edge calls.
  const all = op.points++;
  const own = kind === "store" ? op.storePoints++ : op.edgePoints++;
  const a = op.fault.action;
  if (a.startsWith("crash")) return all === op.fault.at ? op.fault : undefined;
  const mine = kind === "store" ? a.startsWith("store") : a.startsWith("edge") || a === "slow";
  return mine && own === op.fault.at ? op.fault : undefined;
}

function storeProxy(world: RunWorld, inc: () => Incarnation, real: Store): Store {
  const repos = new Map<PropertyKey, unknown>();
  const wrapRepo = (repoName: string, repo: object) =>
    new Proxy(repo, {
      get(target, name, receiver) {
        const value = Reflect.get(target, name, receiver) as unknown;
        if (typeof value !== "function" || typeof name !== "string") return value;
        const write = WRITES.test(name);
        return (...args: unknown[]) => {
          const me = inc();
          if (me.dead) return NEVER;
          world.progress.n++;
          // PostgreSQL's calls are counted while on the wire: a round trip is not over within a few
          // event-loop turns (SQLite's statements run in this thread).
          const onWire = real.engine === "postgres";
          const call = () => {
            const out = Promise.resolve((value as (...a: unknown[]) => Promise<unknown>).apply(target, args));
            if (!onWire) return out;
            world.progress.storeInFlight++;
            return out.finally(() => {
              world.progress.storeInFlight--;
              world.progress.n++;
            });
          };
          if (!write) return call();
          // An in-flight lease is taken by takeLease (id, state) or by a move that sets it (id, from, to, patch).
          const leaseMove =
            repoName === "changeRequests" &&
            name === "transition" &&
            typeof (args[3] as { leaseUntil?: unknown } | undefined)?.leaseUntil === "number";
          if (repoName === "changeRequests" && (name === "takeLease" || leaseMove)) {
            const ctx = opContext.getStore();
            if (ctx)
              opContext.enterWith({
                ...ctx,
                hold: {
                  requestId: String(args[0]),
                  phase: String(leaseMove ? args[2] : args[1]),
                  id: ++holds,
                },
              });
          }
          const observe = (result: unknown) => {
            world.progress.n++;
            // Moves into a state; into applied only by an apply (transitionToOwner: with the owner record), not
            // an undo put back to applied to be tried again.
            const moved =
              repoName !== "changeRequests" || !result || typeof result !== "object"
                ? undefined
                : name === "transition" && args[1] !== "undoing"
                  ? (result as ChangeRequest)
                  : name === "transitionToOwner"
                    ? (result as { moved?: ChangeRequest }).moved
                    : undefined;
            if (repoName === "keys" && name === "remove" && result === true)
              world.trace.keyRemovedAtRequest = world.batch.sim.requests.length;
            if (moved) {
              const at = world.clock.now();
              world.trace.transitions.push({ id: moved.id, to: moved.state, at });
              if (moved.state === "applied") world.trace.applied.push({ id: moved.id, at });
            }
            return result;
          };
          const fault = faultHere(me, "store");
          if (!fault) return call().then(observe);
          const where = `r${me.slot}#${me.id} ${repoName}.${name} ${fault.action}`;
          world.trace.faultsHit.push(where);
          if (name.startsWith("transition") || repoName === "audit" || name === "setTargetOwner")
            world.trace.storeFaultHit = true;
          switch (fault.action) {
            case "crash-before":
              kill(world, me, `before ${repoName}.${name}`);
              return NEVER;
            case "crash-after":
              return call().then(
                (r) => {
                  observe(r);
                  kill(world, me, `after ${repoName}.${name}`);
                  return NEVER;
                },
                () => {
                  kill(world, me, `after ${repoName}.${name} (failed)`);
                  return NEVER;
                },
              );
            case "store-fail-before":
              return Promise.reject(
                new StoreError("unavailable", `simulated: ${repoName}.${name} failed before`),
              );
            case "store-fail-after":
              return call().then((r) => {
                observe(r);
                throw new StoreError(
                  "unavailable",
                  `simulated: ${repoName}.${name} failed after it was stored`,
                );
              });
            default:
              return call().then(observe);
          }
        };
      },
    });
  return new Proxy(real, {
    get(target, name, receiver) {
      const value = Reflect.get(target, name, receiver) as unknown;
      if (typeof value === "function") {
        return (...args: unknown[]) =>
          inc().dead ? NEVER : (value as (...a: unknown[]) => unknown).apply(target, args);
      }
      if (value && typeof value === "object" && typeof name === "string" && name !== "engine") {
        let repo = repos.get(name);
        if (!repo) {
          repo = wrapRepo(name, value);
          repos.set(name, repo);
        }
        return repo;
      }
      return value;
    },
  });
}

function edgeProxy(world: RunWorld, inc: () => Incarnation, real: EdgeApi, clock: Clock): EdgeApi {
  const { sim } = world.batch;
  const wrapClient = (client: EdgeClient): EdgeClient =>
    new Proxy(client, {
      get(target, name, receiver) {
        const value = Reflect.get(target, name, receiver) as unknown;
        if (typeof value !== "function" || typeof name !== "string") return value;
        const route = pathPattern(name);
        const write = route !== undefined && route.method !== "GET";
        return async (...args: unknown[]) => {
          const me = inc();
          if (me.dead) return NEVER;
          const ctx = opContext.getStore();
          world.progress.n++;
          const record = (reached: boolean) => {
            if (!write) return;
            const hold = ctx?.hold ?? opContext.getStore()?.hold;
            const target = hold ? world.targetOf(hold.requestId) : undefined;
            const last = target
              ? [...world.trace.applied].reverse().find((a) => world.targetOf(a.id) === target)?.id
              : undefined;
            world.trace.edgeWrites.push({
              inc: me.id,
              step: ctx?.op.step ?? -1,
              operation: name,
              ...(hold ? { requestId: hold.requestId, phase: hold.phase, holdId: hold.id } : {}),
              reached,
              lastApplied: last,
              at: world.clock.now(),
            });
          };
          const call = async () => {
            world.progress.edgeInFlight++;
            try {
              const out = await (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
              record(true);
              return out;
            } catch (err) {
              // A 5xx or refusal did not write; a timeout may have.
              record(err instanceof EdgeApiError && (err.kind === "timeout" || err.kind === "network"));
              throw err;
            } finally {
              world.progress.edgeInFlight--;
              world.progress.n++;
            }
          };
          const fault = faultHere(me, "edge");
          if (!fault) return call();
          world.trace.faultsHit.push(`r${me.slot}#${me.id} edge.${name} ${fault.action}`);
          const timeout = () =>
            new EdgeApiError({
              kind: "timeout",
              operation: name as never,
              message: `${name}: simulated timeout`,
            });
          switch (fault.action) {
            case "crash-before":
              kill(world, me, `before edge.${name}`);
              return NEVER;
            case "crash-after":
              await call().catch(() => undefined);
              kill(world, me, `after edge.${name}`);
              return NEVER;
            case "edge-503":
            case "edge-429":
            case "edge-refuse":
              if (route)
                sim.addFault({
                  method: route.method,
                  path: route.path,
                  // A 503 answers every attempt (the client retries a call safe to repeat twice): the call fails.
                  times: fault.action === "edge-503" ? 3 : 1,
                  ...(fault.action === "edge-503"
                    ? { status: 503 }
                    : fault.action === "edge-429"
                      ? { retryAfter: "2" }
                      : { refuse: {} }),
                });
              return call();
            case "edge-timeout-before":
              throw timeout();
            case "edge-timeout-after":
              await call().catch(() => undefined);
              throw timeout();
            case "slow":
              world.progress.parked++;
              try {
                await clock.sleep(fault.ms ?? 31_000);
                // A stalled replica resumes into the present: its call (and that call's own timeout) starts
                // once the step that moved time past the stall has ended, not inside a 25 h jump, where the
                // timeout would fire before the call's first byte is on the wire.
                await world.clock.stepEnded();
              } finally {
                world.progress.parked--;
              }
              if (inc().dead) return NEVER;
              return call();
            default:
              return call();
          }
        };
      },
    });
  return {
    forKey: (apiKey, options) => wrapClient(real.forKey(apiKey, options)),
    queueStats: () => real.queueStats(),
    backgroundFull: () => real.backgroundFull(),
    close: (deadlineMs) => real.close(deadlineMs),
  };
}

/** A new incarnation of the replica in `slot`: fresh Deps (Edge client, observers, clock view) on the slot's store. */
export function startIncarnation(world: RunWorld, slot: number, skew: number): Incarnation {
  const { batch } = world;
  const composed = batch.slots[slot] ?? batch.slots[0];
  if (!composed) throw new Error(`no store slot ${slot}`);
  const id = ++world.incarnations;
  let me: Incarnation | undefined;
  const self = () => me as Incarnation;
  const clock = replicaClock(world, self, skew);
  const edgeApi = createEdgeClient({
    config: batch.config,
    logger: batch.logger,
    clock,
    metrics: batch.metrics,
    timeoutMs: 2000,
    retry: RETRY_NO_BACKOFF,
  });
  const changeObservers = new ChangeObservers();
  const tell = async (r: ChangeRequest) => {
    if (!self().dead) world.trace.card.set(r.id, r);
  };
  changeObservers.add(tell);
  changeObservers.addNoted(tell);
  const deps: Deps = {
    config: batch.config,
    logger: batch.logger,
    metrics: batch.metrics,
    clock,
    store: storeProxy(world, self, composed.deps.store),
    edge: edgeProxy(world, self, edgeApi, clock),
    changeObservers,
  };
  let die = () => {};
  const died = new Promise<void>((resolve) => (die = resolve));
  me = { id, slot, dead: false, died, die, timers: new Set(), deps, edgeApi };
  world.all.push(me);
  return me;
}

export function killIncarnation(world: RunWorld, inc: Incarnation, why: string) {
  kill(world, inc, why);
}
