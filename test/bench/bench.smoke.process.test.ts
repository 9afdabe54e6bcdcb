import { describe, expect, it } from "vitest";
import { maxInWindow } from "../../bench/queue.js";
import { formatTable, runBench } from "../../bench/run.js";

/**
 * The benchmark harness itself, with tiny numbers (a couple of seconds of load): every process starts,
 * talks and stops, and the figures are sane. Not a performance test: `npm run bench` measures.
 */
describe("npm run bench (smoke, tiny numbers)", () => {
  it("counts the most arrivals in any 1 s sliding window (queue accuracy's measure)", () => {
    expect(maxInWindow([0, 100, 999, 1000, 1999])).toBe(3);
    expect(maxInWindow([0, 1050, 2100])).toBe(1);
    expect(maxInWindow([])).toBe(0);
  });

  it("runs the latency and approval scenarios end to end and reports them", async () => {
    const r = await runBench({
      rates: [20],
      durationSec: 1,
      warmup: 10,
      settleMs: 100,
      workspaces: 5,
      approvals: 3,
      postgres: false,
      compiled: false,
      only: ["latency", "approvals"],
      out: undefined,
      quiet: true,
    });
    const [rate] = r.latency?.rates ?? [];
    expect(rate?.zones.sent).toBe(20);
    expect(rate?.zones.failed).toBe(0);
    expect(rate?.zones.missing).toBe(0);
    expect(rate?.help.missing).toBe(0);
    expect(rate?.bare.failed).toBe(0);
    // Answers waited for the simulator's 150 ms: the end-to-end clock is measuring something real.
    expect(rate?.zones.overhead.p50).toBeGreaterThan(-5);
    // The overhead itself: each command matched to the simulator's own time for its Edge call.
    expect(rate?.zones.unmatched).toBe(0);
    expect(rate?.zones.overheadVsEdgeHeld.n).toBe(20);
    expect(rate?.zones.overheadVsEdgeHeld.p50).toBeGreaterThan(0);
    expect(rate?.zones.overheadVsEdgeHeld.p50).toBeLessThan((rate?.zones.overhead.p50 ?? 0) + 2);
    // The floor for that overhead: the bare app's /edge fetch-zones, answered and matched the same way.
    expect(rate?.bareZones.missing).toBe(0);
    expect(rate?.bareZones.unmatched).toBe(0);
    expect(rate?.bareZones.overheadVsEdgeHeld.n).toBe(20);
    // /edge apps and its floor (the bare app's fetch-apps), matched the same way.
    for (const run of [rate?.apps, rate?.bareApps]) {
      expect(run?.failed).toBe(0);
      expect(run?.missing).toBe(0);
      expect(run?.unmatched).toBe(0);
      expect(run?.overheadVsEdgeHeld.n).toBe(20);
    }
    expect(rate?.zones.overheadP99BySecond.length).toBeGreaterThan(0);
    // Cold /edge zones: each of 5 new workspaces once, at the bot and at the floor making the same Edge reads.
    const cold = r.latency?.cold;
    expect(cold?.n).toBe(5);
    for (const run of [cold?.bot, cold?.floor]) {
      expect(run?.missing).toBe(0);
      expect(run?.unmatched).toBe(0);
      expect(run?.overhead.n).toBe(5);
      expect(run?.overhead.p50).toBeGreaterThan(0);
      // The page at once (one Edge call), then replaced once the metrics are read: two calls in a row at least.
      expect(run?.endToEnd.p50).toBeGreaterThan(150);
      expect(run?.complete.missing).toBe(0);
      expect(run?.complete.overhead.n).toBe(5);
      expect(run?.complete.endToEnd.p50).toBeGreaterThan(300);
      expect(run?.complete.endToEnd.p50).toBeGreaterThan(run?.endToEnd.p50 ?? 0);
    }
    expect(cold?.ratios.overheadP99).toBeGreaterThan(0);
    expect(cold?.ratios.completeOverheadP99).toBeGreaterThan(0);
    // The mix at the same rate, with drift watches polling: every command acked and answered, each block's
    // preview filled, each timeline telling the changes seeded for it.
    const mixed = r.latency?.mixed;
    expect(mixed?.bot.sent).toBe(20);
    expect(mixed?.bare.sent).toBe(20);
    expect(mixed?.bot.failed).toBe(0);
    expect(mixed?.missing).toBe(0);
    expect(mixed?.previews.sent).toBeGreaterThan(0);
    expect(mixed?.previews.filled).toBe(mixed?.previews.sent);
    expect(mixed?.timelines.sent).toBeGreaterThan(0);
    expect(mixed?.timelines.told).toBe(mixed?.timelines.sent);
    expect(mixed?.botCpuPerSec.duringRun.process).toBeGreaterThan(0);
    const [sqlite] = r.approvals ?? [];
    expect(sqlite && "puts" in sqlite ? sqlite.puts : -1).toBe(3);
    if (!sqlite || !("puts" in sqlite)) throw new Error("no approvals figures");
    // CPU time was read from the bot's main thread (not a pool thread, which would read ~0).
    expect(sqlite.cpuPerApprovalMs.mainThread).toBeGreaterThan(0.1);
    expect(sqlite.cpuPerApprovalMs.process).toBeGreaterThanOrEqual(sqlite.cpuPerApprovalMs.mainThread);
    expect(sqlite.bareAck.n).toBe(3);
    // The same-I/O floor did every click's PUT and card update, and its CPU was read the same way.
    expect(sqlite.sameIoFloor.puts).toBe(3);
    expect(sqlite.sameIoFloor.updates).toBe(3);
    expect(sqlite.sameIoFloor.cpuPerApprovalMs.mainThread).toBeGreaterThan(0);
    expect(sqlite.sameIoFloor.cpuPerApprovalMs.process).toBeGreaterThanOrEqual(
      sqlite.sameIoFloor.cpuPerApprovalMs.mainThread,
    );
    expect(sqlite.cpuRatioToSameIoFloor).toBeGreaterThan(0);
    const targets = r.verdicts.map((v) => v.target).join("\n");
    for (const figure of [
      "≤ 1.3× bare Bolt",
      "bot overhead",
      "click ack p99 < 100 ms",
      "CPU per approval < 1 ms",
      "CPU per approval (main thread) ≤ 2.0× the same-I/O floor",
      "seen for the first time",
      "with previews, drift watches and timelines in the run",
    ])
      expect(targets).toContain(figure);
    expect(formatTable(r)).toContain("Targets");
  }, 180_000);
});
