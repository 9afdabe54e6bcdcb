import { Redis } from "ioredis";
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from "rate-limiter-flexible";
import { systemClock } from "../clock.js";
import type { Logger } from "../log.js";

/**
 * The per-key start rate shared by every replica through Redis (REDIS_URL), with rate-limiter-flexible.
 *
 * The library's windows are fixed and whole seconds, so one counter of `ratePerSec` points per second
 * could let 2 × rate through around a window edge. Instead each key has `ratePerSec` start slots, each
 * a one-point limiter of one second: a slot admits one start, then refuses until its second has passed
 * (measured by Redis, one clock for all replicas). So any rolling second holds at most `ratePerSec`
 * starts across the cluster: a sliding log kept by the library.
 *
 * The library's durations are whole seconds, so the slot the library granted (held one second from when
 * Redis counted it) is then re-stamped with a plain `SET … PX` to SLOT_HOLD_MS from the moment the request
 * leaves: the re-stamp is sent in the same turn of the event loop as the request itself, so however long
 * this replica took to hear back from Redis, the next start on that slot comes at least SLOT_HOLD_MS after
 * this request left. The margin over a second absorbs the network's jitter on the way to the Edge API; a
 * slot serves about 1000 / SLOT_HOLD_MS of a start per second, so the cap is used at about 95–96 %.
 *
 * A 429's Retry-After is a Redis key with PX that every replica reads before its attempt.
 *
 * When Redis does not answer, the library's insurance limiter (in memory) takes over with this
 * replica's share of the slots (rate ÷ EXPECTED_REPLICAS); the shared slots return once Redis answers.
 *
 * Concurrency (EDGE_API_CONCURRENCY) across replicas: the library has no semaphore, so each key has
 * `concurrency` lease slots, one-point limiters lasting a little longer than the request timeout: an
 * attempt holds one from before it starts until it ends (then deletes it); a replica that dies
 * mid-request frees its lease when it expires.
 */
export interface SharedLimit {
  /**
   * Wait until this key may start one attempt across all replicas (or `signal` aborts). Call the
   * returned `settle` when the attempt has ended (answered or failed).
   */
  acquireStart(id: string, signal?: AbortSignal): Promise<() => void>;
  /** Pause the key for every replica for `ms` (extends, never shortens, a pause already set). */
  pause(id: string, ms: number): Promise<void>;
  /** undefined while Redis answers; otherwise a sentence for /readyz (degraded, still serving). */
  problem(): string | undefined;
  close(): Promise<void>;
}

export interface SharedLimitOptions {
  redisUrl: string;
  ratePerSec: number;
  concurrency: number;
  /** EDGE_API_TIMEOUT_MS: a concurrency lease outlives the longest attempt. */
  requestTimeoutMs: number;
  expectedReplicas: number;
  logger: Logger;
  /** Key prefix in Redis (tests use their own). */
  prefix?: string;
}

/**
 * How long a start holds its slot, from when its request left. Over a second by the most that the way to
 * the Edge API may vary between two requests of one key (loopback under load: a few ms; measured with
 * `npm run bench -- --replicas 3`).
 */
export const SLOT_HOLD_MS = 1_040;
/** Added to a refused slot's wait; Redis is the judge, so waking early only costs another round trip. */
const WAIT_MARGIN_MS = 1;
/** How often a call waiting for a concurrency lease asks again (leases end when attempts do). */
const LEASE_POLL_MS = 25;
/** A call waiting for a start slot gives its concurrency lease back after this long (the lease outlives it). */
const LEASE_KEPT_WAITING_MS = 3_000;
/** How long one Redis command may take before the replica uses its local share. */
const REDIS_COMMAND_TIMEOUT_MS = 500;

/**
 * Real time, not the composition root's clock: the slots and leases are Redis keys that expire on Redis's
 * own clock, shared with the other replicas, so a manual clock here would only disagree with them.
 */
const realTime = systemClock;

