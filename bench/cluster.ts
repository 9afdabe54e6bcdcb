/**
 * `npm run bench -- --replicas 3`: the scaled-out setup under load. N bot replicas (bench/bot-process.ts,
 * HTTP mode, as the single-replica bench starts one) on one fresh PostgreSQL database and one Redis
 * (REDIS_URL, EXPECTED_REPLICAS=N), behind a round-robin proxy (bench/proxy.ts), with the simulator, the
 * fake Slack and the open-loop load generator of the single-replica bench. It measures:
 *
 *   - ack latency through the proxy, and against one replica directly in the same run;
 *   - the per-key cap across the cluster as the simulator saw it: hot keys driven over their cap through
 *     every replica; 1 s windows over the cap (goal 0) and mean use of the cap (goal ≥ 95 %);
 *   - N concurrent Approve clicks spread over the replicas: exactly one Edge call (PUT) each;
 *   - one access list, many writers: different IPs blocked on one zone by one workspace, their Approve
 *     clicks at once over the replicas: every IP in the list, every card applied, none lost;
 *   - temporary blocks taken over by later permanent requests for the same IPs: once their time is up,
 *     none is undone (a control block nobody took over is, so the sweepers did run meanwhile);
 *   - work that must happen exactly once (EXACTLY_ONCE_WORK): schedules made due at once, and zone watches
 *     whose zones come under attack (one alert parent per watch, WATCH_INTERVAL_MS shortened);
 *   - with --only scale, first and on replicas of its own, the scale phase (bench/scale.ts): commands,
 *     approvals and watches at once at issue 40's sizes, on the cluster and on one replica alone;
 *   - then one replica SIGKILLed mid-run, during a burst of Approve clicks and with schedule runs in
 *     flight: no PUT twice, every request applied once, expired once or settled by the reconciler, and
 *     every schedule occurrence posted once (the ones the dead replica had claimed: by a survivor, after
 *     its lease ended).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { systemClock } from "../src/clock.js";
import { type Config, loadConfig } from "../src/config.js";
import { createLogger } from "../src/log.js";
import { ACTIONS } from "../src/slack/ids.js";
import { openStore, type Store } from "../src/store/index.js";
import { startFakeSlack } from "../test/support/fake-slack.js";
import { SIM_IDS } from "../tools/simulator/index.js";
import {
  answeredCount,
  type Child,
  ENCRYPTION_KEY,
  keyFor,
  readResults,
  round,
  SIM_LATENCY_MS,
  type Summary,
  sleep,
  spawnChild,
  summarize,
  teamFor,
  until,
  ZONES_PAGE_CALL,
} from "./common.js";
import { botRun, type E2eRun } from "./latency.js";
import type { LoadSample } from "./loadgen.js";
import {
  type BenchContext,
  type BotProcess,
  clickRequest,
  commandRequest,
  compileForBench,
  createPgDatabase,
  runLoad,
  type SimReady,
  seedKeys,
  startBotProcess,
} from "./processes.js";
import { maxInWindow } from "./queue.js";
import { formatScale, type ScaleResult, scalePhase, scaleVerdicts } from "./scale.js";

export const CLUSTER_PHASES = [
  "acks",
  "cap",
  "approvals",
  "one-list",
  "takeover",
  "exactly-once",
  "kill",
  "scale",
] as const;
export type ClusterPhase = (typeof CLUSTER_PHASES)[number];

export interface ClusterOptions {
  replicas: number;
  /** Open-loop /edge zones rates for the ack comparison (cluster vs one replica). */
  rates: number[];
  durationSec: number;
  warmup: number;
  workspaces: number;
  /** Keys driven over their cap (each its own workspace). */
  hotKeys: number;
  /** Commands per second per hot key (the cap is EDGE_API_RATE_PER_SEC, 10). */
  hotRate: number;
  hotSeconds: number;
  /** Pending approvals, then as many concurrent Approve clicks. */
  approvals: number;
  /** Different IPs blocked on one zone (one list, one key), approved at once over the replicas. */
  listBlocks: number;
  /** Temporary blocks (1 minute) taken over by permanent requests for the same IPs. */
  takeovers: number;
  /**
   * The blocks' minute passes at once: once the permanent blocks are approved, every temporary block still
   * due for an undo is made due now in the store (what a minute passing does to it), instead of waiting it
   * out; the replicas' own sweepers still find and undo it. For tests; the bench waits the real minute.
   */
  skipTakeoverMinute?: boolean;
  /** Schedules made due at once. */
  schedules: number;
  /** Zone watches (one a channel) whose zones are under attack: that many alerts, each to be posted once. */
  alerts: number;
  /** The replicas' WATCH_INTERVAL_MS (the poller ticks at a quarter of it, at least every second). */
  watchIntervalMs: number;
  /** The kill: pending approvals (half clicked around the kill, half left to expire) and due schedules. */
  killApprovals: number;
  killSchedules: number;
  /** After the kill phase's schedules fall due, when to SIGKILL the victim. */
  killAfterDueMs: number;
  schedulerIntervalMs: number;
  schedulerLeaseMs: number;
  /** Wait for every request of the kill phase to expire or be reconciled (≈ 80 s); the test does not. */
  settleApprovals: boolean;
  /**
   * The scale phase (bench/scale.ts): its own workspaces, each its own key; slash commands and Approve clicks a
   * second; zone watches; the replicas' WATCH_INTERVAL_MS in it; seconds of measured load.
   */
  scaleWorkspaces: number;
  scaleCommandRate: number;
  scaleApprovalRate: number;
  scaleWatches: number;
  scaleWatchIntervalMs: number;
  scaleSeconds: number;
  /** The phases to run, in their fixed order (scale first, on replicas of its own). */
  only: readonly ClusterPhase[];
  redisUrl: string;
  compiled: boolean;
  quiet: boolean;
  /** results.json to put a `cluster` section in; undefined = write nothing. */
  out: string | undefined;
}

export const CLUSTER_DEFAULTS: ClusterOptions = {
  replicas: 3,
  rates: [50, 100, 200],
  durationSec: 10,
  warmup: 300,
  workspaces: 100,
  hotKeys: 5,
  hotRate: 20,
  hotSeconds: 10,
  approvals: 500,
  listBlocks: 50,
  takeovers: 20,
  schedules: 300,
  alerts: 40,
  watchIntervalMs: 2_000,
  killApprovals: 200,
  killSchedules: 300,
  killAfterDueMs: 2_500,
  schedulerIntervalMs: 1_000,
  schedulerLeaseMs: 5_000,
  settleApprovals: true,
  scaleWorkspaces: 1_000,
  scaleCommandRate: 200,
  scaleApprovalRate: 50,
  scaleWatches: 500,
  // The production default (config.ts): watches at their steady rate, not the alerts phase's shortened one.
  scaleWatchIntervalMs: 60_000,
  scaleSeconds: 20,
  // The scale phase only when asked (--only scale): at full size it is minutes of setup on its own replicas.
  only: CLUSTER_PHASES.filter((p) => p !== "scale"),
  // Its own logical database: the shared limit's keys never meet the tests' (db 0) or the process tests' (db 3, 4).
  redisUrl: `${(process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379").replace(/\/\d*$/, "")}/2`,
  compiled: true,
  quiet: false,
  out: undefined,
};

// ---- results ------------------------------------------------------------------------------------

export interface AckComparison {
  rate: number;
  cluster: E2eRun;
  oneReplica: E2eRun;
  ratioP99: number;
}

