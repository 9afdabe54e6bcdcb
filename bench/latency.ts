/**
 * (1) Acknowledgement latency of signed slash commands at fixed open-loop rates over N workspaces,
 * bot vs a bare Bolt app (the floor); (2) end to end, command → response_url, minus the simulator's
 * latency × the command's sequential Edge calls (`/edge zones` = 1, `/edge help` = 0).
 */
import { request } from "undici";
import {
  answeredCount,
  type CountArgs,
  keyFor,
  ratio,
  round,
  SIM_LATENCY_MS,
  type Summary,
  sleep,
  summarize,
  until,
  ZONES_PAGE_CALL,
} from "./common.js";

/** The Edge call of `/edge apps` (and of the floor's `/edge fetch-apps`). */
const APPS_CALL: CountArgs = { pathIncludes: "/mc/apps" };

/**
 * The commands measured at each rate: the bot's, and for each its floor, the bare Bolt app's command making
 * the same Edge call (matched by that call; the zones' floor also reads the page's metrics once a key-minute).
 */
const MEASURED = {
  zones: { on: "bot", text: "zones", edgeCalls: 1, awaited: ZONES_PAGE_CALL },
  bareZones: { on: "bare", text: "fetch-zones", edgeCalls: 1, awaited: ZONES_PAGE_CALL },
  apps: { on: "bot", text: "apps", edgeCalls: 1, awaited: APPS_CALL },
  bareApps: { on: "bare", text: "fetch-apps", edgeCalls: 1, awaited: APPS_CALL },
  help: { on: "bot", text: "help", edgeCalls: 0 },
} as const satisfies Record<
  string,
  { on: "bot" | "bare"; text: string; edgeCalls: number; awaited?: CountArgs }
>;

import type { LoadSample } from "./loadgen.js";
import { type BenchContext, commandRequest, runLoad } from "./processes.js";

export interface LatencyOptions {
  rates: number[];
  /** Commands sent to each app before measuring (JIT, pools, caches). */
  warmup: number;
  /** Pause after each run so its keys' queues go idle (dropped 1.1 s after their last call). */
  settleMs: number;
  durationSec: number;
  workspaces: number;
}

export interface AckRun {
  rate: number;
  sent: number;
  /** Answers other than HTTP 200 (or no answer). */
  failed: number;
  ack: Summary;
  /** Load generator's own lag behind schedule (sanity: it should be tiny). */
  senderLagP99: number;
}

export interface E2eRun extends AckRun {
  command: string;
  edgeCalls: number;
  /** Answers that never reached response_url within the wait. */
  missing: number;
  /** Command sent → answer at response_url, minus the simulator latency × edgeCalls. */
  overhead: Summary;
  /** The same minus the measured floor of one Edge call (edgeFloor p50) × edgeCalls instead. */
  overheadVsEdgeFloor: Summary;
  /**
   * The figure: command sent → answer at response_url, minus the time the simulator itself
   * held this command's Edge calls (received → answered, timed in the simulator). What is left is the
   * bot's own time plus loopback transit; `/edge help` (no Edge call) is the same by construction.
   */
  overheadVsEdgeHeld: Summary;
  /** overheadVsEdgeHeld's p99 for the commands sent in each second of the run, in order (where a tail comes from). */
  overheadP99BySecond: number[];
  /** Commands whose Edge calls could not be matched to the simulator's record (left out above). */
  unmatched: number;
}

export interface LatencyResult {
  /** One `GET /shield/shield-zones` straight at the simulator process (no bot): 150 ms + loopback HTTP. */
  edgeFloor: Summary;
  rates: LatencyRate[];
  /** `/edge zones` from workspaces never seen before, bot vs the same-I/O floor. */
  cold?: ColdZones;
}

/**
 * One `/edge zones` from each of `n` workspaces the app has not seen (their own keys, nothing cached), at
 * `rate`: the page of ten, the pull zone names load beside it, then each zone's detailed metrics, under the
 * per-key limits. The floor is the bare Bolt app's `/edge cold-zones`, which makes those Edge reads with the
 * same limits (bench/bare-bolt.ts), for the same workspaces (new to it as well).
 */
