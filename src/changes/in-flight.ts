import type { Deps } from "../deps.js";
import type { EdgeApi } from "../edge/client.js";
import { holdLease } from "../lease.js";
import { readingKeysOnce } from "../services/edge-access.js";
import type { ChangeState } from "../store/index.js";
import { HeldObservers } from "./observers.js";

/**
 * An apply or undo in flight holds a lease on its request, renewed while it runs (holdLease), so the
 * reconciler, which takes over requests left `approved` or `undoing`, leaves it alone however long its
 * Edge calls take (Retry-After, timeouts, the key's queue). Should renewing fail, its Edge calls are
 * aborted while a third of the lease is still left; the reconciler takes over only after it ended.
 * Its moves are announced to the change observers once the lease ended (observers.ts HeldObservers).
 */

/** Longer than the reconciler's minute, so a renewal lost once never lets it in. */
export const IN_FLIGHT_LEASE_MS = 90_000;

export interface InFlight {
  /** The caller's deps, with Edge clients whose calls the lease aborts and observers told at `end`. */
  deps: Deps;
  /** Done (whatever the outcome): stop renewing, end the lease, then announce what moved. */
  end(): Promise<void>;
}

/** A lease taken by the move into the flight's state (leaseWithMove), so the flight need not take it. */
export interface TakenLease {
  /** The lease time the move set. */
  until: number;
  /** The clock's elapsed time before that move was sent. */
  at: number;
}

/**
 * The lease a move into `approved` takes in its own statement (its patch), for the flight that follows it
 * (holdInFlight's `taken`): one statement less than taking it after. A process that dies between the move
 * and its flight leaves the request to the reconciler once this lease ends, as one dying in the flight does.
 */
export function leaseWithMove(deps: Deps): { patch: { leaseUntil: number }; taken: TakenLease } {
  const taken = { until: deps.clock.now() + IN_FLIGHT_LEASE_MS, at: deps.clock.elapsed() };
  return { patch: { leaseUntil: taken.until }, taken };
}

export async function holdInFlight(
  deps: Deps,
  requestId: string,
  state: ChangeState,
  taken?: TakenLease,
): Promise<InFlight> {
  const log = deps.logger.child({ requestId });
  const abort = new AbortController();
  const first = taken?.until ?? deps.clock.now() + IN_FLIGHT_LEASE_MS;
  if (!taken) await deps.store.changeRequests.takeLease(requestId, state, first);
  // Elapsed, not epoch time: how long since this process last held the lease for sure (a lease taken by
  // the move: since before that move was sent).
  let heldAt = taken?.at ?? deps.clock.elapsed();
  const lease = holdLease({
    first,
    leaseMs: IN_FLIGHT_LEASE_MS,
    clock: deps.clock,
    async renew(from, to) {
      const renewed = await deps.store.changeRequests.renewLease(requestId, state, from, to);
      if (renewed) heldAt = deps.clock.elapsed();
      else abort.abort(new Error("the request's lease is no longer this replica's"));
      return renewed;
    },
    onError: (err) => log.warn({ err }, "could not renew the lease on a change in flight"),
  });
  const stopWatchdog = deps.clock.setInterval(
    () => {
      if (deps.clock.elapsed() - heldAt > (IN_FLIGHT_LEASE_MS * 2) / 3)
        abort.abort(new Error("the lease on this change could not be renewed"));
    },
    Math.max(100, IN_FLIGHT_LEASE_MS / 9),
  );
  const edge: EdgeApi = {
    forKey: (apiKey, options) => deps.edge.forKey(apiKey, { ...options, signal: abort.signal }),
    queueStats: () => deps.edge.queueStats(),
    backgroundFull: () => deps.edge.backgroundFull(),
    close: (deadlineMs) => deps.edge.close(deadlineMs),
  };
  const changeObservers = new HeldObservers(deps.changeObservers);
  let endedByMove = false;
  const flightLease = {
    endedByMove() {
      endedByMove = true;
    },
  };
  return {
    // The workspace's key is read once for the flight, so its lock and its writes use the one same key.
    deps: readingKeysOnce({ ...deps, edge, changeObservers, flightLease }),
    async end() {
      try {
        stopWatchdog();
        const until = await lease.end();
        abort.abort(new Error("done"));
        if (!endedByMove)
          await deps.store.changeRequests
            .endLease(requestId, until)
            .catch((err: unknown) => log.warn({ err }, "could not end the lease on a change; it runs out"));
      } finally {
        await changeObservers.flush();
      }
    },
  };
}

/** Run `work` while the request's in-flight lease is held, with the deps the lease gives (holdInFlight). */
export async function inFlight<T>(
  deps: Deps,
  requestId: string,
  state: ChangeState,
  work: (held: Deps) => Promise<T>,
  taken?: TakenLease,
): Promise<T> {
  const flight = await holdInFlight(deps, requestId, state, taken);
  try {
    return await work(flight.deps);
  } finally {
    await flight.end();
  }
}
