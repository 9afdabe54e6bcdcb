/**
 * Detection rules, pure: z-scores against a baseline with a noise floor and a minimum count, the episode's
 * calm-down rule, the baseline that keeps attacks out, the detailed-metrics samples, and app transitions.
 */
import { describe, expect, it } from "vitest";
import {
  alertLevel,
  BASELINE_SAMPLES,
  CALM_SAMPLES,
  classifyApp,
  evaluateZone,
  MIN_BASELINE_SAMPLES,
  nextBaseline,
  normaliseAppStatus,
  SENSITIVITIES,
  samplesFromDetailed,
  type ZoneEpisode,
  type ZoneSample,
  type ZoneSignal,
  type ZoneVerdict,
  zoneEpisodeStep,
} from "../../src/alerts/detect.js";
import { shieldDetailedMetricsSchema } from "../../src/edge/schemas/shield.js";

const sample = (at: number, counts: Partial<Record<ZoneSignal, number>> = {}): ZoneSample => ({
  at,
  counts: { ddos: 0, waf: 0, rateLimit: 0, bot: 0, ...counts },
});
const series = (values: number[], signal: ZoneSignal = "ddos") =>
  values.map((v, i) => sample(i, { [signal]: v }));
const reading = (v: ZoneVerdict, signal: ZoneSignal) => v.readings.find((r) => r.signal === signal);

describe("alertLevel", () => {
  const baselines: [string, ZoneSample[]][] = [
    ["quiet", series(Array.from({ length: 20 }, (_, i) => i % 2))],
    ["noisy", series(Array.from({ length: 30 }, (_, i) => (i % 2 === 0 ? 100 : 300)))],
    ["steady", series(Array.from({ length: 12 }, () => 40))],
    ["longer than the baseline", series(Array.from({ length: 45 }, (_, i) => (i < 15 ? 5000 : 7 + (i % 5))))],
  ];
  it("is the count at which evaluateZone calls a signal over, at every sensitivity and baseline", () => {
    for (const [name, history] of baselines)
      for (const s of Object.keys(SENSITIVITIES) as (keyof typeof SENSITIVITIES)[]) {
        const level = alertLevel(history, "ddos", s);
        expect(level, `${name} ${s}`).not.toBeNull();
        const at = Math.ceil(level!);
        const over = (count: number) =>
          reading(evaluateZone(history, sample(99, { ddos: count }), s), "ddos");
        expect(over(at)?.over, `${name} ${s} at ${at}`).toBe(true);
        expect(over(at - 1)?.over, `${name} ${s} at ${at - 1}`).toBe(false);
      }
  });

  it("is the noisy baseline's mean + z σ, never under the minimum count, and none before the baseline is long enough", () => {
    const noisy = series(Array.from({ length: 30 }, (_, i) => (i % 2 === 0 ? 100 : 300))); // mean 200, σ 100
    expect(alertLevel(noisy, "ddos", "normal")).toBeCloseTo(600, 10);
    expect(alertLevel(noisy, "waf", "normal")).toBe(SENSITIVITIES.normal.minCount);
    expect(alertLevel(series([1, 2, 3, 4].slice(0, MIN_BASELINE_SAMPLES - 1)), "ddos", "high")).toBeNull();
  });
});

