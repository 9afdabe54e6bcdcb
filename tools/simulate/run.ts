import { approve, reject, requestChange, retry } from "../../src/changes/engine.js";
import { accessBlockKind, ddosSensitivityKind, resolveChange, wafModeKind } from "../../src/changes/index.js";
import { SWEEPS, type SweepKind, undoNow } from "../../src/changes/undo-and-reconcile.js";
import { systemClock } from "../../src/clock.js";
import { edgeopsListName } from "../../src/services/access-lists.js";
import { continueRemovals, forgetWorkspace } from "../../src/services/uninstall.js";
import type { ChangeRequest } from "../../src/store/index.js";
import { SIM_IDS } from "../simulator/index.js";
import { checkInvariants, type Violation } from "./invariants.js";
import {
  APPROVERS,
  type ChangeChoice,
  describeStep,
  type Fault,
  IPS,
  type Plan,
  REQUESTER,
  type Step,
} from "./plan.js";
import { withSeededRandom } from "./prng.js";
import {
  type Batch,
  type Incarnation,
  killIncarnation,
  newTrace,
  type OpState,
  opContext,
  type RunWorld,
  resetForRun,
  runKey,
  startIncarnation,
} from "./world.js";

export const ZONE = SIM_IDS.customerAccessList.zoneId;
export const CHANNEL_REQ = "CREQ";
export const CHANNEL_OFF = "COFF";
const isApprover = async (userId: string) => (APPROVERS as readonly string[]).includes(userId);

export interface RequestInfo {
  id: string;
  step: number;
  temporaryMs?: number;
  requester: string;
}

export interface UninstallInfo {
  step: number;
  /** How many forgetWorkspace calls were started and have ended. */
  started: number;
  ended: number;
  /** sim.requests.length when the last one ended. */
  settledAtRequest?: number;
  /** The workspace's temporary changes applied when it started. */
  appliedTemporary: string[];
}

export interface RunState {
  world: RunWorld;
  plan: Plan;
  team: string;
  replicas: (Incarnation | undefined)[];
  requests: RequestInfo[];
  ops: OpState[];
  uninstall?: UninstallInfo;
  /** Each request's target (the kind's targetKey), from its kind and parameters when it was asked. */
  targetKeys: Map<string, string>;
}

export interface RunResult {
  seed: number;
  /** The run's workspace (its requests are `<team>-q<step>`). */
  team: string;
  violations: Violation[];
  steps: Step[];
  log: string[];
}

/** The simulator's truth for a request's target: its current value, in the kind's terms. */
export function valueAtSim(batch: Batch, r: Pick<ChangeRequest, "kind" | "params">): unknown {
  const c = resolveChange(r);
  const p = c?.params as { shieldZoneId: number; value: unknown; type?: string } | undefined;
  if (!c || !p) return undefined;
  if (r.kind === "access_block") {
    const lists = batch.sim.state.accessLists.get(p.shieldZoneId) ?? [];
    const has = (action: "block" | "challenge") =>
      lists
        .filter((l) => l.name === edgeopsListName("ip", action))
        .some((l) => l.content.split("\n").includes(String(p.value)));
    return has("block") ? "block" : has("challenge") ? "challenge" : "none";
  }
  const zone = batch.sim.state.shieldZones.find((z) => z.shieldZoneId === p.shieldZoneId);
  if (!zone) return undefined;
  if (r.kind === "ddos_sensitivity") return zone.dDoSShieldSensitivity;
  if (r.kind === "waf_mode") return zone.wafExecutionMode;
  return undefined;
}

function live(state: RunState, r: number): Incarnation | undefined {
  const inc = state.replicas[r];
  return inc && !inc.dead ? inc : undefined;
}

