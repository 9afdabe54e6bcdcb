import type { ChangeObservers } from "./changes/observers.js";
import type { Clock } from "./clock.js";
import type { Config } from "./config.js";
import type { EdgeApi } from "./edge/client.js";
import type { Logger } from "./log.js";
import type { Metrics } from "./ops/metrics.js";
import type { ApiKeyRecord, Store } from "./store/index.js";

/** What every service and listener may use. Built once by src/app/compose.ts (the bot, the console, the test harness). */
export interface Deps {
  readonly config: Config;
  readonly logger: Logger;
  readonly store: Store;
  readonly edge: EdgeApi;
  readonly metrics: Metrics;
  /** The one clock: the store's times, the jobs' ticks, leases, the Edge queue's pacing (src/clock.ts). */
  readonly clock: Clock;
  /** Told of every change request's move (src/changes/engine.ts); workflow steps wait on these. */
  readonly changeObservers: ChangeObservers;
  /**
   * Set for the length of one change in flight (src/changes/in-flight.ts): the workspace's stored Edge API
   * key, read and decrypted once for all of its Edge calls (its lock, read, write and read-back) instead of
   * once each. Absent: every use reads the store.
   */
  readonly storedKey?: (teamId: string) => Promise<ApiKeyRecord | undefined>;
  /**
   * Set for the length of one change in flight (src/changes/in-flight.ts): the move that ends the flight
   * ends its in-flight lease in the same statement (the patch's leaseUntil: null) and says so here, so the
   * flight's end has no lease left to end.
   */
  readonly flightLease?: { endedByMove(): void };
}
