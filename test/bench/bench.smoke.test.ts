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
    const [sqlite] = r.approvals ?? [];
    expect(sqlite && "puts" in sqlite ? sqlite.puts : -1).toBe(3);
    expect(formatTable(r)).toContain("Targets");
  }, 60_000);
});
