/**
 * (8) Impact preview (issue 31.1): what the preview adds to a change's confirmation. `/edge block <zone>
 * <ip>` (confirmation + three event-log searches beside it) against `/edge learning <zone> on` (a
 * confirmation of the same shape, no preview), one workspace, sent one a second so the key's 10/s cap is
 * not what is measured. Target: nothing added to the ack; the preview in place within one Edge call's time
 * of the confirmation.
 */
import { round, SIM_LATENCY_MS, type Summary, sleep, summarize, until } from "./common.js";
import { type BenchContext, commandRequest, runLoad, startBotProcess } from "./processes.js";

export interface PreviewResult {
  commands: number;
  /** Acks of /edge block (with the preview) and of /edge learning (without), ms. */
  ack: Summary;
  baselineAck: Summary;
  /** Command sent → confirmation at response_url, ms. */
  confirmation: Summary;
  baselineConfirmation: Summary;
  /** Confirmation at response_url → the preview filled in place, ms. */
  filledAfterConfirmation: Summary;
  /** Fills that never came, or came without numbers. */
  missingFills: number;
  simulatorLatencyMs: number;
}

/** The filled preview's headline (with numbers); "estimating…" and "unknown" have no chart mark. */
export const FILLED = ":bar_chart:";

export async function previewScenario(ctx: BenchContext, n: number): Promise<PreviewResult> {
  const bot = await startBotProcess(ctx, { name: "preview", workspaces: 1 });
  const zone = ctx.sim.ready.zone;
  try {
    const run = async (prefix: string, text: (i: number) => string) => {
      ctx.slack.clear();
      const requests = Array.from({ length: n }, (_, i) => commandRequest(ctx, `${prefix}-${i}`, 0, text(i)));
      const samples = await runLoad(ctx, { origin: bot.origin, requests, rate: 1 });
      await until(
        () =>
          ctx.slack.responses.filter((r) => r.id.startsWith(prefix)).length >= n * (prefix === "pv" ? 2 : 1),
        20_000,
        `answers to ${prefix}`,
      ).catch(() => undefined);
      return samples;
    };
    ctx.progress(`impact preview: ${n} × /edge learning (no preview), then ${n} × /edge block, 1/s`);
    const base = await run("bl", () => `learning ${zone} on`);
    const baseArrivals = new Map<string, number>();
    for (const r of ctx.slack.responses) if (!baseArrivals.has(r.id)) baseArrivals.set(r.id, r.at);
    await sleep(1_500);
    const pv = await run("pv", (i) => `block ${zone} 198.51.100.${(i % 250) + 1}`);
    const confirmations: number[] = [];
    const fills: number[] = [];
    let missing = 0;
    for (const s of pv) {
      const answers = ctx.slack.responses.filter((r) => r.id === s.id);
      const first = answers[0];
      const filled = answers.find((r) => JSON.stringify(r.body.blocks).includes(FILLED));
      if (first) confirmations.push(first.at + 0.5 - s.sentAt);
      if (first && filled) fills.push(filled.at - first.at);
      else missing++;
    }
    return {
      commands: n,
      ack: summarize(pv.map((s) => s.ackMs)),
      baselineAck: summarize(base.map((s) => s.ackMs)),
      confirmation: summarize(confirmations),
      baselineConfirmation: summarize(
        base.flatMap((s) => {
          const at = baseArrivals.get(s.id);
          return at === undefined ? [] : [round(at + 0.5 - s.sentAt)];
        }),
      ),
      filledAfterConfirmation: summarize(fills),
      missingFills: missing,
      simulatorLatencyMs: SIM_LATENCY_MS,
    };
  } finally {
    await bot.child.stop();
  }
}
