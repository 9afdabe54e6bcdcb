import { afterEach, describe, expect, it } from "vitest";
import type { EdgeApi, EdgeApiOptions } from "../../src/edge/client.js";
import { testEdgeApi } from "../support/edge-api.js";
import { type CannedServer, startCannedServer } from "./support/canned-server.js";

/**
 * The per-key pacing in real time: the strict sliding window (1050 ms, src/edge/queue.ts) on the system
 * clock, measured as the API would see it, so these are the key queue's only tests that wait on real time
 * (each about the few windows its assertions need). The same rules on a manual clock, and everything else
 * about the queue, are in queue.flow.test.ts.
 */

const apps = { items: [], meta: { totalItems: 0 }, cursor: null };

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()?.();
});

async function setup(options: Partial<EdgeApiOptions> = {}): Promise<{ server: CannedServer; api: EdgeApi }> {
  const server = await startCannedServer(() => ({ status: 200, body: apps }));
  const api = testEdgeApi(server.url, { ratePerSec: 100, concurrency: 4, ...options });
  cleanups.push(async () => {
    await api.close(0);
    await server.close();
  });
  return { server, api };
}

describe("per-key pacing in real time", () => {
  it("never starts more than ratePerSec requests in any one-second window", async () => {
    const starts: number[] = [];
    const { server, api } = await setup({
      ratePerSec: 5,
      concurrency: 10,
      // On the monotonic clock the queue's windows are read on (systemClock.elapsed), not the time of day.
      onQueueWait: () => starts.push(performance.now()),
    });
    const client = api.forKey("k-rate");
    const results = await Promise.all(Array.from({ length: 20 }, () => client.listApps()));
    expect(results).toHaveLength(20);
    const maxInWindow = (times: number[], windowMs: number) =>
      Math.max(...times.map((t) => times.filter((u) => u >= t && u < t + windowMs).length));
    // Where the attempts started (the queue's own clock): never 6 in a rolling second.
    expect(starts).toHaveLength(20);
    expect(maxInWindow(starts, 1000)).toBe(5);
    // What the server saw spans the same three seconds and more. (Not counted per window: the server shares
    // this process, so a stall of it on a busy machine bunches arrivals of requests that left a second apart.)
    const arrivals = server.requests.map((r) => r.at).sort((a, b) => a - b);
    expect(arrivals).toHaveLength(20);
    expect(arrivals[19]! - arrivals[0]!).toBeGreaterThanOrEqual(2900);
  });

  it("keeps part of each window's starts for people: a burst of background reads never makes the next command wait a window", async () => {
    const { server, api } = await setup({ ratePerSec: 10, concurrency: 4 });
    const background = api.forKey("k-share", { background: true });
    const reads = Array.from({ length: 10 }, () => background.listApps());
    await server.waitForRequests(6);
    // Background work has 6 of the window's 10 starts; the other 4 wait for the next window.
    await new Promise((r) => setTimeout(r, 150));
    expect(server.requests).toHaveLength(6);
    await api.forKey("k-share").listApps();
    // It took one of the starts kept back, within the window still running: the four background reads held
    // back by that window have not started (had the command waited for the next window, they would have
    // started with it).
    expect(server.requests).toHaveLength(7);
    await Promise.all(reads);
    expect(server.requests).toHaveLength(11);
  });

  it("keeps the rate cap across sequential calls (an idle queue is not reset early)", async () => {
    const { server, api } = await setup({ ratePerSec: 2 });
    const client = api.forKey("k-seq");
    for (let i = 0; i < 3; i++) await client.listApps();
    const at = server.requests.map((r) => r.at);
    expect(at[2]! - at[0]!).toBeGreaterThanOrEqual(950);
  });
});