export interface ColdZones {
  rate: number;
  n: number;
  bot: ColdRun;
  floor: ColdRun;
  ratios: {
    /** The bot's first answer's overhead p99 ÷ the floor's (goal ≤ 1.5). */
    overheadP99: number;
    overheadP50: number;
    endToEndP99: number;
    /** The same for the answer with the checks. */
    completeOverheadP99: number;
    completeEndToEndP99: number;
  };
}

export interface ColdRun {
  ack: Summary;
  failed: number;
  /** Commands with no answer at response_url. */
  missing: number;
  /** Command sent → the first answer at response_url (the page, its zones' checks to follow). */
  endToEnd: Summary;
  /**
   * The first answer's end to end minus the simulator's own time for the page call: the app's own time, its
   * wait for the per-key limits and loopback transit. Commands whose calls could not be matched are left out
   * (`unmatched`).
   */
  overhead: Summary;
  unmatched: number;
  /** The answer that replaces the first, with the page zones' checks. */
  complete: {
    /** Commands whose first answer was never replaced. */
    missing: number;
    endToEnd: Summary;
    /** Its end to end minus the simulator's time for the page call and for the longest metrics call. */
    overhead: Summary;
  };
}

export interface LatencyRate {
  rate: number;
  bare: AckRun;
  zones: E2eRun;
  help: E2eRun;
  /** The floor for zones' overhead: the bare Bolt app's `/edge fetch-zones` (ack, the same Edge call, one POST). */
  bareZones: E2eRun;
  /** `/edge apps` (one Edge call, a page of 20) and its floor, the bare Bolt app's `/edge fetch-apps`. */
  apps: E2eRun;
  bareApps: E2eRun;
  ratios: {
    ackP50: number;
    ackP99: number;
    ackMax: number;
    /** Bot overhead (median) over the bare app's ack median: how many loopback round trips. */
    zonesOverheadP50VsBareAck: number;
    helpOverheadP50VsBareAck: number;
  };
}

export function ackRun(rate: number, samples: LoadSample[]): AckRun {
  const ok = samples.filter((s) => s.status === 200);
  return {
    rate,
    sent: samples.length,
    failed: samples.length - ok.length,
    ack: summarize(ok.map((s) => s.ackMs)),
    senderLagP99: summarize(samples.map((s) => s.lagMs)).p99,
  };
}

function requestsFor(ctx: BenchContext, prefix: string, n: number, workspaces: number, text: string) {
  return Array.from({ length: n }, (_, i) => commandRequest(ctx, `${prefix}-${i}`, i % workspaces, text));
}

/** Drive the bot and wait for every answer at response_url; e2e uses the fake Slack's arrival times. */
export interface E2eRunSpec {
  origin: string;
  /** Request ids start with it (unique per run). */
  prefix: string;
  rate: number;
  n: number;
  workspaces: number;
  /** The /edge text: its Edge calls are `edgeCalls`. */
  text: string;
  edgeCalls: number;
  /** Which simulator requests are those calls (default: every request). */
  awaited?: CountArgs;
  /** The measured floor of one Edge call (for overheadVsEdgeFloor). */
  floorP50: number;
  /** Idle after the run, before the next one. */
  settleMs: number;
}

export async function botRun(ctx: BenchContext, spec: E2eRunSpec): Promise<E2eRun> {
  const { origin, prefix, rate, n, workspaces, text, edgeCalls, floorP50, settleMs, awaited = {} } = spec;
  ctx.slack.clear();
  await ctx.sim.call("clear");
  const requests = requestsFor(ctx, prefix, n, workspaces, text);
  const samples = await runLoad(ctx, { origin, requests, rate });
  await until(
    () => answeredCount(ctx.slack.responses, `${prefix}-`) >= n,
    15_000,
    `${n} answers to ${text}`,
  ).catch(() => undefined);
  const answers = await answerFigures(ctx, samples, {
    edgeCalls,
    awaited,
    floorP50,
    keyOf: (_, i) => keyFor(i % workspaces),
  });
  ctx.slack.clear();
  await sleep(settleMs);
  return { ...ackRun(rate, samples), command: `/edge ${text}`, ...answers };
}