export interface CapUse {
  cap: number;
  keys: number;
  callsPerKey: number;
  /** 1 s windows (one starting at each arrival) holding more than `cap` arrivals of one key, all keys. */
  windowsOverCap: number;
  /** Most arrivals of one key within any 1 s. */
  maxInAnySecond: number;
  /** Per key: cap·m arrivals over the time they took (m whole windows), ÷ cap; the mean over keys. */
  meanUse: number;
  minUse: number;
  failed: number;
}

export interface ApprovalBurst {
  requests: number;
  clicks: number;
  /** Requests whose key saw exactly one PUT / none / more than one. */
  exactlyOnce: number;
  none: number;
  twice: number;
  cardsUpdated: number;
  durationMs: number;
  ack: Summary;
  failedAcks: number;
  /** Clicks each replica answered (the proxy's count). */
  perReplica: number[];
}

/** One access list written by many approvals at once (issue 27.3: one writer per target). */
export interface OneListResult {
  requests: number;
  /** Requests whose card ended applied / in another state. */
  applied: number;
  states: Record<string, number>;
  /** The requested IPs in the list afterwards; lost: applied but not in the list. */
  inList: number;
  lost: number;
  durationMs: number;
  failedAcks: number;
  perReplica: number[];
}

/** Temporary changes taken over by later permanent requests (issue 27.4: undo only what it owns). */
export interface TakeoverResult {
  requests: number;
  /** The temporary blocks applied, then the permanent requests for the same IPs applied. */
  temporaryApplied: number;
  permanentApplied: number;
  /** Once the temporary blocks' time was up: their undo cancelled (still applied) / undone anyway. */
  undoCancelled: number;
  undone: number;
  /** IPs no longer in the list: targets that went back. */
  wentBack: number;
  /** The control (one more temporary block, not taken over) was undone: the sweepers ran meanwhile. */
  controlUndone: boolean;
  /** From the last temporary block applied until the control was undone (or the wait gave up). */
  waitedMs: number;
  states: Record<string, number>;
}

/** One kind of background work that must happen exactly once across the cluster. */
export interface OnceTally {
  work: string;
  expected: number;
  once: number;
  missing: number;
  twice: number;
  /** From made due until the last expected post arrived (or the wait gave up). */
  settledMs: number;
  /** Units each replica did (its log lines); the exactly-once phase only. */
  perReplica?: number[];
}

export interface KillResult {
  victim: number;
  killedAtMs: number;
  /** Schedule runs holding a lease when the victim died (any replica's). */
  leasedAtKill: number;
  /** Occurrences survivors took over after their lease ended (from the survivors' logs). */
  takenOver: number;
  schedules: OnceTally;
  approvals: {
    requests: number;
    clicked: number;
    /** Clicks the proxy answered 502 (sent to the victim as it died) or that got no answer. */
    clicksFailed: number;
    states: Record<string, number>;
    /** Keys (one per request) with more than one PUT. */
    putTwice: number;
    /**
     * Settled by the reconciler (approved, then the replica died before it recorded the answer): applied
     * when the value was in force (every request here sets the same category, so another request's PUT
     * may be what it found), failed otherwise.
     */
    reconciled: number;
    /** Requests not reconciled: applied without exactly one PUT, or not applied with a PUT. */
    putMismatch: number;
    /** Requests with more than one expiry in the audit log. */
    expiredTwice: number;
    /** Still pending or approved when the run stopped waiting (0 with settleApprovals). */
    unsettled: number;
  };
}

export interface ClusterResults {
  meta: {
    date: string;
    node: string;
    cpus: number;
    loadavgStart: number[];
    loadavgEnd: number[];
    seconds: number;
    options: Omit<ClusterOptions, "out" | "quiet" | "redisUrl">;
    setup: string[];
  };
  /** Each phase's result when it ran (a run with --only keeps the other sections of results.json). */
  acks?: AckComparison[];
  cap?: CapUse;
  approvals?: ApprovalBurst;
  oneList?: OneListResult;
  takeover?: TakeoverResult;
  exactlyOnce?: OnceTally[];
  kill?: KillResult;
  scale?: ScaleResult;
  verdicts: { target: string; met: boolean; detail: string }[];
}

const SETUP = [
  "Replicas: bench/bot-process.ts (loadConfig + startBot, HTTP receiver), compiled by tsc and run by node unless --tsx, one PostgreSQL database made for the run, one Redis (REDIS_URL, EXPECTED_REPLICAS = replicas), SCHEDULER_INTERVAL_MS and SCHEDULER_LEASE_MS shortened so the kill's takeover fits in the run.",
  "Front: bench/proxy.ts, round-robin over the replicas; a replica refusing connections is left out for 2 s (the request goes to the next); a request lost with its replica is answered 502.",
  "Alerts: zone watches stored as /edge watch zone stores them, one a channel, on zones whose staged attack began 6 minutes earlier (each watch's first evaluation reads the hour before and fires); WATCH_INTERVAL_MS shortened so the watches are evaluated again (by any replica) while the tally waits.",
  "Edge API: the simulator in its own process, 150 ms a call, every workspace its own key (cap 10/s, 4 at once per key, shared through Redis).",
  "Slack: the fake Web API in the orchestrator; load: bench/loadgen.ts, open loop.",
  "Scale (bench/scale.ts): first, on replicas of its own with the production WATCH_INTERVAL_MS unless set: one replica alone (EXPECTED_REPLICAS=1, sent the load directly), then the N replicas behind the proxy, each stopped before the next; the other phases' replicas start after.",
  "Machine: 2 shared cores for every replica, the proxy, the simulator, the load generator, PostgreSQL and Redis.",
];

// ---- exactly-once work ----------------------------------------------------------------------------

interface ClusterRun {
  ctx: BenchContext;
  store: Store;
  /** The replicas' configuration as far as the orchestrator's store needs it (watch limits). */
  config: Config;
  options: ClusterOptions;
}

/**
 * Background work that every replica ticks for and exactly one must do: prepare some due, then tally
 * what reached Slack (OnceTally.settledMs is filled in by the caller).
 */
export interface ExactlyOnceWork {
  name: string;
  /** The info line a replica logs once per unit it does. */
  logLine: string;
  /** How many units the exactly-once phase makes due. */
  count(o: ClusterOptions): number;
  /** After the last expected post, how long a second one could still come. */
  lateMs(o: ClusterOptions): number;
  /** Make `n` units due (prefix keeps each phase's units apart); returns a tally function. */
  prepare(
    run: ClusterRun,
    n: number,
    prefix: string,
  ): Promise<() => Omit<OnceTally, "settledMs" | "perReplica">>;
  /** Stop the work from going on into the next phases. */
  cleanup?(run: ClusterRun): Promise<void>;
}

const DNS_ZONE = SIM_IDS.dnsZoneCompleted;

export const schedulesWork: ExactlyOnceWork = {
  name: "scheduled DNS summaries",
  logLine: "scheduled DNS summary run",
  count: (o) => o.schedules,
  lateMs: () => 2_000,
  async prepare({ ctx, store, options }, n, prefix) {
    const channels = Array.from({ length: n }, (_, i) => `C${prefix}${String(i).padStart(5, "0")}`);
    const due = Date.now() + 1_000;
    for (let i = 0; i < n; i += 50) {
      await Promise.all(
        channels.slice(i, i + 50).map((channelId, j) =>
          store.schedules.create({
            teamId: teamFor((i + j) % options.workspaces),
            channelId,
            createdBy: "U0001",
            kind: "dns",
            target: String(DNS_ZONE),
            spec: "0 9 * * *",
            timezone: "UTC",
            nextRunAt: due,
          }),
        ),
      );
    }
    return () => {
      const posts = new Map<string, number>();
      for (const c of ctx.slack.callsTo("chat.postMessage")) {
        const channel = String(c.args.channel ?? "");
        posts.set(channel, (posts.get(channel) ?? 0) + 1);
      }
      const counts = channels.map((c) => posts.get(c) ?? 0);
      return {
        work: schedulesWork.name,
        expected: n,
        once: counts.filter((c) => c === 1).length,
        missing: counts.filter((c) => c === 0).length,
        twice: counts.filter((c) => c > 1).length,
      };
    };
  },
};

