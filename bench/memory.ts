/**
 * (5) Memory: resident size of the bot process after N workspaces (each its own team id and stored
 * key, so N per-key queues) have each issued `/edge zones` and their queues have gone idle, then after
 * P pending approvals (signed Allow clicks, end to end: 3 Edge calls and an approval card each), then a
 * second round of the same. GC is forced (--expose-gc) before each reading, and V8 given 0.5 s to
 * unmap what it freed.
 */
import { ACTIONS } from "../src/slack/ids.js";
import { ratio, round, sleep, until } from "./common.js";
import { type BenchContext, clickRequest, commandRequest, runLoad, startBotProcess } from "./processes.js";

export interface MemoryReading {
  rssMiB: number;
  heapUsedMiB: number;
  /** V8 heap committed (used + free pages V8 keeps); RSS minus this is native memory. */
  heapTotalMiB: number;
  externalMiB: number;
  /** Of external: ArrayBuffers (Buffers, sockets' read buffers). */
  arrayBuffersMiB: number;
  gcForced: boolean;
  /** Highest RSS since the bot started (VmHWM): the peak under load, which no reading above catches. */
  peakRssMiB: number;
}

export interface MemoryRound {
  /** Read as soon as the queues are idle (GC forced). */
  afterCommands: MemoryReading;
  afterApprovals: MemoryReading;
  /** Read again after `settleMs` with nothing to do: V8 hands back the pages it grew into under load. */
  afterCommandsSettled: MemoryReading;
  afterApprovalsSettled: MemoryReading;
  commandsAnswered: number;
  approvalCardsPosted: number;
  /** Seconds the round's commands took to send and answer. */
  commandSeconds: number;
}

export interface MemoryResult {
  workspaces: number;
  pendingApprovalsPerRound: number;
  commandRate: number;
  /** After start and a small warm-up, before any load. */
  baseline: MemoryReading;
  rounds: MemoryRound[];
  /** Idle time before the settled readings. */
  settleMs: number;
  /** Peak RSS reading (immediate) over baseline. */
  ratioPeakToBaseline: number;
  /** Peak settled RSS reading. */
  peakSettledMiB: number;
  /** Settled RSS after round 2's approvals minus after round 1's (target: ~0). */
  secondRoundGrowthMiB: number;
}

interface RawMemory {
  rssMiB: number;
  heapUsedMiB: number;
  heapTotalMiB: number;
  externalMiB: number;
  arrayBuffersMiB: number;
  gcForced: boolean;
  peakRssMiB: number;
}

const reading = (m: RawMemory): MemoryReading => ({
  rssMiB: round(m.rssMiB, 1),
  heapUsedMiB: round(m.heapUsedMiB, 1),
  heapTotalMiB: round(m.heapTotalMiB, 1),
  externalMiB: round(m.externalMiB, 1),
  arrayBuffersMiB: round(m.arrayBuffersMiB, 1),
  gcForced: m.gcForced,
  peakRssMiB: round(m.peakRssMiB, 1),
});

/** RSS with its parts, for the progress lines. */
const parts = (r: MemoryReading): string =>
  `RSS ${r.rssMiB} MiB (heap ${r.heapUsedMiB}/${r.heapTotalMiB}, external ${r.externalMiB}, arrayBuffers ${r.arrayBuffersMiB})`;

/** AI scrapers, then search engines: bot categories the simulator's zones have. */
const ROUND_CATEGORIES = [2, 1] as const;

