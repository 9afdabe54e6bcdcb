/**
 * (7) The timeline's build time (issue 31 part 2): a 24 h incident on one zone (one alert episode, `changes`
 * change requests each asked, approved and applied, as the engine records them: the request's moves, its audit
 * entries, the target it owns), then buildTimeline from the store, timed against a floor in the same run: the
 * same queries for a zone with nothing to find. test/services/timeline.flow.test.ts runs the same measurement.
 */
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { loadConfig } from "../src/config.js";
import { silentLogger } from "../src/log.js";
import { buildTimeline } from "../src/services/timeline.js";
import { openStore, type Store } from "../src/store/index.js";
import { steppedClock } from "../test/support/clock.js";
import { round } from "./common.js";
import { createPgDatabase } from "./processes.js";

export const TEAM = "T0001";
const HOUR = 3_600_000;

/** The store's clock, moved by the seeding as time passes in the incident. */
export interface Clock {
  now: number;
}

/** A change asked, approved and applied, as the engine records one: the request's moves and their audit. */
export async function appliedBlock(
  store: Store,
  clock: Clock,
  o: { zoneId: number; i: number; channelId: string; temporaryMs?: number; teamId?: string },
) {
  const team = o.teamId ?? TEAM;
  const value = `10.0.${Math.floor(o.i / 250)}.${o.i % 250}`;
  const params = { shieldZoneId: o.zoneId, type: "ip", value, state: "block" };
  const target = `shield zone ${o.zoneId} / ip ${value}`;
  const r = await store.changeRequests.create({
    kind: "access_block",
    teamId: team,
    channelId: o.channelId,
    requesterId: "U0002",
    params,
    observed: "none",
    expiresAt: clock.now + HOUR,
    undoAfterMs: o.temporaryMs ?? null,
  });
  const details = { requestId: r.id, channelId: o.channelId, params };
  const step = (userId: string, action: string, outcome: string) =>
    store.audit.append({ teamId: team, userId, action: `access_block.${action}`, target, outcome, details });
  await step("U0002", "request", "pending");
  clock.now += 1_000;
  await store.changeRequests.transition(r.id, "pending", "approved", {
    decidedBy: "U0001",
    decidedAt: clock.now,
    approvedBy: ["U0001"],
  });
  await step("U0001", "approve", "approved");
  clock.now += 1_000;
  await store.changeRequests.transition(r.id, "approved", "applied", {
    ...(o.temporaryMs ? { undoAt: clock.now + o.temporaryMs } : {}),
  });
  await store.changeRequests.setTargetOwner(team, `${team}/shield zone ${o.zoneId}/access ip ${value}`, r.id);
  await step("U0001", "apply", "applied");
  return r;
}

/** One zone watched in C0001, an episode opened at the start, and `changes` changes spread over ~23 h. */
export async function seedIncident(
  store: Store,
  clock: Clock,
  zoneId: number,
  changes: number,
): Promise<void> {
  const created = await store.watches.createIfRoom(
    {
      teamId: TEAM,
      channelId: "C0001",
      createdBy: "U0001",
      kind: "zone",
      target: String(zoneId),
      options: {},
      nextPollAt: clock.now,
    },
    { perChannel: 10, perWorkspace: 10 },
  );
  if (created.kind !== "created") throw new Error("bench: no watch");
  await store.episodes.open({
    watchId: created.item.id,
    teamId: TEAM,
    channelId: "C0001",
    subject: String(zoneId),
    seq: 1,
    kind: "attack",
    details: null,
  });
  const spacing = Math.floor((23 * HOUR) / Math.max(1, changes)) - 2_000;
  for (let i = 0; i < changes; i++) {
    await appliedBlock(store, clock, {
      zoneId,
      i,
      channelId: "C0001",
      ...(i % 2 === 0 ? { temporaryMs: 48 * HOUR } : {}),
    });
    clock.now += spacing;
  }
}

export interface TimelineBuildTime {
  engine: "sqlite" | "postgres";
  changes: number;
  /** Lines in the story (three steps a change, and the alert). */
  entries: number;
  runs: number;
  /** Median build time of the 24 h story, and of the same queries finding nothing (the floor). */
  buildMs: number;
  floorMs: number;
  ratioToFloor: number;
}

/** Time buildTimeline for `zoneId` against an empty zone, after a warm-up; medians of `runs`. */
export async function timeTimeline(
  store: Store,
  clock: Clock,
  zoneId: number,
  runs = 5,
): Promise<Omit<TimelineBuildTime, "engine" | "changes">> {
  const deps = { store, clock: steppedClock(() => clock.now) };
  const input = (z: number) => ({
    teamId: TEAM,
    zoneId: z,
    window: "24h" as const,
    audience: { kind: "all" as const },
  });
  const emptyZone = zoneId + 1;
  await buildTimeline(deps, input(zoneId));
  await buildTimeline(deps, input(emptyZone));
  const median = async (z: number) => {
    const times: number[] = [];
    for (let i = 0; i < runs; i++) {
      const t0 = performance.now();
      await buildTimeline(deps, input(z));
      times.push(performance.now() - t0);
    }
    return times.sort((a, b) => a - b)[Math.floor(runs / 2)] ?? 0;
  };
  const floorMs = await median(emptyZone);
  const buildMs = await median(zoneId);
  const { entries } = await buildTimeline(deps, input(zoneId));
  return {
    entries: entries.length,
    runs,
    buildMs: round(buildMs),
    floorMs: round(floorMs),
    ratioToFloor: round(buildMs / Math.max(floorMs, 0.01)),
  };
}

/** The scenario: a fresh store of the engine, seeded, timed, removed. */
export async function timelineScenario(
  engine: "sqlite" | "postgres",
  changes: number,
): Promise<TimelineBuildTime | { engine: "postgres"; skipped: string }> {
  const dir = await mkdtemp(join(tmpdir(), "edgeops-bench-timeline-"));
  const pg = engine === "postgres" ? await createPgDatabase() : undefined;
  if (engine === "postgres" && !pg) {
    await rm(dir, { recursive: true, force: true });
    return { engine: "postgres", skipped: "PostgreSQL not reachable" };
  }
  const clock: Clock = { now: Date.now() - 24 * HOUR + 60_000 };
  const store = await openStore({
    config: loadConfig({
      DATA_DIR: dir,
      ENCRYPTION_KEY: randomBytes(32).toString("base64"),
      ...(pg ? { DATABASE_URL: pg.url } : {}),
    }),
    logger: silentLogger,
    clock: steppedClock(() => clock.now),
  });
  try {
    const zoneId = 4321;
    await seedIncident(store, clock, zoneId, changes);
    return { engine, changes, ...(await timeTimeline(store, clock, zoneId)) };
  } finally {
    await store.close();
    await pg?.drop();
    await rm(dir, { recursive: true, force: true });
  }
}