/** Every shield zone of the simulator but the one its seed already has under attack. */
const ALERT_ZONES = Array.from(
  { length: SIM_IDS.shieldZoneCount },
  (_, i) => SIM_IDS.firstShieldZone + i,
).filter((z) => z !== SIM_IDS.zoneUnderAttack);

/**
 * Zone watches (issue 15), one a channel, spread over the workspaces and the zones; every watched zone
 * under an attack that began six minutes ago. A watch's first evaluation fills its baseline from the
 * hour before (quiet) and finds the last two-minute buckets far over it, so each watch fires at its
 * first evaluation, on whichever replica claims it; the attack outlasts the run, so the episode stays
 * open and later evaluations (every WATCH_INTERVAL_MS, any replica) only update it. The tally counts
 * alert parents: chat.postMessage in the watch's channel without thread_ts (replies carry one).
 */
export const alertsWork: ExactlyOnceWork = {
  name: "zone attack alerts",
  logLine: "alert opened",
  count: (o) => o.alerts,
  // Two more evaluations of every watch, by any replica, after its alert was posted.
  lateMs: (o) => 2 * o.watchIntervalMs + 1_000,
  async prepare({ ctx, store, config, options }, n, prefix) {
    const watches = Array.from({ length: n }, (_, i) => ({
      channelId: `C${prefix}W${String(i).padStart(5, "0")}`,
      teamId: teamFor(i % options.workspaces),
      zone: ALERT_ZONES[i % ALERT_ZONES.length] as number,
    }));
    const startsAt = Date.now() - 6 * 60_000;
    for (const zone of new Set(watches.map((w) => w.zone)))
      await ctx.sim.call("stageAttack", {
        zone,
        startsAt,
        rampMinutes: 0,
        durationMinutes: 60,
        peakPerMinute: 900,
      });
    for (let i = 0; i < n; i += 50) {
      await Promise.all(
        watches.slice(i, i + 50).map(async (w, j) => {
          const r = await store.watches.createIfRoom(
            {
              teamId: w.teamId,
              channelId: w.channelId,
              createdBy: "U0001",
              kind: "zone",
              target: String(w.zone),
              options: { sensitivity: "normal" },
              // Due over one interval, as watches made at different times: every replica's ticks take some.
              nextPollAt: Date.now() + Math.floor(((i + j) / n) * options.watchIntervalMs),
            },
            config.watches,
          );
          if (r.kind !== "created") throw new Error(`watch in ${w.channelId} not created: ${r.kind}`);
        }),
      );
    }
    const channels = new Set(watches.map((w) => w.channelId));
    return () => {
      const parents = new Map<string, number>();
      for (const c of ctx.slack.callsTo("chat.postMessage")) {
        const channel = String(c.args.channel ?? "");
        if (!channels.has(channel) || c.args.thread_ts) continue;
        parents.set(channel, (parents.get(channel) ?? 0) + 1);
      }
      const counts = [...channels].map((c) => parents.get(c) ?? 0);
      return {
        work: alertsWork.name,
        expected: n,
        once: counts.filter((c) => c === 1).length,
        missing: counts.filter((c) => c === 0).length,
        twice: counts.filter((c) => c > 1).length,
      };
    };
  },
  async cleanup({ store, options }) {
    for (let i = 0; i < options.workspaces; i++) {
      const teamId = teamFor(i);
      for (const w of await store.watches.list(teamId)) await store.watches.remove(teamId, w.id);
    }
  },
};

export const EXACTLY_ONCE_WORK: readonly ExactlyOnceWork[] = [schedulesWork, alertsWork];

// ---- helpers ------------------------------------------------------------------------------------

export interface Cluster {
  replicas: (BotProcess | undefined)[];
  proxy: Child<{ port: number }>;
  origin: string;
}

const CATEGORY_PUT = { method: "PUT", pathIncludes: "/bot-categorization/categories/" };

/** PUTs per key (keyed by workspace index) since the simulator's requests were last cleared. */
export async function putsByWorkspace(ctx: BenchContext): Promise<Map<string, number>> {
  const byKey = await ctx.sim.call<Record<string, number[]>>("arrivalsByKey", CATEGORY_PUT);
  return new Map(Object.entries(byKey).map(([k, v]) => [k, v.length]));
}

/** Over every key: the 1 s windows (one starting at each arrival) holding more than `cap`, and the most in any. */
export function overCap(
  arrivalsByKey: number[][],
  cap: number,
): { windowsOverCap: number; maxInAnySecond: number } {
  let windowsOverCap = 0;
  let maxInAnySecond = 0;
  for (const raw of arrivalsByKey) {
    const a = [...raw].sort((x, y) => x - y);
    maxInAnySecond = Math.max(maxInAnySecond, maxInWindow(a));
    let hi = 0;
    for (let lo = 0; lo < a.length; lo++) {
      while (hi < a.length && (a[hi] as number) - (a[lo] as number) < 1000) hi++;
      if (hi - lo > cap) windowsOverCap++;
    }
  }
  return { windowsOverCap, maxInAnySecond };
}

function capUse(arrivalsByKey: number[][], cap: number, calls: number, failed: number): CapUse {
  const uses: number[] = [];
  for (const raw of arrivalsByKey) {
    const a = [...raw].sort((x, y) => x - y);
    const m = Math.floor((a.length - 1) / cap);
    const span = (a[cap * m] ?? 0) - (a[0] ?? 0);
    if (m > 0 && span > 0) uses.push((cap * m) / span / (cap / 1000));
  }
  return {
    cap,
    keys: arrivalsByKey.length,
    callsPerKey: calls,
    ...overCap(arrivalsByKey, cap),
    meanUse: round(uses.reduce((s, u) => s + u, 0) / Math.max(1, uses.length), 3),
    minUse: round(uses.length ? Math.min(...uses) : 0, 3),
    failed,
  };
}

export const requestIdFor = (phase: string, i: number) => `cl-${phase}-${String(i).padStart(6, "0")}`;

/**
 * Pending bot-category requests (Allow AI scraper) in `channel` (or the i-th request's own), one per
 * workspace from `first`.
 */
export async function createPending(
  ctx: BenchContext,
  origin: string,
  phase: string,
  first: number,
  n: number,
  channel: string | ((i: number) => string),
): Promise<string[]> {
  await ctx.sim.call("setCategory", { zone: ctx.sim.ready.zone, category: 2, action: 1 });
  const before = ctx.slack.callsTo("chat.postMessage").length;
  const ids = Array.from({ length: n }, (_, i) => requestIdFor(phase, i));
  const creates = ids.map((r, i) =>
    clickRequest(
      ctx,
      `${phase}-create-${i}`,
      first + i,
      "U0002",
      ACTIONS.botAllow,
      JSON.stringify({ r, z: ctx.sim.ready.zone, c: 2, a: 2 }),
      typeof channel === "string" ? channel : channel(i),
    ),
  );
  await runLoad(ctx, { origin, requests: creates, rate: 100 });
  // A request whose create failed (an overloaded machine: the database pool timed out) has no card; its
  // Approve click then finds nothing and the tallies show it (none / missing), rather than the run stopping.
  await until(
    () => ctx.slack.callsTo("chat.postMessage").length >= before + n,
    120_000,
    `${n} approval cards (${phase})`,
  ).catch(() =>
    ctx.progress(`  only ${ctx.slack.callsTo("chat.postMessage").length - before} of ${n} cards (${phase})`),
  );
  return ids;
}