export function createSharedLimit(options: SharedLimitOptions): SharedLimit {
  const log = options.logger.child({ component: "shared-limit" });
  const prefix = options.prefix ?? "edgeops";
  const redis = new Redis(options.redisUrl, {
    // Fail fast while Redis is away: commands must not wait in an offline queue.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: REDIS_COMMAND_TIMEOUT_MS,
    connectTimeout: 2000,
    retryStrategy: (times) => Math.min(times * 200, 2000),
    lazyConnect: false,
  });
  let down = false;
  let closed = false;
  const localSlots = Math.max(1, Math.floor(options.ratePerSec / options.expectedReplicas));
  const localLeases = Math.max(1, Math.floor(options.concurrency / options.expectedReplicas));
  const markDown = (err: unknown) => {
    if (down || closed) return;
    down = true;
    log.warn(
      { err: err instanceof Error ? err.message : String(err), localRatePerSec: localSlots },
      "Redis does not answer: the Edge API rate falls back to this replica's share",
    );
  };
  const markUp = () => {
    if (!down) return;
    down = false;
    log.info("Redis answers again: the Edge API rate is shared across replicas again");
  };
  redis.on("error", markDown);
  redis.on("close", () => markDown(new Error("connection closed")));
  redis.on("ready", markUp);

  const slots = new RateLimiterRedis({
    storeClient: redis,
    keyPrefix: `${prefix}:edge-slot`,
    points: 1,
    duration: 1,
    rejectIfRedisNotReady: true,
    insuranceLimiter: new RateLimiterMemory({ keyPrefix: `${prefix}:edge-slot`, points: 1, duration: 1 }),
  });
  const leaseSec = Math.ceil(options.requestTimeoutMs / 1000) + 5;
  const leases = new RateLimiterRedis({
    storeClient: redis,
    keyPrefix: `${prefix}:edge-lease`,
    points: 1,
    duration: leaseSec,
    rejectIfRedisNotReady: true,
    insuranceLimiter: new RateLimiterMemory({
      keyPrefix: `${prefix}:edge-lease`,
      points: 1,
      duration: leaseSec,
    }),
  });
  const pauseKey = (id: string) => `${prefix}:edge-pause:${id}`;

  /** Redis answers: the limits are the cluster's (otherwise this replica's share, in memory). */
  const shared = () => !down && redis.status === "ready";

  /**
   * Asked even while degraded when the connection is up: a stall (commands timing out on a connection
   * that never closed) emits no "ready" when it ends, so the next answer is what ends the degraded state.
   */
  async function pausedForMs(id: string): Promise<number> {
    if (closed || redis.status !== "ready") return 0;
    try {
      const ms = await redis.pttl(pauseKey(id));
      markUp();
      return Math.max(ms, 0);
    } catch (err) {
      markDown(err);
      return 0;
    }
  }

  /**
   * One free slot of `count` (consumed) if any, trying `first` first; otherwise how long until the
   * earliest frees, and which: a waiter asks for that one first when it wakes, so a freed slot is taken
   * again one Redis round trip after it frees, not after trying the others.
   */
  async function tryOne(
    limiter: RateLimiterRedis,
    id: string,
    count: number,
    first = Math.floor(Math.random() * count),
  ): Promise<{ slotKey: string } | { slotKey: undefined; waitMs: number; earliest: number }> {
    let waitMs = Number.POSITIVE_INFINITY;
    let earliest = first;
    for (let i = 0; i < count; i++) {
      const slot = (first + i) % count;
      try {
        const slotKey = `${id}:${slot}`;
        await limiter.consume(slotKey);
        return { slotKey };
      } catch (refused) {
        if (!(refused instanceof RateLimiterRes)) throw refused;
        if (refused.msBeforeNext < waitMs) {
          waitMs = refused.msBeforeNext;
          earliest = slot;
        }
      }
    }
    return { slotKey: undefined, waitMs: Number.isFinite(waitMs) ? waitMs : 1000, earliest };
  }

  return {
    async acquireStart(id, signal) {
      let earliestSlot: number | undefined;
      // The concurrency lease is kept while waiting for a start slot (fewer round trips between a slot
      // freeing and the next start), but not through a pause, nor longer than LEASE_KEPT_WAITING_MS.
      let lease: { key: string; at: number } | undefined;
      const releaseLease = () => {
        if (!lease) return;
        const key = lease.key;
        lease = undefined;
        void leases.delete(key).catch(markDown);
      };
      try {
        for (;;) {
          if (lease && realTime.now() - lease.at > LEASE_KEPT_WAITING_MS) releaseLease();
          if (!lease) {
            const got = await tryOne(leases, id, shared() ? options.concurrency : localLeases);
            if (got.slotKey === undefined) {
              await realTime.sleep(LEASE_POLL_MS + Math.random() * LEASE_POLL_MS, signal);
              continue;
            }
            lease = { key: got.slotKey, at: realTime.now() };
          }
          const sharedNow = shared();
          const slotCount = sharedNow ? options.ratePerSec : localSlots;
          // The pause is read beside the slot, not before it: one round trip fewer between a slot
          // freeing and the next start. A slot taken while the key is paused lapses unused.
          const [pausedMs, got] = await Promise.all([
            pausedForMs(id),
            tryOne(
              slots,
              id,
              slotCount,
              earliestSlot !== undefined && earliestSlot < slotCount ? earliestSlot : undefined,
            ),
          ]);
          if (pausedMs > 0) {
            releaseLease();
            await realTime.sleep(pausedMs + WAIT_MARGIN_MS, signal);
            continue;
          }
          if (got.slotKey !== undefined) {
            const slotKey = got.slotKey;
            const leaseKey = lease.key;
            lease = undefined;
            const endLease = () => void leases.delete(leaseKey).catch(markDown);
            if (sharedNow) {
              // Sent now, in the turn that goes on to send the request (see the module's comment).
              void redis.set(slots.getKey(slotKey), "1", "PX", SLOT_HOLD_MS, "XX").catch(markDown);
              return endLease;
            }
            // This replica's share, in memory: held a second past the attempt's end, whatever its latency.
            return () => {
              void slots.block(slotKey, 1).catch(markDown);
              endLease();
            };
          }
          earliestSlot = got.earliest;
          await realTime.sleep(got.waitMs + WAIT_MARGIN_MS, signal);
        }
      } finally {
        releaseLease();
      }
    },
    async pause(id, ms) {
      if (ms <= 0 || closed || redis.status !== "ready") return;
      try {
        const px = Math.ceil(ms);
        await redis.multi().set(pauseKey(id), "1", "PX", px, "NX").pexpire(pauseKey(id), px, "GT").exec();
        markUp();
      } catch (err) {
        markDown(err);
      }
    },
    problem() {
      return !shared()
        ? `degraded: Redis does not answer; this replica uses its share of the Edge API rate (${localSlots}/s and ${localLeases} at once per key)`
        : undefined;
    },
    async close() {
      closed = true;
      redis.disconnect();
    },
  };
}
