import { randomUUID } from "node:crypto";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { systemClock } from "../../src/clock.js";
import { createEdgeApi, type EdgeApi } from "../../src/edge/client.js";
import { RETRY_FAST } from "../../src/edge/queue.js";
import { createSharedLimit, type SharedLimit } from "../../src/edge/shared-limit.js";
import { silentLogger } from "../../src/log.js";
import { SIM_API_KEY, type Simulator, startSimulator } from "../../tools/simulator/index.js";
import { testEdgeApi } from "../support/edge-api.js";
import { busiestSecond } from "../support/request-rate.js";
import { type TcpProxy, tcpProxy } from "../support/tcp-proxy.js";

/**
 * Two EdgeApi instances in one process stand for two replicas: each has its own in-process queue,
 * and with a SharedLimit over the same real Redis they share one per-key rate.
 *
 * Real time is the subject here: the shared start slots, leases and 429 pauses are Redis keys that expire
 * on Redis's own clock (src/edge/shared-limit.ts reads the real clock on purpose), and the degraded share
 * is paced in memory in real time. So these tests wait, each for the few windows its assertions need;
 * what needs no Redis and no waiting is in shared-limit.flow.test.ts.
 */
const REDIS_URL = process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379";
const RATE = 5;

let sim: Simulator;
const opened: { api: EdgeApi; shared?: SharedLimit }[] = [];

beforeAll(async () => {
  sim = await startSimulator({ scanDurationMs: 200 });
});
afterAll(async () => {
  await sim.close();
});
afterEach(async () => {
  for (const o of opened.splice(0)) {
    await o.api.close(1000);
    await o.shared?.close();
  }
  sim.clearFaults();
  sim.clearRequests();
});

function replica(
  shared: SharedLimit | undefined,
  limits: { ratePerSec: number; concurrency: number } = { ratePerSec: RATE, concurrency: 4 },
  starts: number[] = [],
): EdgeApi {
  const api = createEdgeApi({
    clock: systemClock,
    baseUrl: sim.url,
    timeoutMs: 5000,
    ratePerSec: limits.ratePerSec,
    concurrency: limits.concurrency,
    // Stamped where the limit acts: the attempt has its start slot and leaves in this same turn.
    onQueueWait: () => starts.push(performance.now()),
    maxQueue: 1000,
    logger: silentLogger,
    retry: RETRY_FAST,
    ...(shared ? { sharedLimit: shared } : {}),
  });
  opened.push({ api, ...(shared ? { shared } : {}) });
  return api;
}

// A fresh prefix per test (shared by that test's replicas): no slot or pause left over from another test.
let prefix = "";
beforeEach(() => {
  prefix = `edgeops-test:${randomUUID()}`;
});

function sharedLimit(
  redisUrl = REDIS_URL,
  expectedReplicas = 2,
  limits: { ratePerSec: number; concurrency: number } = { ratePerSec: RATE, concurrency: 4 },
): SharedLimit {
  return createSharedLimit({
    redisUrl,
    ...limits,
    requestTimeoutMs: 5000,
    expectedReplicas,
    logger: silentLogger,
    prefix,
  });
}

/** Looks every 20 ms until `done()` holds or `ms` of real time have passed. */
async function pollUntil(done: () => boolean, ms = 3000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!done() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
}

async function untilReady(shared: SharedLimit): Promise<void> {
  await pollUntil(() => shared.problem() === undefined);
  expect(shared.problem()).toBeUndefined();
}

/** A shared limit (of two replicas) reaching Redis through a proxy the test can cut, stall and restart. */
async function sharedLimitThroughProxy(): Promise<{ proxy: TcpProxy; port: number; shared: SharedLimit }> {
  const proxy = tcpProxy(new URL(REDIS_URL));
  const port = await proxy.start();
  return { proxy, port, shared: sharedLimit(`redis://127.0.0.1:${port}`, 2) };
}

/**
 * The shared limit with its `pause` reported once Redis holds the pause (every replica sees it from then
 * on): the event a test waits for before asking from another replica.
 */
