import { describe, expect, it } from "vitest";
import { answerTo } from "./harness.js";
import { useWorld } from "./world.js";

describe("the in-process world", () => {
  const w = useWorld();

  it("an Edge call that outlasts its timeout ends when the test moves the one clock, not after real seconds", async () => {
    w.sim.addFault({ path: "/mc/apps", latencyMs: 60_000 });
    const res = await w.command("apps", { userId: "U0001" });
    const started = performance.now();
    // Three attempts (a read is retried after a timeout), each cut off when the clock passes its timeout.
    for (let attempt = 1; attempt <= 3; attempt++) {
      const sent = (r: { path: string }) => r.path.startsWith("/mc/apps");
      await w.sim.waitForRequest(() => w.sim.requests.filter(sent).length >= attempt);
      await w.clock.advance(2_000);
    }
    const answer = await w.slack.waitForResponse(res.responseId);
    expect(JSON.stringify(answer.body)).toContain("did not answer in time");
    expect(performance.now() - started).toBeLessThan(2_000);
  });

  it("a held answer waits for the test's release, and settled() waits for the work it started", async () => {
    let release = () => {};
    w.sim.addFault({ path: "/mc/apps", holdUntil: new Promise<void>((r) => (release = r)), times: 1 });
    const res = await w.command("apps", { userId: "U0001" });
    await w.sim.waitForRequest((r) => r.path.startsWith("/mc/apps"));
    expect(w.slack.responsesTo(res.responseId)).toEqual([]);
    release();
    await w.settled();
    expect(w.slack.responsesTo(res.responseId)).toHaveLength(1);
    expect((await answerTo(w, "apps", "U0001")).text).not.toContain("did not answer");
  });
});
