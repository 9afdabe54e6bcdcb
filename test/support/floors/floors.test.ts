import { join, sep } from "node:path";
import { describe, expect, it } from "vitest";
import { expectPatternsCatch } from "../pattern-check.js";
import { codeOf, fromRoot, matchesIn, ROOT, sourceFiles } from "../source-files.js";

/** Ways a test waits for real time to pass rather than for an event or a manual clock. */
const WAITS_ON_REAL_TIME: readonly [string, RegExp][] = [
  // A call, not a method of that name being defined (a test's own clock wrapper: `setTimeout(fn: …) {`).
  ["setTimeout", /(?<![.\w])setTimeout\s*\((?!\s*\w+\s*:)/],
  ["setInterval", /(?<![.\w])setInterval\s*\(/],
  ["a sleep from node:timers", /["']node:timers(\/promises)?["']/],
  ["expect.poll", /\bexpect\.poll\s*\(/],
  ["vi.waitFor", /\bvi\.waitFor\s*\(/],
  [
    "a wall-clock deadline",
    /\b(Date|performance)\.now\(\)\s*[<>]|(?<!=)[<>]=?\s*(Date|performance)\.now\(\)/,
  ],
];

/** Latency is real time unless the simulator runs on the test's manual clock (a world). */
const LATENCY = /\blatencyMs\b|\bsetLatency\s*\(/;
const ON_A_MANUAL_CLOCK = /\b(startWorld|useWorld|createManualClock)\b/;

/**
 * Support code that keeps a real timer, and why: none of these makes a test wait for time to pass. A guard
 * fails a test that waited too long for an event; an instrument measures.
 */
const REAL_TIMERS_BY_NAME: Record<string, string> = {
  "test/support/fake-slack.ts":
    "waitForCall's guard timeout, and the latency fault of tests that time Slack's answers",
  "test/support/event-loop.ts": "an instrument: how long the event loop stalled",
  "test/support/event-waiter.ts": "the guard that fails a test whose event never came",
  "test/clock.test.ts": "its samples of direct time are strings that src's own time check must catch",
};

/** The spec and flows floors: every test file but the process floor's, and the support code they load. */
function specAndFlows(): string[] {
  return sourceFiles(join(ROOT, "test"))
    .filter((f) => f.endsWith(".ts"))
    .filter((f) => !f.endsWith(".process.test.ts") && !/process-support\.ts$/.test(f))
    .filter((f) => !f.endsWith(`${sep}floors.test.ts`));
}

function realTimeWaits(paths: readonly string[]): string[] {
  const latency = paths
    .filter((path) => LATENCY.test(codeOf(path)) && !ON_A_MANUAL_CLOCK.test(codeOf(path)))
    .map((path) => `${fromRoot(path)}: latency on the real clock`);
  return [...matchesIn(paths, WAITS_ON_REAL_TIME), ...latency];
}

describe("the test floors", () => {
  it("no spec or flow test waits on real time: it waits for an event or moves a manual clock", () => {
    const all = specAndFlows();
    expect(all.length).toBeGreaterThan(100);
    const named = Object.keys(REAL_TIMERS_BY_NAME);
    const fileOf = (line: string) => line.slice(0, line.indexOf(":"));
    expect(realTimeWaits(all).filter((line) => !named.includes(fileOf(line)))).toEqual([]);
    for (const file of named) expect(all.map(fromRoot), `${file} is still there`).toContain(file);
  });

  it("the check sees each way of waiting (it is not vacuous)", () => {
    const waits = [
      "await new Promise((r) => setTimeout(r, 200));",
      "const t = setInterval(tick, 5);",
      'import { setTimeout as sleep } from "node:timers/promises";',
      "await expect.poll(() => n).toBe(2);",
      "await vi.waitFor(() => expect(n).toBe(2));",
      "while (Date.now() < deadline) await once();",
      "if (performance.now() > until) break;",
    ];
    const fine = [
      "await w.clock.advance(2_000);",
      "clock.setTimeout(fire, 10);",
      "const at = Date.now();",
      "await h.slack.waitForCall('chat.update');",
      "await h.settled();",
    ];
    expectPatternsCatch(WAITS_ON_REAL_TIME, waits, fine);
    expect(LATENCY.test("sim.addFault({ path, latencyMs: 2_300 })")).toBe(true);
  });
});