function reportingPause(shared: SharedLimit): { shared: SharedLimit; paused: Promise<void> } {
  let done = () => {};
  const paused = new Promise<void>((r) => (done = r));
  return {
    shared: {
      ...shared,
      pause: async (id, ms) => {
        await shared.pause(id, ms);
        done();
      },
    },
    paused,
  };
}

/**
 * `pausing` meets a 429 with the shortest Retry-After the header can say in whole seconds (1); once its
 * pause is in Redis (`paused`), `other` asks. When the 429 was hit, and how long after it `other` was answered.
 */
async function askDuringSharedPause(
  pausing: EdgeApi,
  paused: Promise<void>,
  other: EdgeApi,
): Promise<{ hit: number; otherAnsweredAfter: number }> {
  sim.addFault({ path: "/mc/apps", retryAfter: "1", times: 1 });
  const hit = Date.now();
  const pausingCall = pausing.forKey(SIM_API_KEY).listApps({ limit: 1 });
  await paused;
  await other.forKey(SIM_API_KEY).listApps({ limit: 1 });
  const otherAnsweredAfter = Date.now() - hit;
  await pausingCall;
  return { hit, otherAnsweredAfter };
}

async function burst(apis: EdgeApi[], callsEach: number): Promise<void> {
  await Promise.all(
    apis.flatMap((api) =>
      Array.from({ length: callsEach }, () => api.forKey(SIM_API_KEY).listApps({ limit: 1 })),
    ),
  );
}

