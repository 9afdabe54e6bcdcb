import { Writable } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import type { EdgeApi, EdgeApiOptions } from "../../src/edge/client.js";
import { describeEdgeError, EdgeApiError } from "../../src/edge/errors.js";
import { backoffDelay, keyId, parseRetryAfter, RETRY_DEFAULT } from "../../src/edge/queue.js";
import { createLogger } from "../../src/log.js";
import { testEdgeApi } from "../support/edge-api.js";
import { type CannedServer, startCannedServer } from "./support/canned-server.js";

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

const settle = <T>(p: Promise<T>) =>
  p.then(
    (v) => ({ ok: true as const, v }),
    (e: unknown) => ({ ok: false as const, e: e as EdgeApiError }),
  );

describe("retry policy helpers", () => {
  it("reads Retry-After as seconds or an HTTP date, capped at 60 s", () => {
    const now = Date.parse("2026-01-01T00:00:00Z");
    expect(parseRetryAfter("1", now, 60_000)).toBe(1000);
    expect(parseRetryAfter("0.5", now, 60_000)).toBe(500);
    expect(parseRetryAfter("3600", now, 60_000)).toBe(60_000);
    expect(parseRetryAfter("Thu, 01 Jan 2026 00:00:05 GMT", now, 60_000)).toBe(5000);
    expect(parseRetryAfter("Wed, 31 Dec 2025 23:00:00 GMT", now, 60_000)).toBe(0);
    expect(parseRetryAfter("soon", now, 60_000)).toBeUndefined();
    expect(parseRetryAfter(undefined, now, 60_000)).toBeUndefined();
  });

  it("backs off exponentially with jitter", () => {
    expect(backoffDelay(RETRY_DEFAULT, 1, () => 0)).toBe(250);
    expect(backoffDelay(RETRY_DEFAULT, 1, () => 1)).toBe(500);
    expect(backoffDelay(RETRY_DEFAULT, 2, () => 1)).toBe(1000);
    expect(backoffDelay(RETRY_DEFAULT, 10, () => 1)).toBe(RETRY_DEFAULT.maxDelayMs);
  });

  it("identifies a key by a hash prefix, never the key", () => {
    expect(keyId("secret")).toMatch(/^[0-9a-f]{16}$/);
    expect(keyId("secret")).not.toContain("secret");
  });
});