/** How the answers of one kind of command are measured (see E2eRun). */
export interface AnswerSpec {
  edgeCalls: number;
  /** Which simulator requests are those calls. */
  awaited: CountArgs;
  /** The measured floor of one Edge call (for overheadVsEdgeFloor). */
  floorP50: number;
  /** The Edge API key the command of sample `i` (in sending order) used. */
  keyOf: (sample: LoadSample, i: number) => string;
}

/**
 * The answers at response_url (the fake Slack's arrival times, since it was last cleared) of commands
 * already sent, against the time the simulator held their Edge calls (since it was last cleared).
 */
export async function answerFigures(
  ctx: BenchContext,
  samples: LoadSample[],
  spec: AnswerSpec,
): Promise<Omit<E2eRun, keyof AckRun | "command">> {
  const { edgeCalls, floorP50 } = spec;
  const held = await edgeHeldByCommand(ctx, samples, spec);
  const arrived = new Map<string, number>();
  for (const r of ctx.slack.responses) if (!arrived.has(r.id)) arrived.set(r.id, r.at);
  const overheads: number[] = [];
  const vsFloor: number[] = [];
  const vsHeld: number[] = [];
  const bySecond: number[][] = [];
  const firstSent = samples[0]?.sentAt ?? 0;
  for (const s of samples) {
    const at = arrived.get(s.id);
    // The fake Slack stamps Date.now() (whole ms, floored): +0.5 ms centres it.
    if (at === undefined) continue;
    overheads.push(at + 0.5 - s.sentAt - edgeCalls * SIM_LATENCY_MS);
    vsFloor.push(at + 0.5 - s.sentAt - edgeCalls * floorP50);
    const edgeMs = held.get(s.id);
    if (edgeMs === undefined) continue;
    const overhead = at + 0.5 - s.sentAt - edgeMs;
    vsHeld.push(overhead);
    const second = Math.floor((s.sentAt - firstSent) / 1000);
    const bucket = bySecond[second] ?? [];
    bucket.push(overhead);
    bySecond[second] = bucket;
  }
  return {
    edgeCalls,
    missing: samples.length - overheads.length,
    overhead: summarize(overheads),
    overheadVsEdgeFloor: summarize(vsFloor),
    overheadVsEdgeHeld: summarize(vsHeld),
    overheadP99BySecond: Array.from(bySecond, (values) => (values ? summarize(values).p99 : 0)),
    unmatched: overheads.length - vsHeld.length,
  };
}

/**
 * How long the simulator held each command's Edge calls. Every workspace has its own key and its
 * commands are far apart (100 workspaces at 200/s: one each 0.5 s, a call takes 150 ms), so a key's
 * calls in arrival order are its commands' calls in sending order. A key whose count does not match
 * is left out rather than guessed.
 */
async function edgeHeldByCommand(
  ctx: BenchContext,
  samples: LoadSample[],
  { edgeCalls, awaited, keyOf }: AnswerSpec,
): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  if (edgeCalls === 0) {
    for (const s of samples) out.set(s.id, 0);
    return out;
  }
  const calls = await ctx.sim.call<{ key: string; ms: number }[]>("held", awaited);
  const byKey = new Map<string, number[]>();
  for (const c of calls) byKey.set(c.key, [...(byKey.get(c.key) ?? []), c.ms]);
  const commandsByKey = new Map<string, LoadSample[]>();
  for (const [i, s] of samples.entries()) {
    const key = keyOf(s, i);
    commandsByKey.set(key, [...(commandsByKey.get(key) ?? []), s]);
  }
  for (const [key, commands] of commandsByKey) {
    const times = byKey.get(key) ?? [];
    if (times.length !== commands.length * edgeCalls) continue;
    commands.sort((a, b) => a.sentAt - b.sentAt);
    for (const [j, s] of commands.entries()) {
      out.set(
        s.id,
        times.slice(j * edgeCalls, (j + 1) * edgeCalls).reduce((a, b) => a + b, 0),
      );
    }
  }
  return out;
}

/** The floor of one Edge call: the same request the bot makes for /edge zones, sent directly. */
async function edgeFloor(ctx: BenchContext, n = 60, parallel = 10): Promise<Summary> {
  const times: number[] = [];
  const one = async (i: number) => {
    const t0 = performance.now();
    const res = await request(`${ctx.sim.ready.url}/shield/shield-zones?page=1&perPage=10`, {
      headers: { AccessKey: keyFor(i % 10), accept: "application/json" },
    });
    await res.body.json();
    times.push(performance.now() - t0);
  };
  for (let i = 0; i < n; i += parallel) {
    await Promise.all(Array.from({ length: Math.min(parallel, n - i) }, (_, j) => one(i + j)));
  }
  return summarize(times);
}

