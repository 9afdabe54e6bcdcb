/**
 * The scale phase of the cluster bench (issue 40, item 3): everything at once for a fixed time, on the
 * cluster (N replicas behind the proxy) and then, in the same run, on one replica alone doing the same load.
 *
 *   - `/edge zones` and `/edge apps` in turn, open loop at `scaleCommandRate` over `scaleWorkspaces`
 *     workspaces (each its own key): ack, and the answer's overhead at response_url (bench/latency.ts);
 *   - Approve clicks, open loop at `scaleApprovalRate`, on pending requests made beforehand, one per
 *     workspace (each a different target), each card in its own channel: click ack, click → the card's
 *     "in effect" redraw, and exactly one PUT each;
 *   - `scaleWatches` zone watches, due spread over one WATCH_INTERVAL_MS (`scaleWatchIntervalMs`, by
 *     default the production 60 s, not the cluster's shortened one), so the pollers evaluate them at
 *     their steady rate throughout, their Edge reads sharing the keys' limits;
 *
 * and reads each replica's CPU (utime + stime from /proc/<pid>/stat) over the load's fixed duration and the
 * simulator's arrivals per key (1 s windows over the cap, calls a second).
 *
 * The one replica is its own process with EXPECTED_REPLICAS=1 on the same PostgreSQL and Redis, sent the
 * load directly (no proxy, as the ack phase's comparison), while no other replica runs: it carries every
 * command, click and watch evaluation itself. The cluster's replica 0 without the proxy would share the
 * watches and the background work with the other two, so it would not be doing the same load. It runs first, so any warming of PostgreSQL favours the cluster's run.
 */
import { readFileSync } from "node:fs";
import { loadavg } from "node:os";
import { ACTIONS } from "../src/slack/ids.js";
import type { Store } from "../src/store/index.js";
import { SIM_IDS } from "../tools/simulator/index.js";
import { type Cluster, createPending, overCap, proxyCounts, putsByWorkspace } from "./cluster.js";
import {
  answeredCount,
  keyFor,
  ratio,
  round,
  SIM_LATENCY_MS,
  type Summary,
  sleep,
  summarize,
  teamFor,
  until,
  ZONES_PAGE_CALL,
} from "./common.js";
import { type AckRun, ackRun, answerFigures, type E2eRun } from "./latency.js";
import type { LoadSample } from "./loadgen.js";
import {
  type BenchContext,
  type BotProcess,
  clickRequest,
  commandRequest,
  runLoad,
  startBotProcess,
} from "./processes.js";

export interface ScaleOptions {
  replicas: number;
  /** Workspaces, each its own key: the commands are spread over them, one pending request each. */
  workspaces: number;
  /** Slash commands a second (`/edge zones` and `/edge apps` in turn). */
  commandRate: number;
  /** Approve clicks a second (rate × seconds must not exceed the workspaces). */
  approvalRate: number;
  watches: number;
  /** The replicas' WATCH_INTERVAL_MS in this phase. */
  watchIntervalMs: number;
  /** Seconds of measured load. */
  seconds: number;
}

/** The cluster's setup the phase starts its own replicas in. */
export interface ScaleSetup {
  ctx: BenchContext;
  store: Store;
  /** The replicas' watch limits. */
  watchLimits: Parameters<Store["watches"]["createIfRoom"]>[1];
  proxy: Cluster["proxy"];
  proxyOrigin: string;
  databaseUrl: string;
  redisUrl: string;
  /** Keys seeded in all (the replicas' BENCH workspaces). */
  keys: number;
  /** The first of the phase's workspaces. */
  first: number;
}

export interface ReplicaCpu {
  replica: number;
  /** utime + stime over the load's duration. */
  cpuMs: number;
  /** cpuMs over the duration, as a percentage of one core. */
  percentOfCore: number;
  /** Commands and clicks this replica answered (the proxy's count; all of them for one replica). */
  requests: number;
  /** cpuMs per command or click answered (watch evaluations and background work included). */
  msPerRequest: number;
}

