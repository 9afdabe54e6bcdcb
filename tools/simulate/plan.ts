import { mulberry32, type Rng } from "./prng.js";

/**
 * A run's plan: the steps the scheduler takes, all drawn from the seed before the run starts, so a run can
 * be replayed from its seed or from a recorded (or shrunk) step list. A step that calls the engine may carry
 * one fault: at the `at`-th fault point of that call (lease renewals included, counted from 0: for a crash
 * every store write and Edge call, for a store fault the store writes, for an Edge fault the Edge calls),
 * what happens there.
 */

export type FaultAction =
  /** The replica dies before the call: it is not made. */
  | "crash-before"
  /** The replica dies after the call: it was made, nobody hears the answer. */
  | "crash-after"
  /** A store write fails before its statement (nothing stored). */
  | "store-fail-before"
  /** A store write fails after its statement (stored; the caller is told it failed). */
  | "store-fail-after"
  /** The Edge API answers 503 (the simulator's fault). */
  | "edge-503"
  /** The Edge API answers 429 with Retry-After: 2 (the simulator's fault). */
  | "edge-429"
  /** The Edge API refuses inside a 2xx (the simulator's documented refusal). */
  | "edge-refuse"
  /** The call times out before reaching the API (nothing done). */
  | "edge-timeout-before"
  /** The call reaches the API and is done; its answer is lost (a timeout). */
  | "edge-timeout-after"
  /** The call waits this many ms on the shared clock before it is made (a stalled replica). */
  | "slow";

export interface Fault {
  at: number;
  action: FaultAction;
  /** For "slow": how long, ms. */
  ms?: number;
}

export type ChangeChoice =
  | { kind: "block"; ip: number }
  | { kind: "ddos"; value: number }
  | { kind: "waf"; value: number };

export type Step =
  | {
      t: "request";
      r: number;
      change: ChangeChoice;
      temporaryMs?: number;
      /** "off": approvals off (applied at once); "req": one approval needed. */
      channel: "off" | "req";
      user: string;
      /** A second request at the same moment on another replica (another IP on the same list, or a conflict). */
      also?: { r: number; change: ChangeChoice; fault?: Fault };
      fault?: Fault;
    }
  /** `pick` selects a request (mod the number made so far); `r2`: a second approver on another replica at once. */
  | { t: "approve"; r: number; pick: number; user: string; r2?: number; user2?: string; fault?: Fault }
  | { t: "reject"; r: number; pick: number; user: string; fault?: Fault }
  | { t: "withdraw"; r: number; pick: number; fault?: Fault }
  | { t: "retry"; r: number; pick: number; user: string; fault?: Fault }
  | { t: "undoNow"; r: number; pick: number; user: string; fault?: Fault }
  | { t: "sweep"; r: number; sweep: "expire" | "reconcile" | "undo" | "reconcile-undo"; fault?: Fault }
  | { t: "advance"; ms: number }
  /** forgetWorkspace on `r` (and on `r2` at once, for the other reason). */
  | { t: "uninstall"; r: number; r2?: number; fault?: Fault }
  | { t: "restart"; r: number };

export interface Plan {
  seed: number;
  replicas: number;
  /** Each replica's clock offset, ms. */
  skews: number[];
  steps: Step[];
}

export const REQUESTER = "UREQ";
export const APPROVERS = ["UAPP1", "UAPP2"] as const;
export const IPS = ["203.0.113.10", "203.0.113.11", "203.0.113.12"] as const;

const FAULTS: readonly FaultAction[] = [
  "crash-before",
  "crash-after",
  "store-fail-before",
  "store-fail-after",
  "store-fail-after",
  "edge-503",
  "edge-429",
  "edge-refuse",
  "edge-timeout-before",
  "edge-timeout-after",
  "slow",
  "slow",
];

function maybeFault(rng: Rng, p = 0.3): Fault | undefined {
  if (!rng.chance(p)) return undefined;
  const action = rng.pick(FAULTS);
  // Counted among the points it can hit: every point (a crash), store writes, or Edge calls.
  const at = rng.int(0, action.startsWith("crash") ? 18 : action.startsWith("store") ? 14 : 9);
  return action === "slow" ? { at, action, ms: rng.pick([5_000, 31_000, 45_000, 95_000]) } : { at, action };
}

function alsoAsk(rng: Rng, r: number): { r: number; change: ChangeChoice; fault?: Fault } {
  const change = changeChoice(rng);
  // The second writer often stalls around its write (an IP block's PUT is its 8th Edge call): it read the
  // list, then writes late.
  const fault: Fault | undefined = rng.chance(0.3)
    ? { at: rng.int(5, 8), action: "slow", ms: rng.pick([5_000, 31_000]) }
    : maybeFault(rng);
  return { r, change, ...(fault ? { fault } : {}) };
}

function changeChoice(rng: Rng): ChangeChoice {
  const x = rng.next();
  if (x < 0.6) return { kind: "block", ip: rng.int(0, IPS.length - 1) };
  if (x < 0.8) return { kind: "ddos", value: rng.int(0, 4) };
  return { kind: "waf", value: rng.int(0, 1) };
}