export async function proxyCounts(proxy: Child): Promise<number[]> {
  const stats = await proxy.call<{ sent: number }[]>("stats");
  return stats.map((s) => s.sent);
}

function countLines(file: string, needle: string): number {
  try {
    return readFileSync(file, "utf8")
      .split("\n")
      .filter((l) => l.includes(needle)).length;
  } catch {
    return 0;
  }
}

// ---- phases -------------------------------------------------------------------------------------

async function ackPhase(ctx: BenchContext, cluster: Cluster, o: ClusterOptions): Promise<AckComparison[]> {
  const direct = cluster.replicas[0]?.origin as string;
  const zones = {
    workspaces: o.workspaces,
    text: "zones",
    edgeCalls: 1,
    awaited: ZONES_PAGE_CALL,
    floorP50: SIM_LATENCY_MS,
    settleMs: 1_300,
  };
  ctx.progress("acks: warming up through the proxy");
  await botRun(ctx, { ...zones, origin: cluster.origin, prefix: "cw", rate: 100, n: o.warmup });
  const out: AckComparison[] = [];
  for (const rate of o.rates) {
    const n = Math.max(1, Math.round(rate * o.durationSec));
    ctx.progress(`acks: /edge zones ${rate}/s for ${o.durationSec} s through the proxy, then one replica`);
    const viaProxy = await botRun(ctx, { ...zones, origin: cluster.origin, prefix: `cp${rate}`, rate, n });
    const one = await botRun(ctx, { ...zones, origin: direct, prefix: `c1${rate}`, rate, n });
    out.push({
      rate,
      cluster: viaProxy,
      oneReplica: one,
      ratioP99: round(viaProxy.ack.p99 / one.ack.p99, 2),
    });
    ctx.progress(`  ack p99 cluster ${viaProxy.ack.p99} ms, one replica ${one.ack.p99} ms`);
  }
  return out;
}

async function capPhase(
  ctx: BenchContext,
  cluster: Cluster,
  o: ClusterOptions,
  first: number,
): Promise<CapUse> {
  const cap = 10;
  const perKey = o.hotRate * o.hotSeconds;
  const n = perKey * o.hotKeys;
  ctx.progress(
    `cap: ${o.hotKeys} keys × ${o.hotRate}/s for ${o.hotSeconds} s through ${o.replicas} replicas (cap ${cap}/s per key)`,
  );
  await ctx.sim.call("clear");
  ctx.slack.clear();
  const requests = Array.from({ length: n }, (_, j) =>
    commandRequest(ctx, `cap-${j}`, first + (j % o.hotKeys), "zones"),
  );
  const samples = await runLoad(ctx, { origin: cluster.origin, requests, rate: o.hotRate * o.hotKeys });
  // The backlog drains at the cap: perKey / cap seconds in all.
  await until(
    () => answeredCount(ctx.slack.responses, "cap-") >= n,
    (perKey / cap) * 1000 + 30_000,
    "hot-key answers",
  ).catch(() => undefined);
  // Every call a key makes counts against its cap: the zones pages and the lists that name them.
  const byKey = await ctx.sim.call<Record<string, number[]>>("arrivalsByKey", {});
  const hot = Array.from({ length: o.hotKeys }, (_, i) => byKey[keyFor(first + i)] ?? []);
  const failed =
    samples.filter((s) => s.status !== 200).length + (n - answeredCount(ctx.slack.responses, "cap-"));
  ctx.slack.clear();
  await sleep(1_300);
  return capUse(hot, cap, perKey, failed);
}

async function approvalPhase(
  ctx: BenchContext,
  cluster: Cluster,
  o: ClusterOptions,
  first: number,
): Promise<ApprovalBurst> {
  const n = o.approvals;
  ctx.progress(`approvals: creating ${n} pending requests through the proxy`);
  const ids = await createPending(ctx, cluster.origin, "burst", first, n, "C0001");
  await sleep(1_300);
  ctx.slack.clear();
  await ctx.sim.call("clear");
  await cluster.proxy.call("resetStats");
  ctx.progress(`approvals: ${n} concurrent Approve clicks spread over ${o.replicas} replicas`);
  const clicks = ids.map((r, i) =>
    clickRequest(ctx, `burst-approve-${i}`, first + i, "U0003", ACTIONS.approve, r),
  );
  const samples = await runLoad(ctx, { origin: cluster.origin, requests: clicks, rate: 0 });
  const updates = () => ctx.slack.callsTo("chat.update");
  await until(
    async () =>
      updates().length >= n && [...(await putsByWorkspace(ctx)).values()].reduce((s, v) => s + v, 0) >= n,
    120_000,
    `${n} PUTs and card updates`,
  ).catch(() => undefined);
  await sleep(1_000); // a late second PUT would show up here
  const puts = await putsByWorkspace(ctx);
  const perRequest = ids.map((_, i) => puts.get(keyFor(first + i)) ?? 0);
  const t0 = Math.min(...samples.map((s) => s.sentAt));
  const ok = samples.filter((s) => s.status === 200);
  return {
    requests: n,
    clicks: samples.length,
    exactlyOnce: perRequest.filter((c) => c === 1).length,
    none: perRequest.filter((c) => c === 0).length,
    twice: perRequest.filter((c) => c > 1).length,
    cardsUpdated: updates().length,
    durationMs: round(Math.max(...updates().map((c) => c.at)) + 0.5 - t0, 1),
    ack: summarize(ok.map((s) => s.ackMs)),
    failedAcks: samples.length - ok.length,
    perReplica: await proxyCounts(cluster.proxy),
  };
}

/**
 * One workspace asks to block `listBlocks` different IPs on one shield zone (one edgeops list, one
 * key); every card is approved at once, the clicks spread over the replicas. Each apply is a
 * read-modify-PUT of the whole list, so only one writer per list at a time keeps every entry.
 */