function launch(
  state: RunState,
  step: number,
  inc: Incarnation,
  label: string,
  fault: Fault | undefined,
  work: () => Promise<unknown>,
  onDone?: () => void,
): OpState {
  const op: OpState = {
    step,
    label,
    inc,
    points: 0,
    storePoints: 0,
    edgePoints: 0,
    done: false,
    lost: false,
    ...(fault ? { fault } : {}),
  };
  state.ops.push(op);
  void opContext.run({ op }, async () => {
    try {
      const out = await work();
      op.outcome = summarize(out);
    } catch (err) {
      op.outcome = `threw ${err instanceof Error ? `${err.name}: ${err.message}` : String(err)}`.slice(
        0,
        160,
      );
    } finally {
      op.done = true;
      state.world.progress.n++;
      onDone?.();
    }
  });
  return op;
}

function summarize(out: unknown): string {
  if (out && typeof out === "object" && "kind" in out) {
    const o = out as { kind: string; request?: ChangeRequest };
    return `${o.kind}${o.request ? ` ${o.request.id} ${o.request.state}` : ""}`;
  }
  if (Array.isArray(out)) return `${out.length} moved`;
  return out === undefined ? "done" : JSON.stringify(out).slice(0, 80);
}

/** Probes (a real millisecond each) a settle waits for a call the simulator or PostgreSQL still holds. */
const HELD_PROBES = 5_000;

/**
 * Until the world is quiet: no call through the wrappers for many turns of the event loop in a row (an
 * Edge call that may be on the wire waits longer). Work waiting on the shared clock stays waiting: only
 * the scheduler's advance moves it.
 */
async function settle(state: RunState): Promise<void> {
  const { progress, batch } = state.world;
  let last = -1;
  let quiet = 0;
  let wire = false;
  for (let probe = 0; probe < 20_000; probe++) {
    // With a call on the wire, a probe is a real millisecond: a PostgreSQL round trip or a loopback answer
    // under load takes longer than a few event-loop turns, and time must not move while it is out.
    await new Promise<void>((resolve) => (wire ? systemClock.setTimeout(resolve, 1) : setImmediate(resolve)));
    const seen = progress.n + batch.sim.requests.length * 1_000_003;
    quiet = seen === last ? quiet + 1 : 0;
    last = seen;
    // Held by the simulator or on PostgreSQL's wire: it answers in real time, so time waits for it (up to 5 s
    // of real time, on a loaded machine) rather than for a count of quiet probes that load can outlast.
    const held = batch.sim.inFlight() > 0 || progress.storeInFlight > 0;
    wire = held || progress.edgeInFlight - progress.parked > 0;
    if (held && probe < HELD_PROBES) continue;
    if (quiet >= (wire ? 30 : 12)) return;
  }
}

function pickRequest(state: RunState, pick: number): RequestInfo | undefined {
  return state.requests.length === 0 ? undefined : state.requests[pick % state.requests.length];
}

function changeFor(state: RunState, c: ChangeChoice) {
  const zone = state.world.batch.sim.state.shieldZones.find((z) => z.shieldZoneId === ZONE);
  if (c.kind === "block")
    return {
      kind: accessBlockKind,
      params: {
        shieldZoneId: ZONE,
        type: "ip" as const,
        value: IPS[c.ip] as string,
        state: "block" as const,
      },
    };
  if (c.kind === "ddos")
    return {
      kind: ddosSensitivityKind,
      params: { shieldZoneId: ZONE, value: c.value, seen: zone?.dDoSShieldSensitivity ?? null },
    };
  return {
    kind: wafModeKind,
    params: { shieldZoneId: ZONE, value: c.value, seen: zone?.wafExecutionMode ?? null },
  };
}

async function runSweep(deps: Incarnation["deps"], team: string, kind: SweepKind): Promise<number> {
  const sweep = SWEEPS[kind];
  let moved = 0;
  for (const r of await sweep.listDue(deps, { teamIds: [team] })) {
    try {
      if (await sweep.moveOne(deps, r)) moved++;
    } catch {
      // as the job: logged, left for the next sweep
    }
  }
  return moved;
}

