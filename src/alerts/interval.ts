import type { Deps } from "../deps.js";
import type { Watch } from "../store/index.js";
import { CONFIG_CALLS } from "./drift.js";

/**
 * How often a workspace's watches are evaluated: WATCH_INTERVAL_MS, stretched so that its watches together
 * stay within WATCH_SHARE of the key's EDGE_API_RATE_PER_SEC (the poller in jobs/alerts.ts claims with it;
 * /edge watch tells it).
 */

/**
 * Edge calls one evaluation makes in the usual case, by watch kind (zone: the detailed metrics; apps: one page;
 * config: the zone, its bot categories and its access lists).
 */
export const CALLS_PER_EVALUATION: Readonly<Record<Watch["kind"], number>> = {
  zone: 1,
  apps: 1,
  config: CONFIG_CALLS,
};

/** WATCH_INTERVAL_MS, stretched so evaluations making `calls` Edge calls in all fit in the key's share of its rate. */
export function stretchedInterval(
  calls: number,
  o: { intervalMs: number; ratePerSec: number; sharePercent: number },
): number {
  const perSec = (o.ratePerSec * o.sharePercent) / 100;
  return Math.max(o.intervalMs, Math.ceil((calls * 1000) / perSec));
}

/** The Edge calls one round of a workspace's watches makes: each kind's count times its calls. */
export async function callsPerRound(deps: Deps, teamId: string): Promise<number> {
  const perKind = await Promise.all(
    Object.entries(CALLS_PER_EVALUATION).map(
      async ([kind, calls]) => calls * (await deps.store.watches.count(teamId, kind as Watch["kind"])),
    ),
  );
  return perKind.reduce((a, b) => a + b, 0);
}

/** The interval a workspace's watches are evaluated at now: WATCH_INTERVAL_MS, or stretched to its share. */
export async function watchInterval(deps: Deps, teamId: string): Promise<number> {
  const { config } = deps;
  return stretchedInterval(await callsPerRound(deps, teamId), {
    intervalMs: config.watches.intervalMs,
    ratePerSec: config.edge.ratePerSec,
    sharePercent: config.watches.sharePercent,
  });
}
