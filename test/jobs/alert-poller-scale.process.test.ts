/**
 * A command typed while the watches poll during an attack is answered ahead of the polling, whose
 * intervals stretch to the key's WATCH_SHARE. Its subject is the key's pacing (4 requests a second), which
 * runs on its clock's timers (src/edge/queue.ts): here a stepped clock's, which are real, so this test
 * waits real seconds and lives on the process floor (moved from alert-poller-scale.flow.test.ts).
 */
import { afterEach, describe, expect, it } from "vitest";
import { stretchedInterval } from "../../src/alerts/interval.js";
import { createPoller } from "../../src/jobs/alerts.js";
import { createWatch } from "../../src/services/watches.js";
import { SIM_IDS, startSimulator } from "../../tools/simulator/index.js";
import { steppedClock } from "../support/clock.js";
import { answerTo, startHarness, TEST_EDGE_KEY } from "../support/harness.js";

const MIN = 60_000;
const T0 = Date.UTC(2026, 7, 20, 10, 0, 30);

let clock = T0;
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function simulator() {
  const sim = await startSimulator({
    scanDurationMs: 50,
    apiKeys: [TEST_EDGE_KEY],
    clock: steppedClock(() => clock),
  });
  cleanups.push(() => sim.close());
  return sim;
}

describe("a command typed during an attack", () => {
  it("is answered ahead of the polling, whose interval stretches to the key's share", async () => {
    clock = T0;
    const sim = await simulator();
    const h = await startHarness({
      sim,
      clock: steppedClock(() => clock),
      env: { EDGE_API_RATE_PER_SEC: "4", WATCH_SHARE: "50", WATCH_INTERVAL_MS: "5000" },
    });
    cleanups.push(() => h.close());
    const poller = createPoller({
      deps: h.deps,
      clientFor: h.app.env.clientFor,
      clock: steppedClock(() => clock),
      // The share is counted over the test's clock, so the baseline evaluations are behind it.
      budgetClock: () => clock,
      concurrency: 20,
      perWorkspaceConcurrency: 20,
    });
    cleanups.push(() => poller.stop());
    const WATCHES = 20;
    for (let i = 0; i < WATCHES; i++)
      await createWatch(h.deps, {
        teamId: "T0001",
        channelId: `C${1000 + i}`,
        userId: "U0001",
        kind: "zone",
        target: String(SIM_IDS.zoneEnterprise),
        options: { sensitivity: "normal" },
      });

    // The usual time of the command, with nothing else on the key.
    const idleStart = performance.now();
    expect((await answerTo(h, "apps", "U0001")).text).toBeTruthy();
    const idleMs = performance.now() - idleStart;

    await poller.tick(); // baselines
    sim.stageAttack(SIM_IDS.zoneEnterprise, {
      startsAt: T0 + 30_000,
      rampMinutes: 0,
      durationMinutes: 60,
      peakPerMinute: 900,
    });
    clock += 5 * MIN;
    const polledAt = clock;
    const before = sim.requests.length;
    const tick = poller.tick();
    // The polls are queued on the key (4 a second): type the command while they wait.
    await sim.waitForRequest(() => sim.requests.length >= before + 2, 10_000);
    expect(sim.requests.length).toBeGreaterThanOrEqual(before + 2);
    const start = performance.now();
    const answer = await answerTo(h, "apps", "U0001");
    const duringMs = performance.now() - start;
    await tick;
    expect(answer.text).toBeTruthy();

    const during = sim.requests.slice(before);
    const polls = during.filter((r) => r.path.startsWith("/shield/"));
    const command = during.findIndex((r) => r.path.startsWith("/mc/apps"));
    expect(polls.length).toBeGreaterThanOrEqual(WATCHES);
    // Served ahead of polls queued before it: at 4 requests a second, waiting behind 20 would take 5 s.
    expect(command).toBeLessThan(during.length - 10);
    console.info("/edge apps answer (ms)", {
      idle: Math.round(idleMs),
      duringPolling: Math.round(duringMs),
      pollRequestsInTick: polls.length,
      commandRequestPosition: command,
    });
    expect(duringMs).toBeLessThan(idleMs + 1_500);

    // The watches' interval stretched: 20 evaluations in 50 % of 4 requests a second take 10 s.
    const expected = stretchedInterval(WATCHES, { intervalMs: 5000, ratePerSec: 4, sharePercent: 50 });
    expect(expected).toBe(10_000);
    const watches = await h.store.watches.list("T0001");
    for (const w of watches) expect(w.nextPollAt).toBe(polledAt + expected);
  }, 60_000);
});