export async function latencyScenario(
  ctx: BenchContext,
  bareOrigin: string,
  botOrigin: string,
  o: LatencyOptions,
): Promise<LatencyResult> {
  ctx.progress("latency: measuring the floor of one Edge call");
  const floor = await edgeFloor(ctx);
  const base = { workspaces: o.workspaces, floorP50: floor.p50, settleMs: o.settleMs };
  // Warm up both (JIT, connection pools, SQLite page cache); not measured.
  ctx.progress("latency: warming up");
  await runLoad(ctx, {
    origin: bareOrigin,
    requests: requestsFor(ctx, "wb", 200, o.workspaces, "zones"),
    rate: 100,
  });
  const origins = { bot: botOrigin, bare: bareOrigin };
  /** One of MEASURED, `n` commands at `rate`, its run's request ids starting with `prefix`. */
  const measure = (name: keyof typeof MEASURED, prefix: string, rate: number, n: number) => {
    const { on, ...spec } = MEASURED[name];
    return botRun(ctx, { ...base, ...spec, origin: origins[on], prefix, rate, n });
  };
  for (const name of ["zones", "bareZones"] as const) await measure(name, `w${name}`, 100, o.warmup);
  for (const name of ["apps", "bareApps", "help"] as const)
    await measure(name, `w${name}`, 100, Math.ceil(o.warmup / 2));

  const out: LatencyRate[] = [];
  for (const rate of o.rates) {
    const n = Math.max(1, Math.round(rate * o.durationSec));
    ctx.progress(
      `latency: ${rate}/s for ${o.durationSec} s over ${o.workspaces} workspaces (bare Bolt, zones, help)`,
    );
    const bareSamples = await runLoad(ctx, {
      origin: bareOrigin,
      requests: requestsFor(ctx, `b${rate}`, n, o.workspaces, "zones"),
      rate,
    });
    const bare = ackRun(rate, bareSamples);
    await sleep(500);
    const zones = await measure("zones", `z${rate}`, rate, n);
    const help = await measure("help", `h${rate}`, rate, n);
    const bareZones = await measure("bareZones", `bz${rate}`, rate, n);
    const apps = await measure("apps", `a${rate}`, rate, n);
    const bareApps = await measure("bareApps", `ba${rate}`, rate, n);
    out.push({
      rate,
      bare,
      zones,
      help,
      bareZones,
      apps,
      bareApps,
      ratios: {
        ackP50: ratio(zones.ack.p50, bare.ack.p50),
        ackP99: ratio(zones.ack.p99, bare.ack.p99),
        ackMax: ratio(zones.ack.max, bare.ack.max),
        zonesOverheadP50VsBareAck: ratio(zones.overhead.p50, bare.ack.p50),
        helpOverheadP50VsBareAck: ratio(help.overhead.p50, bare.ack.p50),
      },
    });
    ctx.progress(
      `  ack p99 bot ${zones.ack.p99} ms vs bare ${bare.ack.p99} ms; overhead p99 zones ${round(zones.overheadVsEdgeHeld.p99)} ms vs bare fetch-zones ${round(bareZones.overheadVsEdgeHeld.p99)} ms, apps ${round(apps.overheadVsEdgeHeld.p99)} ms vs bare fetch-apps ${round(bareApps.overheadVsEdgeHeld.p99)} ms, help ${round(help.overhead.p99)} ms`,
    );
  }
  const top = Math.max(...o.rates);
  ctx.progress(`latency: /edge zones from ${o.workspaces} workspaces seen for the first time, ${top}/s`);
  const coldBot = await coldRun(ctx, botOrigin, "cz", top, o.workspaces, "zones");
  await sleep(o.settleMs);
  const coldFloor = await coldRun(ctx, bareOrigin, "cbz", top, o.workspaces, "cold-zones");
  await sleep(o.settleMs);
  const cold: ColdZones = {
    rate: top,
    n: o.workspaces,
    bot: coldBot,
    floor: coldFloor,
    ratios: {
      overheadP99: ratio(coldBot.overhead.p99, coldFloor.overhead.p99),
      overheadP50: ratio(coldBot.overhead.p50, coldFloor.overhead.p50),
      endToEndP99: ratio(coldBot.endToEnd.p99, coldFloor.endToEnd.p99),
      completeOverheadP99: ratio(coldBot.complete.overhead.p99, coldFloor.complete.overhead.p99),
      completeEndToEndP99: ratio(coldBot.complete.endToEnd.p99, coldFloor.complete.endToEnd.p99),
    },
  };
  ctx.progress(
    `  cold /edge zones overhead p99 bot ${coldBot.overhead.p99} ms vs floor ${coldFloor.overhead.p99} ms (${cold.ratios.overheadP99}×); with the checks ${coldBot.complete.overhead.p99} vs ${coldFloor.complete.overhead.p99} ms (${cold.ratios.completeOverheadP99}×)`,
  );
  return { edgeFloor: floor, rates: out, cold };
}

