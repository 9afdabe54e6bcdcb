import { describe, expect, it } from "vitest";
import { createManualClock } from "../../tools/manual-clock.js";

describe("the manual clock", () => {
  it("says how long until its next timer falls due, intervals included, and none once all are cancelled", async () => {
    const clock = createManualClock(0);
    expect(clock.nextDueIn()).toBeUndefined();
    const cancelLate = clock.setTimeout(() => {}, 5_000);
    const cancelEvery = clock.setInterval(() => {}, 3_000);
    expect(clock.nextDueIn()).toBe(3_000);
    await clock.advance(3_500);
    expect(clock.nextDueIn()).toBe(1_500);
    await clock.advance(1_500);
    expect(clock.nextDueIn()).toBe(1_000);
    cancelEvery();
    cancelLate();
    expect(clock.nextDueIn()).toBeUndefined();
  });
});
