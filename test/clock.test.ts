import { join, sep } from "node:path";
import { describe, expect, it } from "vitest";
import { sleepOn, systemClock } from "../src/clock.js";
import { createManualClock } from "./support/clock.js";
import { expectPatternsCatch } from "./support/pattern-check.js";
import { codeOf, fromRoot, matchesIn, ROOT, sourceFiles } from "./support/source-files.js";

/** Reading the wall clock or starting a timer directly; `clock.setTimeout(…)` is a method, not the global. */
const TOUCHES_TIME: readonly [string, RegExp][] = [
  ["setTimeout", /(?<![.\w])setTimeout\s*\(/],
  ["setInterval", /(?<![.\w])setInterval\s*\(/],
  ["Date.now", /\bDate\.now\b/],
  ["new Date()", /\bnew Date\(\s*\)/],
  ["performance.now", /\bperformance\.now\b/],
  ["node:timers", /["']node:timers(\/promises)?["']/],
];

/**
 * The modules that use the real clock by name, and why: the composition roots that choose it, and the
 * waits on something outside the process that no manual clock of the bot could move. Everything else
 * takes its clock from the composition root (deps.clock).
 */
const REAL_TIME_BY_NAME: Record<string, string> = {
  "src/app/compose.ts": "the composition root: the real clock unless a test or the console gives one",
  "src/app/run.ts": "the process's root: the bot's clock and the backstop exit when a shutdown hangs",
  "src/rotate-keys.ts": "a command-line root that opens the store",
  "src/edge/shared-limit.ts": "slots and leases are Redis keys that expire on Redis's clock",
  "src/store/db.ts": "waiting out another process's SQLite lock",
  "src/store/migrations.ts": "waiting out another process's migration lock",
};

describe("one clock in src", () => {
  const files = sourceFiles(join(ROOT, "src")).filter((f) => !f.endsWith(`${sep}clock.ts`));

  it("only src/clock.ts reads the wall clock or starts a timer", () => {
    expect(files.length).toBeGreaterThan(100);
    expect(matchesIn(files, TOUCHES_TIME)).toEqual([]);
  });

  it("names the real clock only where the list above says why", () => {
    const byName = files
      .filter((f) => /\bsystemClock\b/.test(codeOf(f)))
      .map(fromRoot)
      .sort();
    expect(byName).toEqual(Object.keys(REAL_TIME_BY_NAME).sort());
  });

  it("the check sees each way of touching time (it is not vacuous)", () => {
    const samples = [
      "setTimeout(() => 1, 5)",
      "const t = setInterval(f, 9)",
      "const at = Date.now()",
      "new Date()",
      "performance.now()",
      'import { setTimeout as delay } from "node:timers/promises"',
    ];
    const fine = ["clock.setTimeout(f, 5)", "deps.clock.now()", "new Date(at)", "Date.parse(s)"];
    expectPatternsCatch(TOUCHES_TIME, samples, fine);
  });
});

describe("the manual clock", () => {
  it("fires timers in order as time is advanced, and never before", async () => {
    const clock = createManualClock(Date.UTC(2026, 0, 1));
    const fired: string[] = [];
    clock.setTimeout(() => fired.push(`a@${clock.now()}`), 30 * 60_000);
    const stop = clock.setInterval(() => fired.push(`tick@${clock.now()}`), 20 * 60_000);
    await clock.advance(29 * 60_000);
    expect(fired).toEqual([`tick@${Date.UTC(2026, 0, 1, 0, 20)}`]);
    await clock.advance(60_000);
    expect(fired.at(-1)).toBe(`a@${Date.UTC(2026, 0, 1, 0, 30)}`);
    stop();
    await clock.advance(3_600_000);
    expect(fired).toHaveLength(2);
    expect(clock.pending()).toBe(0);
  });

  it("lets the work a timer wakes run to its next wait before moving on", async () => {
    const clock = createManualClock(0);
    const steps: number[] = [];
    const work = (async () => {
      for (let i = 0; i < 3; i++) {
        await clock.sleep(1_000);
        await Promise.resolve();
        steps.push(clock.now());
      }
    })();
    await clock.advance(3_000);
    await work;
    expect(steps).toEqual([1_000, 2_000, 3_000]);
  });

  it("a sleep rejects with the signal's reason as soon as it aborts, and its timer is gone", async () => {
    const clock = createManualClock(0);
    const abort = new AbortController();
    const sleeping = clock.sleep(60_000, abort.signal);
    abort.abort(new Error("stopping"));
    await expect(sleeping).rejects.toThrow("stopping");
    expect(clock.pending()).toBe(0);
    await expect(sleepOn(clock.setTimeout, 5, abort.signal)).rejects.toThrow("stopping");
  });
});

describe("the system clock", () => {
  it("reads the epoch and a monotonic time; cancelling a timer twice is harmless", () => {
    expect(Math.abs(systemClock.now() - Date.UTC(2026, 0, 1))).toBeLessThan(10 * 365 * 86_400_000);
    expect(systemClock.elapsed()).toBeGreaterThan(0);
    const cancel = systemClock.setTimeout(() => {
      throw new Error("a cancelled timer fired");
    }, 0);
    cancel();
    cancel();
  });
});