async function oneListPhase(run: ClusterRun, cluster: Cluster, o: ClusterOptions, team: number) {
  const { ctx, store } = run;
  const n = o.listBlocks;
  const zone = SIM_IDS.customerAccessList.zoneId;
  const ips = Array.from({ length: n }, (_, i) => `10.${27 + Math.floor(i / 250)}.${i % 250}.3`);
  const ids = ips.map((_, i) => requestIdFor("list", i));
  ctx.progress(`one list: ${n} blocks of different IPs on zone ${zone} asked by one workspace`);
  const before = ctx.slack.callsTo("chat.postMessage").length;
  const creates = ips.map((ip, i) =>
    clickRequest(
      ctx,
      `list-create-${i}`,
      team,
      "U0002",
      ACTIONS.changeConfirm,
      JSON.stringify({
        r: ids[i],
        k: "access_block",
        p: { shieldZoneId: zone, type: "ip", value: ip, state: "block" },
      }),
    ),
  );
  await runLoad(ctx, { origin: cluster.origin, requests: creates, rate: 50 });
  await until(
    () => ctx.slack.callsTo("chat.postMessage").length >= before + n,
    120_000,
    `${n} block cards`,
  ).catch(() => ctx.progress("  not every block card was posted"));
  await cluster.proxy.call("resetStats");
  ctx.progress(`one list: ${n} concurrent Approve clicks spread over ${o.replicas} replicas`);
  const clicks = ids.map((r, i) => clickRequest(ctx, `list-approve-${i}`, team, "U0003", ACTIONS.approve, r));
  const t0 = Date.now();
  const samples = await runLoad(ctx, { origin: cluster.origin, requests: clicks, rate: 0 });
  const settled = new Set(["applied", "failed", "expired", "cancelled", "rejected"]);
  const states = async () =>
    Promise.all(ids.map(async (id) => (await store.changeRequests.get(id))?.state ?? "none"));
  await until(
    async () => (await states()).every((s) => settled.has(s)),
    240_000,
    `${n} blocks settled`,
  ).catch(() => ctx.progress("  not every block settled"));
  const durationMs = Date.now() - t0;
  const final = await states();
  const lines = new Set(
    await ctx.sim.call<string[]>("accessListLines", { zone, name: "edgeops: blocked IPs" }),
  );
  const tally: Record<string, number> = {};
  for (const s of final) tally[s] = (tally[s] ?? 0) + 1;
  const result: OneListResult = {
    requests: n,
    applied: final.filter((s) => s === "applied").length,
    states: tally,
    inList: ips.filter((ip) => lines.has(ip)).length,
    lost: ips.filter((ip, i) => final[i] === "applied" && !lines.has(ip)).length,
    durationMs,
    failedAcks: samples.filter((s) => s.status !== 200).length,
    perReplica: await proxyCounts(cluster.proxy),
  };
  ctx.progress(
    `  ${result.inList}/${n} in the list, ${result.applied} applied, ${result.lost} lost in ${durationMs} ms`,
  );
  return result;
}

/** Confirm a block of each IP (temporary for `temporaryMs`), then approve them all; their final states. */
async function blockAndApprove(
  run: ClusterRun,
  cluster: Cluster,
  team: number,
  phase: string,
  ips: string[],
  temporaryMs?: number,
): Promise<string[]> {
  const { ctx, store } = run;
  const zone = SIM_IDS.customerAccessList.zoneId;
  const ids = ips.map((_, i) => requestIdFor(phase, i));
  const state = async (id: string) => (await store.changeRequests.get(id))?.state ?? "none";
  const states = () => Promise.all(ids.map(state));
  const creates = ips.map((ip, i) =>
    clickRequest(
      ctx,
      `${phase}-create-${i}`,
      team,
      "U0002",
      ACTIONS.changeConfirm,
      JSON.stringify({
        r: ids[i],
        k: "access_block",
        p: { shieldZoneId: zone, type: "ip", value: ip, state: "block" },
        ...(temporaryMs !== undefined ? { t: temporaryMs } : {}),
      }),
    ),
  );
  await runLoad(ctx, { origin: cluster.origin, requests: creates, rate: 50 });
  await until(async () => (await states()).every((s) => s !== "none"), 120_000, `${phase}: requests`).catch(
    () => ctx.progress(`  ${phase}: not every request was made`),
  );
  const clicks = ids.map((r, i) =>
    clickRequest(ctx, `${phase}-approve-${i}`, team, "U0003", ACTIONS.approve, r),
  );
  await runLoad(ctx, { origin: cluster.origin, requests: clicks, rate: 0 });
  await until(
    async () => (await states()).every((s) => s !== "pending" && s !== "approved"),
    120_000,
    `${phase}: approvals settled`,
  ).catch(() => ctx.progress(`  ${phase}: not every approval settled`));
  return ids;
}

/**
 * Temporary blocks (1 minute, the shortest) of different IPs, each taken over by a later permanent
 * block of the same IP: the later request keeps the value, so once the minute is up no temporary block
 * may be undone. One more temporary block nobody took over is the control: its undo shows the sweepers
 * ran past the blocks' time.
 */
async function takeoverPhase(run: ClusterRun, cluster: Cluster, o: ClusterOptions, team: number) {
  const { ctx, store } = run;
  const n = o.takeovers;
  const zone = SIM_IDS.customerAccessList.zoneId;
  const ips = Array.from({ length: n }, (_, i) => `10.${127 + Math.floor(i / 250)}.${i % 250}.9`);
  const control = "10.126.0.9";
  ctx.progress(`takeover: ${n} temporary blocks (1 min) and a control, approved over ${o.replicas} replicas`);
  const temporary = await blockAndApprove(run, cluster, team, "tmp", [...ips, control], 60_000);
  const appliedAt = Date.now();
  const controlId = temporary.pop() as string;
  const get = (ids: string[]) => Promise.all(ids.map((id) => store.changeRequests.get(id)));
  const temporaryApplied = (await get(temporary)).filter((r) => r?.state === "applied").length;
  ctx.progress(`takeover: ${n} permanent blocks of the same IPs, approved`);
  const permanent = await blockAndApprove(run, cluster, team, "perm", ips);
  if (o.skipTakeoverMinute) {
    // A permanent block records itself as the IP's owner and cancels the temporary's undo just after it is
    // applied: wait for that (as the real minute does), then make every undo still due fall due now.
    await until(
      async () => (await get(temporary)).every((r) => r?.undoAt === null),
      30_000,
      "takeover: the temporary blocks' undos cancelled",
    ).catch(() => ctx.progress("  takeover: not every temporary block's undo was cancelled"));
    for (const r of await get(temporary.concat(controlId)))
      if (r?.state === "applied" && r.undoAt !== null)
        await store.changeRequests.annotate(r.id, "applied", { undoAt: Date.now() });
  }
  ctx.progress("takeover: waiting for the temporary blocks' time to be up and the control to be undone");
  const controlUndone = await until(
    async () => (await store.changeRequests.get(controlId))?.state === "undone",
    60_000 + 90_000,
    "the control block undone",
  )
    .then(() => true)
    .catch(() => false);
  const waitedMs = Date.now() - appliedAt;
  await sleep(2_000); // an undo of a taken-over block running alongside would show here
  const temps = await get(temporary);
  const perms = await get(permanent);
  const lines = new Set(
    await ctx.sim.call<string[]>("accessListLines", { zone, name: "edgeops: blocked IPs" }),
  );
  const states: Record<string, number> = {};
  for (const r of temps) states[`temporary ${r?.state}`] = (states[`temporary ${r?.state}`] ?? 0) + 1;
  for (const r of perms) states[`permanent ${r?.state}`] = (states[`permanent ${r?.state}`] ?? 0) + 1;
  const result: TakeoverResult = {
    requests: n,
    temporaryApplied,
    permanentApplied: perms.filter((r) => r?.state === "applied").length,
    undoCancelled: temps.filter((r) => r?.state === "applied" && r.undoAt === null).length,
    undone: temps.filter((r) => r?.state === "undone").length,
    wentBack: ips.filter((ip) => !lines.has(ip)).length,
    controlUndone,
    waitedMs,
    states,
  };
  ctx.progress(
    `  ${result.undoCancelled}/${n} undos cancelled, ${result.undone} undone, ${result.wentBack} went back; control undone ${controlUndone} after ${waitedMs} ms`,
  );
  return result;
}

