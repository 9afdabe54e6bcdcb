import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type Clock, systemClock } from "../../src/clock.js";
import { createScheduler, type Scheduler, type SchedulerOptions } from "../../src/jobs/schedules.js";
import { createSchedule, parseWhenWords } from "../../src/services/schedules.js";
import { SIM_IDS, type Simulator, startSimulator } from "../../tools/simulator/index.js";
import { createManualClock, steppedClock } from "../support/clock.js";
import { type Harness, startHarness, TEST_EDGE_KEY } from "../support/harness.js";

/**
 * A busy workspace (100 schedules, the default SCHEDULES_PER_WORKSPACE, over a zone whose scans never
 * finish in time) beside a workspace with one schedule. Each workspace has its own Edge API key, as in
 * production, so only the scheduler can make one wait for the other.
 */

const LONE_KEY = "sim-lone-key-5b8e1d4c97";
const BIG_ZONE = SIM_IDS.dnsZoneInProgressScan;
const LONE_ZONE = SIM_IDS.dnsZoneCompleted;
/** How long each of the busy workspace's runs waits for its scan (scan time, below). */
const SLOW_SCAN_MS = 4000;
/**
 * How late the lone workspace's summary may be (real time from when it is due to its post): less than
 * one busy run, so it cannot have waited behind any. The old sequential loop made it wait for all 100.
 * The busy runs are held in their scan reads until the lone summary is posted, so it cannot wait behind one.
 */
const MAX_LATENESS_MS = 2500;

/**
 * Scan time: the simulator's clock and the runs' scan waits share it, and a scan wait's sleep moves it
 * at once, so a scan finishes (or a wait gives up) without real time passing.
 */
let scanTime = 0;
const simClock: Clock = { ...systemClock, now: () => systemClock.now() + scanTime };
const scanClock: Pick<Clock, "sleep" | "elapsed"> = {
  elapsed: () => scanTime,
  sleep: (ms, signal) => {
    if (signal?.aborted) return Promise.reject(signal.reason);
    scanTime += ms;
    return new Promise((resolve) => setImmediate(resolve));
  },
};

/** The busy workspace's scan reads wait for this (released after each test). */
let releaseBusy = () => {};

let sim: Simulator;
let h: Harness;
let clock = Date.parse("2026-06-01T00:00:00Z");
const schedulers: Scheduler[] = [];

beforeAll(async () => {
  sim = await startSimulator({ scanDurationMs: 50, apiKeys: [TEST_EDGE_KEY, LONE_KEY], clock: simClock });
  h = await startHarness({ sim, clock: steppedClock(() => clock) });
  await h.store.keys.set("T0002", LONE_KEY, "U0001");
});
afterEach(async () => {
  releaseBusy();
  await Promise.all(schedulers.splice(0).map((s) => s.stop()));
  sim.clearFaults();
  h.slack.clear();
  for (const team of ["T0001", "T0002"])
    for (const s of await h.store.schedules.list(team)) await h.store.schedules.remove(team, s.id);
});
afterAll(async () => {
  await h?.close();
  await sim?.close();
});

function scheduler(extra: Partial<SchedulerOptions> = {}): Scheduler {
  const s = createScheduler({
    deps: h.deps,
    clientFor: h.app.env.clientFor,
    clock: steppedClock(() => clock),
    scanWait: { firstDelayMs: 100, maxWaitMs: SLOW_SCAN_MS, clock: scanClock },
    ...extra,
  });
  schedulers.push(s);
  return s;
}

const dailyAt = (time: string) => parseWhenWords(["daily", time]).when;

/**
 * T0001: 100 schedules, one a channel, daily at `time` UTC, over a zone whose scan is never done; with
 * `held`, its scan reads are answered only once releaseBusy() is called.
 */
async function busyWorkspace(time: string, held = true): Promise<void> {
  clock = Date.parse("2026-06-01T00:00:00Z");
  for (let i = 0; i < 100; i++)
    await createSchedule(h.deps, {
      teamId: "T0001",
      channelId: `C0BIG${String(i).padStart(3, "0")}`,
      userId: "U0001",
      zoneId: BIG_ZONE,
      when: dailyAt(time),
      timezone: "UTC",
    });
  sim.addFault({
    method: "GET",
    path: `/dnszone/${BIG_ZONE}/records/scan`,
    status: 200,
    ...(held ? { holdUntil: new Promise<void>((r) => (releaseBusy = r)) } : {}),
    body: {
      JobId: "00000000-0000-4000-8000-000000000001",
      ZoneId: BIG_ZONE,
      Domain: "busy-example.dev",
      Status: 1,
      CreatedAt: "2026-08-20T09:14:03Z",
      CompletedAt: null,
      Records: null,
      Error: null,
    },
  });
}