async function doStep(state: RunState, i: number, s: Step): Promise<void> {
  const { world, team } = state;
  if (s.t === "advance") {
    await world.clock.advance(s.ms);
    return;
  }
  if (s.t === "restart") {
    const old = state.replicas[s.r];
    if (old && !old.dead) return;
    state.replicas[s.r] = startIncarnation(world, s.r, state.plan.skews[s.r] ?? 0);
    return;
  }
  const inc = live(state, s.r);
  if (!inc) {
    world.trace.log.push(`  step ${i}: r${s.r} is down`);
    return;
  }
  const { deps } = inc;
  const decision = (id: string, userId: string) => ({ requestId: id, teamId: team, userId, isApprover });
  switch (s.t) {
    case "request": {
      const ask = (who: Incarnation, id: string, change: ChangeChoice, fault?: Fault) => {
        const { kind, params } = changeFor(state, change);
        const channelId = s.channel === "off" ? CHANNEL_OFF : CHANNEL_REQ;
        const key = (kind as typeof accessBlockKind).targetKey?.(params as never, {
          teamId: team,
          channelId,
          userId: s.user,
        });
        if (key) state.targetKeys.set(id, key);
        state.requests.push({
          id,
          step: i,
          requester: s.user,
          ...(s.temporaryMs !== undefined ? { temporaryMs: s.temporaryMs } : {}),
        });
        launch(state, i, who, "request", fault, () =>
          requestChange(who.deps, kind as typeof accessBlockKind, {
            teamId: team,
            channelId,
            userId: s.user,
            params: params as never,
            requestId: id,
            ...(s.temporaryMs !== undefined ? { temporaryMs: s.temporaryMs } : {}),
          }),
        );
      };
      ask(inc, `${team}-q${i}`, s.change, s.fault);
      const other = s.also ? live(state, s.also.r) : undefined;
      if (other && s.also) ask(other, `${team}-q${i}b`, s.also.change, s.also.fault);
      return;
    }
    case "approve": {
      const r = pickRequest(state, s.pick);
      if (!r) return;
      launch(state, i, inc, "approve", s.fault, () => approve(deps, decision(r.id, s.user)));
      const other = s.r2 !== undefined ? live(state, s.r2) : undefined;
      if (other && s.user2) {
        // The same request (a race) or the next one (two targets at once), by the pick's parity.
        const r2 = s.pick % 2 === 0 ? r : (pickRequest(state, s.pick + 1) ?? r);
        launch(state, i, other, "approve2", undefined, () =>
          approve(other.deps, decision(r2.id, s.user2 ?? "")),
        );
      }
      return;
    }
    case "reject": {
      const r = pickRequest(state, s.pick);
      if (r) launch(state, i, inc, "reject", s.fault, () => reject(deps, decision(r.id, s.user)));
      return;
    }
    case "withdraw": {
      const r = pickRequest(state, s.pick);
      if (r) launch(state, i, inc, "withdraw", s.fault, () => reject(deps, decision(r.id, r.requester)));
      return;
    }
    case "retry": {
      const r = pickRequest(state, s.pick);
      if (r) launch(state, i, inc, "retry", s.fault, () => retry(deps, decision(r.id, s.user)));
      return;
    }
    case "undoNow": {
      const r = pickRequest(state, s.pick);
      const user = s.user === REQUESTER && r ? r.requester : s.user;
      if (r) launch(state, i, inc, "undoNow", s.fault, () => undoNow(deps, decision(r.id, user)));
      return;
    }
    case "sweep":
      launch(state, i, inc, `sweep ${s.sweep}`, s.fault, () => runSweep(deps, team, s.sweep));
      return;
    case "uninstall": {
      if (!state.uninstall) {
        const applied: string[] = [];
        for (const r of state.requests) {
          if (r.temporaryMs === undefined) continue;
          const now = await state.world.batch.slots[0]?.deps.store.changeRequests.get(r.id);
          if (now?.state === "applied" || now?.state === "undoing") applied.push(r.id);
        }
        state.uninstall = { step: i, started: 0, ended: 0, appliedTemporary: applied };
      }
      const u = state.uninstall;
      const start = (who: Incarnation, reason: "app_uninstalled" | "tokens_revoked", fault?: Fault) => {
        u.started++;
        launch(
          state,
          i,
          who,
          `uninstall ${reason}`,
          fault,
          () => forgetWorkspace(who.deps, team, reason),
          () => {
            u.ended++;
            if (u.ended === u.started) u.settledAtRequest = world.batch.sim.requests.length;
          },
        );
      };
      start(inc, "app_uninstalled", s.fault);
      const other = s.r2 !== undefined ? live(state, s.r2) : undefined;
      if (other) start(other, "tokens_revoked", undefined);
      return;
    }
  }
}