async function oncePhase(run: ClusterRun, cluster: Cluster, o: ClusterOptions): Promise<OnceTally[]> {
  const out: OnceTally[] = [];
  const logs = cluster.replicas.map((r) => r?.logFile ?? "");
  for (const work of EXACTLY_ONCE_WORK) {
    const n = work.count(o);
    run.ctx.progress(`exactly once: ${n} × ${work.name}`);
    run.ctx.slack.clear();
    const before = logs.map((f) => countLines(f, work.logLine));
    const started = Date.now();
    const tally = await work.prepare(run, n, "S");
    await until(() => tally().missing === 0, 120_000, work.name).catch(() => undefined);
    const settledMs = Date.now() - started;
    await sleep(work.lateMs(o)); // a late second post would show up here
    const perReplica = logs.map((f, i) => countLines(f, work.logLine) - (before[i] ?? 0));
    const t = { ...tally(), settledMs, perReplica };
    run.ctx.progress(
      `  ${t.once} once, ${t.missing} missing, ${t.twice} twice in ${settledMs} ms; per replica ${perReplica.join("/")}`,
    );
    out.push(t);
    await work.cleanup?.(run);
  }
  return out;
}

/** How many audit rows of `step` (expire, reconcile …) each of `ids` has. */
async function auditSteps(databaseUrl: string, step: string, ids: string[]): Promise<Map<string, number>> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ details: string | null }>(
      "select details from audit_log where action like $1",
      [`%.${step}`],
    );
    const wanted = new Set(ids);
    const seen = new Map<string, number>();
    for (const r of rows) {
      const id = (JSON.parse(r.details ?? "{}") as { requestId?: string }).requestId;
      if (id && wanted.has(id)) seen.set(id, (seen.get(id) ?? 0) + 1);
    }
    return seen;
  } finally {
    await client.end();
  }
}

async function killPhase(
  run: ClusterRun,
  cluster: Cluster,
  o: ClusterOptions,
  first: number,
  databaseUrl: string,
): Promise<KillResult> {
  const { ctx, store } = run;
  const victim = cluster.replicas.length - 1;
  const channel = "CKILL0001";
  ctx.progress(
    `kill: ${o.killApprovals} pending requests (expiring in 1 min), ${o.killSchedules} schedules due`,
  );
  const ids = await createPending(ctx, cluster.origin, "kill", first, o.killApprovals, channel);
  await sleep(1_300);
  ctx.slack.clear();
  await ctx.sim.call("clear");
  const clicked = Math.ceil(o.killApprovals / 2);
  // The DNS scans answer slowly in this phase, so the runs claimed before the kill are still in flight
  // (holding their leases) when the victim dies, however fast the machine is.
  await ctx.sim.call("slowPath", { path: "/dnszone", latencyMs: o.killAfterDueMs + 1_500 });
  const tally = await schedulesWork.prepare(run, o.killSchedules, "K");
  const dueAt = Date.now() + 1_000;
  // Clicks spread over ~1 s around the kill, so some land on the victim as it dies.
  const clickRate = Math.max(50, clicked);
  const clickStart = dueAt + o.killAfterDueMs - 500;
  const clicks = ids
    .slice(0, clicked)
    .map((r, i) => clickRequest(ctx, `kill-approve-${i}`, first + i, "U0003", ACTIONS.approve, r, channel));
  await sleep(Math.max(0, clickStart - Date.now()));
  const clicking = runLoad(ctx, { origin: cluster.origin, requests: clicks, rate: clickRate });
  await sleep(Math.max(0, dueAt + o.killAfterDueMs - Date.now()));
  const leasedAtKill = (await store.schedules.listDue(Number.MAX_SAFE_INTEGER, 100_000)).filter(
    (s) => s.leaseUntil !== null && s.leaseUntil > Date.now(),
  ).length;
  const victimProc = cluster.replicas[victim];
  victimProc?.child.proc.kill("SIGKILL");
  const killedAt = Date.now();
  await ctx.sim.call("clearFaults");
  ctx.progress(`kill: SIGKILL replica ${victim + 1} (${leasedAtKill} schedule runs held a lease)`);
  const samples: LoadSample[] = await clicking;
  await until(
    () => tally().missing === 0,
    o.schedulerLeaseMs + o.schedulerIntervalMs + 90_000,
    "every schedule of the kill phase posted",
  ).catch(() => undefined);
  const settledMs = Date.now() - dueAt;
  await sleep(2_000);
  const schedules = { ...tally(), settledMs };

  const states = async () => {
    const out: Record<string, number> = {};
    const rows = await Promise.all(ids.map((id) => store.changeRequests.get(id)));
    for (const r of rows) out[r?.state ?? "missing"] = (out[r?.state ?? "missing"] ?? 0) + 1;
    return { out, rows };
  };
  if (o.settleApprovals) {
    ctx.progress("kill: waiting for the unclicked requests to expire and the stranded ones to be reconciled");
    await until(
      async () => {
        const { out } = await states();
        return (out.pending ?? 0) + (out.approved ?? 0) === 0;
      },
      150_000,
      "every request of the kill phase settled",
    ).catch(() => undefined);
  }
  const { out: finalStates, rows } = await states();
  const puts = await putsByWorkspace(ctx);
  const reconciled = await auditSteps(databaseUrl, "reconcile", ids);
  const expiries = await auditSteps(databaseUrl, "expire", ids);
  let putTwice = 0;
  let putMismatch = 0;
  rows.forEach((r, i) => {
    const c = puts.get(keyFor(first + i)) ?? 0;
    if (c > 1) putTwice++;
    if (reconciled.has(ids[i] as string)) return;
    // Applied ⇔ one PUT; failed / expired / pending ⇔ none; approved (not yet reconciled): at most one.
    if (r?.state === "applied" ? c !== 1 : r?.state === "approved" ? c > 1 : c !== 0) putMismatch++;
  });
  const survivorsLogs = cluster.replicas
    .filter((r, i) => r && i !== victim)
    .map((r) => (r as BotProcess).logFile);
  return {
    victim: victim + 1,
    killedAtMs: killedAt - dueAt,
    leasedAtKill,
    takenOver: survivorsLogs.reduce(
      (s, f) => s + countLines(f, "took over an occurrence whose run was lost"),
      0,
    ),
    schedules,
    approvals: {
      requests: ids.length,
      clicked,
      clicksFailed: samples.filter((s) => s.status !== 200).length,
      states: finalStates,
      putTwice,
      reconciled: reconciled.size,
      putMismatch,
      expiredTwice: [...expiries.values()].filter((c) => c > 1).length,
      unsettled: (finalStates.pending ?? 0) + (finalStates.approved ?? 0),
    },
  };
}

// ---- verdicts and table -----------------------------------------------------------------------------