export interface ScaleRun {
  replicas: number;
  /** Where the load went: the proxy, or the one replica directly. */
  via: "proxy" | "direct";
  durationMs: number;
  commands: { sent: number; failed: number; ack: Summary; zones: E2eRun; apps: E2eRun };
  clicks: {
    /** Requests pending when the load began (the rest of the clicks find no request: a setup that fell behind). */
    pendingBefore: number;
    sent: number;
    /** Non-2xx or no answer. */
    failed: number;
    ack: Summary;
    /** Click sent → the card's "in effect" redraw. */
    applied: Summary;
    /** Cards never redrawn "in effect" within the wait. */
    notApplied: number;
    /** Requests whose key saw exactly one PUT / none / more than one. */
    exactlyOnce: number;
    none: number;
    twice: number;
  };
  edge: {
    keys: number;
    calls: number;
    /** 1 s windows (one starting at each arrival) over one key's cap, all keys (goal 0). */
    windowsOverCap: number;
    maxInAnySecond: number;
    /** Calls the simulator received in each whole second of the load: mean and most. */
    callsPerSec: { mean: number; max: number };
  };
  /** Watches evaluated (last polled) since the load began. */
  watches: { active: number; intervalMs: number; evaluatedSinceLoad: number };
  cpu: ReplicaCpu[];
  /** Every replica's CPU together per command or click (the cost of the load, whatever the replicas). */
  cpuMsPerRequestAll: number;
  loadavg: number[];
}

export interface ScaleFigure {
  figure: string;
  cluster: { p50: number; p99: number };
  oneReplica: { p50: number; p99: number };
  ratioP50: number;
  ratioP99: number;
}

export interface ScaleResult {
  date: string;
  options: ScaleOptions;
  cap: number;
  cluster: ScaleRun;
  oneReplica: ScaleRun;
  /** Each figure's p50 / p99 for the cluster and the one replica, and cluster ÷ one replica. */
  figures: ScaleFigure[];
}

/** The per-key cap (EDGE_API_RATE_PER_SEC's default, as the cap phase). */
const CAP = 10;
/** /proc/<pid>/stat counts CPU time in USER_HZ ticks, 100 a second on Linux whatever the kernel's HZ. */
const USER_HZ = 100;

/** utime + stime of a process in ms (NaN where /proc is missing). */
function processCpuMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Fields after the command name (which may hold spaces): state is field 3, utime 14, stime 15.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / USER_HZ;
  } catch {
    return Number.NaN;
  }
}

/** Every shield zone of the simulator but the one its seed has under attack (a watch on it would alert). */
const QUIET_ZONES = Array.from(
  { length: SIM_IDS.shieldZoneCount },
  (_, i) => SIM_IDS.firstShieldZone + i,
).filter((z) => z !== SIM_IDS.zoneUnderAttack);

const quantiles = (s: Summary) => ({ p50: s.p50, p99: s.p99 });

async function startReplicas(setup: ScaleSetup, o: ScaleOptions, n: number): Promise<BotProcess[]> {
  const env = {
    REDIS_URL: setup.redisUrl,
    EXPECTED_REPLICAS: String(n),
    WATCH_INTERVAL_MS: String(o.watchIntervalMs),
  };
  return Promise.all(
    Array.from({ length: n }, (_, i) =>
      startBotProcess(setup.ctx, {
        name: `scale-${n}-${i + 1}`,
        workspaces: setup.keys,
        databaseUrl: setup.databaseUrl,
        seedKeys: false,
        env,
      }),
    ),
  );
}

/** The watches of one run, due spread over one interval from now; returns their ids. */
async function createWatches(setup: ScaleSetup, o: ScaleOptions, tag: string): Promise<string[]> {
  const start = Date.now();
  const ids: string[] = [];
  for (let i = 0; i < o.watches; i += 50) {
    const batch = Array.from({ length: Math.min(50, o.watches - i) }, (_, j) => i + j);
    ids.push(
      ...(await Promise.all(
        batch.map(async (k) => {
          const r = await setup.store.watches.createIfRoom(
            {
              teamId: teamFor(setup.first + (k % o.workspaces)),
              channelId: `CSW${tag}${String(k).padStart(5, "0")}`,
              createdBy: "U0001",
              kind: "zone",
              target: String(QUIET_ZONES[k % QUIET_ZONES.length]),
              options: { sensitivity: "normal" },
              nextPollAt: start + Math.floor((k / o.watches) * o.watchIntervalMs),
            },
            setup.watchLimits,
          );
          if (r.kind !== "created") throw new Error(`scale: watch ${k} not created: ${r.kind}`);
          return r.item.id;
        }),
      )),
    );
  }
  return ids;
}