/** T0002: one schedule, daily at `time` UTC, over a zone whose scan is complete. */
async function loneWorkspace(time: string): Promise<void> {
  await createSchedule(h.deps, {
    teamId: "T0002",
    channelId: "C0LONE",
    userId: "U0002",
    zoneId: LONE_ZONE,
    when: dailyAt(time),
    timezone: "UTC",
  });
}

const lonePost = () =>
  h.slack.waitForCall("chat.postMessage", (c) => c.args.channel === "C0LONE", 3 * MAX_LATENESS_MS);
const bigPosts = () =>
  h.slack.callsTo("chat.postMessage").filter((c) => String(c.args.channel).startsWith("C0BIG"));

describe("scheduler: a busy workspace with slow scans does not delay another workspace's summary", () => {
  it("in one tick: the lone workspace's schedule is listed and run beside 100 overdue ones", async () => {
    await busyWorkspace("08:59");
    await loneWorkspace("09:00");
    clock = Date.parse("2026-06-01T09:00:00Z");
    const sched = scheduler();
    const due = Date.now();
    const ticking = sched.tick();
    const post = await lonePost();
    const lateness = post.at - due;
    expect(lateness, `the lone summary came ${lateness} ms after it was due`).toBeLessThan(MAX_LATENESS_MS);
    // Posted while the busy runs were still held in their scan reads: it waited behind none of them.
    expect(bigPosts()).toHaveLength(0);
    expect(sim.requests.some((r) => r.path === `/dnszone/${BIG_ZONE}/records/scan`)).toBe(true);
    // The busy workspace was not starved either: its runs went on meanwhile and post when stopped.
    releaseBusy();
    await sched.stop();
    expect(await ticking).toBeGreaterThan(1);
    expect(bigPosts().length).toBeGreaterThan(0);
    expect((await h.store.schedules.list("T0002"))[0]!.lastOutcome).toBe("ok");
  }, 30_000);

  it("across ticks: a schedule that falls due while the busy runs are still going posts on time", async () => {
    await busyWorkspace("08:59");
    await loneWorkspace("09:00");
    clock = Date.parse("2026-06-01T08:59:30Z");
    // The loop's ticks come as the test moves this clock's timers (its time of day is `clock`).
    const ticks = createManualClock(0);
    const sched = scheduler({ intervalMs: 50, clock: { ...ticks, now: () => clock } });
    sched.start();
    // The busy workspace's runs are under way (held in their scan reads) ...
    await ticks.advance(50);
    await sim.waitForRequest((r) => r.path === `/dnszone/${BIG_ZONE}/records/scan`);
    expect(bigPosts()).toHaveLength(0);
    // ... when the lone schedule falls due, and the loop ticks again.
    clock = Date.parse("2026-06-01T09:00:00Z");
    const due = Date.now();
    await ticks.advance(50);
    const post = await lonePost();
    expect(bigPosts()).toHaveLength(0);
    const lateness = post.at - due;
    expect(lateness, `the lone summary came ${lateness} ms after it was due`).toBeLessThan(MAX_LATENESS_MS);
  }, 30_000);

  it("one workspace never holds more than its share of the run slots", async () => {
    await busyWorkspace("08:59", false);
    clock = Date.parse("2026-06-01T09:00:00Z");
    // Every run that reaches its scan wait parks here, so `parked` counts the runs in flight.
    let parked = 0;
    let maxParked = 0;
    let twoParked = () => {};
    const bothParked = new Promise<void>((resolve) => (twoParked = resolve));
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const sched = scheduler({
      concurrency: 6,
      perWorkspaceConcurrency: 2,
      scanWait: {
        firstDelayMs: 100,
        maxWaitMs: SLOW_SCAN_MS,
        clock: {
          ...systemClock,
          sleep: async () => {
            parked++;
            maxParked = Math.max(maxParked, parked);
            if (parked === 2) twoParked();
            await gate;
            parked--;
          },
        },
      },
    });
    const ticking = sched.tick();
    try {
      await bothParked;
      // Nothing more starts: the bot settles with two runs parked.
      await h.settled();
      expect(parked).toBe(2);
      expect(maxParked).toBe(2);
    } finally {
      release();
      await sched.stop();
      await ticking;
    }
  }, 30_000);
});
