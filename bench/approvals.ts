/**
 * (6) Approval throughput: N pending requests (one per workspace, each workspace its own key, so
 * the 10/s per-key cap is not what is measured), then N concurrent Approve clicks (one per request, by
 * an owner) → exactly N PUTs at the simulator, and how long until the last card said "in effect".
 * Baseline: one approval alone, on the same bot, just before.
 */
import { ACTIONS } from "../src/slack/ids.js";
import { ratio, round, type Summary, sleep, spawnChild, summarize, until } from "./common.js";
import { type BenchContext, clickRequest, createPgDatabase, runLoad, startBotProcess } from "./processes.js";

export interface ApprovalThroughput {
  engine: "sqlite" | "postgres";
  requests: number;
  clicks: number;
  /** PUTs the simulator received, counted 1 s after the last card update (target: exactly `requests`). */
  puts: number;
  /** Cards redrawn saying the change is in effect (target: exactly `requests`). */
  cardsUpdated: number;
  /** First click sent → last "in effect" card update at the fake Slack. */
  durationMs: number;
  /** First click sent → last PUT received by the simulator. */
  lastPutMs: number;
  approvalsPerSec: number;
  /** The same, one approval alone (baseline). */
  singleMs: number;
  ratioToSingle: number;
  /**
   * CPU time of the bot per approval over the burst (first click sent → last card and PUT seen):
   * its main thread (the event loop) and the whole process (with GC helper and libuv pool threads).
   */
  cpuPerApprovalMs: { mainThread: number; process: number };
  /** The bare Bolt app's CPU per click of the same burst (it only acks): the floor under the figure above. */
  bareCpuPerClickMs: { mainThreadMs: number; processMs: number };
  /**
   * The same-I/O floor: the same burst at a bare Bolt app that, per click, acks, reads the target, PUTs it,
   * reads it back, runs one store transaction on the same engine and updates one Slack message
   * (bench/bare-bolt.ts with BARE_APPROVALS), measured as the bot's (first click → last PUT and update).
   */
  sameIoFloor: {
    cpuPerApprovalMs: { mainThread: number; process: number };
    puts: number;
    updates: number;
    durationMs: number;
  };
  /** The bot's main-thread CPU per approval ÷ the same-I/O floor's (goal ≤ 2.0). */
  cpuRatioToSameIoFloor: number;
  /** Acks of the burst of clicks (Slack's 3-second limit). */
  ack: Summary;
  /** The same burst of clicks at a bare Bolt app that only acks (the floor on this machine, this run). */
  bareAck: Summary;
  failedAcks: number;
}

const requestId = (engine: string, i: number) => `bench-${engine}-${String(i).padStart(6, "0")}`;

