import { describe, expect, it } from "vitest";
import { systemClock } from "../../src/clock.js";
import { createClaimLoop, createFairPool } from "../../src/jobs/pool.js";
import { silentLogger } from "../../src/log.js";

/** A claim loop over `due` whose runs and afterTick record their order in `seen`. */
function loop(due: string[], seen: string[]) {
  return createClaimLoop<string>({
    name: "test loop",
    intervalMs: 60_000,
    clock: systemClock,
    logger: silentLogger,
    pool: createFairPool<string>({
      concurrency: 2,
      id: (item) => item,
      teamId: () => "T1",
      async run(item) {
        seen.push(item);
        return true;
      },
    }),
    listDue: async () => due,
    async afterTick() {
      seen.push("after");
      return 1;
    },
  });
}

describe("the claim loop's afterTick", () => {
  it("runs after the tick's items ran, and its count adds to the tick's", async () => {
    const seen: string[] = [];
    expect(await loop(["a", "b"], seen).tick()).toBe(3);
    expect(seen).toEqual(["a", "b", "after"]);
  });

  it("runs when nothing is due", async () => {
    const seen: string[] = [];
    expect(await loop([], seen).tick()).toBe(1);
    expect(seen).toEqual(["after"]);
  });

  it("does not run once the loop is stopped", async () => {
    const seen: string[] = [];
    const stopped = loop(["a"], seen);
    await stopped.stop();
    expect(await stopped.tick()).toBe(0);
    expect(seen).toEqual([]);
  });
});