/** Quiesce: time moves on in steps and a live replica runs every sweep until nothing moves. */
async function quiesce(state: RunState): Promise<void> {
  const { world, team } = state;
  /** A live replica to sweep with (another op's fault may kill one meanwhile: then a restart). */
  const sweeper = () => {
    const alive = state.replicas.find((r) => r && !r.dead);
    if (alive) return alive;
    const inc = startIncarnation(world, 0, state.plan.skews[0] ?? 0);
    state.replicas[0] = inc;
    return inc;
  };
  const sweepAll = async () => {
    for (let pass = 0; pass < 6; pass++) {
      let moved = 0;
      const inc = sweeper();
      // Started, not awaited: a sweep may wait on the clock (a target another call holds), which only
      // the next advance moves; the quiesce goes on once the world is quiet.
      const op = launch(state, -1, inc, "quiesce", undefined, async () => {
        for (const kind of ["expire", "reconcile", "undo", "reconcile-undo"] as const)
          moved += await runSweep(inc.deps, team, kind);
        // As the change sweeper's tick: then the removals whose undos settled finish (their key goes).
        moved += await continueRemovals(inc.deps, { teamIds: [team] });
        return moved;
      });
      await settle(state);
      if (!op.done || (moved === 0 && !inc.dead)) return;
    }
  };
  const unfinished = async () => {
    const store = world.batch.slots[0]?.deps.store;
    if (!store) return false;
    for (const r of state.requests) {
      const now = await store.changeRequests.get(r.id);
      if (!now) continue;
      if (now.state === "pending" || now.state === "approved" || now.state === "undoing") return true;
      if (now.state === "applied" && now.undoAt !== null) return true;
    }
    return false;
  };
  /**
   * The next minute, or the moment the next scheduled undo falls due when that is later: a temporary change
   * applied late in the quiesce (its call stalled past the 25 h step) is followed to its end, not judged before.
   */
  const nextStep = async () => {
    const store = world.batch.slots[0]?.deps.store;
    let due = Number.POSITIVE_INFINITY;
    for (const r of state.requests) {
      const now = await store?.changeRequests.get(r.id);
      if (now?.state === "applied" && now.undoAt !== null) due = Math.min(due, now.undoAt);
    }
    // Due on every replica's clock, the one furthest behind included (a second past it).
    const behind = world.clock.now() + Math.min(0, ...state.plan.skews);
    return due === Number.POSITIVE_INFINITY ? 61_000 : Math.max(61_000, due - behind + 1_000);
  };
  await settle(state);
  for (const ms of [61_000, 31 * 60_000, 95_000, 25 * 3600_000]) {
    if (process.env.SIMULATE_STEPS) console.error(`quiesce ${ms}`);
    await world.clock.advance(ms);
    await settle(state);
    await sweepAll();
  }
  for (let round = 0; round < 16 && (await unfinished()); round++) {
    await world.clock.advance(await nextStep());
    await settle(state);
    await sweepAll();
  }
}

let runCounter = 0;