export async function approvalsScenario(
  ctx: BenchContext,
  engine: "sqlite" | "postgres",
  n: number,
): Promise<ApprovalThroughput | { engine: "postgres"; skipped: string }> {
  const pgdb = engine === "postgres" ? await createPgDatabase() : undefined;
  if (engine === "postgres" && !pgdb)
    return { engine, skipped: "PostgreSQL unreachable (TEST_DATABASE_URL)" };
  const bot = await startBotProcess(ctx, {
    name: `approvals-${engine}`,
    workspaces: n + 1,
    ...(pgdb ? { databaseUrl: pgdb.url } : {}),
  });
  const zone = ctx.sim.ready.zone;
  const puts = () =>
    ctx.sim.call<number>("count", { method: "PUT", pathIncludes: "/bot-categorization/categories/" });
  const updates = () => ctx.slack.callsTo("chat.update");
  // A card is redrawn at each move (approved, then applied once read back): the last says "is in effect".
  const inEffect = () => updates().filter((c) => JSON.stringify(c.args).includes("is in effect."));
  try {
    // n + 1 pending requests (the extra one is the baseline's): Allow AI scraper, currently Block.
    await ctx.sim.call("setCategory", { zone, category: 2, action: 1 });
    ctx.slack.clear();
    ctx.progress(`approvals (${engine}): creating ${n + 1} pending requests`);
    const creates = Array.from({ length: n + 1 }, (_, i) =>
      clickRequest(
        ctx,
        `ac-${engine}-${i}`,
        i,
        "U0002",
        ACTIONS.botAllow,
        JSON.stringify({ r: requestId(engine, i), z: zone, c: 2, a: 2 }),
      ),
    );
    await runLoad(ctx, { origin: bot.origin, requests: creates, rate: 100 });
    await until(() => ctx.slack.callsTo("chat.postMessage").length >= n + 1, 60_000, "approval cards");
    // Every workspace made 3 Edge calls creating its request: far from its 10/s cap, no need to wait.
    await sleep(300);

    // Baseline: one approval alone.
    ctx.slack.clear();
    await ctx.sim.call("clear");
    const [single] = await runLoad(ctx, {
      origin: bot.origin,
      requests: [clickRequest(ctx, `as-${engine}`, n, "U0003", ACTIONS.approve, requestId(engine, n))],
      rate: 0,
    });
    await until(
      async () => inEffect().length >= 1 && (await puts()) >= 1,
      // Generous: a loaded machine (or a profiled bot) takes seconds where a quiet one takes 0.2 s.
      60_000,
      "the baseline approval's PUT and its card in effect",
    );
    const singleMs = (inEffect()[0]?.at ?? 0) + 0.5 - (single?.sentAt ?? 0);
    await sleep(300);

    // The burst: n concurrent Approve clicks, one per request.
    ctx.slack.clear();
    await ctx.sim.call("clear");
    ctx.progress(`approvals (${engine}): ${n} concurrent Approve clicks`);
    const clicks = Array.from({ length: n }, (_, i) =>
      clickRequest(ctx, `aa-${engine}-${i}`, i, "U0003", ACTIONS.approve, requestId(engine, i)),
    );
    const cpu = () => bot.child.call<{ mainThreadMs: number; processMs: number }>("cpu");
    const cpuBefore = await cpu();
    const samples = await runLoad(ctx, { origin: bot.origin, requests: clicks, rate: 0 });
    await until(
      async () => inEffect().length >= n && (await puts()) >= n,
      120_000,
      `${n} PUTs and cards in effect`,
    ).catch(() => undefined);
    const cpuAfter = await cpu();
    const t0 = Math.min(...samples.map((s) => s.sentAt));
    const lastUpdate = Math.max(...inEffect().map((c) => c.at));
    const arrivals = await ctx.sim.call<number[]>("arrivals", {
      method: "PUT",
      pathIncludes: "/bot-categorization/categories/",
    });
    await sleep(1_000); // a late duplicate PUT would show up here
    const putCount = await puts();
    // The floor: the same burst at a bare Bolt app, once the bot is idle.
    const bare = await spawnChild<{ port: number }>("bare-bolt.ts", {
      env: { SLACK_API_URL: ctx.slack.apiUrl },
      compiledDir: ctx.compiledDir,
    });
    let bareSamples: Awaited<ReturnType<typeof runLoad>>;
    let bareCpu: { mainThreadMs: number; processMs: number };
    try {
      const bareCpuBefore = await bare.call<{ mainThreadMs: number; processMs: number }>("cpu");
      bareSamples = await runLoad(ctx, {
        origin: `http://127.0.0.1:${bare.ready.port}`,
        requests: clicks,
        rate: 0,
      });
      const bareCpuAfter = await bare.call<{ mainThreadMs: number; processMs: number }>("cpu");
      bareCpu = {
        mainThreadMs: round((bareCpuAfter.mainThreadMs - bareCpuBefore.mainThreadMs) / n, 2),
        processMs: round((bareCpuAfter.processMs - bareCpuBefore.processMs) / n, 2),
      };
    } finally {
      await bare.stop();
    }
    const cardsUpdated = inEffect().length;
    const sameIoFloor = await sameIoApprovals(ctx, engine, clicks, pgdb?.url);
    const ok = samples.filter((s) => s.status === 200);
    const mainThread = round((cpuAfter.mainThreadMs - cpuBefore.mainThreadMs) / n, 2);
    const durationMs = lastUpdate + 0.5 - t0;
    return {
      engine,
      requests: n,
      clicks: samples.length,
      puts: putCount,
      cardsUpdated,
      durationMs: round(durationMs, 1),
      lastPutMs: round(Math.max(...arrivals) + 0.5 - t0, 1),
      approvalsPerSec: round((n / durationMs) * 1000, 1),
      singleMs: round(singleMs, 1),
      ratioToSingle: ratio(durationMs, singleMs),
      cpuPerApprovalMs: {
        mainThread,
        process: round((cpuAfter.processMs - cpuBefore.processMs) / n, 2),
      },
      bareCpuPerClickMs: bareCpu,
      sameIoFloor,
      cpuRatioToSameIoFloor: ratio(mainThread, sameIoFloor.cpuPerApprovalMs.mainThread),
      ack: summarize(ok.map((s) => s.ackMs)),
      bareAck: summarize(bareSamples.filter((s) => s.status === 200).map((s) => s.ackMs)),
      failedAcks: samples.length - ok.length,
    };
  } finally {
    await bot.child.stop();
    await pgdb?.drop().catch(() => undefined);
  }
}

