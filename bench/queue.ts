/**
 * (3) Queue accuracy and (4) fairness, against the real Edge client (createEdgeApi) and a simulator with
 * 150 ms latency. Accuracy reads arrivals from the simulator in its own process (bench/sim-process.ts), so
 * its stamps are not delayed by this process's stalls, and beside them each attempt's start where the queue
 * let it go (onQueueWait) and the moment undici wrote it to the socket.
 */

import diagnosticsChannel from "node:diagnostics_channel";
import { systemClock } from "../src/clock.js";
import { createEdgeApi, type EdgeApi } from "../src/edge/client.js";
import { createLogger } from "../src/log.js";
import { startSimulator } from "../tools/simulator/index.js";
import {
  type Child,
  keyFor,
  ratio,
  round,
  SIM_LATENCY_MS,
  type Summary,
  sleep,
  summarize,
} from "./common.js";
import type { SimReady } from "./processes.js";

export interface QueueAccuracy {
  cap: number;
  calls: number;
  failed: number;
  durationMs: number;
  /** Most requests the simulator (its own process) received in any 1,000 ms sliding window (target ≤ cap). */
  maxInAnySecond: number;
  /** Most attempts the client's queue started in any 1,000 ms sliding window (onQueueWait; target ≤ cap). */
  maxStartsInAnySecond: number;
  /** Most requests written to their socket in any 1,000 ms sliding window (undici's sendHeaders; ≤ cap). */
  maxSentInAnySecond: number;
  /** Per consecutive whole second from the first arrival (full windows only). */
  perSecond: { min: number; mean: number; max: number; windows: number };
  /** Steady rate: cap·m calls over the time between arrival 0 and arrival cap·m (m whole periods). */
  achievedPerSec: number;
  /** achievedPerSec / cap (target ≥ 0.95). */
  utilisation: number;
}

export interface Fairness {
  queuedOnA: number;
  /** Key B's call latency on an idle system (the baseline). */
  idle: Summary;
  /** Key B's call latency while key A has `queuedOnA` calls queued. */
  underLoad: Summary;
  ratioP50: number;
  ratioMax: number;
  /** underLoad.max − idle.max (target < one window, 1,000 ms). */
  extraMaxMs: number;
}

function edgeFor(url: string, cap: number, maxQueue: number, onStart?: () => void): EdgeApi {
  return createEdgeApi({
    clock: systemClock,
    baseUrl: url,
    timeoutMs: 10_000,
    ratePerSec: cap,
    concurrency: 4,
    // EDGE_API_MAX_QUEUE defaults to 100: a thousand queued calls need it raised.
    maxQueue,
    logger: createLogger({ level: "silent" }),
    ...(onStart ? { onQueueWait: onStart } : {}),
  });
}

/** Largest count of arrivals within any [t, t + 1000) window. */
export function maxInWindow(arrivals: readonly number[], windowMs = 1000): number {
  const a = [...arrivals].sort((x, y) => x - y);
  let best = 0;
  let lo = 0;
  for (let hi = 0; hi < a.length; hi++) {
    while ((a[hi] as number) - (a[lo] as number) >= windowMs) lo++;
    best = Math.max(best, hi - lo + 1);
  }
  return best;
}

export async function queueAccuracy(
  sim: Child<SimReady>,
  calls: number,
  cap: number,
): Promise<QueueAccuracy> {
  const starts: number[] = [];
  const sent: number[] = [];
  const edge = edgeFor(sim.ready.url, cap, calls + 10, () => starts.push(performance.now()));
  // Published by undici just before it writes the request's head to the socket: when it left this process.
  const onSent = (message: unknown) => {
    const { request } = message as { request: { origin?: unknown; path?: unknown } };
    if (
      String(request.origin).startsWith(sim.ready.url) &&
      String(request.path).startsWith("/shield/shield-zones")
    )
      sent.push(performance.now());
  };
  diagnosticsChannel.subscribe("undici:client:sendHeaders", onSent);
  try {
    await sim.call("clear");
    const client = edge.forKey(keyFor(0));
    const started = Date.now();
    const results = await Promise.allSettled(
      Array.from({ length: calls }, () => client.listShieldZones({ perPage: 1 })),
    );
    const durationMs = Date.now() - started;
    const received = await sim.call<number[]>("arrivals", { pathIncludes: "/shield/shield-zones" });
    const arrivals = received.sort((a, b) => a - b);
    const first = arrivals[0] ?? 0;
    const last = arrivals.at(-1) ?? 0;
    const windows = Math.floor((last - first) / 1000);
    const counts: number[] = Array.from({ length: windows }, () => 0);
    for (const t of arrivals) {
      const w = Math.floor((t - first) / 1000);
      if (w < windows) counts[w] = (counts[w] ?? 0) + 1;
    }
    // Steady rate over whole periods: arrival i and arrival i + cap·m are m rate windows apart.
    const m = Math.floor((arrivals.length - 1) / cap);
    const span = (arrivals[cap * m] ?? first) - first;
    const achieved = span > 0 ? ((cap * m) / span) * 1000 : 0;
    return {
      cap,
      calls,
      failed: results.filter((r) => r.status === "rejected").length,
      durationMs,
      maxInAnySecond: maxInWindow(arrivals),
      maxStartsInAnySecond: maxInWindow(starts),
      maxSentInAnySecond: maxInWindow(sent),
      perSecond: {
        min: counts.length ? Math.min(...counts) : 0,
        mean: round(counts.reduce((s, c) => s + c, 0) / Math.max(1, counts.length)),
        max: counts.length ? Math.max(...counts) : 0,
        windows,
      },
      achievedPerSec: round(achieved),
      utilisation: round(achieved / cap, 3),
    };
  } finally {
    diagnosticsChannel.unsubscribe("undici:client:sendHeaders", onSent);
    await edge.close(0);
  }
}

async function timeCall(edge: EdgeApi, key: string): Promise<number> {
  const t0 = performance.now();
  await edge.forKey(key).listShieldZones({ perPage: 1 });
  return performance.now() - t0;
}

export async function fairness(queuedOnA: number, cap: number, probes = 5): Promise<Fairness> {
  const sim = await startSimulator({ latencyMs: SIM_LATENCY_MS, apiKeys: [keyFor(0), keyFor(1)] });
  const edge = edgeFor(sim.url, cap, queuedOnA + 10);
  const a = keyFor(0);
  const b = keyFor(1);
  try {
    await timeCall(edge, b); // warm the connection pool
    await sleep(1_200);
    const idle: number[] = [];
    for (let i = 0; i < probes; i++) {
      idle.push(await timeCall(edge, b));
      await sleep(1_200); // past B's rate window, so each probe is a first call
    }
    const flood = Array.from({ length: queuedOnA }, () =>
      edge
        .forKey(a)
        .listShieldZones({ perPage: 1 })
        .catch(() => undefined),
    );
    await sleep(1_500); // A's queue is saturated: cap started per window, the rest waiting
    const underLoad: number[] = [];
    for (let i = 0; i < probes; i++) {
      underLoad.push(await timeCall(edge, b));
      await sleep(1_200);
    }
    const idleS = summarize(idle);
    const loadS = summarize(underLoad);
    await edge.close(0); // aborts A's waiting calls
    await Promise.all(flood);
    return {
      queuedOnA,
      idle: idleS,
      underLoad: loadS,
      ratioP50: ratio(loadS.p50, idleS.p50),
      ratioMax: ratio(loadS.max, idleS.max),
      extraMaxMs: round(loadS.max - idleS.max),
    };
  } finally {
    await edge.close(0);
    await sim.close();
  }
}
