/**
 * `/sim …`: the console's hand on the built-in simulator's fault plan, so an alert can be watched from first post
 * to resolution in a terminal. Each command answers one sentence; bad input says what to type instead.
 */
import { durationMs } from "../../src/duration.js";
import { type Simulator, SimulatorPlanError } from "../simulator/index.js";
import type { ConsoleClock } from "./console-clock.js";

export const SIM_HELP = [
  "  /sim attack <zone id|domain> [minutes]  stage an attack starting now (default 30 minutes)",
  "  /sim fail <app id|name> [minutes]       the app is failing from now (back to active after minutes)",
  "  /sim calm                               end every attack and bring every staged app back to active",
  "  /sim strict [seed]                      answer where the API's documents are silent in the least convenient ways",
  "  /sim friendly                           back to the convenient readings (the demo's)",
  "  /sim clock [+30m]                       show the console's time, or move it forward (what falls due runs in order)",
  "  /sim dashboard <zone id|domain> <setting> <value>  change a setting as in the dashboard, not via edgeops",
  "                                          (waf-mode log|block, waf on|off, ddos off|low|medium|high|challenge, learning on|off, bot:<category> none|block|allow)",
];

const DEFAULT_ATTACK_MINUTES = 30;
/** Strong enough for any seeded zone's baseline to read as an attack at every sensitivity. */
const ATTACK_PEAK_PER_MINUTE = 3_000;
const ATTACK_RAMP_MINUTES = 2;
const MAX_MINUTES = 24 * 60;
const MINUTE_MS = 60_000;
const MAX_CLOCK_MOVE_MS = 24 * 60 * MINUTE_MS;

const USAGE = ["The simulator's fault plan:", ...SIM_HELP].join("\n");

function minutesArg(raw: string | undefined, fallback: number | undefined): number | string | undefined {
  if (raw === undefined) return fallback;
  if (!/^\d{1,5}$/.test(raw) || Number(raw) < 1 || Number(raw) > MAX_MINUTES)
    return `"${raw}" is not a number of minutes: give a whole number from 1 to ${MAX_MINUTES}, e.g. 20.`;
  return Number(raw);
}

/** `/sim dashboard <zone> <setting> <value>`: a change made behind edgeops' back, for a config watch to notice. */
function dashboard(
  sim: Simulator,
  zone: string | undefined,
  setting: string | undefined,
  rest: string[],
): string {
  const example = "For example: /sim dashboard shop.acme-example.com waf-mode log";
  const [value, ...extra] = rest;
  if (zone === undefined || setting === undefined || value === undefined)
    return `Which zone, setting and value? ${example}`;
  if (extra.length > 0) return `Too many words after /sim dashboard. ${example}`;
  const zoneId = sim.findShieldZone(zone);
  if (zoneId === undefined)
    return `There is no shield zone "${zone}" in the simulator: give a shield zone id (as /edge zones lists them) or a domain of its pull zone, e.g. shop.acme-example.com.`;
  return sim.changeInDashboard(zoneId, setting, value).sentence;
}

const utcMinute = (ms: number) => `${new Date(ms).toISOString().slice(0, 16).replace("T", " ")} UTC`;

function spanWords(ms: number): string {
  const minutes = Math.round(ms / MINUTE_MS);
  const h = Math.floor(minutes / 60);
  const m = minutes % 60;
  return h === 0 ? `${m} min` : m === 0 ? `${h} h` : `${h} h ${m} min`;
}

/**
 * `/sim clock [+<duration>]`: shows the console's time, or moves it (and the simulator's, which shares it)
 * forward, so a rehearsal need not wait for a temporary change's end or a watch's next checks.
 */
export async function runSimClock(
  sim: Simulator | undefined,
  clock: ConsoleClock | undefined,
  text: string,
): Promise<string> {
  if (sim === undefined || clock === undefined)
    return "/sim clock moves the console's time along with the built-in simulator's, and this console talks to a real Edge API (EDGE_API_KEY is set), whose time does not move: unset EDGE_API_KEY to use the simulator.";
  const words = text.trim().split(/\s+/).filter(Boolean);
  const ahead = () =>
    clock.ahead() === 0
      ? "as this computer's clock"
      : `${spanWords(clock.ahead())} ahead of this computer's clock`;
  if (words.length === 0)
    return `Console time: ${utcMinute(clock.now())} (${ahead()}). /sim clock +30m moves it forward: what falls due in between (a watch's checks, a temporary change's end, an approval's expiry) runs in order.`;
  const [word = "", ...extra] = words;
  const example = "e.g. /sim clock +30m or /sim clock +2h";
  if (extra.length > 0) return `/sim clock takes one duration, ${example}.`;
  if (word.startsWith("-")) return `Time only moves forward here: give how far, ${example}.`;
  const ms = durationMs(word.replace(/^\+/, ""), { days: false });
  if (!Number.isFinite(ms) || ms <= 0 || ms > MAX_CLOCK_MOVE_MS)
    return `"${word}" is not a duration to move by: give minutes or hours up to 24h, ${example}.`;
  await clock.moveForward(ms);
  return `Console time moved ${spanWords(ms)} forward, to ${utcMinute(clock.now())} (${ahead()}); what fell due in between ran in order.`;
}