export async function memoryScenario(
  ctx: BenchContext,
  o: { workspaces: number; pending: number; rate: number; rounds?: number; settleMs?: number },
): Promise<MemoryResult> {
  const bot = await startBotProcess(ctx, { name: "memory", workspaces: o.workspaces, exposeGc: true });
  const zone = ctx.sim.ready.zone;
  const queuesIdle = async () => {
    await sleep(1_300);
    await until(
      async () => {
        const q = await bot.child.call<{ keys: number; waiting: number; inFlight: number }>("queues");
        return q.keys === 0 && q.waiting === 0 && q.inFlight === 0;
      },
      // Generous: on a shared, loaded machine the bot may still be working through the round.
      180_000,
      "the bot's Edge queues to go idle",
    );
  };
  const memory = async () => reading(await bot.child.call<RawMemory>("memory"));
  const settleMs = o.settleMs ?? 30_000;
  const settled = async () => {
    await sleep(settleMs);
    return memory();
  };
  try {
    // Warm-up (code paths JIT-compiled and loaded), then the baseline.
    await runLoad(ctx, {
      origin: bot.origin,
      requests: Array.from({ length: 50 }, (_, i) => commandRequest(ctx, `mw-${i}`, i, "zones")),
      rate: 50,
    });
    await until(() => ctx.slack.responses.length >= 50, 10_000, "warm-up answers").catch(() => undefined);
    ctx.slack.clear();
    await queuesIdle();
    const baseline = await memory();
    ctx.progress(`memory: baseline ${parts(baseline)}`);

    const rounds: MemoryRound[] = [];
    for (let n = 1; n <= (o.rounds ?? 2); n++) {
      ctx.slack.clear();
      await ctx.sim.call("clear");
      ctx.progress(`memory: round ${n}: ${o.workspaces} workspaces × /edge zones at ${o.rate}/s`);
      const t0 = Date.now();
      const commands = Array.from({ length: o.workspaces }, (_, i) =>
        commandRequest(ctx, `m${n}-${i}`, i, "zones"),
      );
      await runLoad(ctx, { origin: bot.origin, requests: commands, rate: o.rate });
      // An answer may come twice (the page, then the page with its checks): commands answered are counted.
      const answered = () => new Set(ctx.slack.responses.map((r) => r.id)).size;
      await until(() => answered() >= o.workspaces, 180_000, "every command's answer").catch(() => undefined);
      const commandsAnswered = answered();
      const commandSeconds = round((Date.now() - t0) / 1000, 1);
      ctx.slack.clear();
      await queuesIdle();
      const afterCommands = await memory();
      const afterCommandsSettled = await settled();
      ctx.progress(
        `  after commands: ${parts(afterCommands)}; after ${settleMs / 1000} s idle ${parts(afterCommandsSettled)} (${commandsAnswered} answered in ${commandSeconds} s)`,
      );

      // Pending approvals: Allow a bot category (currently Block) on the zone, one request per workspace. Each
      // round asks about its own category: the same one again would only point at round 1's pending
      // requests (nothing asked twice), and post no card.
      const category = ROUND_CATEGORIES[(n - 1) % ROUND_CATEGORIES.length]!;
      await ctx.sim.call("setCategory", { zone, category, action: 1 });
      const clicks = Array.from({ length: o.pending }, (_, i) =>
        clickRequest(
          ctx,
          `ma${n}-${i}`,
          i % o.workspaces,
          "U0002",
          ACTIONS.botAllow,
          JSON.stringify({ r: `bench-mem-${n}-${String(i).padStart(6, "0")}`, z: zone, c: category, a: 2 }),
        ),
      );
      await runLoad(ctx, { origin: bot.origin, requests: clicks, rate: Math.min(o.rate, 100) });
      await until(
        () =>
          ctx.slack.callsTo("chat.postMessage").length >= o.pending &&
          ctx.slack.responses.length >= o.pending,
        60_000,
        "every approval card",
      ).catch(() => undefined);
      const approvalCardsPosted = ctx.slack.callsTo("chat.postMessage").length;
      ctx.slack.clear();
      await queuesIdle();
      const afterApprovals = await memory();
      const afterApprovalsSettled = await settled();
      ctx.progress(
        `  after ${approvalCardsPosted} pending approvals: ${parts(afterApprovals)}; after ${settleMs / 1000} s idle ${parts(afterApprovalsSettled)}`,
      );
      rounds.push({
        afterCommands,
        afterApprovals,
        afterCommandsSettled,
        afterApprovalsSettled,
        commandsAnswered,
        approvalCardsPosted,
        commandSeconds,
      });
    }
    const peak = Math.max(...rounds.flatMap((r) => [r.afterCommands.rssMiB, r.afterApprovals.rssMiB]));
    const peakSettled = Math.max(
      ...rounds.flatMap((r) => [r.afterCommandsSettled.rssMiB, r.afterApprovalsSettled.rssMiB]),
    );
    const first = rounds[0]?.afterApprovalsSettled.rssMiB ?? Number.NaN;
    const last = rounds.at(-1)?.afterApprovalsSettled.rssMiB ?? Number.NaN;
    return {
      workspaces: o.workspaces,
      pendingApprovalsPerRound: o.pending,
      commandRate: o.rate,
      baseline,
      rounds,
      settleMs,
      ratioPeakToBaseline: ratio(peak, baseline.rssMiB),
      peakSettledMiB: peakSettled,
      secondRoundGrowthMiB: round(last - first, 1),
    };
  } finally {
    await bot.child.stop();
  }
}
