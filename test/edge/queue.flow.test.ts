import { Writable } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import type { EdgeApi, EdgeApiOptions } from "../../src/edge/client.js";
import { describeEdgeError, EdgeApiError } from "../../src/edge/errors.js";
import {
  backoffDelay,
  KeyQueues,
  keyId,
  parseRetryAfter,
  RETRY_DEFAULT,
  RETRY_FAST,
} from "../../src/edge/queue.js";
import { createLogger } from "../../src/log.js";
import { createManualClock, type ManualClock } from "../support/clock.js";
import { testEdgeApi } from "../support/edge-api.js";
import { type CannedServer, startCannedServer } from "./support/canned-server.js";

/**
 * The key queue's rate windows, its pauses (a 429's Retry-After), its request timeouts and its idle-drop run
 * on the client's clock: here a manual one, moved by the test once the request or timer it moves past exists.
 * The same pacing on the system clock, measured in real time, is in queue.process.test.ts.
 */

const apps = { items: [], meta: { totalItems: 0 }, cursor: null };

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()?.();
});

const T0 = Date.UTC(2026, 0, 1);

/** A manual clock that also tells when a timer of `ms` is set (a key's pause, an attempt's timeout). */
interface WatchedClock extends ManualClock {
  timerSet(ms: number): Promise<void>;
}

