import { afterAll, beforeAll, beforeEach, expect } from "vitest";
import type { EdgeApi, EdgeClient } from "../../src/edge/client.js";
import { EdgeApiError } from "../../src/edge/errors.js";
import { SIM_API_KEY, type Simulator, startSimulator } from "../../tools/simulator/index.js";
import { testEdgeApi } from "./edge-api.js";

export interface SimClient {
  sim: Simulator;
  api: EdgeApi;
  client: EdgeClient;
}

/**
 * A simulator and an Edge client on it for one test file (fast retries, a generous rate), started before
 * the file's tests and closed after; requests and faults are cleared before each test.
 */
export function useSimulatorClient(): SimClient {
  const ctx = {} as SimClient;
  beforeAll(async () => {
    ctx.sim = await startSimulator();
    ctx.api = testEdgeApi(ctx.sim.url);
    ctx.client = ctx.api.forKey(SIM_API_KEY);
  });
  afterAll(async () => {
    await ctx.api.close();
    await ctx.sim.close();
  });
  beforeEach(() => {
    ctx.sim.clearRequests();
    ctx.sim.clearFaults();
  });
  return ctx;
}

/** The EdgeApiError a call was refused with (the test fails if it succeeds or throws anything else). */
export async function rejection(p: Promise<unknown>): Promise<EdgeApiError> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(EdgeApiError);
  return e as EdgeApiError;
}
