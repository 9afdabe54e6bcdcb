/**
 * (7) The timeline's build time (issue 31 part 2): a 24 h incident on one zone (one alert episode, `changes`
 * change requests each asked, approved and applied, as the engine records them: the request's moves, its audit
 * entries, the target it owns), then buildTimeline from the store, timed against a floor in the same run: one
 * indexed read of the window's audit rows (as many rows as the story has lines), through the same driver. Issue 40's
 * goal: ≤ 10× that read. test/services/timeline.flow.test.ts runs the same measurement.
 */
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { Agent, request } from "undici";
import { composeDeps } from "../src/app/compose.js";
import { loadConfig } from "../src/config.js";
import { silentLogger } from "../src/log.js";
import {
  gatherIncident,
  type IncidentPicture,
  incidentRange,
  OFFENDER_DIMENSIONS,
  type OffenderDimension,
} from "../src/services/incident.js";
import { buildTimeline } from "../src/services/timeline.js";
import { incidentCard } from "../src/slack/blocks/incident.js";
import { newRequestId } from "../src/slack/request-ids.js";
import { openStore, type Store, storeInternals } from "../src/store/index.js";
import { steppedClock } from "../test/support/clock.js";
import { SIM_IDS } from "../tools/simulator/index.js";
import { keyFor, round, SIM_LATENCY_MS } from "./common.js";
import { type BenchContext, createPgDatabase } from "./processes.js";

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
  /** Median build time of the 24 h story. */
  buildMs: number;
  /** The floor: median time of one indexed read of the window's audit rows (FLOOR_QUERY), and its rows. */
  floorMs: number;
  floorRows: number;
  ratioToFloor: number;
  /** The earlier floor, kept beside it: the same build for a zone with nothing to find. */
  emptyZoneMs: number;
}

/** What the floor reads, in words (results and docs say which query the floor is). */
export const FLOOR_QUERY =
  "select * from audit_log where team_id = ? and at between ? and ? order by at, id (index audit_log_team_at), through the store's Kysely and driver";

/** Median of `runs` timings of each of `work`, interleaved (a, b, a, b, …) so each sees the same load. */
export async function interleavedMedians(work: (() => Promise<unknown>)[], runs: number): Promise<number[]> {
  for (const w of work) await w();
  const times = work.map((): number[] => []);
  for (let i = 0; i < runs; i++)
    for (const [j, w] of work.entries()) {
      const t0 = performance.now();
      await w();
      times[j]?.push(performance.now() - t0);
    }
  return times.map((t) => t.sort((a, b) => a - b)[Math.floor(runs / 2)] ?? 0);
}