async function removeWatches(setup: ScaleSetup, ids: string[]): Promise<void> {
  for (const id of ids) {
    const w = await setup.store.watches.get(id);
    if (w) await setup.store.watches.remove(w.teamId, id);
  }
}

/** One run of the load against `origin`, served by `replicas`. */
async function scaleRun(
  setup: ScaleSetup,
  o: ScaleOptions,
  replicas: BotProcess[],
  origin: string,
  tag: string,
): Promise<ScaleRun> {
  const { ctx, first } = setup;
  const viaProxy = origin === setup.proxyOrigin;
  const approvals = o.approvalRate * o.seconds;
  const commands = Math.round(o.commandRate * o.seconds);
  const label = `scale (${replicas.length} ${replicas.length === 1 ? "replica" : "replicas"})`;
  ctx.progress(`${label}: ${o.watches} zone watches, ${approvals} pending requests`);
  const watchIds = await createWatches(setup, o, tag);
  const channel = (i: number) => `CSA${tag}${String(i).padStart(5, "0")}`;
  const ids = await createPending(ctx, origin, `scale${tag}`, first, approvals, channel);
  // Every replica loads each workspace's zone names once (a minute's cache, per replica), as in a steady
  // state; sent to each replica directly, so none is left cold whatever the proxy's turn.
  ctx.progress(`${label}: warming up, /edge zones from every workspace on every replica`);
  ctx.slack.clear();
  for (const [k, r] of replicas.entries()) {
    const warm = Array.from({ length: o.workspaces }, (_, i) =>
      commandRequest(ctx, `sw${tag}-${k}-${i}`, first + i, "zones"),
    );
    await runLoad(ctx, { origin: r.origin, requests: warm, rate: o.commandRate });
  }
  const warmed = o.workspaces * replicas.length;
  await until(
    () => answeredCount(ctx.slack.responses, `sw${tag}-`) >= warmed,
    60_000,
    "the warm-up's answers",
  ).catch(() =>
    ctx.progress(`  only ${answeredCount(ctx.slack.responses, `sw${tag}-`)} of ${warmed} warm-up answers`),
  );
  await sleep(1_300);

  ctx.progress(
    `${label}: ${o.commandRate} commands/s, ${o.approvalRate} approvals/s, ${o.watches} watches for ${o.seconds} s`,
  );
  ctx.slack.clear();
  await ctx.sim.call("clear");
  if (viaProxy) await setup.proxy.call("resetStats");
  const teamOfCommand = (i: number) => first + (i % o.workspaces);
  // zones and apps in turn, and each workspace's commands alternate between the two.
  const textOf = (i: number) => ((i + Math.floor(i / o.workspaces)) % 2 === 0 ? "zones" : "apps");
  const commandRequests = Array.from({ length: commands }, (_, i) =>
    commandRequest(ctx, `sc${tag}-${textOf(i)}-${i}`, teamOfCommand(i), textOf(i)),
  );
  const clicks = ids.map((r, i) =>
    clickRequest(ctx, `sa${tag}-${i}`, first + i, "U0003", ACTIONS.approve, r, channel(i)),
  );
  const pendingBefore = (await Promise.all(ids.map((id) => setup.store.changeRequests.get(id)))).filter(
    (r) => r?.state === "pending",
  ).length;
  const cpuNow = () => replicas.map((r) => processCpuMs(r.child.pid));
  const cpuBefore = cpuNow();
  const t0 = Date.now();
  // CPU over the load's fixed duration; the answers still on their way after it are the next window's work.
  const cpuAfterLoad = sleep(o.seconds * 1000).then(() => ({ cpu: cpuNow(), at: Date.now() }));
  const [commandSamples, clickSamples] = await Promise.all([
    runLoad(ctx, { origin, requests: commandRequests, rate: o.commandRate }),
    runLoad(ctx, { origin, requests: clicks, rate: o.approvalRate }),
  ]);
  const { cpu: cpuAfter, at: t1 } = await cpuAfterLoad;
  const durationMs = t1 - t0;
  const perReplica = viaProxy ? await proxyCounts(setup.proxy) : [commands + approvals];

  // Each card's first "in effect" redraw, read incrementally (the cards are many).
  const appliedAt = new Map<string, number>();
  let scanned = 0;
  const scan = () => {
    const updates = ctx.slack.callsTo("chat.update");
    for (; scanned < updates.length; scanned++) {
      const u = updates[scanned];
      const ch = String(u?.args.channel ?? "");
      if (u && !appliedAt.has(ch) && JSON.stringify(u.args).includes("is in effect."))
        appliedAt.set(ch, u.at);
    }
    return appliedAt.size;
  };
  const answered = new Set<string>();
  let read = 0;
  const countAnswers = () => {
    for (; read < ctx.slack.responses.length; read++) {
      const id = ctx.slack.responses[read]?.id ?? "";
      if (id.startsWith(`sc${tag}-`)) answered.add(id);
    }
    return answered.size;
  };
  await until(
    () => countAnswers() >= commands && scan() >= approvals,
    60_000,
    "every answer and every card in effect",
  ).catch(() => ctx.progress("  not every answer arrived or card was redrawn in effect"));
  scan();
  await sleep(1_000); // a late second PUT would show up here
  const puts = await putsByWorkspace(ctx);
  const perRequest = ids.map((_, i) => puts.get(keyFor(first + i)) ?? 0);
  const byKey = await ctx.sim.call<Record<string, number[]>>("arrivalsByKey", {});
  const arrivals = Object.values(byKey);
  const perSecond: number[] = Array.from({ length: o.seconds }, () => 0);
  for (const a of arrivals)
    for (const at of a) {
      const s = Math.floor((at - t0) / 1000);
      if (s >= 0 && s < o.seconds) perSecond[s] = (perSecond[s] ?? 0) + 1;
    }
  const evaluated = (await Promise.all(watchIds.map((id) => setup.store.watches.get(id)))).filter(
    (w) => (w?.lastPolledAt ?? 0) >= t0,
  ).length;

  const keyOf = (s: LoadSample) => keyFor(teamOfCommand(Number(s.id.slice(s.id.lastIndexOf("-") + 1))));
  const ofKind = (text: string) => commandSamples.filter((s) => s.id.startsWith(`sc${tag}-${text}-`));
  const zones = ofKind("zones");
  const apps = ofKind("apps");
  const e2e = async (
    samples: LoadSample[],
    text: string,
    awaited: typeof ZONES_PAGE_CALL,
  ): Promise<E2eRun> => ({
    ...ackRun(o.commandRate, samples),
    command: `/edge ${text}`,
    ...(await answerFigures(ctx, samples, { edgeCalls: 1, awaited, floorP50: SIM_LATENCY_MS, keyOf })),
  });
  const all: AckRun = ackRun(o.commandRate, commandSamples);
  const clickAck = ackRun(o.approvalRate, clickSamples);
  const applied: number[] = [];
  clickSamples.forEach((s, i) => {
    const at = appliedAt.get(channel(i));
    if (at !== undefined) applied.push(at + 0.5 - s.sentAt);
  });
  const cpu = replicas.map((_, i): ReplicaCpu => {
    const cpuMs = round((cpuAfter[i] ?? Number.NaN) - (cpuBefore[i] ?? Number.NaN), 0);
    const requests = perReplica[i] ?? 0;
    return {
      replica: i + 1,
      cpuMs,
      percentOfCore: round((cpuMs / durationMs) * 100, 1),
      requests,
      msPerRequest: requests > 0 ? round(cpuMs / requests, 2) : Number.NaN,
    };
  });
  const run: ScaleRun = {
    replicas: replicas.length,
    via: viaProxy ? "proxy" : "direct",
    durationMs,
    commands: {
      sent: all.sent,
      failed: all.failed,
      ack: all.ack,
      zones: await e2e(zones, "zones", ZONES_PAGE_CALL),
      apps: await e2e(apps, "apps", { pathIncludes: "/mc/apps" }),
    },
    clicks: {
      pendingBefore,
      sent: clickAck.sent,
      failed: clickAck.failed,
      ack: clickAck.ack,
      applied: summarize(applied),
      notApplied: approvals - applied.length,
      exactlyOnce: perRequest.filter((c) => c === 1).length,
      none: perRequest.filter((c) => c === 0).length,
      twice: perRequest.filter((c) => c > 1).length,
    },
    edge: {
      keys: arrivals.length,
      calls: arrivals.reduce((s, a) => s + a.length, 0),
      ...overCap(arrivals, CAP),
      callsPerSec: {
        mean: round(perSecond.reduce((s, c) => s + c, 0) / Math.max(1, perSecond.length), 1),
        max: Math.max(0, ...perSecond),
      },
    },
    watches: { active: o.watches, intervalMs: o.watchIntervalMs, evaluatedSinceLoad: evaluated },
    cpu,
    cpuMsPerRequestAll: round(cpu.reduce((n, c) => n + c.cpuMs, 0) / (commands + approvals), 2),
    loadavg: loadavg().map((v) => round(v)),
  };
  ctx.progress(
    `  command ack p99 ${run.commands.ack.p99} ms, click ack p99 ${run.clicks.ack.p99} ms, click → applied p99 ${run.clicks.applied.p99} ms; ${run.edge.windowsOverCap} windows over the cap; CPU ${run.cpu.map((c) => `${c.percentOfCore} %`).join("/")}`,
  );
  await removeWatches(setup, watchIds);
  ctx.slack.clear();
  return run;
}

