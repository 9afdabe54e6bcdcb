import { systemClock } from "../../src/clock.js";
import { createEdgeApi, type EdgeApi, type EdgeApiOptions } from "../../src/edge/client.js";
import { RETRY_FAST } from "../../src/edge/queue.js";
import { silentLogger } from "../../src/log.js";

/**
 * An Edge API client for tests against `baseUrl`: fast retries, a generous rate and queue, no logs.
 * `overrides` are what a test is about (a slow rate, one at a time, a shared limit ...).
 */
export function testEdgeApi(baseUrl: string, overrides: Partial<EdgeApiOptions> = {}): EdgeApi {
  return createEdgeApi({
    clock: systemClock,
    baseUrl,
    timeoutMs: 2000,
    ratePerSec: 1000,
    concurrency: 8,
    maxQueue: 100,
    logger: silentLogger,
    retry: RETRY_FAST,
    ...overrides,
  });
}
