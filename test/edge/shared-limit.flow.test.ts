import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { EdgeApi } from "../../src/edge/client.js";
import { SIM_API_KEY, type Simulator, startSimulator } from "../../tools/simulator/index.js";
import { testEdgeApi } from "../support/edge-api.js";
import { busiestSecond } from "../support/request-rate.js";

/**
 * Two EdgeApi instances in one process stand for two replicas, each with its own in-process queue. What the
 * shared limit (Redis) changes about them waits on Redis's clock, so it is specified in
 * shared-limit.process.test.ts; here, what two replicas do without it, which waits on nothing.
 */
const RATE = 5;

let sim: Simulator;
const opened: EdgeApi[] = [];

beforeAll(async () => {
  sim = await startSimulator();
});
afterAll(async () => {
  await sim.close();
});
afterEach(async () => {
  for (const api of opened.splice(0)) await api.close(0);
  sim.clearRequests();
});

function replica(): EdgeApi {
  const api = testEdgeApi(sim.url, { timeoutMs: 5000, ratePerSec: RATE, concurrency: 4, maxQueue: 1000 });
  opened.push(api);
  return api;
}

describe("per-key rate without a shared limit", () => {
  it("without Redis two replicas together send more than the per-key rate", async () => {
    // Each replica sends its own full rate at once (its first window: nothing waits), so together they
    // send twice the per-key rate within one second.
    const apis = [replica(), replica()];
    await Promise.all(
      apis.flatMap((api) =>
        Array.from({ length: RATE }, () => api.forKey(SIM_API_KEY).listApps({ limit: 1 })),
      ),
    );
    expect(sim.requests).toHaveLength(2 * RATE);
    expect(busiestSecond(sim.requests.map((r) => r.at))).toBeGreaterThan(RATE);
  });
});