/** The plan a seed makes: 2–3 replicas, skews up to ±45 s, 20–40 steps. */
export function planFor(seed: number): Plan {
  const rng = mulberry32(seed);
  const replicas = rng.int(2, 3);
  const skews = Array.from({ length: replicas }, () => (rng.chance(0.4) ? 0 : rng.int(-45, 45) * 1000));
  const n = rng.int(20, 40);
  const steps: Step[] = [];
  const replica = () => rng.int(0, replicas - 1);
  const other = (r: number) => (r + rng.int(1, replicas - 1)) % replicas;
  const pick = () => rng.int(0, 1_000_000);
  const approver = () => rng.pick(APPROVERS);
  const uninstallFrom = rng.chance(0.4) ? rng.int(Math.floor(n / 2), n) : Number.POSITIVE_INFINITY;
  for (let i = 0; i < n; i++) {
    if (i === uninstallFrom) {
      const r = replica();
      steps.push({ t: "uninstall", r, ...(rng.chance(0.8) ? { r2: other(r) } : {}) });
      continue;
    }
    const x = rng.next();
    const r = replica();
    let step: Step;
    if (x < 0.05 && replicas > 1) {
      // A lock race: two blocks of one list at once, from the replica furthest behind and the one furthest
      // ahead, the ahead one stalled between its read of the list and its PUT.
      const slow = skews.indexOf(Math.max(...skews));
      const fast = skews.indexOf(Math.min(...skews));
      const ip = rng.int(0, IPS.length - 1);
      steps.push({
        t: "request",
        r: fast === slow ? 0 : fast,
        change: { kind: "block", ip },
        channel: "off",
        user: REQUESTER,
        also: {
          r: fast === slow ? 1 : slow,
          change: { kind: "block", ip: (ip + 1) % IPS.length },
          fault: { at: 7, action: "slow", ms: 5_000 },
        },
      });
      continue;
    }
    if (x < 0.3) {
      const temp = rng.chance(0.45);
      step = {
        t: "request",
        r,
        change: changeChoice(rng),
        ...(temp ? { temporaryMs: rng.pick([60_000, 5 * 60_000, 30 * 60_000]) } : {}),
        channel: rng.chance(0.35) ? "off" : "req",
        user: rng.chance(0.8) ? REQUESTER : approver(),
        ...(rng.chance(0.35) ? { also: alsoAsk(rng, other(r)) } : {}),
      };
    } else if (x < 0.52) {
      const both = rng.chance(0.5);
      step = {
        t: "approve",
        r,
        pick: pick(),
        user: approver(),
        ...(both ? { r2: other(r), user2: approver() } : {}),
      };
    } else if (x < 0.56) step = { t: "reject", r, pick: pick(), user: approver() };
    else if (x < 0.6) step = { t: "withdraw", r, pick: pick() };
    else if (x < 0.64) step = { t: "retry", r, pick: pick(), user: approver() };
    else if (x < 0.69)
      step = { t: "undoNow", r, pick: pick(), user: rng.chance(0.5) ? REQUESTER : approver() };
    else if (x < 0.8)
      step = {
        t: "sweep",
        r,
        sweep: rng.pick(["expire", "reconcile", "undo", "undo", "reconcile-undo"] as const),
      };
    else if (x < 0.96)
      step = { t: "advance", ms: rng.pick([1_000, 5_000, 12_000, 31_000, 61_000, 5 * 60_000, 30 * 60_000]) };
    else step = { t: "restart", r };
    if (step.t !== "advance" && step.t !== "restart") {
      const fault = maybeFault(rng);
      if (fault) step = { ...step, fault };
    }
    steps.push(step);
  }
  return { seed, replicas, skews, steps };
}

export function describeStep(s: Step): string {
  const f =
    "fault" in s && s.fault ? ` !${s.fault.action}@${s.fault.at}${s.fault.ms ? `/${s.fault.ms}ms` : ""}` : "";
  switch (s.t) {
    case "request": {
      const c = s.change;
      const word = (c: ChangeChoice) => (c.kind === "block" ? `block ${IPS[c.ip]}` : `${c.kind} ${c.value}`);
      const af = s.also?.fault;
      const alsoFault = af ? ` !${af.action}@${af.at}${af.ms ? `/${af.ms}ms` : ""}` : "";
      const also = s.also ? ` + r${s.also.r} ${word(s.also.change)} at once${alsoFault}` : "";
      return `r${s.r} request ${word(c)}${s.temporaryMs ? ` for ${s.temporaryMs / 60_000}m` : ""} in ${s.channel} by ${s.user}${also}${f}`;
    }
    case "approve":
      return `r${s.r} approve #${s.pick} by ${s.user}${s.r2 !== undefined ? ` + r${s.r2} by ${s.user2}` : ""}${f}`;
    case "reject":
    case "retry":
    case "undoNow":
      return `r${s.r} ${s.t} #${s.pick} by ${s.user}${f}`;
    case "withdraw":
      return `r${s.r} withdraw #${s.pick}${f}`;
    case "sweep":
      return `r${s.r} sweep ${s.sweep}${f}`;
    case "advance":
      return `advance ${s.ms / 1000}s`;
    case "uninstall":
      return `r${s.r} uninstall app_uninstalled${s.r2 !== undefined ? ` + r${s.r2} tokens_revoked at once` : ""}${f}`;
    case "restart":
      return `restart r${s.r}`;
  }
}