/** The burst of Approve clicks at a bare Bolt app doing the I/O of a verified approval (see sameIoFloor). */
async function sameIoApprovals(
  ctx: BenchContext,
  engine: "sqlite" | "postgres",
  clicks: Parameters<typeof runLoad>[1]["requests"],
  databaseUrl: string | undefined,
): Promise<ApprovalThroughput["sameIoFloor"]> {
  const n = clicks.length;
  const puts = () =>
    ctx.sim.call<number>("count", { method: "PUT", pathIncludes: "/bot-categorization/categories/" });
  const bare = await spawnChild<{ port: number }>("bare-bolt.ts", {
    env: {
      SLACK_API_URL: ctx.slack.apiUrl,
      EDGE_API_URL: ctx.sim.ready.url,
      BARE_APPROVALS: engine,
      BARE_APPROVAL_ZONE: String(ctx.sim.ready.zone),
      ...(databaseUrl ? { BARE_DATABASE_URL: databaseUrl } : {}),
    },
    compiledDir: ctx.compiledDir,
  });
  try {
    ctx.progress(`approvals (${engine}): the same burst at a bare Bolt app doing a verified approval's I/O`);
    ctx.slack.clear();
    await ctx.sim.call("clear");
    const cpu = () => bare.call<{ mainThreadMs: number; processMs: number }>("cpu");
    const before = await cpu();
    const samples = await runLoad(ctx, {
      origin: `http://127.0.0.1:${bare.ready.port}`,
      requests: clicks,
      rate: 0,
    });
    await until(
      async () => ctx.slack.callsTo("chat.update").length >= n && (await puts()) >= n,
      120_000,
      `the bare app's ${n} PUTs and updates`,
    ).catch(() => undefined);
    const after = await cpu();
    const t0 = Math.min(...samples.map((s) => s.sentAt));
    const lastUpdate = Math.max(...ctx.slack.callsTo("chat.update").map((c) => c.at));
    return {
      cpuPerApprovalMs: {
        mainThread: round((after.mainThreadMs - before.mainThreadMs) / n, 2),
        process: round((after.processMs - before.processMs) / n, 2),
      },
      puts: await puts(),
      updates: ctx.slack.callsTo("chat.update").length,
      durationMs: round(lastUpdate + 0.5 - t0, 1),
    };
  } finally {
    await bare.stop();
    ctx.slack.clear();
  }
}
