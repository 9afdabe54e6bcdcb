import { describe, expect, it } from "vitest";
import { createConsoleClock } from "../../../tools/console/console-clock.js";

/** Work that takes `n` turns of the real event loop (a stand-in for an Edge API call on loopback). */
async function turns(n: number) {
  for (let i = 0; i < n; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

describe("the console's clock", () => {
  it("a /sim clock move stops at a timer that falls due and waits for the work it started, before that work's timeout", async () => {
    const clock = createConsoleClock();
    try {
      let working = false;
      const seen: string[] = [];
      clock.settleOn(() => working);
      clock.setTimeout(() => {
        working = true;
        const cancelTimeout = clock.setTimeout(() => seen.push("timed out"), 2_000);
        void turns(200).then(() => {
          working = false;
          cancelTimeout();
          seen.push("answered");
        });
      }, 1_000);
      await clock.moveForward(25 * 60_000);
      expect(seen).toEqual(["answered"]);
      expect(clock.ahead()).toBe(25 * 60_000);
    } finally {
      clock.stop();
    }
  });

  it("a move stops at most a few thousand times, however many timers fall due", async () => {
    const clock = createConsoleClock();
    try {
      let fired = 0;
      const cancel = clock.setInterval(() => fired++, 200);
      const steps: number[] = [];
      clock.settleOn(() => {
        steps.push(clock.now());
        return false;
      });
      await clock.moveForward(3_600_000);
      cancel();
      expect(fired).toBe(18_000);
      expect(steps.length).toBeLessThanOrEqual(3_000);
    } finally {
      clock.stop();
    }
  });
});
