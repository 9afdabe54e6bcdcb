/**
 * The fault plan: attacks staged on shield zones and status timelines staged on Magic Containers apps, both read
 * against the simulator's clock at request time. A staged attack joins the zone's traffic model (`Attack`), so the
 * metrics overview, the detailed metrics, the event log and the triggered WAF rules all show it alike; an app's
 * timeline decides the `status` GET /mc/apps answers from each step's time on.
 */
import type { McApp, ShieldZone, SimulatorState } from "./seed.js";
import { type Attack, attackEndMinute, MINUTE_MS } from "./traffic.js";

/** What a test or the console asks for; `startsAt` is Unix ms on the simulator's clock. */
export interface StagedAttack {
  startsAt: number;
  /** Minutes from nothing to full strength. Default 2. */
  rampMinutes?: number;
  /** Minutes at (or ramping to) full strength; then it fades out over 30 minutes. */
  durationMinutes: number;
  /** Threat events per minute at full strength, all features together. */
  peakPerMinute: number;
}

/** From `at` (Unix ms on the simulator's clock) on, the app's status is `status` (any string, even off-spec). */
export interface AppStatusStep {
  at: number;
  status: string;
}

/** What `calm` did. */
export interface CalmResult {
  /** Shield zones whose attack was cut off at the clock (past minutes keep their events), one entry per attack. */
  attacksEnded: number[];
  /** Shield zones whose staged attack had not begun, dropped; one entry per attack. */
  attacksDropped: number[];
  /** Apps with a staged timeline, now `active` from the clock on. */
  appsRestored: string[];
}

/** A request the plan refuses, with a sentence that says what to do. */
export class SimulatorPlanError extends Error {
  override readonly name = "SimulatorPlanError";
}

const MAX_MINUTES = 7 * 24 * 60;
const MAX_PEAK = 1_000_000;
const FADE_MINUTES = 30;
/**
 * Threat events all staged attacks of one zone may add up to: the 28-day overview's counters are 32-bit in the
 * API's documents, and the busiest feature takes under half of an attack (with ±20 % noise), so this keeps every
 * counter the simulator serves within them.
 */
export const MAX_ZONE_ATTACK_EVENTS = 1_000_000_000;

const volume = (a: Attack): number => a.peakPerMinute * (a.durationMinutes + FADE_MINUTES);

function wholeMinutes(name: string, value: number, min: number): number {
  if (!Number.isInteger(value) || value < min || value > MAX_MINUTES)
    throw new SimulatorPlanError(`${name} must be a whole number of minutes from ${min} to ${MAX_MINUTES}.`);
  return value;
}

/** Adds an attack to a shield zone's traffic; other attacks on the zone (the seeded one too) stay. */
export function stageAttack(state: SimulatorState, shieldZoneId: number, staged: StagedAttack): Attack {
  const traffic = state.shieldTraffic.get(shieldZoneId);
  if (traffic === undefined)
    throw new SimulatorPlanError(`There is no shield zone ${shieldZoneId} in the simulator.`);
  if (!Number.isFinite(staged.startsAt))
    throw new SimulatorPlanError("startsAt must be a time in Unix milliseconds.");
  if (!Number.isFinite(staged.peakPerMinute) || staged.peakPerMinute <= 0 || staged.peakPerMinute > MAX_PEAK)
    throw new SimulatorPlanError(`peakPerMinute must be more than 0 and at most ${MAX_PEAK}.`);
  const attack: Attack = {
    startedAt: staged.startsAt,
    rampMinutes: wholeMinutes("rampMinutes", staged.rampMinutes ?? 2, 0),
    durationMinutes: wholeMinutes("durationMinutes", staged.durationMinutes, 1),
    peakPerMinute: staged.peakPerMinute,
  };
  const total = traffic.attacks.reduce((n, a) => n + volume(a), volume(attack));
  if (total > MAX_ZONE_ATTACK_EVENTS)
    throw new SimulatorPlanError(
      `The zone's attacks would add up to ${Math.round(total).toLocaleString("en-US")} threat events, more than the API's 32-bit counters hold (${MAX_ZONE_ATTACK_EVENTS.toLocaleString("en-US")} in all): stage a smaller or shorter attack.`,
    );
  traffic.attacks.push(attack);
  return attack;
}

/** Adds steps to an app's status timeline (a step at the same time as an earlier one replaces it). */
export function stageAppStatus(
  state: SimulatorState,
  appId: string,
  steps: ReadonlyArray<AppStatusStep>,
): void {
  if (!state.apps.some((a) => a.id === appId))
    throw new SimulatorPlanError(`There is no app ${appId} in the simulator.`);
  for (const s of steps) {
    if (!Number.isFinite(s.at)) throw new SimulatorPlanError("Each step's `at` must be a time in Unix ms.");
    if (typeof s.status !== "string" || s.status.trim() === "")
      throw new SimulatorPlanError("Each step needs a status, e.g. failing or active.");
  }
  const byTime = new Map((state.appStatusPlans.get(appId) ?? []).map((s) => [s.at, s.status]));
  for (const s of steps) byTime.set(s.at, s.status);
  const timeline = [...byTime].map(([at, status]) => ({ at, status })).sort((a, b) => a.at - b.at);
  state.appStatusPlans.set(appId, timeline);
}

/** The app's status at `now`: the latest step at or before it, else its seeded status. */
export function appStatusAt(state: SimulatorState, app: McApp, now: number): string {
  const timeline = state.appStatusPlans.get(app.id);
  let status = app.status;
  for (const step of timeline ?? []) {
    if (step.at > now) break;
    status = step.status;
  }
  return status;
}

/** Ends every attack at the clock (none to come) and returns every app with a timeline to `active`. */
export function calm(state: SimulatorState, now: number): CalmResult {
  const result: CalmResult = { attacksEnded: [], attacksDropped: [], appsRestored: [] };
  const currentMinute = Math.floor(now / MINUTE_MS);
  for (const [zoneId, traffic] of state.shieldTraffic) {
    traffic.attacks = traffic.attacks.filter((a) => {
      if (Math.floor(a.startedAt / MINUTE_MS) >= currentMinute) {
        result.attacksDropped.push(zoneId);
        return false;
      }
      if (attackEndMinute(a) > currentMinute) {
        a.cutAt = currentMinute * MINUTE_MS;
        result.attacksEnded.push(zoneId);
      }
      return true;
    });
  }
  for (const [appId, timeline] of state.appStatusPlans) {
    const kept = timeline.filter((s) => s.at <= now);
    kept.push({ at: now, status: "active" });
    state.appStatusPlans.set(appId, kept);
    result.appsRestored.push(appId);
  }
  return result;
}

/** A shield zone by its id or by a hostname of its pull zone (case-insensitive). */
export function findShieldZone(state: SimulatorState, idOrDomain: string): ShieldZone | undefined {
  const text = idOrDomain.trim().toLowerCase();
  if (/^\d{1,12}$/.test(text)) return state.shieldZones.find((z) => z.shieldZoneId === Number(text));
  const pullZone = state.pullZones.find((p) => p.Hostnames.some((h) => h.Value.toLowerCase() === text));
  if (pullZone === undefined) return undefined;
  return state.shieldZones.find((z) => z.pullZoneId === pullZone.Id);
}

/** An app by its id or its name (case-insensitive). */
export function findApp(state: SimulatorState, idOrName: string): McApp | undefined {
  const text = idOrName.trim().toLowerCase();
  return (
    state.apps.find((a) => a.id.toLowerCase() === text) ??
    state.apps.find((a) => a.name.toLowerCase() === text)
  );
}