function watchedClock(): WatchedClock {
  const clock = createManualClock(T0);
  const set = clock.setTimeout;
  const waiters: { ms: number; resolve: () => void }[] = [];
  return Object.assign(clock, {
    setTimeout(fn: () => void, ms: number) {
      const cancel = set(fn, ms);
      for (const w of waiters.filter((x) => x.ms === ms)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
      return cancel;
    },
    timerSet: (ms: number) => new Promise<void>((resolve) => waiters.push({ ms, resolve })),
  });
}

/**
 * A canned server and a client of it. With `clock` (a manual clock) the client's pauses, timeouts and
 * idle-drops run on it and the server stamps requests with it; closing still ends at once.
 */
/** The backoffs before a retried read's second and third attempts (RETRY_FAST, jitter at its ceiling). */
const BACKOFFS = [backoffDelay(RETRY_FAST, 1, () => 1), backoffDelay(RETRY_FAST, 2, () => 1)] as const;

/** Moves the clock past each backoff once it is set (asked before the attempt that sets the first fails). */
async function pastBackoffs(clock: WatchedClock): Promise<void> {
  const set = BACKOFFS.map((ms) => clock.timerSet(ms));
  for (const [i, ms] of BACKOFFS.entries()) {
    await set[i];
    await clock.advance(ms);
  }
}

async function setup(options: Partial<EdgeApiOptions> = {}): Promise<{ server: CannedServer; api: EdgeApi }> {
  const clock = options.clock as ManualClock | undefined;
  const server = await startCannedServer(() => ({ status: 200, body: apps }), {
    ...(clock ? { now: clock.now } : {}),
  });
  const api = testEdgeApi(server.url, { ratePerSec: 100, concurrency: 4, ...options });
  cleanups.push(async () => {
    const closed = api.close(0);
    if (clock) await clock.advance(0);
    await closed;
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
    const clock = watchedClock();
    const { server, api } = await setup({ clock });
    server.handle((_r, i) =>
      i === 0 ? { status: 429, headers: { "retry-after": "1" } } : { status: 200, body: apps },
    );
    const paused = clock.timerSet(1000);
    const call = api.forKey("k1").listApps();
    await paused;
    // Not a moment before the Retry-After has passed.
    await clock.advance(999);
    expect(server.requests).toHaveLength(1);
    await clock.advance(1);
    const page = await call;
    expect(page.items).toEqual([]);
    expect(server.requests).toHaveLength(2);
    const gap = server.requests[1]!.at - server.requests[0]!.at;
    expect(gap).toBeGreaterThanOrEqual(950);
    expect(gap).toBeLessThan(1600);
  });

  it("a 429 pauses only that key; the POST scan trigger is retried after a 429", async () => {
    const clock = watchedClock();
    const { server, api } = await setup({ clock });
    server.handle((r) =>
      r.headers.accesskey === "slow" &&
      server.requests.filter((q) => q.headers.accesskey === "slow").length === 1
        ? { status: 429, headers: { "retry-after": "1" } }
        : { status: 200, body: { JobId: "j", Status: 0 } },
    );
    const started = clock.now();
    const paused = clock.timerSet(1000);
    let slowDone = false;
    const slow = api.forKey("slow").triggerDnsScan(5);
    void slow.finally(() => (slowDone = true));
    await paused;
    // The other key is answered while the slow key is paused, without the clock moving at all.
    await api.forKey("fast").triggerDnsScan(6);
    expect(clock.now() - started).toBe(0);
    expect(slowDone).toBe(false);
    await clock.advance(1000);
    expect((await slow).jobId).toBe("j");
    expect(clock.now() - started).toBeGreaterThanOrEqual(950);
    const slowOnes = server.requests.filter((r) => r.headers.accesskey === "slow");
    expect(slowOnes.map((r) => r.method)).toEqual(["POST", "POST"]);
    expect(slowOnes[1]!.at - started).toBeGreaterThanOrEqual(1000);
  });

  it("refuses calls at once with queue_full when maxQueue are waiting", async () => {
    let rejected = 0;
    const { server, api } = await setup({ concurrency: 1, maxQueue: 5, onQueueRejected: () => rejected++ });
    // Every answer is held until the test lets them go: the first call stays in flight meanwhile.
    let release = () => {};
    const held = new Promise<void>((r) => (release = r));
    server.handle(() => ({ status: 200, body: apps, holdUntil: held }));
    const client = api.forKey("k-full");
    const calls = Array.from({ length: 10 }, () => settle(client.listApps()));
    let fullOnes = 0;
    let answered = 0;
    for (const p of calls) {
      void p.then((r) => {
        if (r.ok) answered++;
        else if (r.e.kind === "queue_full") fullOnes++;
      });
    }
    await server.waitForRequests(1);
    expect(api.queueStats()).toEqual({ keys: 1, waiting: 5, inFlight: 1 });
    // Refused at once: before the call in flight (or any other) was answered.
    expect(fullOnes).toBe(4);
    expect(answered).toBe(0);
    release();
    const results = await Promise.all(calls);
    const full = results.filter((r) => !r.ok && r.e.kind === "queue_full");
    expect(full).toHaveLength(4);
    expect(results.filter((r) => r.ok)).toHaveLength(6);
    expect(rejected).toBe(4);
    expect(describeEdgeError((full[0] as { e: EdgeApiError }).e)).toBe(
      "Too many Edge API requests are waiting for this workspace; try again in a few seconds.",
    );
  });

  it("refuses optional background reads at once with busy once maxBackground background calls wait or run; polling and commands still queue", async () => {
    let rejected = 0;
    const { server, api } = await setup({ maxBackground: 3, onQueueRejected: () => rejected++ });
    let release = () => {};
    const held = new Promise<void>((r) => (release = r));
    server.handle(() => ({ status: 200, body: apps, holdUntil: held }));
    // Three keys' optional reads fill the replica's background allowance (one in flight each).
    const optional = ["k-1", "k-2", "k-3"].map((k) =>
      settle(api.forKey(k, { background: "optional" }).listApps()),
    );
    await server.waitForRequests(3);
    const refused = await settle(api.forKey("k-4", { background: "optional" }).listApps());
    expect(refused.ok).toBe(false);
    const e = (refused as { e: EdgeApiError }).e;
    expect(e.kind).toBe("busy");
    expect(describeEdgeError(e)).toBe(
      "edgeops is busy with many background reads of the Edge API right now; ask again in a minute.",
    );
    expect(rejected).toBe(1);
    // Alert polling (background, not optional) and a person's command are queued, never refused for it.
    const polling = settle(api.forKey("k-5", { background: true }).listApps());
    const command = settle(api.forKey("k-6").listApps());
    await server.waitForRequests(5);
    expect(server.requests).toHaveLength(5);
    release();
    const all = await Promise.all([...optional, polling, command]);
    expect(all.every((r) => r.ok)).toBe(true);
    // With the backlog gone, an optional read is sent again.
    expect((await settle(api.forKey("k-4", { background: "optional" }).listApps())).ok).toBe(true);
  });

  it("one key's backlog does not delay another key", async () => {
    const { server, api } = await setup({ ratePerSec: 1, concurrency: 1 });
    // Key A's answers are held until the end: its first call stays in flight, the other four wait behind it.
    let release = () => {};
    const held = new Promise<void>((r) => (release = r));
    server.handle((r) =>
      r.headers.accesskey === "key-A"
        ? { status: 200, body: apps, holdUntil: held }
        : { status: 200, body: apps },
    );
    const a = api.forKey("key-A");
    const backlog = Array.from({ length: 5 }, () => settle(a.listApps()));
    await server.waitForRequests(1);
    const started = Date.now();
    // Answered while key A's call is still in flight and its backlog waits.
    await api.forKey("key-B").listApps();
    expect(Date.now() - started).toBeLessThan(300);
    expect(server.inFlight()).toBe(1);
    expect(api.queueStats().keys).toBe(2);
    expect(api.queueStats().waiting).toBeGreaterThanOrEqual(3);
    const closing = Date.now();
    await api.close(0);
    const outcomes = await Promise.all(backlog);
    expect(Date.now() - closing).toBeLessThan(300);
    expect(outcomes.filter((o) => o.ok).length).toBeLessThan(5);
    for (const o of outcomes) if (!o.ok) expect(o.e).toBeInstanceOf(EdgeApiError);
    release();
  });

  it("times out each attempt and retries: kind timeout after three attempts", async () => {
    const clock = watchedClock();
    const { server, api } = await setup({ clock, timeoutMs: 2000, random: () => 1 });
    // The answer would come only after the server closes: each attempt ends at its timeout.
    server.handle(() => ({ status: 200, body: apps, holdUntil: new Promise(() => {}) }));
    const started = clock.now();
    const call = settle(api.forKey("k-slow").getBotDetection(1));
    for (let attempt = 1; attempt <= 3; attempt++) {
      await server.waitForRequests(attempt);
      const backoff = attempt < 3 ? clock.timerSet(BACKOFFS[attempt - 1] as number) : undefined;
      await clock.advance(2000);
      // Before the next attempt, the backoff on the same clock: not sent again until it has passed.
      if (backoff) {
        await backoff;
        expect(server.requests).toHaveLength(attempt);
        await clock.advance(BACKOFFS[attempt - 1] as number);
      }
    }
    const r = await call;
    const took = clock.now() - started;
    expect(r.ok).toBe(false);
    expect(!r.ok && r.e.kind).toBe("timeout");
    expect(server.requests).toHaveLength(3);
    // Each attempt was cut off at its own timeout (2000 ms on the client's clock), not later.
    expect(took).toBe(3 * 2000 + BACKOFFS[0] + BACKOFFS[1]);
  });

  it("drops the queues of idle keys", async () => {
    const clock = watchedClock();
    const { api } = await setup({ clock });
    await Promise.all(Array.from({ length: 50 }, (_, i) => api.forKey(`key-${i}`).listApps()));
    expect(api.queueStats().keys).toBe(50);
    // Kept while their last rate window (1050 ms) and a margin have not passed, dropped once they have.
    await clock.advance(1099);
    expect(api.queueStats().keys).toBe(50);
    await clock.advance(1);
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

describe("a key's rate window on the client's clock", () => {
  /** A client on a manual clock that notes, on that clock, when each attempt starts. */
  async function paced(options: Partial<EdgeApiOptions>) {
    const clock = watchedClock();
    const starts: number[] = [];
    const { server, api } = await setup({ clock, onQueueWait: () => starts.push(clock.now()), ...options });
    return { clock, starts, server, api };
  }

  it("starts the (ratePerSec+1)-th attempt only once the clock has moved past the window", async () => {
    const { clock, starts, server, api } = await paced({ ratePerSec: 5, concurrency: 10 });
    const client = api.forKey("k-window");
    const first = Array.from({ length: 5 }, () => client.listApps());
    const sixth = client.listApps();
    await Promise.all(first);
    // The window is full: the sixth waits with nothing in flight, for the clock, not for real time.
    expect(server.requests).toHaveLength(5);
    expect(api.queueStats()).toEqual({ keys: 1, waiting: 1, inFlight: 0 });
    await clock.advance(1049);
    expect(api.queueStats().waiting).toBe(1);
    await clock.advance(1);
    // Started by that move: no real time had to pass.
    expect(starts).toHaveLength(6);
    await sixth;
    expect(server.requests).toHaveLength(6);
    expect(starts).toEqual([T0, T0, T0, T0, T0, T0 + 1050]);
  });

  it("slides: each waiting attempt starts when the start it waits on leaves the window", async () => {
    const { clock, starts, api } = await paced({ ratePerSec: 2 });
    const client = api.forKey("k-slide");
    await client.listApps();
    await clock.advance(600);
    await client.listApps();
    const third = client.listApps();
    const fourth = client.listApps();
    await clock.advance(449);
    expect(starts).toHaveLength(2);
    await clock.advance(1);
    // Not with the third (a fixed window would start both at 1050): the start at 600 is still in the window.
    expect(starts).toHaveLength(3);
    await third;
    await clock.advance(599);
    expect(starts).toHaveLength(3);
    await clock.advance(1);
    expect(starts).toHaveLength(4);
    await fourth;
    expect(starts).toEqual([T0, T0 + 600, T0 + 1050, T0 + 1650]);
  });

  it("keeps the cap while the key is idle: a call after a quiet moment still waits for the window", async () => {
    const { clock, starts, api } = await paced({ ratePerSec: 2 });
    const client = api.forKey("k-idle");
    await client.listApps();
    await client.listApps();
    await clock.advance(1000);
    const third = client.listApps();
    await clock.advance(49);
    expect(starts).toHaveLength(2);
    await clock.advance(1);
    expect(starts).toHaveLength(3);
    await third;
    expect(starts).toEqual([T0, T0, T0 + 1050]);
  });

  it("keeps part of each window's starts for people: background reads take 6 of 10, a command starts at once", async () => {
    const { clock, starts, server, api } = await paced({ ratePerSec: 10, concurrency: 4 });
    const reads = Array.from({ length: 10 }, () => api.forKey("k-share", { background: true }).listApps());
    await Promise.all(reads.slice(0, 6));
    expect(server.requests).toHaveLength(6);
    expect(api.queueStats()).toEqual({ keys: 1, waiting: 4, inFlight: 0 });
    // A person's command takes one of the starts kept back, without the clock moving.
    await api.forKey("k-share").listApps();
    expect(server.requests).toHaveLength(7);
    await clock.advance(1049);
    expect(server.requests).toHaveLength(7);
    await clock.advance(1);
    expect(starts.length).toBeGreaterThan(7);
    await Promise.all(reads);
    expect(server.requests).toHaveLength(11);
    expect(starts).toEqual([...Array(7).fill(T0), ...Array(4).fill(T0 + 1050)]);
  });
});

describe("a key's queue order while its window is full", () => {
  const queues = (clock: ManualClock, gate?: () => Promise<() => void>) =>
    new KeyQueues({ ratePerSec: 1, concurrency: 4, maxQueue: 10, clock, ...(gate ? { gate } : {}) });

  /** A task that sends after `stallMs` on the clock (at once by default), noting in `leftAt` when it did. */
  const sendingAfter =
    (clock: ManualClock, leftAt: number[], stallMs = 0) =>
    async (leaving: () => void) => {
      if (stallMs > 0) await clock.sleep(stallMs);
      leaving();
      leftAt.push(clock.now());
    };

  it("starts a retry first, then people's attempts, then background ones", async () => {
    const clock = createManualClock(T0);
    const q = queues(clock);
    const order: string[] = [];
    const task = (name: string) => async () => void order.push(name);
    await q.run("k", task("first"), false);
    const waiting = [
      q.run("k", task("background"), false, undefined, true),
      q.run("k", task("command"), false),
      q.run("k", task("retry"), true),
    ];
    expect(q.stats()).toEqual({ keys: 1, waiting: 3, inFlight: 0 });
    for (let window = 0; window < 3; window++) await clock.advance(1050);
    expect(order).toEqual(["first", "retry", "command", "background"]);
    await Promise.all(waiting);
  });

  /** The first start leaves at `firstLeft`; the second exactly a window (1,050 ms) after it, not a ms before. */
  const leavesAWindowAfter = async (
    clock: ManualClock,
    leftAt: number[],
    o: { first: Promise<unknown>; second: Promise<unknown>; firstLeft: number },
  ) => {
    await clock.advanceTo(o.firstLeft);
    await o.first;
    expect(leftAt).toEqual([o.firstLeft]);
    await clock.advance(1049);
    expect(leftAt).toEqual([o.firstLeft]);
    await clock.advance(1);
    await o.second;
    expect(leftAt).toEqual([o.firstLeft, o.firstLeft + 1050]);
  };

  it("counts a start from when its request left: one slow to leave holds its place in the window that long", async () => {
    const clock = createManualClock(T0);
    const q = queues(clock);
    const leftAt: number[] = [];
    // The first start is let go at T0 but leaves 400 ms later (a stall, a slow lease check before a write).
    const first = q.run("k", sendingAfter(clock, leftAt, 400), false);
    const second = q.run("k", sendingAfter(clock, leftAt), false);
    // Not at T0 + 1050 (a window after it was let go): the API would see two requests 650 ms apart.
    await leavesAWindowAfter(clock, leftAt, { first, second, firstLeft: T0 + 400 });
  });

  it("holds the place of a start still waiting to leave, however long (a shared gate's wait past a window)", async () => {
    const clock = createManualClock(T0);
    let gateWaits = 1;
    // The first start waits 1,100 ms at the gate (another replica's slots), longer than a window.
    const q = queues(clock, async () => {
      if (gateWaits-- > 0) await clock.sleep(1100);
      return () => {};
    });
    const leftAt: number[] = [];
    const first = q.run("k", sendingAfter(clock, leftAt), false);
    const second = q.run("k", sendingAfter(clock, leftAt), false);
    // Not at T0 + 1050, while the first had not left: a window after the first left.
    await leavesAWindowAfter(clock, leftAt, { first, second, firstLeft: T0 + 1100 });
  });

  it("takes an attempt out when its signal aborts, and wakes for nothing", async () => {
    const clock = createManualClock(T0);
    const q = queues(clock);
    await q.run("k", async () => {}, false);
    const controller = new AbortController();
    const waiting = q.run("k", async () => "started", false, controller.signal);
    expect(q.stats().waiting).toBe(1);
    controller.abort(new Error("closing"));
    await expect(waiting).rejects.toThrow("closing");
    expect(q.stats().waiting).toBe(0);
    expect(clock.pending()).toBe(0);
  });

  it("holds the key while it is paused, though its window has room", async () => {
    const clock = createManualClock(T0);
    const q = queues(clock);
    q.pause("k", 2000);
    let started = false;
    const waiting = q.run(
      "k",
      async () => {
        started = true;
      },
      false,
    );
    await clock.advance(1999);
    expect(started).toBe(false);
    await clock.advance(1);
    expect(started).toBe(true);
    await waiting;
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
    const clock = watchedClock();
    const { server, api } = await setup({ logger, clock, timeoutMs: 2000, random: () => 1 });
    const never = new Promise(() => {});
    const answers = [
      { status: 401, body: { title: "Unauthorized", detail: `Key ${KEY} is not valid` } },
      { status: 400, body: { ErrorKey: "bad", Message: `AccessKey ${KEY} rejected` } },
      { status: 500 },
      // Held past the timeout of each of the read's three attempts (the client's clock is moved past it).
      { status: 200, body: apps, holdUntil: never },
      { reset: true },
      { status: 200, body: "{oops" },
    ];
    const errors: EdgeApiError[] = [];
    for (const a of answers) {
      server.handle(() => a);
      const before = server.requests.length;
      const call = settle(api.forKey(KEY).listApps());
      if (a.holdUntil) {
        for (let attempt = 1; attempt <= 3; attempt++) {
          await server.waitForRequests(before + attempt);
          const backoff = attempt < 3 ? clock.timerSet(BACKOFFS[attempt - 1] as number) : undefined;
          await clock.advance(2000);
          if (backoff) {
            await backoff;
            await clock.advance(BACKOFFS[attempt - 1] as number);
          }
        }
      } else if (a.status === 500 || a.reset) await pastBackoffs(clock);
      const r = await call;
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
    // The logger writes each line to the capturing stream as it is logged: nothing is left to flush.
    expect(lines.length).toBeGreaterThan(5);
    for (const line of lines) expect(line).not.toContain(KEY);
    expect(lines.some((l) => l.includes(keyId(KEY)))).toBe(true);
  });
});
