import { randomBytes } from "node:crypto";
import { MAX_CLOCK_SKEW_MS } from "../clock.js";
import type { Deps } from "../deps.js";
import type { EdgeApi } from "../edge/client.js";
import { UserError } from "../errors.js";
import { holdLease } from "../lease.js";
import { edgeAccessFor } from "../services/edge-access.js";
import type { Store } from "../store/index.js";
import type { ChangeKind, ChangeScope } from "./kind.js";

/**
 * One writer at a time per Edge target (an access list, a zone's settings, a bot category): the API has
 * no conditional write, so two read-modify-writes of one list at once lose an entry. Within a process the
 * callers queue on a promise per target; across replicas the first in each process's queue takes the
 * target's lock row (store/target-locks.ts), held as a renewed lease while the work runs, so a replica
 * that dies mid-write releases it by letting it end.
 *
 * The lease is fenced: the work writes through Edge clients that renew it right before each write is sent
 * (after the call's turn in the key's queue) and send nothing when it is no longer this holder's (a stall
 * or a clock that ran ahead let another replica take it), and whose calls are aborted once a renewal finds
 * it lost. The work then ends in LockLostError: not known whether an earlier write of it took effect, so the
 * reconciler reads the target and decides.
 */

/** The lock row's lease, renewed every third of it while the work runs. */
export const TARGET_LOCK_LEASE_MS = 30_000;
/** How long a writer waits for the target before giving up with a sentence (a dead holder's lease, and the skew). */
export const TARGET_LOCK_WAIT_MS = 180_000;

/** Per store (a replica), per target: the tail of the queue of writers in this process. */
const queues = new WeakMap<Store, Map<string, Promise<unknown>>>();

/**
 * Run `work` as the only writer of `targetKey` among every replica sharing the store. Throws a UserError
 * ("unavailable") when the target stays taken for TARGET_LOCK_WAIT_MS.
 */
export async function withTargetLock<T>(
  deps: Deps,
  targetKey: string,
  work: (held: Deps) => Promise<T>,
): Promise<T> {
  let perTarget = queues.get(deps.store);
  if (!perTarget) {
    perTarget = new Map();
    queues.set(deps.store, perTarget);
  }
  const before = perTarget.get(targetKey) ?? Promise.resolve();
  const mine = before.catch(() => undefined).then(() => holdRow(deps, targetKey, work));
  const tail = mine.catch(() => undefined);
  perTarget.set(targetKey, tail);
  void tail.then(() => {
    if (perTarget.get(targetKey) === tail) perTarget.delete(targetKey);
  });
  return mine;
}

/**
 * Run `work` as the only writer of the change's target: the kind's lockKey within the workspace's Edge
 * API key (two workspaces sharing a key write to one account). Kinds without a target run as they are.
 */
export async function withChangeLock<P, V, T>(
  deps: Deps,
  kind: ChangeKind<P, V>,
  scope: ChangeScope,
  p: P,
  work: (held: Deps) => Promise<T>,
): Promise<T> {
  const target = kind.lockKey?.(p, scope);
  if (target === undefined) return work(deps);
  const { keyId } = await edgeAccessFor(deps, scope.teamId);
  return withTargetLock(deps, `${keyId}:${target}`, work);
}

/** The lock was no longer this holder's when it was about to write: nothing was sent. */
export class LockLostError extends Error {
  constructor() {
    super(
      "Not known yet: another change to the same target took over while this one was under way, so edgeops stopped before writing. It checks the value shortly and says whether the change is in force.",
    );
  }
}

async function holdRow<T>(deps: Deps, key: string, work: (held: Deps) => Promise<T>): Promise<T> {
  const { store, logger } = deps;
  const holder = randomBytes(12).toString("base64url");
  const giveUpAt = deps.clock.elapsed() + TARGET_LOCK_WAIT_MS;
  let until = 0;
  for (let delay = 20; ; delay = Math.min(delay * 2, 250)) {
    const at = deps.clock.now();
    until = at + TARGET_LOCK_LEASE_MS;
    // A lapsed lease is taken over only MAX_CLOCK_SKEW_MS later by this replica's clock, so a holder whose
    // clock runs behind is not overtaken while its write is on the wire.
    if (await store.targetLocks.take(key, holder, until, at - MAX_CLOCK_SKEW_MS)) break;
    if (deps.clock.elapsed() >= giveUpAt)
      throw new UserError(
        "unavailable",
        "Another change to the same target has been under way for over 3 minutes, so this one was not made; try again in a minute.",
      );
    // Jitter, so replicas waiting on one target do not poll in step.
    await deps.clock.sleep(delay / 2 + Math.random() * delay);
  }
  const lost = new AbortController();
  const lease = holdLease({
    first: until,
    leaseMs: TARGET_LOCK_LEASE_MS,
    clock: deps.clock,
    async renew(from, to) {
      const renewed = await store.targetLocks.renew(key, holder, from, to);
      if (!renewed) lost.abort(new LockLostError());
      return renewed;
    },
    onError: (err) => logger.warn({ err, target: key }, "could not renew the lock on an Edge target"),
  });
  const fence = async () => {
    if (!(await lease.stillMine())) {
      lost.abort(new LockLostError());
      throw new LockLostError();
    }
  };
  const edge: EdgeApi = {
    forKey: (apiKey, options = {}) =>
      deps.edge.forKey(apiKey, {
        ...options,
        signal: options.signal ? AbortSignal.any([options.signal, lost.signal]) : lost.signal,
        beforeWrite: async () => {
          await options.beforeWrite?.();
          await fence();
        },
      }),
    queueStats: () => deps.edge.queueStats(),
    backgroundFull: () => deps.edge.backgroundFull(),
    close: (deadlineMs) => deps.edge.close(deadlineMs),
  };
  try {
    return await work({ ...deps, edge });
  } catch (err) {
    // A call aborted because the lock was lost says so, whatever error the client made of the abort.
    throw lost.signal.aborted ? new LockLostError() : err;
  } finally {
    await lease.end();
    await store.targetLocks
      .release(key, holder)
      .catch((err: unknown) =>
        logger.warn({ err, target: key }, "could not release the lock on an Edge target; its lease ends it"),
      );
  }
}
