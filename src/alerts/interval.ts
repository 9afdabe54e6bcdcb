import type { Deps } from "../deps.js";

/**
 * How often a workspace's watches are evaluated: WATCH_INTERVAL_MS, stretched so that its watches together
 * stay within WATCH_SHARE of the key's EDGE_API_RATE_PER_SEC (the poller in jobs/alerts.ts claims with it;
 * /edge watch tells it).
 */

/** Calls an evaluation makes in the usual case (zone: the detailed metrics; apps: one page). */
export const CALLS_PER_EVALUATION = 1;

/** WATCH_INTERVAL_MS, stretched so `watches` evaluations fit in the key's share of its rate. */
export function stretchedInterval(
  watches: number,
  o: { intervalMs: number; ratePerSec: number; sharePercent: number },
): number {
  const perSec = (o.ratePerSec * o.sharePercent) / 100;
  return Math.max(o.intervalMs, Math.ceil((watches * CALLS_PER_EVALUATION * 1000) / perSec));
}

/** The interval a workspace's watches are evaluated at now: WATCH_INTERVAL_MS, or stretched to its share. */
export async function watchInterval(deps: Deps, teamId: string): Promise<number> {
  const { config } = deps;
  return stretchedInterval(await deps.store.watches.count(teamId), {
    intervalMs: config.watches.intervalMs,
    ratePerSec: config.edge.ratePerSec,
    sharePercent: config.watches.sharePercent,
  });
}
