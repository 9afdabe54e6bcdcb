import { getEventListeners } from "node:events";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EdgeApi } from "../../src/edge/client.js";
import { EdgeApiError } from "../../src/edge/errors.js";
import { SIM_API_KEY, SIM_IDS, type Simulator, startSimulator } from "../../tools/simulator/index.js";
import { testEdgeApi } from "../support/edge-api.js";

/**
 * A change in flight whose lease can't be renewed aborts its Edge calls (ForKeyOptions.signal,
 * src/changes/in-flight.ts), sent or still waiting in the key's queue, and the outcome is "not known".
 */

let sim: Simulator;
let api: EdgeApi;
beforeAll(async () => {
  sim = await startSimulator({ scanDurationMs: 200 });
  api = testEdgeApi(sim.url, { timeoutMs: 5000, concurrency: 1 });
});
afterAll(async () => {
  await api.close();
  await sim.close();
});

describe("a client's calls aborted by its signal", () => {
  it("a call in flight and one waiting behind it end at once as network errors; other clients go on", async () => {
    const zone = SIM_IDS.firstShieldZone;
    const path = `/shield/shield-zone/${zone}/bot-categorization`;
    // The first call stays in flight until the test releases its answer; the second waits behind it.
    let release = () => {};
    sim.addFault({ path, holdUntil: new Promise<void>((r) => (release = r)), times: 1 });
    const abort = new AbortController();
    const client = api.forKey(SIM_API_KEY, { signal: abort.signal });
    const started = performance.now();
    const sent = client.getBotCategories(zone).catch((e: unknown) => e);
    const waiting = client.getBotCategories(zone).catch((e: unknown) => e);
    await sim.waitForRequest((r) => r.path === path);
    expect(sim.inFlight()).toBe(1);
    expect(api.queueStats()).toMatchObject({ waiting: 1, inFlight: 1 });
    abort.abort(new Error("lease lost"));
    for (const err of [await sent, await waiting]) {
      expect(err).toBeInstanceOf(EdgeApiError);
      expect((err as EdgeApiError).kind).toBe("network");
    }
    expect(performance.now() - started).toBeLessThan(2_000);
    // Only the first call reached the API; its held answer is let go now that nobody waits for it.
    expect(sim.requests.filter((r) => r.path === path)).toHaveLength(1);
    release();
    // The same key without the signal is not affected.
    expect((await api.forKey(SIM_API_KEY).getBotCategories(zone)).length).toBeGreaterThan(0);
  });

  it("a client kept after its calls holds on to nothing: its signal has no listeners once they end", async () => {
    const abort = new AbortController();
    const client = api.forKey(SIM_API_KEY, { signal: abort.signal });
    const calls = Array.from({ length: 5 }, () => client.getBotCategories(SIM_IDS.firstShieldZone));
    expect(getEventListeners(abort.signal, "abort").length).toBeGreaterThan(0);
    await Promise.all(calls);
    expect(getEventListeners(abort.signal, "abort")).toHaveLength(0);
  });
});
