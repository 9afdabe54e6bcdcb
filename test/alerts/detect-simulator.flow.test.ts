/**
 * Detection against the simulator's traffic, read the way the poller reads it (the Edge client over HTTP, the
 * detailed metrics in two-minute buckets): a day of ordinary traffic on every zone raises nothing at any
 * sensitivity, the seeded attack is seen, a staged attack is seen within minutes of its start and resolves
 * within minutes of calm, and a staged app failure is classified from GET /mc/apps.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  CALM_SAMPLES,
  classifyApp,
  evaluateZone,
  nextBaseline,
  type Sensitivity,
  samplesFromDetailed,
  type ZoneEpisode,
  type ZoneSample,
  zoneEpisodeStep,
} from "../../src/alerts/detect.js";
import type { EdgeApi, EdgeClient } from "../../src/edge/client.js";
import { METRICS_RESOLUTION } from "../../src/edge/schemas/shield.js";
import { SIM_API_KEY, SIM_IDS, type Simulator, startSimulator } from "../../tools/simulator/index.js";
import { steppedClock } from "../support/clock.js";
import { testEdgeApi } from "../support/edge-api.js";

const MIN = 60_000;
const BUCKET = 2 * MIN;
const START = Date.UTC(2026, 7, 20, 9, 0, 20);

let sim: Simulator;
let api: EdgeApi;
let client: EdgeClient;
let clock = START;

beforeAll(async () => {
  sim = await startSimulator({ clock: steppedClock(() => clock) });
  api = testEdgeApi(sim.url, { timeoutMs: 5_000, maxQueue: 1_000 });
  client = api.forKey(SIM_API_KEY);
});
afterAll(async () => {
  await api.close();
  await sim.close();
});
beforeEach(() => {
  clock = START;
  sim.calm();
  sim.state.shieldTraffic.get(SIM_IDS.zoneEnterprise)?.attacks.splice(0);
});

/** The zone's whole two-minute buckets over the `minutes` before the clock. */
async function samples(zone: number, minutes: number): Promise<ZoneSample[]> {
  const d = await client.getMetricsOverviewDetailed(zone, {
    from: clock - minutes * MIN,
    to: clock,
    resolution: METRICS_RESOLUTION.twoMinutes,
  });
  return samplesFromDetailed(d, clock, BUCKET);
}

/** Walks a series as a poller would (baseline kept by nextBaseline, episodes by zoneEpisodeStep). */
function walk(series: ZoneSample[], s: Sensitivity) {
  let baseline: ZoneSample[] = [];
  let episode: ZoneEpisode | null = null;
  const steps: Array<{ at: number; step: string }> = [];
  for (const current of series) {
    const verdict = evaluateZone(baseline, current, s);
    const r = zoneEpisodeStep(episode, verdict);
    baseline = nextBaseline(baseline, current, verdict, episode !== null);
    episode = r.episode;
    steps.push({ at: current.at, step: r.step });
  }
  return steps;
}