describe("per-key rate shared across replicas through Redis", () => {
  it("with Redis two replicas together stay within the per-key rate in every second", async () => {
    const a = sharedLimit();
    const b = sharedLimit();
    await Promise.all([untilReady(a), untilReady(b)]);
    const startTimes: number[] = [];
    await burst([replica(a, undefined, startTimes), replica(b, undefined, startTimes)], 8);
    expect(sim.requests).toHaveLength(16);
    // Counted where the limit acts, when each replica started an attempt: the simulator shares this process,
    // so a stall of it (a busy machine) bunches the arrivals of requests that left a second apart.
    expect(startTimes).toHaveLength(16);
    expect(busiestSecond(startTimes)).toBeLessThanOrEqual(RATE);
    // Both replicas got starts: the limit is shared, not one replica starving the other.
    expect(busiestSecond(startTimes)).toBeGreaterThanOrEqual(RATE - 1);
  }, 15_000);

  it("the concurrency cap holds across replicas with Redis (and doubles without)", async () => {
    const limits = { ratePerSec: 100, concurrency: 2 };
    // Counted by the simulator (received, answer not yet begun): never more than the replicas had in flight,
    // and the latency keeps every attempt the cap lets start waiting there together.
    sim.setLatency(300);
    try {
      await burst([replica(undefined, limits), replica(undefined, limits)], 6);
      expect(sim.requests).toHaveLength(12);
      expect(sim.mostInFlight()).toBe(4);
      const a = sharedLimit(REDIS_URL, 2, limits);
      const b = sharedLimit(REDIS_URL, 2, limits);
      await Promise.all([untilReady(a), untilReady(b)]);
      sim.clearRequests();
      await burst([replica(a, limits), replica(b, limits)], 6);
      expect(sim.requests).toHaveLength(12);
      expect(sim.mostInFlight()).toBe(2);
    } finally {
      sim.setLatency(0);
    }
  }, 20_000);

  it("a Retry-After pauses the other replica while the first is still waiting", async () => {
    const a = sharedLimit();
    const b = sharedLimit();
    await Promise.all([untilReady(a), untilReady(b)]);
    const reporting = reportingPause(a);
    const first = replica(reporting.shared);
    const second = replica(b);
    // Once the first replica's 429 pause is in Redis, ask from the other replica.
    const { hit, otherAnsweredAfter: secondAnsweredAfter } = await askDuringSharedPause(
      first,
      reporting.paused,
      second,
    );
    expect(secondAnsweredAfter).toBeGreaterThanOrEqual(900);
    // Without the shared pause the second replica would have been answered at once.
    expect(sim.requests.filter((r) => r.at - hit < 900)).toHaveLength(1);
  }, 15_000);

  it("with Redis gone, calls still succeed at this replica's share of the rate, and /readyz says degraded", async () => {
    const { proxy, shared: a } = await sharedLimitThroughProxy();
    await untilReady(a);
    const starts: number[] = [];
    const api = replica(a, undefined, starts);
    await proxy.cut();
    await pollUntil(() => a.problem() !== undefined);
    expect(a.problem()).toMatch(/^degraded: Redis does not answer.*\(2\/s and 2 at once per key\)/);
    sim.clearRequests();
    await burst([api], 6);
    expect(sim.requests).toHaveLength(6);
    // RATE ÷ 2 replicas = 2 starts per second (counted where the limit acts, as above).
    expect(busiestSecond(starts)).toBeLessThanOrEqual(2);
  }, 15_000);

  it("the wait for the shared limit counts as queue wait (onQueueWait), not only the local queue's", async () => {
    const a = sharedLimit();
    const b = sharedLimit();
    await Promise.all([untilReady(a), untilReady(b)]);
    // Replica A takes every start slot of this second.
    await burst([replica(a)], RATE);
    const waits: number[] = [];
    const other = testEdgeApi(sim.url, {
      timeoutMs: 5000,
      ratePerSec: RATE,
      concurrency: 4,
      maxQueue: 1000,
      sharedLimit: b,
      onQueueWait: (ms) => waits.push(ms),
    });
    opened.push({ api: other, shared: b });
    // B's own queue is empty, so only the shared limit makes its one call wait.
    await other.forKey(SIM_API_KEY).listApps({ limit: 1 });
    expect(waits).toHaveLength(1);
    expect(waits[0]).toBeGreaterThanOrEqual(300);
  }, 15_000);

  it("a Redis stall that never closed the connection: the next answer ends 'degraded', and the cluster's 429 pause holds again", async () => {
    const { proxy, shared: a } = await sharedLimitThroughProxy();
    const b = sharedLimit();
    await Promise.all([untilReady(a), untilReady(b)]);
    const first = replica(a);
    const reporting = reportingPause(b);
    const second = replica(reporting.shared);
    // Half-open: nothing answers, nothing closes; commands time out, the call runs on the local share.
    proxy.stall();
    await first.forKey(SIM_API_KEY).listApps({ limit: 1 });
    expect(a.problem()).toMatch(/^degraded/);
    proxy.resume();
    // Redis answers again on the same connection ("ready" is never emitted again): B meets a 429.
    sim.clearRequests();
    // Once B's 429 pause is in Redis, ask from A.
    const { hit, otherAnsweredAfter: firstAnsweredAfter } = await askDuringSharedPause(
      second,
      reporting.paused,
      first,
    );
    expect(a.problem()).toBeUndefined();
    expect(firstAnsweredAfter).toBeGreaterThanOrEqual(900);
    expect(sim.requests.filter((r) => r.at - hit < 900)).toHaveLength(1);
    await proxy.cut();
  }, 20_000);

  it("when Redis returns, the shared limit holds again across both replicas and /readyz is clear", async () => {
    const { proxy, port, shared: a } = await sharedLimitThroughProxy();
    const b = sharedLimit();
    await Promise.all([untilReady(a), untilReady(b)]);
    await proxy.cut();
    await pollUntil(() => a.problem() !== undefined);
    expect(a.problem()).toMatch(/^degraded/);
    // Redis is back on the same address: the replica reconnects by itself (retry up to every 2 s).
    await proxy.start(port);
    await pollUntil(() => a.problem() === undefined, 5000);
    expect(a.problem()).toBeUndefined();
    sim.clearRequests();
    // Two replicas at full local rate each (RATE) would send 2 × RATE in a second without the shared slots.
    const starts: number[] = [];
    await burst([replica(a, undefined, starts), replica(b, undefined, starts)], 8);
    expect(sim.requests).toHaveLength(16);
    expect(busiestSecond(starts)).toBeLessThanOrEqual(RATE);
    await proxy.cut();
  }, 20_000);
});