export async function scalePhase(setup: ScaleSetup, o: ScaleOptions): Promise<ScaleResult> {
  if (o.approvalRate * o.seconds > o.workspaces)
    throw new Error(
      `bench scale: ${o.approvalRate}/s for ${o.seconds} s is more approvals than workspaces (${o.workspaces}); each must be a different target`,
    );
  const date = new Date().toISOString();
  const run = async (n: number, tag: string, viaProxy: boolean) => {
    setup.ctx.progress(`scale: starting ${n} ${n === 1 ? "replica" : "replicas"} (EXPECTED_REPLICAS=${n})`);
    const replicas = await startReplicas(setup, o, n);
    try {
      if (viaProxy)
        await setup.proxy.call(
          "backends",
          replicas.map((r) => r.origin),
        );
      return await scaleRun(
        setup,
        o,
        replicas,
        viaProxy ? setup.proxyOrigin : (replicas[0] as BotProcess).origin,
        tag,
      );
    } finally {
      await Promise.all(replicas.map((r) => r.child.stop(5_000).catch(() => undefined)));
    }
  };
  const oneReplica = await run(1, "1", false);
  const cluster = await run(o.replicas, "N", true);
  const figure = (name: string, pick: (r: ScaleRun) => Summary): ScaleFigure => {
    const c = pick(cluster);
    const one = pick(oneReplica);
    return {
      figure: name,
      cluster: quantiles(c),
      oneReplica: quantiles(one),
      ratioP50: ratio(c.p50, one.p50),
      ratioP99: ratio(c.p99, one.p99),
    };
  };
  return {
    date,
    options: o,
    cap: CAP,
    cluster,
    oneReplica,
    figures: [
      figure("command ack", (r) => r.commands.ack),
      figure("/edge zones overhead", (r) => r.commands.zones.overheadVsEdgeHeld),
      figure("/edge apps overhead", (r) => r.commands.apps.overheadVsEdgeHeld),
      figure("click ack", (r) => r.clicks.ack),
      figure("click → applied", (r) => r.clicks.applied),
    ],
  };
}