/** `/edge apps` and its floor alone (`--latency-commands apps`): a profile of the bot is then one command's. */
export interface AppsLatencyResult {
  /**
   * Main-thread CPU per second of each process left idle for IDLE_READ_MS after the warm-up (the bot's jobs
   * tick meanwhile): the part of "CPU per command" that is not the commands'.
   */
  idleCpuMsPerSec: { bot: number; floor: number };
  rates: {
    rate: number;
    apps: E2eRun;
    bareApps: E2eRun;
    /**
     * Main-thread CPU time over each run (its commands, their answers and the settle after) ÷ commands:
     * the bot's and the floor's, each read in its own process as the approvals scenario reads them.
     */
    cpuPerCommandMs: { bot: number; floor: number };
    /** The bot's overhead (answer − the Edge call's held time) ÷ the floor's; CPU per command ÷ the floor's. */
    ratios: { overheadP50: number; overheadP99: number; cpuPerCommand: number };
  }[];
}

/** A process's CPU time so far (bench/common.ts cpuNow, over its RPC). */
export type CpuReader = () => Promise<{ mainThreadMs: number; processMs: number }>;

const IDLE_READ_MS = 3_000;

export async function appsLatencyScenario(
  ctx: BenchContext,
  bareOrigin: string,
  botOrigin: string,
  o: LatencyOptions,
  cpu: { bot: CpuReader; floor: CpuReader },
): Promise<AppsLatencyResult> {
  const base = { workspaces: o.workspaces, floorP50: 0, settleMs: o.settleMs };
  const origins = { bot: botOrigin, bare: bareOrigin };
  const measure = (name: "apps" | "bareApps", prefix: string, rate: number, n: number) => {
    const { on, ...spec } = MEASURED[name];
    return botRun(ctx, { ...base, ...spec, origin: origins[on], prefix, rate, n });
  };
  ctx.progress("latency (apps only): warming up");
  for (const name of ["apps", "bareApps"] as const) await measure(name, `w${name}`, 100, o.warmup);
  const [botIdle, floorIdle] = [await cpu.bot(), await cpu.floor()];
  await sleep(IDLE_READ_MS);
  const idlePerSec = (before: number, after: number) => round(((after - before) * 1000) / IDLE_READ_MS, 2);
  const idleCpuMsPerSec = {
    bot: idlePerSec(botIdle.mainThreadMs, (await cpu.bot()).mainThreadMs),
    floor: idlePerSec(floorIdle.mainThreadMs, (await cpu.floor()).mainThreadMs),
  };
  ctx.progress(
    `  idle main-thread CPU: bot ${idleCpuMsPerSec.bot} ms/s, floor ${idleCpuMsPerSec.floor} ms/s`,
  );
  const rates: AppsLatencyResult["rates"] = [];
  for (const rate of o.rates) {
    const n = Math.max(1, Math.round(rate * o.durationSec));
    ctx.progress(`latency (apps only): ${rate}/s for ${o.durationSec} s over ${o.workspaces} workspaces`);
    const cpuPerCommand = async (read: CpuReader, run: () => Promise<E2eRun>) => {
      const before = await read();
      const out = await run();
      return { out, ms: round(((await read()).mainThreadMs - before.mainThreadMs) / n, 3) };
    };
    const apps = await cpuPerCommand(cpu.bot, () => measure("apps", `a${rate}`, rate, n));
    const bareApps = await cpuPerCommand(cpu.floor, () => measure("bareApps", `ba${rate}`, rate, n));
    const [bot, floor] = [apps.out.overheadVsEdgeHeld, bareApps.out.overheadVsEdgeHeld];
    rates.push({
      rate,
      apps: apps.out,
      bareApps: bareApps.out,
      cpuPerCommandMs: { bot: apps.ms, floor: bareApps.ms },
      ratios: {
        overheadP50: ratio(bot.p50, floor.p50),
        overheadP99: ratio(bot.p99, floor.p99),
        cpuPerCommand: ratio(apps.ms, bareApps.ms),
      },
    });
    ctx.progress(
      `  /edge apps overhead p50 / p99 ${round(bot.p50)} / ${round(bot.p99)} ms vs bare fetch-apps ${round(floor.p50)} / ${round(floor.p99)} ms; main-thread CPU per command ${apps.ms} vs ${bareApps.ms} ms`,
    );
  }
  return { idleCpuMsPerSec, rates };
}