describe("per-key queue", () => {
  it("honours 429 Retry-After: 1 before retrying", async () => {
    const { server, api } = await setup();
    server.handle((_r, i) =>
      i === 0 ? { status: 429, headers: { "retry-after": "1" } } : { status: 200, body: apps },
    );
    const page = await api.forKey("k1").listApps();
    expect(page.items).toEqual([]);
    expect(server.requests).toHaveLength(2);
    const gap = server.requests[1]!.at - server.requests[0]!.at;
    expect(gap).toBeGreaterThanOrEqual(950);
    expect(gap).toBeLessThan(1600);
  });

  it("a 429 pauses only that key; the POST scan trigger is retried after a 429", async () => {
    const { server, api } = await setup();
    server.handle((r) =>
      r.headers.accesskey === "slow" &&
      server.requests.filter((q) => q.headers.accesskey === "slow").length === 1
        ? { status: 429, headers: { "retry-after": "1" } }
        : { status: 200, body: { JobId: "j", Status: 0 } },
    );
    const started = Date.now();
    const slow = api.forKey("slow").triggerDnsScan(5);
    await new Promise((r) => setTimeout(r, 50));
    await api.forKey("fast").triggerDnsScan(6);
    expect(Date.now() - started).toBeLessThan(500);
    expect((await slow).jobId).toBe("j");
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
  });

  it("never starts more than ratePerSec requests in any one-second window", async () => {
    const starts: number[] = [];
    const { server, api } = await setup({
      ratePerSec: 5,
      concurrency: 10,
      onQueueWait: () => starts.push(Date.now()),
    });
    const client = api.forKey("k-rate");
    const results = await Promise.all(Array.from({ length: 20 }, () => client.listApps()));
    expect(results).toHaveLength(20);
    const maxInWindow = (times: number[], windowMs: number) =>
      Math.max(...times.map((t) => times.filter((u) => u >= t && u < t + windowMs).length));
    // Where the attempts started (the queue's own clock): never 6 in a rolling second.
    expect(starts).toHaveLength(20);
    expect(maxInWindow(starts, 1000)).toBe(5);
    // What the server saw: the same (a small allowance for a loaded machine delaying an arrival).
    const arrivals = server.requests.map((r) => r.at).sort((a, b) => a - b);
    expect(maxInWindow(arrivals, 980)).toBe(5);
    expect(arrivals[19]! - arrivals[0]!).toBeGreaterThanOrEqual(2900);
  });

  it("keeps the rate cap across sequential calls (an idle queue is not reset early)", async () => {
    const { server, api } = await setup({ ratePerSec: 2 });
    const client = api.forKey("k-seq");
    for (let i = 0; i < 3; i++) await client.listApps();
    const at = server.requests.map((r) => r.at);
    expect(at[2]! - at[0]!).toBeGreaterThanOrEqual(950);
  });

  it("refuses calls at once with queue_full when maxQueue are waiting", async () => {
    let rejected = 0;
    const { server, api } = await setup({ concurrency: 1, maxQueue: 5, onQueueRejected: () => rejected++ });
    server.handle(() => ({ status: 200, body: apps, delayMs: 100 }));
    const client = api.forKey("k-full");
    const started = Date.now();
    const calls = Array.from({ length: 10 }, () => settle(client.listApps()));
    const fullOnes: number[] = [];
    for (const p of calls) {
      void p.then((r) => {
        if (!r.ok && r.e.kind === "queue_full") fullOnes.push(Date.now() - started);
      });
    }
    await new Promise((r) => setTimeout(r, 20));
    expect(api.queueStats()).toEqual({ keys: 1, waiting: 5, inFlight: 1 });
    const results = await Promise.all(calls);
    const full = results.filter((r) => !r.ok && r.e.kind === "queue_full");
    expect(full).toHaveLength(4);
    expect(results.filter((r) => r.ok)).toHaveLength(6);
    expect(Math.max(...fullOnes)).toBeLessThan(100);
    expect(rejected).toBe(4);
    expect(describeEdgeError((full[0] as { e: EdgeApiError }).e)).toBe(
      "Too many Edge API requests are waiting for this workspace; try again in a few seconds.",
    );
  });

  it("one key's backlog does not delay another key", async () => {
    const { server, api } = await setup({ ratePerSec: 1, concurrency: 1 });
    server.handle(() => ({ status: 200, body: apps, delayMs: 20 }));
    const a = api.forKey("key-A");
    const backlog = Array.from({ length: 5 }, () => settle(a.listApps()));
    await new Promise((r) => setTimeout(r, 30));
    const started = Date.now();
    await api.forKey("key-B").listApps();
    expect(Date.now() - started).toBeLessThan(300);
    expect(api.queueStats().keys).toBe(2);
    expect(api.queueStats().waiting).toBeGreaterThanOrEqual(3);
    const closing = Date.now();
    await api.close(0);
    const outcomes = await Promise.all(backlog);
    expect(Date.now() - closing).toBeLessThan(300);
    expect(outcomes.filter((o) => o.ok).length).toBeLessThan(5);
    for (const o of outcomes) if (!o.ok) expect(o.e).toBeInstanceOf(EdgeApiError);
  });

  it("times out each attempt and retries: kind timeout after three attempts", async () => {
    const { server, api } = await setup({ timeoutMs: 200 });
    server.handle(() => ({ status: 200, body: apps, delayMs: 1000 }));
    const started = Date.now();
    const r = await settle(api.forKey("k-slow").getBotDetection(1));
    const took = Date.now() - started;
    expect(r.ok).toBe(false);
    expect(!r.ok && r.e.kind).toBe("timeout");
    expect(server.requests).toHaveLength(3);
    expect(took).toBeGreaterThanOrEqual(600);
    expect(took).toBeLessThan(1500);
  });

  it("drops the queues of idle keys", async () => {
    const { api } = await setup();
    await Promise.all(Array.from({ length: 50 }, (_, i) => api.forKey(`key-${i}`).listApps()));
    expect(api.queueStats().keys).toBe(50);
    await new Promise((r) => setTimeout(r, 1200));
    expect(api.queueStats()).toEqual({ keys: 0, waiting: 0, inFlight: 0 });
  });

  it("reports each attempt and queue waits to the hooks", async () => {
    const events: unknown[] = [];
    const waits: number[] = [];
    const { server, api } = await setup({
      onRequest: (e) => events.push(e),
      onQueueWait: (ms) => waits.push(ms),
    });
    server.handle((_r, i) => (i === 0 ? { status: 502 } : { status: 200, body: apps }));
    await api.forKey("k-hooks").listApps();
    expect(events).toEqual([
      expect.objectContaining({
        operation: "listApps",
        method: "GET",
        attempt: 1,
        status: 502,
        kind: "server",
      }),
      expect.objectContaining({ operation: "listApps", method: "GET", attempt: 2, status: 200 }),
    ]);
    expect(waits).toHaveLength(2);
  });
});

describe("the API key never leaks", () => {
  it("appears in no error message, sentence or log line", async () => {
    const KEY = "sk-live-SUPERSECRET-4242";
    const lines: string[] = [];
    const destination = new Writable({
      write(chunk, _enc, cb) {
        lines.push(String(chunk));
        cb();
      },
    });
    const logger = createLogger({ level: "trace", destination });
    const { server, api } = await setup({ logger, timeoutMs: 150 });
    const answers = [
      { status: 401, body: { title: "Unauthorized", detail: `Key ${KEY} is not valid` } },
      { status: 400, body: { ErrorKey: "bad", Message: `AccessKey ${KEY} rejected` } },
      { status: 500 },
      { status: 200, body: apps, delayMs: 400 },
      { reset: true },
      { status: 200, body: "{oops" },
    ];
    const errors: EdgeApiError[] = [];
    for (const a of answers) {
      server.handle(() => a);
      const r = await settle(api.forKey(KEY).listApps());
      expect(r.ok).toBe(false);
      if (!r.ok) errors.push(r.e);
    }
    expect(errors.map((e) => e.kind)).toEqual([
      "unauthorized",
      "bad_request",
      "server",
      "timeout",
      "network",
      "invalid_response",
    ]);
    expect(server.requests.every((r) => r.headers.accesskey === KEY)).toBe(true);
    for (const e of errors) {
      expect(e.message).not.toContain(KEY);
      expect(e.apiMessage ?? "").not.toContain(KEY);
      expect(describeEdgeError(e)).not.toContain(KEY);
      expect(JSON.stringify({ ...e })).not.toContain(KEY);
    }
    expect(errors[1]!.apiMessage).toBe("AccessKey [redacted] rejected");
    await new Promise((r) => setTimeout(r, 50));
    expect(lines.length).toBeGreaterThan(5);
    for (const line of lines) expect(line).not.toContain(KEY);
    expect(lines.some((l) => l.includes(keyId(KEY)))).toBe(true);
  });
});
