/**
 * `npm run bench [-- options]`: the benchmark. Runs the bot (bench/bot-process.ts, HTTP mode, started
 * by startBot) against the Edge API simulator (bench/sim-process.ts, 150 ms a call) and a fake Slack
 * Web API on loopback (hosted here, in the orchestrator), drives it with a load generator in its own
 * process (bench/loadgen.ts), and writes bench/results.json plus a table on stdout. Every figure is
 * also a ratio to a baseline measured in the same run. Options: see `--help`.
 */
import { execSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { startFakeSlack } from "../test/support/fake-slack.js";
import { type ApprovalThroughput, approvalsScenario } from "./approvals.js";
import {
  CLUSTER_DEFAULTS,
  CLUSTER_PHASES,
  type ClusterPhase,
  formatClusterTable,
  runClusterBench,
} from "./cluster.js";
import { ratio, readResults, SIM_LATENCY_MS, spawnChild } from "./common.js";
import {
  type AppsLatencyResult,
  appsLatencyScenario,
  type LatencyResult,
  latencyScenario,
} from "./latency.js";
import { type MemoryResult, memoryScenario } from "./memory.js";
import { MIXED_DEFAULTS, type MixedResult, mixedScenario } from "./mixed.js";
import { type PreviewResult, previewScenario } from "./preview.js";
import type { BenchContext, SimReady } from "./processes.js";
import { compileForBench, startBotProcess } from "./processes.js";
import { formatProfile, type ProfileSummary, summarizeProfile } from "./profile-summary.js";
import { type Fairness, fairness, type QueueAccuracy, queueAccuracy } from "./queue.js";
import {
  CARD_ROWS,
  FLOOR_QUERY,
  type IncidentCardBuildTime,
  incidentCardScenario,
  type TimelineBuildTime,
  timelineScenario,
} from "./timeline.js";

export const SCENARIOS = [
  "latency",
  "queue",
  "fairness",
  "memory",
  "approvals",
  "timeline",
  "preview",
] as const;
export type Scenario = (typeof SCENARIOS)[number];

export interface BenchOptions {
  rates: number[];
  durationSec: number;
  warmup: number;
  settleMs: number;
  workspaces: number;
  queueCap: number;
  queueCalls: number;
  fairnessQueued: number;
  memoryWorkspaces: number;
  memoryRate: number;
  /** Idle time before the settled memory readings. */
  memorySettleMs: number;
  pendingApprovals: number;
  approvals: number;
  /** Commands of each kind for (7), the impact preview. */
  previews: number;
  postgres: boolean;
  /** CPU-profile every bot process (--cpu-prof); figures from a profiled run are inflated. */
  profile: boolean;
  only: Scenario[];
  /** The latency scenario's commands: all of them, or `/edge apps` and its floor alone (no cold run, no mix). */
  latencyCommands: "all" | "apps";
  /** Where to write results.json; undefined = do not write. */
  out: string | undefined;
  quiet: boolean;
  /** Run the bot and the bare Bolt app compiled (node, as in production) rather than under tsx. */
  compiled: boolean;
}

export const DEFAULTS: BenchOptions = {
  rates: [50, 100, 200],
  durationSec: 10,
  warmup: 200,
  settleMs: 1_300,
  workspaces: 100,
  queueCap: 10,
  queueCalls: 300,
  fairnessQueued: 1000,
  memoryWorkspaces: 10_000,
  // 200/s of workspaces never seen is more than this 2-core rig (bot, simulator, load generator) carries: the bot
  // sheds commands (503) and RSS then measures a fraction of them.
  memoryRate: 50,
  memorySettleMs: 30_000,
  pendingApprovals: 1000,
  approvals: 500,
  previews: 20,
  postgres: true,
  profile: false,
  only: [...SCENARIOS],
  latencyCommands: "all",
  out: fileURLToPath(new URL("./results.json", import.meta.url)),
  quiet: false,
  compiled: true,
};

export interface Verdict {
  target: string;
  met: boolean;
  detail: string;
}

export interface BenchResults {
  meta: {
    date: string;
    node: string;
    cpus: number;
    cpuModel: string;
    loadavgStart: number[];
    loadavgEnd: number[];
    commit: string;
    simulatorLatencyMs: number;
    options: Omit<BenchOptions, "out" | "quiet">;
    seconds: number;
    setup: string[];
  };
  /** mixed: (1b), the top rate's mix of commands with drift watches polling, against bare Bolt. */
  latency?: LatencyResult & { mixed?: MixedResult };
  /** `--latency-commands apps`: the latency scenario's `/edge apps` and its floor, nothing else. */
  appsLatency?: AppsLatencyResult;
  queue?: QueueAccuracy;
  fairness?: Fairness;
  memory?: MemoryResult;
  approvals?: (ApprovalThroughput | { engine: "postgres"; skipped: string })[];
  /** (7) An incident's timeline built from the store: a 24 h episode with 500 changes. */
  timeline?: (TimelineBuildTime | { engine: "postgres"; skipped: string })[];
  /** (7b) The incident card gathered and drawn from a zone whose event log has 2,000 more sources. */
  incidentCard?: IncidentCardBuildTime;
  /** (8) The impact preview's added time to a change's confirmation. */
  preview?: PreviewResult;
  /** CPU profile summaries of each bot process (with --profile), by scenario. */
  profiles?: Record<string, ProfileSummary>;
  verdicts: Verdict[];
}

const SETUP = [
  "Bot: bench/bot-process.ts = loadConfig(env) + startBot, compiled by tsc and run by node as in production (unless --tsx), HTTP receiver, NODE_ENV=production, LOG_LEVEL=info (JSON logs to a file), SQLite unless stated.",
  "Edge API: the simulator in its own process, 150 ms added to every call; each workspace has its own stored, encrypted key (distinct per-key queues, default cap 10/s, concurrency 4, max queue 100).",
  "Slack: the fake Web API (test/support/fake-slack.ts) in the orchestrator process; response_url points at it; arrival times are whole ms (+0.5 ms applied).",
  "Load: bench/loadgen.ts in its own process, open loop (request i due at start + i/rate), signs each body just before sending, ack = send → full HTTP answer.",
  "Baseline for acks: bench/bare-bolt.ts (Bolt App, HTTPReceiver, one /edge listener that only acks), same rates, interleaved with the bot's runs; for the overhead, the same app's /edge fetch-zones (ack, the bot's Edge call for /edge zones, one POST to response_url, all with undici), measured like the bot's.",
  "Queue accuracy and fairness: in the orchestrator, the real createEdgeApi against an in-process simulator (150 ms); max queue raised to the number of calls (the default 100 would refuse the rest).",
  "Memory: the bot run with --expose-gc (and production's node flags, from package.json start:prod, as every bot process here); two full GCs, then 0.5 s for V8 to unmap the pages they freed, before each VmRSS reading; peakRssMiB is VmHWM, the highest RSS since start.",
  "Approvals: one request per workspace (own key), so the 10/s per-key cap is not what is measured; Approve by a workspace owner (users.info). Same-I/O floor: bench/bare-bolt.ts with BARE_APPROVALS, per click ack, GET the zone's bot categories, PUT, GET again, one transaction (better-sqlite3 WAL / pg), one chat.update, all with undici; CPU read as the bot's.",
  "Cold /edge zones: one command from each of as many workspaces again, never seen (keys seeded, nothing cached), at the top rate; the floor is bench/bare-bolt.ts's /edge cold-zones with the bot's Edge reads and answers (page of ten with the pull zone list beside it, one POST; then each zone's detailed metrics and a second POST replacing the first) under the bot's per-key limits (4 at once, 10 starts in 1,040 ms). Overhead of the first answer = its end to end − the simulator's time for the page call; of the answer with the checks = its end to end − the page call − the longest metrics call.",
  "Mixed (1b): after the latency runs, a bot of its own with 100 drift (config) watches and 5 applied changes per workspace seeded before it starts, WATCH_INTERVAL_MS=2000; at the top rate, the bare Bolt app's acks of as many /edge zones, then the bot's of a fixed mix (35 % zones, 35 % apps, 15 % block <zone> <ip>, a different IP each, 15 % timeline <zone>).",
  `Timeline: in the orchestrator, a fresh store per engine seeded with one zone's 24 h alert episode and 500 changes (asked, approved, applied: rows, audit, target owners); buildTimeline's median of 5 after a warm-up, against one indexed read in the same run (the floor: ${FLOOR_QUERY}), interleaved; the same build for a zone with nothing beside it.`,
  "Incident card: in the orchestrator, composeDeps on the run's simulator (latency 0 meanwhile, the key's pacing at 1,000/s) and SQLite; gatherIncident + incidentCard for the zone under attack with 2,000 more event-log sources (4 pages of 500 groups per dimension); the floor sends the same Edge requests again with undici, 4 at once as the key's queue, and JSON-parses each answer. Medians of 5 of this process's CPU time (the simulator answers in its own process), interleaved; wall time beside it.",
  "Machine: 2 shared cores; the bot, simulator, load generator and orchestrator compete for them.",
];

function gitCommit(): string {
  try {
    return execSync("git rev-parse --short HEAD", { stdio: ["ignore", "pipe", "ignore"] })
      .toString()
      .trim();
  } catch {
    return "unknown";
  }
}

// ---- verdicts -----------------------------------------------------------------------------------

const groupsReadWords = (c: IncidentCardBuildTime) =>
  Object.entries(c.groupsRead)
    .map(([d, n]) => `${d} ${n}`)
    .join(", ");

export function verdicts(r: BenchResults): Verdict[] {
  const out: Verdict[] = [];
  const lat = r.latency?.rates ?? [];
  if (lat.length) {
    const top = lat.reduce((a, b) => (b.rate > a.rate ? b : a));
    out.push({
      target: `(1) ack p99 at ${top.rate}/s ≤ 1.3× bare Bolt's in the same run`,
      met: top.ratios.ackP99 <= 1.3 && top.zones.failed === 0,
      detail: `p99 ${top.zones.ack.p99} ms vs bare ${top.bare.ack.p99} ms (${top.ratios.ackP99}×), ${top.zones.failed} failed`,
    });
    const mx = r.latency?.mixed;
    if (mx)
      out.push({
        target: `(1b) ack p99 at ${mx.rate}/s with previews, drift watches and timelines in the run ≤ 1.0× bare Bolt`,
        met: mx.ratios.ackP99 <= 1.0 && mx.bot.failed === 0,
        detail: `p99 ${mx.bot.ack.p99} ms vs bare ${mx.bare.ack.p99} ms (${mx.ratios.ackP99}×), ${mx.bot.failed} failed, ${mx.missing} unanswered; ${mx.previews.filled} of ${mx.previews.sent} previews filled; ${mx.watches} drift watches (${mx.driftReads} evaluations in the run)`,
      });
    const held = top.zones.overheadVsEdgeHeld;
    out.push({
      target: `(2) bot overhead (answer at response_url − Edge time) p99 < 5 ms at ${top.rate}/s`,
      met: held.p99 < 5 && top.help.overhead.p99 < 5 && top.zones.missing === 0 && top.zones.unmatched === 0,
      detail: `/edge zones p99 ${held.p99} ms (p50 ${held.p50}, minus the simulator's own time for its call; ${top.zones.unmatched} unmatched), /edge help p99 ${top.help.overhead.p99} ms (no Edge call); ${top.zones.missing} answers missing; a bare Bolt app doing the same I/O (ack, the Edge call, one POST): p99 ${top.bareZones.overheadVsEdgeHeld.p99} ms (p50 ${top.bareZones.overheadVsEdgeHeld.p50}), ${ratio(held.p99, top.bareZones.overheadVsEdgeHeld.p99)}×`,
    });
    const worstZones = Math.max(...lat.map((l) => l.zones.overhead.p50));
    const worstHelp = Math.max(...lat.map((l) => l.help.overhead.p50));
    const worstVsFloor = Math.max(...lat.map((l) => l.zones.overheadVsEdgeFloor.p50));
    const missing = lat.reduce((s, l) => s + l.zones.missing + l.help.missing, 0);
    out.push({
      target: "(2b) bot's own overhead, median < 5 ms (every rate)",
      met: worstZones < 5 && worstHelp < 5 && missing === 0,
      detail: `worst median: zones ${worstZones} ms after −${SIM_LATENCY_MS} ms (${worstVsFloor} ms after −the measured Edge call floor), help ${worstHelp} ms; ${missing} answers missing`,
    });
  }
  for (const l of lat) {
    const pairs = [
      ["/edge zones", l.zones, l.bareZones],
      ["/edge apps", l.apps, l.bareApps],
    ] as const;
    for (const [name, bot, floor] of pairs) {
      if (!bot || !floor) continue;
      const r99 = ratio(bot.overheadVsEdgeHeld.p99, floor.overheadVsEdgeHeld.p99);
      out.push({
        target: `(2d) ${name} overhead p99 at ${l.rate}/s ≤ 1.2× the same-I/O floor`,
        met: r99 <= 1.2 && bot.missing === 0 && bot.failed === 0 && bot.unmatched === 0,
        detail: `${bot.overheadVsEdgeHeld.p99} ms (p50 ${bot.overheadVsEdgeHeld.p50}) vs a bare Bolt app making the same Edge call ${floor.overheadVsEdgeHeld.p99} ms (p50 ${floor.overheadVsEdgeHeld.p50}): ${r99}×; ${bot.failed} failed, ${bot.missing} missing, ${bot.unmatched} unmatched`,
      });
    }
  }
  const cold = r.latency?.cold;
  if (cold) {
    out.push({
      target: `(2c) /edge zones from ${cold.n} workspaces seen for the first time at ${cold.rate}/s: overhead p99 ≤ 1.5× the same-I/O floor`,
      met:
        cold.ratios.overheadP99 <= 1.5 &&
        cold.ratios.completeOverheadP99 <= 1.5 &&
        cold.bot.missing === 0 &&
        cold.bot.complete.missing === 0 &&
        cold.bot.failed === 0 &&
        cold.bot.unmatched === 0,
      detail: `first answer: bot p99 ${cold.bot.overhead.p99} ms (p50 ${cold.bot.overhead.p50}) vs a bare Bolt app making the same Edge reads and answers ${cold.floor.overhead.p99} ms (p50 ${cold.floor.overhead.p50}): ${cold.ratios.overheadP99}×; with the checks ${cold.bot.complete.overhead.p99} vs ${cold.floor.complete.overhead.p99} ms: ${cold.ratios.completeOverheadP99}×; end to end p99 ${cold.bot.endToEnd.p99} vs ${cold.floor.endToEnd.p99} ms (with the checks ${cold.bot.complete.endToEnd.p99} vs ${cold.floor.complete.endToEnd.p99}); ${cold.bot.missing} missing, ${cold.bot.complete.missing} never replaced, ${cold.bot.unmatched} unmatched`,
    });
  }
  if (r.queue) {
    const q = r.queue;
    out.push({
      target: `(3) never above ${q.cap}/s in any 1 s window, ≥ 95% of it on average`,
      met:
        q.maxInAnySecond <= q.cap &&
        q.maxStartsInAnySecond <= q.cap &&
        q.utilisation >= 0.95 &&
        q.failed === 0,
      detail: `max ${q.maxInAnySecond} in any 1 s at the simulator (its own process), ${q.maxStartsInAnySecond} started by the queue, ${q.maxSentInAnySecond} written; ${q.achievedPerSec}/s = ${Math.round(q.utilisation * 1000) / 10}% of cap (${q.calls} calls)`,
    });
  }
  if (r.fairness) {
    const f = r.fairness;
    out.push({
      target: "(4) B's call while A has 1,000 queued: within one window (1 s) of idle",
      met: f.extraMaxMs < 1000,
      detail: `B max ${f.underLoad.max} ms vs idle ${f.idle.max} ms (+${f.extraMaxMs} ms, ${f.ratioMax}×)`,
    });
  }
  if (r.memory) {
    const m = r.memory;
    const peak = Math.max(...m.rounds.flatMap((x) => [x.afterCommands.rssMiB, x.afterApprovals.rssMiB]));
    const settledMB = Math.round(m.peakSettledMiB * 1.048576);
    out.push({
      target: `(5) RSS right after ${m.workspaces.toLocaleString("en")} workspaces (and after the pending approvals), at once: < 200 MiB`,
      met: peak < 200,
      detail: `peak at once ${peak} MiB (${m.rounds.map((x) => `${x.afterCommands.rssMiB}, ${x.afterApprovals.rssMiB}`).join("; ")}); baseline ${m.baseline.rssMiB} MiB`,
    });
    out.push({
      target: `(5) RSS < 200 MB after 10,000 workspaces + 1,000 approvals (settled ${m.settleMs / 1000} s); no growth on round 2`,
      met: settledMB < 200 && m.secondRoundGrowthMiB < 5,
      detail: `settled peak ${m.peakSettledMiB} MiB (${settledMB} MB); at once ${peak} MiB, ${m.ratioPeakToBaseline}× baseline ${m.baseline.rssMiB} MiB; round 2 growth ${m.secondRoundGrowthMiB} MiB`,
    });
  }
  for (const a of r.approvals ?? []) {
    if ("skipped" in a) {
      out.push({ target: `(6) approvals on ${a.engine}`, met: false, detail: `skipped: ${a.skipped}` });
      continue;
    }
    out.push({
      target: `(6) ${a.requests} concurrent Approve clicks: click ack p99 < 100 ms (${a.engine})`,
      met: a.ack.p99 < 100 && a.failedAcks === 0,
      detail: `p99 ${a.ack.p99} ms, p50 ${a.ack.p50}, max ${a.ack.max}; ${a.failedAcks} failed; the same burst at a bare Bolt app: p99 ${a.bareAck.p99} ms (${ratio(a.ack.p99, a.bareAck.p99)}×)`,
    });
    out.push({
      target: `(6) event-loop CPU per approval < 1 ms (${a.engine})`,
      met: a.cpuPerApprovalMs.mainThread < 1,
      detail: `main thread ${a.cpuPerApprovalMs.mainThread} ms, whole process ${a.cpuPerApprovalMs.process} ms per approval (CPU time over the burst ÷ ${a.requests}); a bare Bolt app only acking the same clicks: ${a.bareCpuPerClickMs.mainThreadMs} ms main thread per click`,
    });
    out.push({
      target: `(6) CPU per approval (main thread) ≤ 2.0× the same-I/O floor (${a.engine})`,
      met: a.cpuRatioToSameIoFloor <= 2,
      detail: `${a.cpuPerApprovalMs.mainThread} ms vs ${a.sameIoFloor.cpuPerApprovalMs.mainThread} ms (${a.cpuRatioToSameIoFloor}×) for a bare Bolt app that acks, reads, PUTs and reads back the target, runs one store transaction and updates one message (${a.sameIoFloor.puts} PUTs, ${a.sameIoFloor.updates} updates in ${a.sameIoFloor.durationMs} ms)`,
    });
    out.push({
      target: `(6) ${a.requests} concurrent approvals → exactly ${a.requests} PUTs (${a.engine})`,
      met: a.puts === a.requests && a.cardsUpdated === a.requests,
      detail: `${a.puts} PUTs, ${a.cardsUpdated} cards in ${a.durationMs} ms (${a.ratioToSingle}× one alone); ack max ${a.ack.max} ms`,
    });
  }
  for (const t of r.timeline ?? []) {
    if ("skipped" in t) {
      out.push({ target: `(7) timeline on ${t.engine}`, met: false, detail: `skipped: ${t.skipped}` });
      continue;
    }
    out.push({
      target: `(7) timeline of ${t.entries.toLocaleString("en")} entries ≤ 10× one indexed read (${t.engine})`,
      met: t.ratioToFloor <= 10,
      detail: `${t.buildMs} ms (a 24 h episode with ${t.changes} changes, median of ${t.runs}) vs one indexed read of the window's ${t.floorRows} audit rows ${t.floorMs} ms: ${t.ratioToFloor}×; the same build for a zone with nothing: ${t.emptyZoneMs} ms`,
    });
  }
  if (r.incidentCard) {
    const c = r.incidentCard;
    out.push({
      target: `(7b) incident card of ${c.rows.toLocaleString("en")} rows ≤ 10× reading and parsing the same Edge answers`,
      met: c.ratioToFloor <= 10,
      detail: `CPU ${c.cardCpuMs} ms (wall ${c.cardMs} ms; gathered through the bot's Edge client and drawn, ${c.blocks} blocks; event-log groups read ${groupsReadWords(c)}) vs the same ${c.edgeCalls} Edge requests sent again with undici and each answer JSON-parsed: CPU ${c.floorCpuMs} ms (wall ${c.floorMs} ms), ${c.ratioToFloor}× (medians of ${c.runs})`,
    });
  }
  if (r.preview) {
    const p = r.preview;
    out.push({
      target: "(8) the impact preview adds nothing to the confirmation's ack",
      met: p.ack.p99 <= Math.max(p.baselineAck.p99 * 1.3, p.baselineAck.p99 + 5),
      detail: `/edge block ack p50/p99 ${p.ack.p50} / ${p.ack.p99} ms vs /edge learning (no preview) ${p.baselineAck.p50} / ${p.baselineAck.p99} ms`,
    });
    out.push({
      target: "(8) the preview in place within one Edge call's time of the confirmation",
      met: p.missingFills === 0 && p.filledAfterConfirmation.p50 <= 2 * p.simulatorLatencyMs,
      detail: `confirmation → filled p50/p99 ${p.filledAfterConfirmation.p50} / ${p.filledAfterConfirmation.p99} ms (one Edge call ≥ ${p.simulatorLatencyMs} ms; three searches in parallel through the key's queue); ${p.missingFills} missing`,
    });
  }
  return out;
}

// ---- table --------------------------------------------------------------------------------------

const pad = (v: unknown, n: number) => String(v).padStart(n);
const triple = (s: { p50: number; p99: number; max: number }) => `${s.p50} / ${s.p99} / ${s.max}`;

export function formatTable(r: BenchResults): string {
  const L: string[] = [];
  const m = r.meta;
  L.push(
    `edgeops benchmark ${m.date}  node ${m.node}  ${m.cpus} cpu  load ${m.loadavgStart.join(" ")}  commit ${m.commit}  (${m.seconds} s)`,
  );
  const lat = r.latency?.rates ?? [];
  if (r.latency && lat.length) {
    L.push("", "(1) Ack latency, signed /edge zones over workspaces, ms (p50 / p99 / max)");
    L.push(`${pad("rate/s", 7)}  ${pad("bot", 24)}  ${pad("bare Bolt", 24)}  ${pad("ratio", 20)}  fail`);
    for (const l of lat) {
      L.push(
        `${pad(l.rate, 7)}  ${pad(triple(l.zones.ack), 24)}  ${pad(triple(l.bare.ack), 24)}  ${pad(`${l.ratios.ackP50} / ${l.ratios.ackP99} / ${l.ratios.ackMax}`, 20)}  ${l.zones.failed}`,
      );
    }
    const mx = r.latency.mixed;
    if (mx)
      L.push(
        `${pad(mx.rate, 7)}  ${pad(triple(mx.bot.ack), 24)}  ${pad(triple(mx.bare.ack), 24)}  ${pad(`${mx.ratios.ackP50} / ${mx.ratios.ackP99} / ${mx.ratios.ackMax}`, 20)}  ${mx.bot.failed}  (1b) the mix: ${mx.mix.zones} zones, ${mx.mix.apps} apps, ${mx.mix.block} block, ${mx.mix.timeline} timeline; ${mx.watches} drift watches every ${mx.watchIntervalMs} ms (${mx.driftReads} evaluations); ${mx.previews.filled}/${mx.previews.sent} previews filled, ${mx.timelines.told}/${mx.timelines.sent} timelines told a seeded change, ${mx.missing} unanswered; bot CPU ${mx.botCpuPerSec.duringRun.process} ms/s (main thread ${mx.botCpuPerSec.duringRun.mainThread}), during the bare run ${mx.botCpuPerSec.duringBare.process}`,
      );
    L.push(
      "",
      `(2) End to end to response_url minus ${SIM_LATENCY_MS} ms × Edge calls = bot overhead, ms (p50 / p99 / max)`,
    );
    L.push(
      `${pad("rate/s", 7)}  ${pad("/edge zones (1 call)", 24)}  ${pad("/edge help (0 calls)", 24)}  ${pad("p50 ÷ bare ack p50", 20)}`,
    );
    for (const l of lat) {
      L.push(
        `${pad(l.rate, 7)}  ${pad(triple(l.zones.overhead), 24)}  ${pad(triple(l.help.overhead), 24)}  ${pad(`${l.ratios.zonesOverheadP50VsBareAck} / ${l.ratios.helpOverheadP50VsBareAck}`, 20)}`,
      );
    }
    L.push(
      `${pad("", 7)}  /edge zones minus the simulator's own time for its call (the issue's overhead), p50 / p99 / max: ${lat.map((l) => `${l.rate}/s ${triple(l.zones.overheadVsEdgeHeld)}`).join(", ")} ms`,
    );
    L.push(
      `${pad("", 7)}  the same for a bare Bolt app's /edge fetch-zones (ack, the Edge call, one POST): ${lat.map((l) => `${l.rate}/s ${triple(l.bareZones.overheadVsEdgeHeld)}`).join(", ")} ms`,
    );
    if (lat.every((l) => l.apps && l.bareApps))
      L.push(
        `${pad("", 7)}  /edge apps the same way: ${lat.map((l) => `${l.rate}/s ${triple(l.apps.overheadVsEdgeHeld)}`).join(", ")} ms; a bare Bolt app's /edge fetch-apps: ${lat.map((l) => `${l.rate}/s ${triple(l.bareApps.overheadVsEdgeHeld)}`).join(", ")} ms`,
      );
    L.push(
      `${pad("", 7)}  that overhead's p99 by second of the run: ${lat.map((l) => `${l.rate}/s [${l.zones.overheadP99BySecond.join(", ")}], bare [${l.bareZones.overheadP99BySecond.join(", ")}]`).join("; ")} ms`,
    );
    const c = r.latency.cold;
    if (c)
      L.push(
        `    cold /edge zones (${c.n} workspaces seen for the first time, ${c.rate}/s), end to end and overhead p50 / p99 / max: bot ${triple(c.bot.endToEnd)} and ${triple(c.bot.overhead)}; same-I/O floor ${triple(c.floor.endToEnd)} and ${triple(c.floor.overhead)} ms; overhead p99 ${c.ratios.overheadP99}×; the answer with the checks: bot ${triple(c.bot.complete.endToEnd)} and ${triple(c.bot.complete.overhead)}, floor ${triple(c.floor.complete.endToEnd)} and ${triple(c.floor.complete.overhead)} ms, ${c.ratios.completeOverheadP99}×`,
      );
    const f = r.latency.edgeFloor;
    L.push(
      `    one Edge call straight at the simulator (floor): ${triple(f)} ms; /edge zones minus that floor, p50: ${lat.map((l) => `${l.rate}/s ${l.zones.overheadVsEdgeFloor.p50}`).join(", ")} ms`,
    );
  }
  if (r.appsLatency)
    L.push(
      "",
      `(2) /edge apps alone: main-thread CPU while idle, bot ${r.appsLatency.idleCpuMsPerSec.bot} ms/s, floor ${r.appsLatency.idleCpuMsPerSec.floor} ms/s`,
    );
  for (const a of r.appsLatency?.rates ?? [])
    L.push(
      "",
      `(2) /edge apps alone at ${a.rate}/s, overhead (answer − the Edge call's held time) p50 / p99 / max: bot ${triple(a.apps.overheadVsEdgeHeld)} ms, bare Bolt's /edge fetch-apps ${triple(a.bareApps.overheadVsEdgeHeld)} ms → p50 ${a.ratios.overheadP50}×, p99 ${a.ratios.overheadP99}×; main-thread CPU per command ${a.cpuPerCommandMs.bot} vs ${a.cpuPerCommandMs.floor} ms → ${a.ratios.cpuPerCommand}×; ${a.apps.failed} failed, ${a.apps.missing} missing, ${a.apps.unmatched} unmatched`,
    );
  if (r.queue) {
    const q = r.queue;
    L.push(
      "",
      `(3) Queue accuracy: cap ${q.cap}/s, ${q.calls} calls queued at once on one key, ${q.durationMs} ms`,
      `    max in any 1 s window ${q.maxInAnySecond} at the simulator (its own process), ${q.maxStartsInAnySecond} started by the queue, ${q.maxSentInAnySecond} written to the socket (cap ${q.cap}); per whole second min/mean/max ${q.perSecond.min}/${q.perSecond.mean}/${q.perSecond.max} over ${q.perSecond.windows} s; achieved ${q.achievedPerSec}/s = ${q.utilisation}× cap; ${q.failed} failed`,
    );
  }
  if (r.fairness) {
    const f = r.fairness;
    L.push(
      "",
      `(4) Fairness: key B's single call, ms (p50 / p99 / max of ${f.idle.n})`,
      `    idle ${triple(f.idle)}   A has ${f.queuedOnA} queued: ${triple(f.underLoad)}   ratio p50 ${f.ratioP50}×, max ${f.ratioMax}×, +${f.extraMaxMs} ms`,
    );
  }
  if (r.memory) {
    const mm = r.memory;
    L.push(
      "",
      `(5) Memory of the bot process (VmRSS after forced GC, MiB; heap used in brackets; then after ${mm.settleMs / 1000} s idle)`,
      `    baseline ${mm.baseline.rssMiB} [${mm.baseline.heapUsedMiB}]`,
    );
    for (const [i, x] of mm.rounds.entries()) {
      L.push(
        `    round ${i + 1}: after ${mm.workspaces} workspaces ${x.afterCommands.rssMiB} [${x.afterCommands.heapUsedMiB}] → ${x.afterCommandsSettled.rssMiB} (${x.commandsAnswered} answered in ${x.commandSeconds} s); after ${x.approvalCardsPosted} pending approvals ${x.afterApprovals.rssMiB} [${x.afterApprovals.heapUsedMiB}] → ${x.afterApprovalsSettled.rssMiB}`,
      );
    }
    L.push(
      `    peak at once ÷ baseline ${mm.ratioPeakToBaseline}×; settled peak ${mm.peakSettledMiB} MiB; round 2 growth (settled) ${mm.secondRoundGrowthMiB} MiB`,
    );
  }
  if (r.approvals?.length) {
    L.push("", "(6) Approval throughput: N pending, N concurrent Approve clicks (one per request)");
    for (const a of r.approvals) {
      if ("skipped" in a) {
        L.push(`    ${a.engine}: skipped (${a.skipped})`);
        continue;
      }
      L.push(
        `    ${pad(a.engine, 8)}: ${a.puts} PUTs for ${a.requests} requests, ${a.cardsUpdated} cards; ${a.durationMs} ms (last PUT ${a.lastPutMs} ms), ${a.approvalsPerSec}/s; one alone ${a.singleMs} ms → ${a.ratioToSingle}×; click acks ${triple(a.ack)} ms (bare Bolt ${triple(a.bareAck)} ms); CPU per approval ${a.cpuPerApprovalMs.mainThread} ms main thread, ${a.cpuPerApprovalMs.process} ms process (bare Bolt acking only: ${a.bareCpuPerClickMs.mainThreadMs} ms per click; doing the same I/O: ${a.sameIoFloor.cpuPerApprovalMs.mainThread} ms main thread, ${a.sameIoFloor.cpuPerApprovalMs.process} ms process → ${a.cpuRatioToSameIoFloor}×)`,
      );
    }
  }
  if (r.timeline?.length) {
    L.push("", "(7) Timeline build: a 24 h episode with 500 changes, from the store");
    for (const t of r.timeline)
      L.push(
        "skipped" in t
          ? `    ${t.engine}: skipped (${t.skipped})`
          : `    ${pad(t.engine, 8)}: ${t.buildMs} ms for ${t.entries} entries (median of ${t.runs}); one indexed read of ${t.floorRows} rows ${t.floorMs} ms → ${t.ratioToFloor}×; nothing to find ${t.emptyZoneMs} ms`,
      );
  }
  if (r.incidentCard) {
    const c = r.incidentCard;
    L.push(
      "",
      "(7b) Incident card: /edge incident gathered and drawn (no Slack call), a zone with 2,000 more event-log sources",
      `    CPU ${c.cardCpuMs} ms, wall ${c.cardMs} ms (${c.rows} event-log groups read: ${groupsReadWords(c)}; ${c.edgeCalls} Edge calls; ${c.blocks} blocks); the same requests sent again and parsed: CPU ${c.floorCpuMs} ms, wall ${c.floorMs} ms → ${c.ratioToFloor}×`,
    );
  }
  if (r.preview) {
    const p = r.preview;
    L.push(
      "",
      "(8) Impact preview: /edge block (confirmation + preview) vs /edge learning (no preview), 1/s, one workspace",
      `    acks ${triple(p.ack)} ms vs ${triple(p.baselineAck)} ms; confirmation at response_url ${triple(p.confirmation)} ms vs ${triple(p.baselineConfirmation)} ms; confirmation → filled ${triple(p.filledAfterConfirmation)} ms; ${p.missingFills} fills missing`,
    );
  }
  for (const [name, p] of Object.entries(r.profiles ?? {})) L.push("", `[${name}] ${formatProfile(p)}`);
  L.push("", "Targets");
  for (const v of r.verdicts) L.push(`  ${v.met ? "MET   " : "MISSED"}  ${v.target}: ${v.detail}`);
  return L.join("\n");
}

/** Summarise each bot's profile and keep the file outside the repository (it is megabytes). */
function keepProfiles(profileDir: string): Record<string, ProfileSummary> {
  const keep = join(tmpdir(), "edgeops-bench-profiles");
  mkdirSync(keep, { recursive: true });
  const out: Record<string, ProfileSummary> = {};
  for (const name of readdirSync(profileDir)) {
    const file = readdirSync(join(profileDir, name)).find((f) => f.endsWith(".cpuprofile"));
    if (!file) continue;
    const kept = join(keep, `${name}-${Date.now()}.cpuprofile`);
    copyFileSync(join(profileDir, name, file), kept);
    out[name] = { ...summarizeProfile(kept, 20), file: kept };
  }
  return out;
}

// ---- the run ------------------------------------------------------------------------------------

export async function runBench(options: Partial<BenchOptions> = {}): Promise<BenchResults> {
  const o: BenchOptions = { ...DEFAULTS, ...options };
  const started = Date.now();
  const workDir = mkdtempSync(join(tmpdir(), "edgeops-bench-"));
  const progress = (msg: string) => {
    if (!o.quiet) process.stderr.write(`[bench ${((Date.now() - started) / 1000).toFixed(0)}s] ${msg}\n`);
  };
  const only = new Set(o.only);
  const needed = Math.max(
    // The latency scenario's cold run uses as many workspaces again, never seen before.
    only.has("latency") ? 2 * o.workspaces : o.workspaces,
    only.has("memory") ? o.memoryWorkspaces : 0,
    only.has("approvals") ? o.approvals + 1 : 0,
    // The incident card's key.
    only.has("timeline") ? 1 : 0,
  );
  // Many workspaces on one bot token: the fake's auth.test names no workspace, so the bot serves them all.
  const slack = await startFakeSlack({ tokenTeamId: null });
  slack.users.set("U0001", { id: "U0001", name: "alice", is_admin: true });
  slack.users.set("U0002", { id: "U0002", name: "bob" });
  slack.users.set("U0003", { id: "U0003", name: "carol", is_owner: true });
  const [sim, loadgen] = await Promise.all([
    spawnChild<SimReady>("sim-process.ts", {
      env: { BENCH_SIM_KEYS: String(needed) },
      logFile: join(workDir, "sim.log"),
    }),
    spawnChild("loadgen.ts", { logFile: join(workDir, "loadgen.log") }),
  ]);
  let compiledDir: string | undefined;
  if (o.compiled) {
    progress("compiling the bot (tsc, as the production image runs it)");
    compiledDir = await compileForBench(workDir);
  }
  const profileDir = o.profile ? join(workDir, "profiles") : undefined;
  const ctx: BenchContext = { workDir, compiledDir, profileDir, slack, sim, loadgen, progress };
  const { out: _out, quiet: _quiet, ...recorded } = o;
  const results: BenchResults = {
    meta: {
      date: new Date().toISOString(),
      node: process.version,
      cpus: cpus().length,
      cpuModel: cpus()[0]?.model ?? "unknown",
      loadavgStart: loadavg().map((v) => Math.round(v * 100) / 100),
      loadavgEnd: [],
      commit: gitCommit(),
      simulatorLatencyMs: SIM_LATENCY_MS,
      options: recorded,
      seconds: 0,
      setup: SETUP,
    },
    verdicts: [],
  };
  try {
    if (only.has("latency")) {
      const [bare, bot] = await Promise.all([
        spawnChild<{ port: number }>("bare-bolt.ts", {
          env: { SLACK_API_URL: slack.apiUrl, EDGE_API_URL: ctx.sim.ready.url },
          logFile: join(workDir, "bare.log"),
          compiledDir,
          // The floor's profile beside the bot's: what each spends per command, area by area.
          ...(profileDir
            ? { execArgv: ["--cpu-prof", `--cpu-prof-dir=${join(profileDir, "latency-floor")}`] }
            : {}),
        }),
        startBotProcess(ctx, { name: "latency", workspaces: 2 * o.workspaces }),
      ]);
      try {
        const bareOrigin = `http://127.0.0.1:${bare.ready.port}`;
        if (o.latencyCommands === "apps") {
          results.appsLatency = await appsLatencyScenario(ctx, bareOrigin, bot.origin, o, {
            bot: () => bot.child.call("cpu"),
            floor: () => bare.call("cpu"),
          });
        } else {
          const latency = await latencyScenario(ctx, bareOrigin, bot.origin, o);
          await bot.child.stop();
          const mixed = await mixedScenario(ctx, bareOrigin, {
            ...MIXED_DEFAULTS,
            rate: Math.max(...o.rates),
            durationSec: o.durationSec,
            workspaces: o.workspaces,
            warmup: o.warmup,
            settleMs: o.settleMs,
          });
          results.latency = { ...latency, mixed };
        }
      } finally {
        await bare.stop();
        await bot.child.stop();
      }
    }
    if (only.has("queue")) {
      progress(
        `queue accuracy: ${o.queueCalls} calls at cap ${o.queueCap}/s (≈ ${Math.ceil(o.queueCalls / o.queueCap)} s)`,
      );
      results.queue = await queueAccuracy(ctx.sim, o.queueCalls, o.queueCap);
    }
    if (only.has("fairness")) {
      progress(`fairness: key A ${o.fairnessQueued} queued, key B probes`);
      results.fairness = await fairness(o.fairnessQueued, o.queueCap);
    }
    if (only.has("memory")) {
      results.memory = await memoryScenario(ctx, {
        workspaces: o.memoryWorkspaces,
        pending: o.pendingApprovals,
        rate: o.memoryRate,
        settleMs: o.memorySettleMs,
      });
    }
    if (only.has("approvals")) {
      results.approvals = [await approvalsScenario(ctx, "sqlite", o.approvals)];
      if (o.postgres) results.approvals.push(await approvalsScenario(ctx, "postgres", o.approvals));
    }
    if (only.has("timeline")) {
      progress("timeline: seeding a 24 h episode with 500 changes");
      results.timeline = [await timelineScenario("sqlite", 500)];
      if (o.postgres) results.timeline.push(await timelineScenario("postgres", 500));
      progress(`timeline: the incident card of a zone with ${CARD_ROWS} more event-log sources`);
      results.incidentCard = await incidentCardScenario(ctx);
    }
    if (only.has("preview")) results.preview = await previewScenario(ctx, o.previews);
    if (profileDir) results.profiles = keepProfiles(profileDir);
  } finally {
    await loadgen.stop();
    await sim.stop();
    await slack.close();
    rmSync(workDir, { recursive: true, force: true });
  }
  results.meta.loadavgEnd = loadavg().map((v) => Math.round(v * 100) / 100);
  results.meta.seconds = Math.round((Date.now() - started) / 1000);
  results.verdicts = verdicts(results);
  if (o.out) {
    // The three-replica run (--replicas) keeps its own section, with its own meta, until it runs again.
    const { cluster } = readResults(o.out);
    writeFileSync(o.out, `${JSON.stringify({ ...results, ...(cluster ? { cluster } : {}) }, null, 2)}\n`);
  }
  return results;
}

// ---- CLI ----------------------------------------------------------------------------------------

const HELP = `npm run bench [-- options]
  --rates 50,100,200        slash-command rates for (1)/(2)
  --duration 10             seconds per rate
  --workspaces 100          workspaces (each its own key) the commands are spread over
  --queue-calls 300         calls queued on one key for (3) (--full: 1000, ~105 s)
  --full                    (3) with 1,000 calls
  --fairness-queued 1000    calls queued on key A for (4)
  --memory-workspaces 10000 --memory-rate 50 --pending 1000   (5)
  --memory-settle 30        seconds idle before the settled memory readings (5)
  --approvals 500           (6)
  --previews 20             (8) commands of each kind (the impact preview)
  --no-postgres             skip (6) on PostgreSQL (TEST_DATABASE_URL)
  --tsx                     run the bot under tsx instead of compiled JavaScript (≈ +40 MiB RSS)
  --only latency,queue,fairness,memory,approvals,timeline,preview
  --latency-commands apps   the latency scenario measures /edge apps and its floor only (no zones, cold or mix)
  --profile                 CPU-profile every bot process and the latency scenario's bare Bolt app (files in
                            $TMPDIR/edgeops-bench-profiles, summaries in results)
  --out bench/results.json  (--out - to write nothing)
  --replicas 3              the cluster bench instead (bench/cluster.ts): N replicas on PostgreSQL + Redis
                            behind a round-robin proxy, one SIGKILLed mid-run; its results go in "cluster"
  --alerts 40               (with --replicas) zone watches under attack, each alert to be posted once
  --list-blocks 50          (with --replicas) different IPs blocked on one zone, approved at once
  --takeovers 20            (with --replicas) temporary blocks taken over by permanent ones, none undone
  --only scale              (with --replicas) only these phases: acks,cap,approvals,one-list,takeover,
                            exactly-once,kill,scale (default all but scale; the phases run replace their
                            sections of results.json)
  --scale-workspaces 1000 --scale-rate 200 --scale-approvals 50 --scale-watches 500 --scale-duration 20
                            (with --replicas) the scale phase: workspaces, commands/s, approvals/s, zone
                            watches, seconds of load (on the cluster, then one replica alone)
`;

function latencyCommands(v: string | undefined): BenchOptions["latencyCommands"] {
  if (v === undefined || v === "all" || v === "apps") return v ?? DEFAULTS.latencyCommands;
  throw new Error(`bench: --latency-commands is all or apps, not ${v}`);
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      rates: { type: "string" },
      duration: { type: "string" },
      workspaces: { type: "string" },
      "queue-calls": { type: "string" },
      full: { type: "boolean" },
      "fairness-queued": { type: "string" },
      "memory-workspaces": { type: "string" },
      "memory-rate": { type: "string" },
      "memory-settle": { type: "string" },
      pending: { type: "string" },
      approvals: { type: "string" },
      previews: { type: "string" },
      "no-postgres": { type: "boolean" },
      tsx: { type: "boolean" },
      only: { type: "string" },
      profile: { type: "boolean" },
      "latency-commands": { type: "string" },
      out: { type: "string" },
      help: { type: "boolean" },
      replicas: { type: "string" },
      alerts: { type: "string" },
      "list-blocks": { type: "string" },
      takeovers: { type: "string" },
      "scale-workspaces": { type: "string" },
      "scale-rate": { type: "string" },
      "scale-approvals": { type: "string" },
      "scale-watches": { type: "string" },
      "scale-duration": { type: "string" },
    },
  });
  if (values.help) {
    process.stdout.write(HELP);
    return;
  }
  const num = (v: string | undefined, def: number) => {
    if (v === undefined) return def;
    const n = Number(v);
    if (!Number.isFinite(n) || n <= 0) throw new Error(`bench: not a positive number: ${v}`);
    return n;
  };
  if (values.replicas !== undefined) {
    const cluster = await runClusterBench({
      replicas: num(values.replicas, CLUSTER_DEFAULTS.replicas),
      ...(values.rates ? { rates: values.rates.split(",").map((r) => num(r, 0)) } : {}),
      ...(values.duration ? { durationSec: num(values.duration, CLUSTER_DEFAULTS.durationSec) } : {}),
      ...(values.approvals ? { approvals: num(values.approvals, CLUSTER_DEFAULTS.approvals) } : {}),
      ...(values.alerts ? { alerts: num(values.alerts, CLUSTER_DEFAULTS.alerts) } : {}),
      ...(values["list-blocks"]
        ? { listBlocks: num(values["list-blocks"], CLUSTER_DEFAULTS.listBlocks) }
        : {}),
      ...(values.takeovers ? { takeovers: num(values.takeovers, CLUSTER_DEFAULTS.takeovers) } : {}),
      ...(values.only
        ? {
            only: values.only.split(",").map((p) => {
              if (!(CLUSTER_PHASES as readonly string[]).includes(p))
                throw new Error(`bench: unknown cluster phase ${p} (${CLUSTER_PHASES.join(", ")})`);
              return p as ClusterPhase;
            }),
          }
        : {}),
      scaleWorkspaces: num(values["scale-workspaces"], CLUSTER_DEFAULTS.scaleWorkspaces),
      scaleCommandRate: num(values["scale-rate"], CLUSTER_DEFAULTS.scaleCommandRate),
      scaleApprovalRate: num(values["scale-approvals"], CLUSTER_DEFAULTS.scaleApprovalRate),
      scaleWatches: num(values["scale-watches"], CLUSTER_DEFAULTS.scaleWatches),
      scaleSeconds: num(values["scale-duration"], CLUSTER_DEFAULTS.scaleSeconds),
      compiled: !values.tsx,
      out: values.out === "-" ? undefined : (values.out ?? DEFAULTS.out),
    });
    process.stdout.write(`${formatClusterTable(cluster)}\n`);
    process.exit(0);
  }
  const only = values.only
    ? values.only.split(",").map((s) => {
        if (!(SCENARIOS as readonly string[]).includes(s)) throw new Error(`bench: unknown scenario ${s}`);
        return s as Scenario;
      })
    : DEFAULTS.only;
  const results = await runBench({
    rates: values.rates ? values.rates.split(",").map((r) => num(r, 0)) : DEFAULTS.rates,
    durationSec: num(values.duration, DEFAULTS.durationSec),
    workspaces: num(values.workspaces, DEFAULTS.workspaces),
    queueCalls: values.full ? 1000 : num(values["queue-calls"], DEFAULTS.queueCalls),
    fairnessQueued: num(values["fairness-queued"], DEFAULTS.fairnessQueued),
    memoryWorkspaces: num(values["memory-workspaces"], DEFAULTS.memoryWorkspaces),
    memoryRate: num(values["memory-rate"], DEFAULTS.memoryRate),
    memorySettleMs: num(values["memory-settle"], DEFAULTS.memorySettleMs / 1000) * 1000,
    pendingApprovals: num(values.pending, DEFAULTS.pendingApprovals),
    approvals: num(values.approvals, DEFAULTS.approvals),
    previews: num(values.previews, DEFAULTS.previews),
    postgres: !values["no-postgres"],
    compiled: !values.tsx,
    profile: values.profile ?? false,
    only,
    latencyCommands: latencyCommands(values["latency-commands"]),
    out: values.out === "-" ? undefined : (values.out ?? DEFAULTS.out),
  });
  process.stdout.write(`${formatTable(results)}\n`);
  process.exit(0);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((e: unknown) => {
    // A mistyped option is the user's to fix: say so with the usage, not a stack trace.
    const code = (e as { code?: unknown } | undefined)?.code;
    if (typeof code === "string" && code.startsWith("ERR_PARSE_ARGS")) {
      process.stderr.write(`bench: ${(e as Error).message}\n${HELP}`);
      process.exit(2);
    }
    process.stderr.write(`${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exit(1);
  });
}