/**
 * Time buildTimeline for `zoneId` against one indexed read of the rows it tells (the window's audit rows, through
 * the same Kysely and driver, not parsed further), after a warm-up; medians of `runs`, interleaved.
 */
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
  const range = incidentRange("24h", clock.now);
  const { db } = storeInternals(store).context;
  const indexedRead = () =>
    db
      .selectFrom("audit_log")
      .selectAll()
      .where("teamId", "=", TEAM)
      .where("at", ">=", range.from)
      .where("at", "<=", range.to)
      .orderBy("at")
      .orderBy("id")
      .execute();
  const [buildMs = 0, floorMs = 0, emptyZoneMs = 0] = await interleavedMedians(
    [() => buildTimeline(deps, input(zoneId)), indexedRead, () => buildTimeline(deps, input(zoneId + 1))],
    runs,
  );
  const { entries } = await buildTimeline(deps, input(zoneId));
  return {
    entries: entries.length,
    runs,
    buildMs: round(buildMs),
    floorMs: round(floorMs),
    floorRows: (await indexedRead()).length,
    ratioToFloor: round(buildMs / Math.max(floorMs, 0.01)),
    emptyZoneMs: round(emptyZoneMs),
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

// ---- (7b) the incident card -----------------------------------------------------------------------

/** Distinct sources added to the zone's event log: the card reads 4 pages of 500 groups per dimension. */
export const CARD_ROWS = 2_000;

export interface IncidentCardBuildTime {
  /** Event-log groups the card read, per dimension (its largest input), and their sum. */
  groupsRead: Record<OffenderDimension, number>;
  rows: number;
  /** Edge calls one card makes (the floor makes the same ones). */
  edgeCalls: number;
  runs: number;
  /** Medians: the card's CPU time (this process) and wall time, gathered and drawn (no Slack call). */
  cardCpuMs: number;
  cardMs: number;
  /** Medians: the same Edge requests sent again with undici, 4 at once as the key's queue, each answer JSON-parsed. */
  floorCpuMs: number;
  floorMs: number;
  /** Of CPU time: the simulator answering is in another process, in neither figure. */
  ratioToFloor: number;
  blocks: number;
}

/** CPU (user + system, this process) and wall time of `work`, in ms. */
async function measured(work: () => Promise<unknown>): Promise<{ cpu: number; wall: number }> {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  await work();
  const wall = performance.now() - t0;
  const c = process.cpuUsage(c0);
  return { cpu: (c.user + c.system) / 1000, wall };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

/**
 * `/edge incident <zone>` without Slack: gatherIncident (every Edge read of the card, through the bot's client,
 * its queue and checks) and incidentCard, on a zone whose event log has CARD_ROWS more sources, against the
 * simulator of the run (its own process, latency 0 meanwhile). The floor sends the same requests again and parses
 * each answer: the rows the card reads, read and parsed, nothing else.
 */
export async function incidentCardScenario(ctx: BenchContext, runs = 5): Promise<IncidentCardBuildTime> {
  const zone = SIM_IDS.zoneUnderAttack;
  const dir = await mkdtemp(join(tmpdir(), "edgeops-bench-card-"));
  const composed = await composeDeps({
    config: loadConfig({
      DATA_DIR: dir,
      ENCRYPTION_KEY: randomBytes(32).toString("base64"),
      EDGE_API_URL: ctx.sim.ready.url,
      EDGE_API_KEY: keyFor(0),
      // The key's pacing (10 starts a second by default) would time the limiter, not the card.
      EDGE_API_RATE_PER_SEC: "1000",
    }),
    logger: silentLogger,
    processMetrics: false,
  });
  const { deps } = composed;
  const dispatcher = new Agent({ connections: deps.config.edge.concurrency });
  await ctx.sim.call("setLatency", 0);
  await ctx.sim.call("scaleIncident", { zone, eventLogGroups: CARD_ROWS });
  try {
    let picture: IncidentPicture | undefined;
    let blocks = 0;
    const card = async () => {
      picture = await gatherIncident(deps, TEAM, zone, "15m", "C0001");
      const reply = incidentCard(picture, { isPublic: true, newRequestId });
      blocks = JSON.parse(JSON.stringify(reply)).blocks.length;
    };
    await card();
    // One card's requests, as the simulator received them.
    await ctx.sim.call("clear");
    await card();
    const sent = await ctx.sim.call<RecordedCall[]>("recorded", {});
    const floor = () =>
      inPool(sent, deps.config.edge.concurrency, async (r) => {
        const query = new URLSearchParams(r.query).toString();
        const res = await request(`${ctx.sim.ready.url}${r.path}${query ? `?${query}` : ""}`, {
          method: r.method as "GET",
          headers: { AccessKey: r.accessKey, accept: "application/json", "content-type": "application/json" },
          ...(r.body === undefined ? {} : { body: JSON.stringify(r.body) }),
          dispatcher,
        });
        JSON.parse(await res.body.text());
      });
    await floor();
    const cardTimes: { cpu: number; wall: number }[] = [];
    const floorTimes: { cpu: number; wall: number }[] = [];
    for (let i = 0; i < runs; i++) {
      cardTimes.push(await measured(card));
      floorTimes.push(await measured(floor));
    }
    const offenders = picture && "ok" in picture.offenders ? picture.offenders.ok.byDimension : undefined;
    const groupsRead = Object.fromEntries(
      OFFENDER_DIMENSIONS.map((d) => {
        const top = offenders?.[d];
        return [d, top && "ok" in top ? (top.ok.readGroups ?? top.ok.total ?? 0) : 0];
      }),
    ) as Record<OffenderDimension, number>;
    const cardCpuMs = median(cardTimes.map((t) => t.cpu));
    const floorCpuMs = median(floorTimes.map((t) => t.cpu));
    return {
      groupsRead,
      rows: Object.values(groupsRead).reduce((a, b) => a + b, 0),
      edgeCalls: sent.length,
      runs,
      cardCpuMs: round(cardCpuMs),
      cardMs: round(median(cardTimes.map((t) => t.wall))),
      floorCpuMs: round(floorCpuMs),
      floorMs: round(median(floorTimes.map((t) => t.wall))),
      ratioToFloor: round(cardCpuMs / Math.max(floorCpuMs, 0.01)),
      blocks,
    };
  } finally {
    await ctx.sim.call("scaleIncident", { zone, eventLogGroups: 0 });
    await ctx.sim.call("setLatency", SIM_LATENCY_MS);
    await dispatcher.close();
    await composed.close();
    await rm(dir, { recursive: true, force: true });
  }
}

interface RecordedCall {
  method: string;
  path: string;
  query: Record<string, string>;
  body: unknown;
  accessKey: string;
}

/** Run `work` on every item, at most `n` at once. */
async function inPool<T>(items: readonly T[], n: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const item = items[next++] as T;
      await work(item);
    }
  };
  await Promise.all(Array.from({ length: Math.min(n, items.length) }, worker));
}