/** One run of a plan on a batch's world: its steps, a quiesce, then the invariants. */
export async function runPlan(batch: Batch, plan: Plan): Promise<RunResult> {
  const clock = resetForRun(batch, plan.skews);
  const team = `TSIM${++runCounter}`;
  const world: RunWorld = {
    batch,
    clock,
    trace: newTrace(),
    progress: { n: 0, parked: 0, edgeInFlight: 0, storeInFlight: 0 },
    targetOf: () => undefined,
    incarnations: 0,
    all: [],
  };
  const targetKeys = new Map<string, string>();
  const state: RunState = { world, plan, team, replicas: [], requests: [], ops: [], targetKeys };
  world.targetOf = (id) => targetKeys.get(id);
  const setup = batch.slots[0]?.deps.store;
  if (!setup) throw new Error("no store");
  // Its own key: a call left over from an earlier run of the batch is never taken for this workspace's.
  const revokeKey = batch.sim.allowApiKey(runKey(team));
  await setup.keys.set(team, runKey(team), "UADMIN");
  await setup.policies.setChannel(team, CHANNEL_OFF, { approvals: "off", updatedBy: "UADMIN" });
  await setup.policies.setChannel(team, CHANNEL_REQ, {
    approvals: "required",
    approvalsNeeded: 1,
    updatedBy: "UADMIN",
  });
  for (let r = 0; r < plan.replicas; r++) state.replicas.push(startIncarnation(world, r, plan.skews[r] ?? 0));

  const guard = hangGuard();
  const run = withSeededRandom(plan.seed, async () => {
    const log = world.trace.log;
    log.push(
      `seed ${plan.seed}: ${plan.replicas} replicas, skews ${plan.skews.map((s) => `${s / 1000}s`).join(" ")}`,
    );
    for (let i = 0; i < plan.steps.length; i++) {
      const step = plan.steps[i] as Step;
      log.push(`${String(i).padStart(3)} ${describeStep(step)}`);
      if (process.env.SIMULATE_STEPS) console.error(log[log.length - 1]);
      await doStep(state, i, step);
      await settle(state);
    }
    await quiesce(state);
    for (const op of state.ops) if (!op.done && op.inc.dead) op.lost = true;
    for (const op of state.ops.filter((o) => o.step >= 0 || !o.done))
      log.push(
        `  op@${op.step} ${op.label} r${op.inc.slot}#${op.inc.id}: ${op.done ? op.outcome : op.lost ? "lost (replica died)" : "still running"}`,
      );
    for (const c of world.trace.crashes) log.push(`  crash ${c}`);
    for (const f of world.trace.faultsHit) log.push(`  fault ${f}`);
    const violations = await checkInvariants(state);
    // Nothing of this run acts any more: every replica is stopped (timers dropped, calls never answered).
    for (const inc of world.all) killIncarnation(world, inc, "end of run");
    // A call of this run still on its way (a stalled one) is refused, not written into the next run's state.
    revokeKey();
    for (const inc of world.all) void inc.edgeApi.close(0).catch(() => undefined);
    return { seed: plan.seed, team, violations, steps: plan.steps, log };
  });
  try {
    return await Promise.race([
      run,
      guard.fired.then((): RunResult => {
        for (const inc of world.all) killIncarnation(world, inc, "the run hung");
        const log = [...world.trace.log, `  the run did not end within ${HANG_MS / 1000} s (real time)`];
        return {
          seed: plan.seed,
          team,
          violations: [{ invariant: "run-ends", detail: `stuck after ${world.trace.log.length} log lines` }],
          steps: plan.steps,
          log,
        };
      }),
    ]);
  } finally {
    guard.cancel();
  }
}

/** Real time a run may take before it counts as hung (a wait nothing will end: itself a finding). */
const HANG_MS = 20_000;

function hangGuard() {
  let fire = () => {};
  const fired = new Promise<void>((resolve) => (fire = resolve));
  const cancel = systemClock.setTimeout(fire, HANG_MS);
  return { fired, cancel };
}