// ---- verdicts and table -----------------------------------------------------------------------------

export function scaleVerdicts(s: ScaleResult): { target: string; met: boolean; detail: string }[] {
  const runs = [
    ["cluster", s.cluster],
    ["one replica", s.oneReplica],
  ] as const;
  const c = s.cluster;
  return [
    {
      target: `scale: shared Edge rate, 1 s windows over the cap of ${s.cap} (goal 0)`,
      met: runs.every(([, r]) => r.edge.windowsOverCap === 0),
      detail: runs
        .map(
          ([n, r]) =>
            `${n} ${r.edge.windowsOverCap} over, max ${r.edge.maxInAnySecond} in any 1 s over ${r.edge.keys} keys`,
        )
        .join("; "),
    },
    {
      target: "scale: exactly one PUT per approval",
      met: runs.every(([, r]) => r.clicks.exactlyOnce === r.clicks.sent),
      detail: runs
        .map(
          ([n, r]) =>
            `${n} ${r.clicks.exactlyOnce}/${r.clicks.sent} once, ${r.clicks.none} none, ${r.clicks.twice} twice`,
        )
        .join("; "),
    },
    {
      target: "scale: every answer arrived (commands answered, cards in effect, no failed request)",
      met: runs.every(
        ([, r]) =>
          r.commands.failed === 0 &&
          r.commands.zones.missing === 0 &&
          r.commands.apps.missing === 0 &&
          r.clicks.failed === 0 &&
          r.clicks.notApplied === 0,
      ),
      detail: runs
        .map(
          ([n, r]) =>
            `${n}: ${r.commands.failed} commands failed, ${r.commands.zones.missing + r.commands.apps.missing} unanswered, ${r.clicks.failed} clicks failed, ${r.clicks.notApplied} cards not in effect`,
        )
        .join("; "),
    },
    {
      target: `scale: click ack p99 through the proxy < 3 s (${s.options.approvalRate} approvals/s beside ${s.options.commandRate} commands/s)`,
      met: c.clicks.ack.p99 < 3_000,
      detail: `${c.clicks.ack.p99} ms (one replica ${s.oneReplica.clicks.ack.p99} ms)`,
    },
  ];
}

