/**
 * (1b) Acks of a mixed load at the top rate while the bot has background work of its own: a fixed mix of
 * `/edge zones` and `/edge apps`, `/edge block <zone> <ip>` (a confirmation whose impact preview reads the
 * event log meanwhile; a different IP each) and `/edge timeline <zone>` (the story built from the store: a
 * few applied changes seeded per workspace), with drift watches (config watches, three Edge reads an
 * evaluation) seeded before the bot starts and polling on a short interval throughout. The floor is the bare
 * Bolt app's ack of as many `/edge zones` at the same rate, sent just before (as the latency runs are).
 */
import { loadConfig } from "../src/config.js";
import { createLogger } from "../src/log.js";
import { openStore } from "../src/store/index.js";
import { steppedClock } from "../test/support/clock.js";
import { ratio, round, type Summary, sleep, summarize, teamFor, until } from "./common.js";
import { type AckRun, ackRun } from "./latency.js";
import type { LoadRun } from "./loadgen.js";
import { FILLED } from "./preview.js";
import { type BenchContext, commandRequest, runLoad, startBotProcess } from "./processes.js";
import { appliedBlock } from "./timeline.js";

export type MixedCommand = "zones" | "apps" | "block" | "timeline";

/** Twenty slots: 35 % zones, 35 % apps, 15 % block, 15 % timeline. */
const MIX: readonly MixedCommand[] = [
  ...Array<MixedCommand>(7).fill("zones"),
  ...Array<MixedCommand>(7).fill("apps"),
  ...Array<MixedCommand>(3).fill("block"),
  ...Array<MixedCommand>(3).fill("timeline"),
];

export interface MixedOptions {
  rate: number;
  durationSec: number;
  workspaces: number;
  /** Config (drift) watches, spread over the workspaces. */
  watches: number;
  /** WATCH_INTERVAL_MS of the bot (each workspace's one or two watches are not stretched past it). */
  watchIntervalMs: number;
  /** Applied changes seeded on the zone per workspace, for the timeline to tell. */
  changesPerWorkspace: number;
  warmup: number;
  settleMs: number;
}

export const MIXED_DEFAULTS = { watches: 100, watchIntervalMs: 2_000, changesPerWorkspace: 5 } as const;

export interface MixedResult {
  rate: number;
  durationSec: number;
  workspaces: number;
  /** Commands of each kind sent to the bot in the measured run. */
  mix: Record<MixedCommand, number>;
  watches: number;
  watchIntervalMs: number;
  /** Drift evaluations' bot-category reads the simulator received during the bot's run (one an evaluation). */
  driftReads: number;
  timelineChangesPerWorkspace: number;
  bare: AckRun;
  bot: AckRun;
  /** The bot's answers other than 200, by HTTP status (0: no answer; 503: its front refused, busy). */
  botFailedByStatus: Record<string, number>;
  ackByCommand: Record<MixedCommand, Summary>;
  /**
   * The bot's CPU time over each run's sending window, ms a second of it (1000 = one core): while the
   * bare app was driven (the drift watches alone) and during its own run. The machine has two cores.
   */
  botCpuPerSec: {
    duringBare: { mainThread: number; process: number };
    duringRun: { mainThread: number; process: number };
  };
  /** Commands with no answer at response_url within the wait. */
  missing: number;
  /** `/edge block` confirmations, and those replaced by their filled impact preview. */
  previews: { sent: number; filled: number };
  /** `/edge timeline` commands, and those whose answer tells a seeded change (its IP, 10.0.0.x). */
  timelines: { sent: number; told: number };
  ratios: { ackP50: number; ackP99: number; ackMax: number };
}

const kindOf = (i: number, workspaces: number): MixedCommand =>
  // Shifted each pass over the workspaces, so every workspace sends every kind.
  MIX[(i + Math.floor(i / workspaces)) % MIX.length] as MixedCommand;

function mixedText(kind: MixedCommand, i: number, zone: number): string {
  if (kind === "block") return `block ${zone} 198.18.${Math.floor(i / 250) % 256}.${(i % 250) + 1}`;
  if (kind === "timeline") return `timeline ${zone}`;
  return kind;
}

/** Drift watches and each workspace's applied changes on the zone, through the store's API. */
function seedFor(o: MixedOptions, zone: number) {
  return async (env: Record<string, string>) => {
    const t = { now: Date.now() - 2 * 3_600_000 };
    const store = await openStore({
      config: loadConfig(env),
      logger: createLogger({ level: "silent" }),
      clock: steppedClock(() => t.now),
    });
    try {
      for (let w = 0; w < o.watches; w++) {
        const created = await store.watches.createIfRoom(
          {
            teamId: teamFor(w % o.workspaces),
            channelId: `CW${Math.floor(w / o.workspaces)}`,
            createdBy: "U0001",
            kind: "config",
            target: String(zone),
            options: {},
            nextPollAt: t.now,
          },
          { perChannel: 10, perWorkspace: 50 },
        );
        if (created.kind !== "created")
          throw new Error(`bench: drift watch ${w} not created (${created.kind})`);
      }
      for (let w = 0; w < o.workspaces; w++)
        for (let i = 0; i < o.changesPerWorkspace; i++)
          await appliedBlock(store, t, { zoneId: zone, i, channelId: "C0001", teamId: teamFor(w) });
    } finally {
      await store.close();
    }
  };
}

