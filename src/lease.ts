import type { Clock } from "./clock.js";

/** A claim held while its work runs (see holdLease). */
export interface Lease {
  /** Renew now, just before the work's post; false when the claim is no longer this replica's: do not post. */
  stillMine(): Promise<boolean>;
  /** Stop renewing (after any renewal in flight settles) and give the lease time last held. */
  end(): Promise<number>;
}

export interface LeaseOptions {
  /** The lease time the claim set. */
  first: number;
  leaseMs: number;
  clock: Clock;
  /** Compare-and-set the lease time from `from` to `to`; false when another replica holds the claim now. */
  renew(from: number, to: number, at: number): Promise<boolean>;
  /** A renewal that failed: unknown, not lost (the heartbeat tries again). */
  onError(err: unknown): void;
}

/**
 * Hold a claim while its work runs, however long that takes: renewed every leaseMs / 3, and once more
 * just before the work posts, which it must not do if that renewal fails (the fence). A replica that dies
 * stops renewing, so its claim ends on its own and a survivor claims the work. Renewals run one at a
 * time: each compares the lease time the previous one set.
 */
export function holdLease(o: LeaseOptions): Lease {
  let until = o.first;
  let lost = false;
  let chain: Promise<unknown> = Promise.resolve();
  const renew = (strict: boolean): Promise<boolean> => {
    const next = chain.then(async () => {
      if (lost) return false;
      const at = o.clock.now();
      try {
        if (!(await o.renew(until, at + o.leaseMs, at))) {
          lost = true;
          return false;
        }
        until = at + o.leaseMs;
        return true;
      } catch (err) {
        // Before posting, unknown is not mine (a late post beats a second one).
        o.onError(err);
        return !strict;
      }
    });
    chain = next;
    return next;
  };
  const stopRenewing = o.clock.setInterval(() => void renew(false), Math.max(100, Math.floor(o.leaseMs / 3)));
  return {
    stillMine: () => renew(true),
    async end() {
      stopRenewing();
      await chain;
      return until;
    },
  };
}