describe("evaluateZone", () => {
  it("reads every signal against its own baseline: mean, standard deviation and z", () => {
    const history = series([2, 4, 4, 4, 5, 5, 7, 9]); // mean 5, σ 2
    const v = evaluateZone(history, sample(99, { ddos: 15, waf: 3 }), "normal");
    expect(v.readings.map((r) => r.signal)).toEqual(["ddos", "waf", "rateLimit", "bot"]);
    expect(reading(v, "ddos")).toMatchObject({ count: 15, mean: 5, std: 2 });
    // σ (2) is below the noise of a mean of 5 (√5), so the floor divides.
    expect(reading(v, "ddos")?.z).toBeCloseTo(10 / Math.sqrt(5), 10);
    // WAF had a baseline of zeros: σ 0, floor 1, z = count.
    expect(reading(v, "waf")).toMatchObject({ count: 3, mean: 0, std: 0, z: 3, over: false });
  });

  it("needs both the z and the minimum count of the sensitivity", () => {
    const quiet = series(Array.from({ length: 20 }, (_, i) => i % 2)); // mean 0.5, σ 0.5, floor 1
    for (const [name, t] of Object.entries(SENSITIVITIES) as [
      keyof typeof SENSITIVITIES,
      { z: number; minCount: number },
    ][]) {
      // Just under the minimum count (z far above the threshold): not an attack.
      expect(evaluateZone(quiet, sample(1, { bot: t.minCount - 1 }), name).attack, name).toBe(false);
      expect(evaluateZone(quiet, sample(1, { bot: t.minCount }), name).attack, name).toBe(true);
    }
    // A noisy baseline: the count passes every minimum but not the z of low and normal.
    const noisy = series(Array.from({ length: 30 }, (_, i) => (i % 2 === 0 ? 100 : 300))); // mean 200, σ 100
    const v = (s: "low" | "normal" | "high") => evaluateZone(noisy, sample(1, { ddos: 550 }), s);
    expect(reading(v("high"), "ddos")?.z).toBeCloseTo(3.5, 10);
    expect(v("high").attack).toBe(true);
    expect(v("normal").attack).toBe(false);
    expect(v("low").attack).toBe(false);
    // Exactly at the threshold counts.
    expect(evaluateZone(noisy, sample(1, { ddos: 600 }), "normal").attack).toBe(true);
  });

  it("is attacked when any one signal is over, and says which", () => {
    const history = Array.from({ length: 10 }, (_, i) =>
      sample(i, { ddos: 5, waf: 20, rateLimit: 2, bot: 40 }),
    );
    const v = evaluateZone(history, sample(10, { ddos: 5, waf: 21, rateLimit: 200, bot: 38 }), "normal");
    expect(v.attack).toBe(true);
    expect(v.readings.filter((r) => r.over).map((r) => r.signal)).toEqual(["rateLimit"]);
  });

  it("declares nothing before the baseline has MIN_BASELINE_SAMPLES samples", () => {
    const huge = sample(9, { ddos: 1_000_000 });
    expect(evaluateZone([], huge, "high").attack).toBe(false);
    expect(evaluateZone(series(Array(MIN_BASELINE_SAMPLES - 1).fill(0)), huge, "high").attack).toBe(false);
    expect(evaluateZone(series(Array(MIN_BASELINE_SAMPLES).fill(0)), huge, "high").attack).toBe(true);
    expect(reading(evaluateZone([], huge, "high"), "ddos")?.z).toBe(1_000_000);
  });

  it("uses only the latest BASELINE_SAMPLES samples", () => {
    const old = series(Array(50).fill(1_000));
    const recent = series(Array(BASELINE_SAMPLES).fill(0));
    const v = evaluateZone([...old, ...recent], sample(1, { ddos: 500 }), "normal");
    expect(reading(v, "ddos")?.mean).toBe(0);
    expect(v.attack).toBe(true);
  });

  it("reads missing, negative and non-finite counts as 0", () => {
    const odd = {
      at: 1,
      counts: { ddos: Number.NaN, waf: -5, rateLimit: Number.POSITIVE_INFINITY },
    } as unknown as ZoneSample;
    const v = evaluateZone(series(Array(10).fill(0)), odd, "high");
    expect(v.attack).toBe(false);
    expect(v.readings.map((r) => r.count)).toEqual([0, 0, 0, 0]);
    expect(v.readings.every((r) => Number.isFinite(r.z))).toBe(true);
  });
});

describe("zoneEpisodeStep and nextBaseline", () => {
  const attack: ZoneVerdict = { attack: true, readings: [] };
  const calm: ZoneVerdict = { attack: false, readings: [] };

  it("opens on attack, fires while attacked, resolves after CALM_SAMPLES calm samples in a row", () => {
    const steps: string[] = [];
    let episode: ZoneEpisode | null = null;
    const verdicts = [calm, attack, attack, calm, attack, ...Array(CALM_SAMPLES).fill(calm), calm];
    for (const v of verdicts) {
      const r = zoneEpisodeStep(episode, v);
      episode = r.episode;
      steps.push(r.step);
    }
    expect(CALM_SAMPLES).toBe(3);
    expect(steps).toEqual([
      "quiet",
      "opened",
      "firing",
      "calming",
      "firing",
      "calming",
      "calming",
      "resolved",
      "quiet",
    ]);
    expect(episode).toBeNull();
    // A calm-down of one sample resolves at once.
    expect(zoneEpisodeStep({ calmSamples: 0 }, calm, 1)).toEqual({ episode: null, step: "resolved" });
  });

  it("keeps attack samples and open episodes out of the baseline, and caps it", () => {
    const full = series(Array(BASELINE_SAMPLES).fill(1));
    const next = sample(100, { ddos: 2 });
    expect(nextBaseline(full, next, calm, false)).toEqual([...full.slice(1), next]);
    expect(nextBaseline(full, next, attack, false)).toEqual(full);
    expect(nextBaseline(full, next, calm, true)).toEqual(full);
    expect(nextBaseline([], next, calm, false)).toEqual([next]);
  });
});