/**
 * `n` commands, workspace `workspaces + i` each (keys the latency runs never used), at `rate`; the Edge
 * calls of a key are that one command's.
 */
async function coldRun(
  ctx: BenchContext,
  origin: string,
  prefix: string,
  rate: number,
  n: number,
  text: string,
): Promise<ColdRun> {
  ctx.slack.clear();
  await ctx.sim.call("clear");
  const requests = Array.from({ length: n }, (_, i) => commandRequest(ctx, `${prefix}-${i}`, n + i, text));
  const samples = await runLoad(ctx, { origin, requests, rate });
  const answers = () => {
    const byId = new Map<string, number[]>();
    for (const r of ctx.slack.responses) byId.set(r.id, [...(byId.get(r.id) ?? []), r.at]);
    return byId;
  };
  // Each answer comes twice: the page, then the page with its zones' checks.
  await until(
    () => [...answers().values()].filter((at) => at.length >= 2).length >= n,
    30_000,
    `${n} answers to ${text}, each replaced`,
  ).catch(() => undefined);
  const pages = await ctx.sim.call<{ key: string; ms: number }[]>("held", ZONES_PAGE_CALL);
  const metrics = await ctx.sim.call<{ key: string; ms: number }[]>("held", {
    pathIncludes: "/shield/metrics/overview/",
  });
  const pageHeld = new Map<string, number[]>();
  for (const c of pages) pageHeld.set(c.key, [...(pageHeld.get(c.key) ?? []), c.ms]);
  const longestMetrics = new Map<string, number>();
  for (const c of metrics) longestMetrics.set(c.key, Math.max(longestMetrics.get(c.key) ?? 0, c.ms));
  const arrived = answers();
  const endToEnd: number[] = [];
  const overhead: number[] = [];
  const completeEndToEnd: number[] = [];
  const completeOverhead: number[] = [];
  for (const [i, s] of samples.entries()) {
    const at = arrived.get(s.id);
    if (at === undefined) continue;
    const [first, ...later] = at;
    const e2e = (first as number) + 0.5 - s.sentAt;
    endToEnd.push(e2e);
    const last = later.at(-1);
    if (last !== undefined) completeEndToEnd.push(last + 0.5 - s.sentAt);
    const key = keyFor(n + i);
    const page = pageHeld.get(key);
    if (page?.length !== 1) continue;
    overhead.push(e2e - (page[0] as number));
    if (last !== undefined)
      completeOverhead.push(last + 0.5 - s.sentAt - (page[0] as number) - (longestMetrics.get(key) ?? 0));
  }
  const ok = samples.filter((s) => s.status === 200);
  ctx.slack.clear();
  return {
    ack: summarize(ok.map((s) => s.ackMs)),
    failed: samples.length - ok.length,
    missing: n - endToEnd.length,
    endToEnd: summarize(endToEnd),
    overhead: summarize(overhead),
    unmatched: endToEnd.length - overhead.length,
    complete: {
      missing: n - completeEndToEnd.length,
      endToEnd: summarize(completeEndToEnd),
      overhead: summarize(completeOverhead),
    },
  };
}