describe("zones", () => {
  it("raises nothing on a day of ordinary traffic on any zone, at any sensitivity", async () => {
    clock = START - 15 * MIN; // before the seeded attack began (12 minutes before the simulator started)
    const raised: string[] = [];
    for (const zone of sim.state.shieldZones.map((z) => z.shieldZoneId)) {
      const day = await samples(zone, 24 * 60 - 2);
      expect(day.length).toBeGreaterThan(700);
      for (const s of ["low", "normal", "high"] as const)
        for (const { at, step } of walk(day, s))
          if (step !== "quiet") raised.push(`${zone} ${s} ${new Date(at).toISOString()} ${step}`);
    }
    expect(raised).toEqual([]);
  });

  it("sees the seeded attack on the zone under attack", async () => {
    const steps = walk(await samples(SIM_IDS.zoneUnderAttack, 70), "normal");
    const opened = steps.filter((s) => s.step === "opened");
    expect(opened).toHaveLength(1);
    // The attack began at 08:48:20; its first whole bucket is 08:48-08:50.
    expect(opened[0]?.at).toBeGreaterThanOrEqual(Date.UTC(2026, 7, 20, 8, 48));
    expect(opened[0]?.at).toBeLessThanOrEqual(Date.UTC(2026, 7, 20, 8, 52));
    expect(steps.at(-1)?.step).toBe("firing");
  });

  it("sees a staged attack within minutes of its start and resolves within minutes of calm, polling each minute", async () => {
    const zone = SIM_IDS.zoneEnterprise;
    const attackAt = START + 40_000; // 09:01:00
    sim.stageAttack(zone, { startsAt: attackAt, rampMinutes: 3, durationMinutes: 120, peakPerMinute: 400 });
    const delays: Record<Sensitivity, { detected?: number; resolved?: number }> = {
      low: {},
      normal: {},
      high: {},
    };
    const state = Object.fromEntries(
      (["low", "normal", "high"] as const).map((s) => [
        s,
        { baseline: [] as ZoneSample[], episode: null as ZoneEpisode | null, seen: 0 },
      ]),
    ) as Record<Sensitivity, { baseline: ZoneSample[]; episode: ZoneEpisode | null; seen: number }>;
    // Fill each baseline at once from the last hour, as the poller should on its first poll.
    const hour = await samples(zone, 60);
    for (const st of Object.values(state)) {
      st.baseline = hour.slice(0, -1);
      st.seen = hour.at(-1)?.at ?? 0;
    }
    let calmAt: number | undefined;
    for (let minute = 1; minute <= 40; minute++) {
      clock = START + minute * MIN;
      if (minute === 20) {
        sim.calm();
        calmAt = clock;
      }
      const latest = await samples(zone, 10);
      for (const s of ["low", "normal", "high"] as const) {
        const st = state[s];
        for (const current of latest.filter((x) => x.at > st.seen)) {
          st.seen = current.at;
          const verdict = evaluateZone(st.baseline, current, s);
          const r = zoneEpisodeStep(st.episode, verdict);
          st.baseline = nextBaseline(st.baseline, current, verdict, st.episode !== null);
          st.episode = r.episode;
          if (r.step === "opened") delays[s].detected = (clock - attackAt) / MIN;
          if (r.step === "resolved" && calmAt !== undefined) delays[s].resolved = (clock - calmAt) / MIN;
        }
      }
    }
    // Nothing can be seen before the attack's first minute is over; a ramping attack is seen within a few buckets.
    for (const s of ["low", "normal", "high"] as const) {
      expect(delays[s].detected, s).toBeGreaterThanOrEqual(1);
      expect(delays[s].detected, s).toBeLessThanOrEqual(5);
      // CALM_SAMPLES quiet buckets after the cut (two minutes each), plus the bucket that held the cut.
      expect(delays[s].resolved, s).toBeGreaterThanOrEqual(CALM_SAMPLES * 2);
      expect(delays[s].resolved, s).toBeLessThanOrEqual(CALM_SAMPLES * 2 + 3);
    }
    console.info("detection and resolution delays (minutes)", JSON.stringify(delays));
  });
});

describe("apps", () => {
  it("classifies a staged failure and recovery from GET /mc/apps", async () => {
    const appId = SIM_IDS.appsWithCapitalisedStatus[1];
    sim.stageAppStatus(appId, [
      { at: START + 2 * MIN, status: "failing" },
      { at: START + 5 * MIN, status: "progressing" },
      { at: START + 30 * MIN, status: "active" },
    ]);
    const stored = new Map<string, { status: string; since: number }>();
    const transitions: string[] = [];
    for (let minute = 0; minute <= 32; minute++) {
      clock = START + minute * MIN;
      const page = await client.listApps({ limit: 1000 });
      for (const app of page.items) {
        const previous = stored.get(app.id);
        const t = classifyApp(previous, app.status, clock, 20 * MIN, null);
        if (t !== null && app.id === appId && !transitions.at(-1)?.startsWith(t))
          transitions.push(`${t} @${minute}`);
        if (previous?.status !== app.status) stored.set(app.id, { status: app.status, since: clock });
      }
    }
    expect(transitions).toEqual(["failing @2", "stuck_deploying @25", "recovered @30"]);
  });
});