export async function mixedScenario(
  ctx: BenchContext,
  bareOrigin: string,
  o: MixedOptions,
): Promise<MixedResult> {
  const zone = ctx.sim.ready.zone;
  ctx.progress(
    `mixed: seeding ${o.watches} drift watches and ${o.changesPerWorkspace} applied changes in each of ${o.workspaces} workspaces`,
  );
  const bot = await startBotProcess(ctx, {
    name: "mixed",
    workspaces: o.workspaces,
    env: { WATCH_INTERVAL_MS: String(o.watchIntervalMs) },
    seed: seedFor(o, zone),
  });
  try {
    const requests = (prefix: string, n: number, offset: number) =>
      Array.from({ length: n }, (_, i) => {
        const kind = kindOf(i, o.workspaces);
        return {
          kind,
          ...commandRequest(ctx, `${prefix}-${i}`, i % o.workspaces, mixedText(kind, offset + i, zone)),
        };
      });
    ctx.progress(`mixed: warming up (${o.warmup} commands of the mix at 100/s)`);
    await runLoad(ctx, { origin: bot.origin, requests: requests("mw", o.warmup, 0), rate: 100 });
    await sleep(o.settleMs);

    const n = Math.max(1, Math.round(o.rate * o.durationSec));
    ctx.progress(
      `mixed: ${o.rate}/s for ${o.durationSec} s over ${o.workspaces} workspaces (bare Bolt, then the mix), ${o.watches} drift watches every ${o.watchIntervalMs} ms`,
    );
    type Cpu = { mainThreadMs: number; processMs: number };
    const cpu = () => bot.child.call<Cpu>("cpu");
    /** The samples of one run, and the bot's CPU over it. */
    const withBotCpu = async (run: LoadRun) => {
      const [c0, t0] = [await cpu(), performance.now()];
      const samples = await runLoad(ctx, run);
      const [c1, secs] = [await cpu(), (performance.now() - t0) / 1000];
      const perSec = (ms: number) => round(ms / secs, 1);
      return {
        samples,
        cpu: {
          mainThread: perSec(c1.mainThreadMs - c0.mainThreadMs),
          process: perSec(c1.processMs - c0.processMs),
        },
      };
    };
    const { samples: bareSamples, cpu: duringBare } = await withBotCpu({
      origin: bareOrigin,
      requests: Array.from({ length: n }, (_, i) =>
        commandRequest(ctx, `mb-${i}`, i % o.workspaces, "zones"),
      ),
      rate: o.rate,
    });
    await sleep(500);
    ctx.slack.clear();
    await ctx.sim.call("clear");
    const sent = requests("mx", n, o.warmup);
    const { samples, cpu: duringRun } = await withBotCpu({
      origin: bot.origin,
      requests: sent,
      rate: o.rate,
    });
    const driftReads = await ctx.sim.call<number>("count", { pathIncludes: "/bot-categorization" });
    const kinds = new Map(sent.map((r) => [r.id, r.kind]));
    const blocks = sent.filter((r) => r.kind === "block").map((r) => r.id);
    // Only this run's: a warm-up command's late answer (a fill, a replaced page) may still come in.
    const answered = () => new Set(ctx.slack.responses.filter((r) => kinds.has(r.id)).map((r) => r.id));
    const filled = () =>
      new Set(
        ctx.slack.responses
          .filter((r) => kinds.get(r.id) === "block" && JSON.stringify(r.body.blocks).includes(FILLED))
          .map((r) => r.id),
      );
    await until(
      () => answered().size >= n && filled().size >= blocks.length,
      20_000,
      `${n} answers to the mix and ${blocks.length} previews`,
    ).catch(() => undefined);
    const told = new Set(
      ctx.slack.responses
        .filter((r) => kinds.get(r.id) === "timeline" && JSON.stringify(r.body).includes("10.0.0."))
        .map((r) => r.id),
    ).size;
    const missing = n - answered().size;
    const previewsFilled = filled().size;
    ctx.slack.clear();
    await sleep(o.settleMs);

    const botFailedByStatus: Record<string, number> = {};
    for (const s of samples)
      if (s.status !== 200) botFailedByStatus[s.status] = (botFailedByStatus[s.status] ?? 0) + 1;
    const bare = ackRun(o.rate, bareSamples);
    const botRun = ackRun(o.rate, samples);
    const byKind = (k: MixedCommand) =>
      samples.filter((s) => kinds.get(s.id) === k && s.status === 200).map((s) => s.ackMs);
    const mixCount = (k: MixedCommand) => sent.filter((r) => r.kind === k).length;
    return {
      rate: o.rate,
      durationSec: o.durationSec,
      workspaces: o.workspaces,
      mix: {
        zones: mixCount("zones"),
        apps: mixCount("apps"),
        block: mixCount("block"),
        timeline: mixCount("timeline"),
      },
      watches: o.watches,
      watchIntervalMs: o.watchIntervalMs,
      driftReads,
      timelineChangesPerWorkspace: o.changesPerWorkspace,
      bare,
      bot: botRun,
      botFailedByStatus,
      ackByCommand: {
        zones: summarize(byKind("zones")),
        apps: summarize(byKind("apps")),
        block: summarize(byKind("block")),
        timeline: summarize(byKind("timeline")),
      },
      botCpuPerSec: { duringBare, duringRun },
      missing,
      previews: { sent: blocks.length, filled: previewsFilled },
      timelines: { sent: mixCount("timeline"), told },
      ratios: {
        ackP50: ratio(botRun.ack.p50, bare.ack.p50),
        ackP99: ratio(botRun.ack.p99, bare.ack.p99),
        ackMax: ratio(botRun.ack.max, bare.ack.max),
      },
    };
  } finally {
    await bot.child.stop();
  }
}