describe("samplesFromDetailed", () => {
  const t0 = Date.UTC(2026, 7, 20, 10, 0);
  const key = (m: number) => new Date(t0 + m * 60_000).toISOString().replace(".000Z", "Z");
  const detailed = shieldDetailedMetricsSchema.parse({
    ddos: {
      metrics: {
        [key(0)]: { blockedRequests: 10, challengedRequests: 5, loggedRequests: 1, verifiedRequests: 4 },
        [key(2)]: { blockedRequests: 20, challengedRequests: 0, loggedRequests: 0, verifiedRequests: 0 },
        [key(4)]: { blockedRequests: 99, challengedRequests: 0, loggedRequests: 0, verifiedRequests: 0 },
      },
      totals: {},
    },
    waf: { metrics: { [key(0)]: { blockedRequests: 3, loggedRequests: 2 } }, totals: {} },
    rateLimit: { metrics: { [key(2)]: { blockedBreaches: 7, loggedBreaches: 1 } }, totals: {} },
    botDetection: { metrics: { [key(0)]: { challengedRequests: 4, loggedRequests: 6 } }, totals: {} },
  });

  it("gives one sample per ended bucket, counting what each feature acted on", () => {
    // At 10:05:30 minute 10:05 is not in yet: the 10:04 bucket (10:04-10:06) is still filling.
    const samples = samplesFromDetailed(detailed, t0 + 5.5 * 60_000, 120_000);
    expect(samples).toEqual([
      { at: t0, counts: { ddos: 16, waf: 5, rateLimit: 0, bot: 10 } },
      { at: t0 + 120_000, counts: { ddos: 20, waf: 0, rateLimit: 8, bot: 0 } },
    ]);
    // At 10:06:00 it has ended.
    expect(samplesFromDetailed(detailed, t0 + 6 * 60_000, 120_000)).toHaveLength(3);
  });
});

describe("classifyApp", () => {
  const now = 1_000_000_000;
  const MIN = 60_000;
  const stuck = 15 * MIN;
  const was = (status: string, minutesAgo = 1) => ({ status, since: now - minutesAgo * MIN });

  it.each([
    // previous, current, watched, expected
    [undefined, "active", null, null],
    [undefined, "failing", null, "failing"],
    [was("active"), "failing", null, "failing"],
    [was("Active"), "Failing", null, "failing"],
    [was("active"), "suspended", null, "failing"],
    [was("failing"), "failing", null, null],
    [was("failing"), "suspended", null, null],
    [was("failing"), "active", null, "recovered"],
    [was("failing"), "inactive", null, "recovered"],
    [was("failing"), "progressing", null, null],
    [was("active"), "progressing", null, null],
    [was("progressing", 14), "progressing", null, null],
    [was("progressing", 15), "progressing", null, "stuck_deploying"],
    [was("progressing", 60), "Deploying", null, "stuck_deploying"],
    [was("progressing", 20), "active", null, "recovered"],
    [was("progressing", 5), "active", null, null],
    [was("progressing", 20), "failing", null, "failing"],
    [was("active"), "hibernating", null, null],
    [was("active"), "unknown", null, null],
    // A watch naming its statuses.
    [was("active"), "unknown", ["unknown"], "failing"],
    [was("active"), "failing", ["unknown"], null],
    [was("unknown"), "active", ["unknown"], "recovered"],
    [was("progressing", 60), "progressing", ["failing"], null],
    [was("progressing", 60), "progressing", ["deploying"], "stuck_deploying"],
    [was("active"), "progressing", ["progressing"], null],
  ] as const)("%o → %s (watching %o): %s", (previous, current, watched, expected) => {
    expect(classifyApp(previous, current, now, stuck, watched)).toBe(expected);
  });

  it("counts Deploying from when it began, even on a first sighting", () => {
    expect(classifyApp(undefined, "progressing", now, stuck, null)).toBe(null);
    expect(classifyApp(undefined, "progressing", now, 0, null)).toBe("stuck_deploying");
    expect(classifyApp(was("progressing", 1e6), "progressing", now, Number.POSITIVE_INFINITY, null)).toBe(
      null,
    );
  });

  it("normalises status words", () => {
    expect(normaliseAppStatus(" Deploying ")).toBe("progressing");
    expect(normaliseAppStatus("Active")).toBe("active");
  });
});
