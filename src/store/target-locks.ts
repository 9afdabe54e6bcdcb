import { compiledOnce } from "./compiled.js";
import type { RepoContext } from "./context.js";
import { guard } from "./errors.js";
import { moveLease } from "./lease.js";

/**
 * One writer at a time per Edge target, across replicas: a row per target held as a lease. Taking it
 * is one statement (insert, or take over a lease that ended); renewing and releasing compare the holder,
 * so a holder that lost its lease can neither extend nor drop someone else's.
 */
export interface TargetLocksRepo {
  /** Take the lock until `until` unless another holder's lease is still running at `now`; true when taken. */
  take(key: string, holder: string, until: number, now: number): Promise<boolean>;
  /** Extend this holder's lease from `from` to `to`; false when it is no longer this holder's. */
  renew(key: string, holder: string, from: number, to: number): Promise<boolean>;
  /** Let go of it (only this holder's). */
  release(key: string, holder: string): Promise<void>;
}

export function createTargetLocksRepo(ctx: RepoContext): TargetLocksRepo {
  const { db } = ctx;
  const insert = compiledOnce(db, (root, key: string, holder: string, until: number, now: number) =>
    root
      .insertInto("target_locks")
      .values({ key, holder, leaseUntil: until })
      .onConflict((oc) =>
        oc
          .column("key")
          .doUpdateSet({ holder, leaseUntil: until })
          .where("target_locks.leaseUntil", "<", now),
      ),
  );
  const remove = compiledOnce(db, (root, key: string, holder: string) =>
    root.deleteFrom("target_locks").where("key", "=", key).where("holder", "=", holder),
  );
  return guard("targetLocks", {
    async take(key: string, holder: string, until: number, now: number): Promise<boolean> {
      const result = await insert(db, key, holder, until, now);
      return Number(result.numAffectedRows ?? 0) > 0;
    },
    renew: (key: string, holder: string, from: number, to: number) =>
      moveLease(db, "target_locks", { key, holder }, from, to),
    async release(key: string, holder: string): Promise<void> {
      await remove(db, key, holder);
    },
  });
}