function verdicts(r: ClusterResults): ClusterResults["verdicts"] {
  const v: ClusterResults["verdicts"] = [];
  const top = r.acks?.reduce<AckComparison | undefined>((a, b) => (!a || b.rate > a.rate ? b : a), undefined);
  if (top)
    v.push({
      target: `ack p99 through the proxy at ${top.rate}/s (< 50 ms; vs one replica)`,
      met: top.cluster.ack.p99 < 50 && top.cluster.failed === 0,
      detail: `${top.cluster.ack.p99} ms vs one replica ${top.oneReplica.ack.p99} ms (${top.ratioP99}×), ${top.cluster.failed} failed`,
    });
  const c = r.cap;
  if (c)
    v.push(
      {
        target: "per-key cap across the cluster: 1 s windows over the cap (goal 0)",
        met: c.windowsOverCap === 0,
        detail: `${c.windowsOverCap} windows over; max ${c.maxInAnySecond} in any 1 s (cap ${c.cap}) over ${c.keys} keys`,
      },
      {
        target: "mean use of the cap (goal ≥ 95 %)",
        met: c.meanUse >= 0.95,
        detail: `mean ${round(c.meanUse * 100, 1)} %, worst key ${round(c.minUse * 100, 1)} %`,
      },
    );
  const a = r.approvals;
  if (a)
    v.push({
      target: `${a.requests} concurrent Approve clicks over ${r.meta.options.replicas} replicas: exactly one PUT each`,
      met: a.exactlyOnce === a.requests && a.failedAcks === 0,
      detail: `${a.exactlyOnce} once, ${a.none} none, ${a.twice} twice; click ack p99 ${a.ack.p99} ms; per replica ${a.perReplica.join("/")}`,
    });
  for (const t of r.exactlyOnce ?? [])
    v.push({
      target: `${t.expected} ${t.work} posted exactly once`,
      met: t.once === t.expected,
      detail: `${t.once} once, ${t.missing} missing, ${t.twice} twice; per replica ${t.perReplica?.join("/") ?? "?"}`,
    });
  const l = r.oneList;
  if (l)
    v.push({
      target: `${l.requests} different IPs blocked on one zone, approved at once over ${r.meta.options.replicas} replicas: all in the list, all applied, 0 lost`,
      met: l.inList === l.requests && l.applied === l.requests && l.lost === 0,
      detail: `${l.inList} in the list, ${l.applied} applied, ${l.lost} lost; ${JSON.stringify(l.states)} in ${l.durationMs} ms; per replica ${l.perReplica.join("/")}`,
    });
  const t = r.takeover;
  if (t)
    v.push({
      target: `${t.requests} temporary blocks taken over by later permanent requests: 0 undone once their time is up`,
      met:
        t.controlUndone &&
        t.temporaryApplied === t.requests &&
        t.permanentApplied === t.requests &&
        t.undoCancelled === t.requests &&
        t.undone === 0 &&
        t.wentBack === 0,
      detail: `${t.undoCancelled} undos cancelled, ${t.undone} undone, ${t.wentBack} went back; ${JSON.stringify(t.states)}; control undone: ${t.controlUndone} after ${t.waitedMs} ms`,
    });
  const k = r.kill;
  if (k)
    v.push(
      {
        target:
          "SIGKILL mid-run: every schedule occurrence posted once (claimed ones re-claimed by survivors)",
        met: k.schedules.once === k.schedules.expected,
        detail: `${k.schedules.once}/${k.schedules.expected} once, ${k.schedules.missing} missing, ${k.schedules.twice} twice; ${k.leasedAtKill} leased at the kill, ${k.takenOver} taken over`,
      },
      {
        target: "SIGKILL mid-run: approvals applied once or expired once, none twice",
        met: k.approvals.putTwice === 0 && k.approvals.putMismatch === 0 && k.approvals.expiredTwice === 0,
        detail: `${JSON.stringify(k.approvals.states)} (${k.approvals.reconciled} by the reconciler); PUT twice ${k.approvals.putTwice}, PUT vs state mismatches ${k.approvals.putMismatch}, expired twice ${k.approvals.expiredTwice}, unsettled ${k.approvals.unsettled}; ${k.approvals.clicksFailed} clicks failed at the proxy`,
      },
    );
  if (r.scale) v.push(...scaleVerdicts(r.scale));
  return v;
}

const triple = (s: { p50: number; p99: number; max: number }) => `${s.p50} / ${s.p99} / ${s.max}`;

export function formatClusterTable(r: ClusterResults): string {
  const L: string[] = [];
  const m = r.meta;
  L.push(
    `edgeops cluster benchmark ${m.date}  ${m.options.replicas} replicas  node ${m.node}  ${m.cpus} cpu  load ${m.loadavgStart.join(" ")}  (${m.seconds} s)`,
  );
  if (r.acks) {
    L.push("", "Ack latency, /edge zones, ms (p50 / p99 / max): through the proxy | one replica directly");
    for (const a of r.acks)
      L.push(
        `  ${String(a.rate).padStart(4)}/s  ${triple(a.cluster.ack).padStart(22)} | ${triple(a.oneReplica.ack).padStart(22)}   p99 ${a.ratioP99}×; failed ${a.cluster.failed}/${a.oneReplica.failed}, missing ${a.cluster.missing}/${a.oneReplica.missing}`,
      );
  }
  // The one-line phases, under one blank line when any of them ran.
  if (r.cap || r.approvals || r.oneList || r.takeover || r.exactlyOnce) L.push("");
  const c = r.cap;
  if (c)
    L.push(
      `Per-key cap across the cluster: ${c.keys} keys × ${c.callsPerKey} calls (cap ${c.cap}/s): ${c.windowsOverCap} windows over the cap, max ${c.maxInAnySecond} in any 1 s; use of the cap mean ${round(c.meanUse * 100, 1)} %, worst ${round(c.minUse * 100, 1)} %; ${c.failed} failed`,
    );
  const a = r.approvals;
  if (a)
    L.push(
      `Approvals: ${a.clicks} concurrent clicks (per replica ${a.perReplica.join("/")}): ${a.exactlyOnce} exactly one PUT, ${a.none} none, ${a.twice} twice; ${a.cardsUpdated} cards in ${a.durationMs} ms; click acks ${triple(a.ack)} ms, ${a.failedAcks} failed`,
    );
  const l = r.oneList;
  if (l)
    L.push(
      `One list: ${l.requests} IPs blocked on one zone, approved at once (per replica ${l.perReplica.join("/")}): ${l.inList} in the list, ${l.applied} applied, ${l.lost} lost; ${JSON.stringify(l.states)} in ${l.durationMs} ms; ${l.failedAcks} clicks failed`,
    );
  const tk = r.takeover;
  if (tk)
    L.push(
      `Takeover: ${tk.requests} temporary blocks (1 min) taken over by permanent ones: ${tk.undoCancelled} undos cancelled, ${tk.undone} undone, ${tk.wentBack} went back; ${JSON.stringify(tk.states)}; control undone: ${tk.controlUndone} after ${tk.waitedMs} ms`,
    );
  for (const t of r.exactlyOnce ?? [])
    L.push(
      `Exactly once: ${t.expected} ${t.work}: ${t.once} once, ${t.missing} missing, ${t.twice} twice (all in ${t.settledMs} ms; per replica ${t.perReplica?.join("/") ?? "?"})`,
    );
  const k = r.kill;
  if (k)
    L.push(
      "",
      `SIGKILL of replica ${k.victim} ${k.killedAtMs} ms after ${k.schedules.expected} schedules fell due (${k.leasedAtKill} runs held a lease; survivors took over ${k.takenOver})`,
      `  schedules: ${k.schedules.once} posted once, ${k.schedules.missing} missing, ${k.schedules.twice} twice`,
      `  approvals: ${k.approvals.requests} pending, ${k.approvals.clicked} clicked around the kill (${k.approvals.clicksFailed} clicks failed at the proxy): ${JSON.stringify(k.approvals.states)}, ${k.approvals.reconciled} settled by the reconciler; PUT twice ${k.approvals.putTwice}, PUT/state mismatches ${k.approvals.putMismatch}, expired twice ${k.approvals.expiredTwice}, unsettled ${k.approvals.unsettled}`,
    );
  if (r.scale) L.push("", ...formatScale(r.scale));
  L.push("", "Targets");
  for (const v of r.verdicts) L.push(`  ${v.met ? "MET   " : "MISSED"}  ${v.target}: ${v.detail}`);
  return L.join("\n");
}

/**
 * The phases that ran replace their sections of results.json and the rest stay (the scale phase carries its
 * own date); meta is the run's unless only the scale phase ran. Verdicts are redone over the whole.
 */
function mergedInto(old: ClusterResults | undefined, r: ClusterResults): ClusterResults {
  if (!old) return r;
  const fresh = Object.fromEntries(
    Object.entries(r).filter(([k, v]) => v !== undefined && k !== "meta" && k !== "verdicts"),
  );
  const onlyScale = r.meta.options.only.every((p) => p === "scale");
  const merged = { ...old, ...fresh, meta: onlyScale ? old.meta : r.meta } as ClusterResults;
  return { ...merged, verdicts: verdicts(merged) };
}