export function formatScale(s: ScaleResult): string[] {
  const o = s.options;
  const L = [
    `Scale: ${o.workspaces} workspaces, ${o.commandRate} commands/s (zones and apps), ${o.approvalRate} approvals/s, ${o.watches} zone watches (every ${o.watchIntervalMs / 1000} s) for ${o.seconds} s`,
    "  figure, ms (p50 / p99)       cluster (proxy)      one replica       ratio p50 / p99",
  ];
  for (const f of s.figures)
    L.push(
      `  ${f.figure.padEnd(26)} ${`${f.cluster.p50} / ${f.cluster.p99}`.padStart(18)} ${`${f.oneReplica.p50} / ${f.oneReplica.p99}`.padStart(18)}   ${f.ratioP50}× / ${f.ratioP99}×`,
    );
  for (const [name, r] of [
    ["cluster", s.cluster],
    ["one replica", s.oneReplica],
  ] as const) {
    L.push(
      `  ${name}: CPU ${r.cpu.map((c) => `r${c.replica} ${c.percentOfCore} % (${c.cpuMs} ms, ${c.requests} requests, ${c.msPerRequest} ms each)`).join(", ")}; all replicas ${r.cpuMsPerRequestAll} ms a request; load ${r.loadavg.join(" ")}`,
      `    Edge: ${r.edge.calls} calls from ${r.edge.keys} keys, ${r.edge.callsPerSec.mean}/s (most ${r.edge.callsPerSec.max} in a second), ${r.edge.windowsOverCap} windows over the cap, max ${r.edge.maxInAnySecond} of one key in 1 s; ${r.watches.evaluatedSinceLoad} of ${r.watches.active} watches evaluated since the load began`,
      `    failures: ${r.commands.failed} commands, ${r.commands.zones.missing + r.commands.apps.missing} unanswered, ${r.clicks.failed} clicks, ${r.clicks.notApplied} cards not in effect (${r.clicks.pendingBefore} of ${r.clicks.sent} requests pending when the load began); PUTs ${r.clicks.exactlyOnce} once, ${r.clicks.none} none, ${r.clicks.twice} twice`,
    );
  }
  return L;
}