/** "attack on shield zone 18405" or "attacks on shield zones 18401, 18405 (2)": one entry per attack. */
function attacksOn(zoneIds: readonly number[]): string {
  const zones = [...new Set(zoneIds)].sort((a, b) => a - b);
  const many = zoneIds.length > 1;
  const count = zones.length < zoneIds.length ? ` (${zoneIds.length} attacks)` : "";
  return `attack${many ? "s" : ""} on shield zone${zones.length > 1 ? "s" : ""} ${zones.join(", ")}${count}`;
}

/** Runs one `/sim` line (the text after `/sim`) and returns what to print. */
export function runSimCommand(sim: Simulator | undefined, text: string): string {
  if (sim === undefined)
    return "/sim needs the built-in simulator, and this console talks to a real Edge API (EDGE_API_KEY is set): unset EDGE_API_KEY to use the simulator.";
  const [verb = "", target, minutesRaw, ...rest] = text.trim().split(/\s+/).filter(Boolean);
  if (verb.toLowerCase() === "dashboard") return dashboard(sim, target, minutesRaw, rest);
  if (rest.length > 0) return `Too many words after /sim ${verb}.\n${USAGE}`;
  try {
    switch (verb.toLowerCase()) {
      case "attack": {
        if (target === undefined)
          return "Which zone? For example: /sim attack shop.acme-example.com 20 (a shield zone id or a domain).";
        const zoneId = sim.findShieldZone(target);
        if (zoneId === undefined)
          return `There is no shield zone "${target}" in the simulator: give a shield zone id (as /edge zones lists them) or a domain of its pull zone, e.g. shop.acme-example.com.`;
        const minutes = minutesArg(minutesRaw, DEFAULT_ATTACK_MINUTES);
        if (typeof minutes === "string") return minutes;
        const startsAt = sim.now();
        sim.stageAttack(zoneId, {
          startsAt,
          rampMinutes: ATTACK_RAMP_MINUTES,
          durationMinutes: minutes ?? DEFAULT_ATTACK_MINUTES,
          peakPerMinute: ATTACK_PEAK_PER_MINUTE,
        });
        return `Attack staged on shield zone ${zoneId}: from now, full strength (${ATTACK_PEAK_PER_MINUTE} threats a minute) in ${ATTACK_RAMP_MINUTES} minutes, for ${minutes} minutes, then fading over 30. Metrics show each minute once it is over. /sim calm ends it.`;
      }
      case "fail": {
        if (target === undefined)
          return "Which app? For example: /sim fail mc-3k8rn2w5b7 (an app id or name).";
        const appId = sim.findApp(target);
        if (appId === undefined)
          return `There is no app "${target}" in the simulator: give an app id or name as /edge apps lists them.`;
        const minutes = minutesArg(minutesRaw, undefined);
        if (typeof minutes === "string") return minutes;
        const now = sim.now();
        sim.stageAppStatus(appId, [
          { at: now, status: "failing" },
          ...(minutes === undefined ? [] : [{ at: now + minutes * MINUTE_MS, status: "active" }]),
        ]);
        return minutes === undefined
          ? `App ${appId} is failing from now, until /sim calm.`
          : `App ${appId} is failing from now and back to active in ${minutes} minutes.`;
      }
      case "calm": {
        if (target !== undefined) return "/sim calm takes no arguments: it ends every attack and failure.";
        const r = sim.calm();
        const parts = [
          r.attacksEnded.length === 0 ? "no attack was running" : `ended the ${attacksOn(r.attacksEnded)}`,
          ...(r.attacksDropped.length > 0
            ? [`dropped the staged ${attacksOn(r.attacksDropped)} to come`]
            : []),
          r.appsRestored.length === 0
            ? "no app was staged to fail"
            : `${r.appsRestored.join(", ")} back to active`,
        ];
        return `Calm: ${parts.join("; ")}.`;
      }
      case "strict": {
        if (minutesRaw !== undefined) return "/sim strict takes one seed at most, e.g. /sim strict 7.";
        if (target !== undefined && !/^\d{1,9}$/.test(target))
          return `"${target}" is not a seed: give a whole number, e.g. /sim strict 7 (the same seed gives the same answers).`;
        const seed = target === undefined ? Math.floor(Math.random() * 1_000_000) : Number(target);
        sim.setAdversary({ seed });
        return `Strict simulator, seed ${seed}: where the Edge API's documents are silent (order, spelling, case, absent fields, date forms), its answers now take the least convenient readings (docs/simulator.md). /sim strict ${seed} replays them; /sim friendly ends it.`;
      }
      case "friendly": {
        if (target !== undefined) return "/sim friendly takes no arguments.";
        sim.setAdversary({});
        return "Friendly simulator: the convenient readings again (groups by count, the demo's spellings, every field).";
      }
      case "":
      case "help":
        return USAGE;
      default:
        return `/sim ${verb} is not a fault the simulator knows.\n${USAGE}`;
    }
  } catch (err) {
    if (err instanceof SimulatorPlanError) return err.message;
    throw err;
  }
}