// ---- the run ------------------------------------------------------------------------------------

export async function runClusterBench(options: Partial<ClusterOptions> = {}): Promise<ClusterResults> {
  const o: ClusterOptions = { ...CLUSTER_DEFAULTS, ...options };
  const started = Date.now();
  const workDir = mkdtempSync(join(tmpdir(), "edgeops-cluster-"));
  const progress = (msg: string) => {
    if (!o.quiet) process.stderr.write(`[cluster ${((Date.now() - started) / 1000).toFixed(0)}s] ${msg}\n`);
  };
  const only = new Set(o.only);
  const rest = CLUSTER_PHASES.filter((p) => p !== "scale" && only.has(p));
  // Workspace ranges, each its own key: commands + schedules | hot keys | approval burst | the kill | one
  // list | takeover | scale (alone: from 0).
  const hotFirst = o.workspaces;
  const burstFirst = hotFirst + o.hotKeys;
  const killFirst = burstFirst + o.approvals;
  const listTeam = killFirst + o.killApprovals;
  const takeoverTeam = listTeam + 1;
  const scaleFirst = rest.length > 0 ? takeoverTeam + 1 : 0;
  const keys = scaleFirst + (only.has("scale") ? o.scaleWorkspaces : 0);

  const pgdb = await createPgDatabase();
  if (!pgdb) throw new Error("bench --replicas: PostgreSQL is unreachable (TEST_DATABASE_URL)");
  // Many workspaces on one bot token: the fake's auth.test names no workspace, so the bot serves them all.
  const slack = await startFakeSlack({ tokenTeamId: null });
  slack.users.set("U0001", { id: "U0001", name: "alice", is_admin: true });
  slack.users.set("U0002", { id: "U0002", name: "bob" });
  slack.users.set("U0003", { id: "U0003", name: "carol", is_owner: true });
  const children: Child[] = [];
  const cluster: Cluster = { replicas: [], proxy: undefined as never, origin: "" };
  let store: Store | undefined;
  try {
    const [sim, loadgen, proxy] = await Promise.all([
      spawnChild<SimReady>("sim-process.ts", {
        env: { BENCH_SIM_KEYS: String(keys) },
        logFile: join(workDir, "sim.log"),
      }),
      spawnChild("loadgen.ts", { logFile: join(workDir, "loadgen.log") }),
      spawnChild<{ port: number }>("proxy.ts", { logFile: join(workDir, "proxy.log") }),
    ]);
    children.push(sim, loadgen, proxy);
    cluster.proxy = proxy;
    cluster.origin = `http://127.0.0.1:${proxy.ready.port}`;
    if (o.compiled) progress("compiling the bot (tsc, as the production image runs it)");
    const compiledDir = o.compiled ? await compileForBench(workDir) : undefined;
    const ctx: BenchContext = { workDir, compiledDir, profileDir: undefined, slack, sim, loadgen, progress };

    const env: Record<string, string> = {
      REDIS_URL: o.redisUrl,
      EXPECTED_REPLICAS: String(o.replicas),
      SCHEDULER_INTERVAL_MS: String(o.schedulerIntervalMs),
      SCHEDULER_LEASE_MS: String(o.schedulerLeaseMs),
      WATCH_INTERVAL_MS: String(o.watchIntervalMs),
    };
    progress(`storing ${keys} workspace keys and the kill channel's 1-minute expiry in PostgreSQL`);
    const storeEnv = { DATABASE_URL: pgdb.url, ENCRYPTION_KEY, DATA_DIR: workDir };
    await seedKeys(storeEnv, keys);
    const config = loadConfig(storeEnv);
    store = await openStore({ clock: systemClock, config, logger: createLogger({ level: "silent" }) });
    if (only.has("kill"))
      for (let i = killFirst; i <= takeoverTeam; i++)
        await store.policies.setChannel(teamFor(i), "CKILL0001", { expiryMinutes: 1, updatedBy: "U0001" });

    const { out: _out, quiet: _quiet, redisUrl: _redis, ...recorded } = o;
    const results: ClusterResults = {
      meta: {
        date: new Date().toISOString(),
        node: process.version,
        cpus: cpus().length,
        loadavgStart: loadavg().map((v) => round(v)),
        loadavgEnd: [],
        seconds: 0,
        options: recorded,
        setup: SETUP,
      },
      verdicts: [],
    };
    // First, on replicas of its own (and one replica alone), stopped before the others start.
    if (only.has("scale"))
      results.scale = await scalePhase(
        {
          ctx,
          store,
          watchLimits: config.watches,
          proxy,
          proxyOrigin: cluster.origin,
          databaseUrl: pgdb.url,
          redisUrl: o.redisUrl,
          keys,
          first: scaleFirst,
        },
        {
          replicas: o.replicas,
          workspaces: o.scaleWorkspaces,
          commandRate: o.scaleCommandRate,
          approvalRate: o.scaleApprovalRate,
          watches: o.scaleWatches,
          watchIntervalMs: o.scaleWatchIntervalMs,
          seconds: o.scaleSeconds,
        },
      );
    if (rest.length > 0) {
      progress(`starting ${o.replicas} replicas`);
      cluster.replicas = await Promise.all(
        Array.from({ length: o.replicas }, (_, i) =>
          startBotProcess(ctx, {
            name: `replica-${i + 1}`,
            workspaces: keys,
            databaseUrl: pgdb.url,
            seedKeys: false,
            env,
          }),
        ),
      );
      await proxy.call(
        "backends",
        cluster.replicas.map((r) => r?.origin),
      );
      const run: ClusterRun = { ctx, store, config, options: o };
      if (only.has("acks")) results.acks = await ackPhase(ctx, cluster, o);
      if (only.has("cap")) results.cap = await capPhase(ctx, cluster, o, hotFirst);
      if (only.has("approvals")) results.approvals = await approvalPhase(ctx, cluster, o, burstFirst);
      if (only.has("one-list")) results.oneList = await oneListPhase(run, cluster, o, listTeam);
      if (only.has("takeover")) results.takeover = await takeoverPhase(run, cluster, o, takeoverTeam);
      if (only.has("exactly-once")) results.exactlyOnce = await oncePhase(run, cluster, o);
      if (only.has("kill")) results.kill = await killPhase(run, cluster, o, killFirst, pgdb.url);
    }
    results.meta.loadavgEnd = loadavg().map((v) => round(v));
    results.meta.seconds = Math.round((Date.now() - started) / 1000);
    results.verdicts = verdicts(results);
    if (o.out) {
      const previous = readResults(o.out);
      const cluster = mergedInto(previous.cluster as ClusterResults | undefined, results);
      writeFileSync(o.out, `${JSON.stringify({ ...previous, cluster }, null, 2)}\n`);
    }
    return results;
  } finally {
    await Promise.all(cluster.replicas.map((r) => r?.child.stop(5_000).catch(() => undefined)));
    await store?.close().catch(() => undefined);
    for (const c of children.reverse()) await c.stop(5_000).catch(() => undefined);
    await slack.close();
    await pgdb.drop().catch(() => undefined);
    // BENCH_KEEP_DIR=1 keeps the replicas' logs for a look afterwards.
    if (process.env.BENCH_KEEP_DIR) process.stderr.write(`cluster bench: logs kept in ${workDir}\n`);
    else rmSync(workDir, { recursive: true, force: true });
  }
}
