/**
 * The detailed-metrics check, read by hand in one pass, against the straightforward zod reading it replaced
 * (test/support/metrics-reference.ts): the same answers give the same points, totals and unreadable keys, and
 * the same faults, on a spread of generated answers.
 */
import { describe, expect, it } from "vitest";
import type { z } from "zod";
import {
  overviewMetricSchema,
  shieldDetailedMetricsSchema,
  shieldOverviewMetricsResponseSchema,
} from "../../src/edge/schemas/shield.js";
import { rng } from "../support/answer-generator.js";
import {
  referenceOverviewMetricSchema,
  referenceOverviewMetricsResponseSchema,
} from "../support/metrics-reference.js";

const BASE = Date.UTC(2026, 7, 9, 10, 0, 0);
const TWO_MINUTES = 120_000;
const pad = (n: number, w = 2) => String(n).padStart(w, "0");

/** Every date form date-key.ts reads, and some it does not. */
const FORMS: ReadonlyArray<(t: number) => string> = [
  (t) => new Date(t).toISOString().slice(0, 10),
  (t) => new Date(t).toISOString(),
  (t) => new Date(t).toISOString().replace(/\.\d{3}Z$/, "Z"),
  (t) => new Date(t).toISOString().slice(0, 19),
  (t) => new Date(t).toISOString().slice(0, 16).replace("T", " "),
  (t) => `${new Date(t + 2 * 3_600_000).toISOString().slice(0, 19)}+02:00`,
  (t) => `${new Date(t - 5 * 3_600_000).toISOString().slice(0, 19)}-0500`,
  (t) => `${new Date(t).toISOString().slice(0, 19)}.1234567`,
  (t) => {
    const d = new Date(t);
    const h = d.getUTCHours();
    return `${d.getUTCMonth() + 1}/${d.getUTCDate()}/${d.getUTCFullYear()} ${h % 12 === 0 ? 12 : h % 12}:${pad(d.getUTCMinutes())}:00 ${h < 12 ? "AM" : "PM"}`;
  },
  (t) => {
    const d = new Date(t);
    return `${pad(d.getUTCDate())}/${pad(d.getUTCMonth() + 1)}/${d.getUTCFullYear()} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}`;
  },
  (t) => {
    const d = new Date(t);
    return `${d.getUTCMonth() + 1}/${d.getUTCDate()}/${d.getUTCFullYear()}`;
  },
  (t) => {
    const d = new Date(t);
    return `${d.getUTCDate()}.${d.getUTCMonth() + 1}.${d.getUTCFullYear()} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:00`;
  },
  (t) => {
    const d = new Date(t);
    return `${d.getUTCFullYear()}${pad(d.getUTCMonth() + 1)}${pad(d.getUTCDate())}${pad(d.getUTCHours())}${pad(d.getUTCMinutes())}00`;
  },
  (t) => String(Math.floor(t / 1000)),
  (t) => String(t),
  (t) => `day ${Math.floor(t / 86_400_000)} minute ${Math.floor((t % 86_400_000) / 60_000)}`,
  // No digit at all: which level is time falls to the tie between the levels.
  (t) => "abcdefghijklmnopqrstuvwxyz".slice(0, 1 + ((t / TWO_MINUTES) % 26)),
];
/** Keys that are no date of any form, or a date that does not exist. */
const ODD_KEYS = ["Aug 9 14:30", "2026-02-30", "13/13/2026", "25:00", "", " ", "x1"];
const NAMES = [
  "blockedRequests",
  "challengedRequests",
  "loggedRequests",
  "totalRequests",
  "verifiedRequests",
];
/** Names an object already answers to (its prototype's), and one that is a number. */
const ODD_NAMES = ["toString", "constructor", "hasOwnProperty", "7", "0"];

type Rand = () => number;
const pick = <T>(rand: Rand, xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)] as T;
const chance = (rand: Rand, p: number) => rand() < p;

function count(rand: Rand): unknown {
  const r = rand();
  if (r < 0.6) return Math.floor(rand() * 50);
  if (r < 0.7) return 0;
  if (r < 0.75) return -0;
  if (r < 0.8) return -Math.floor(rand() * 1e6);
  if (r < 0.85) return Number.MAX_SAFE_INTEGER;
  return Math.floor(rand() * 1e12);
}

/** A time key for the i-th bucket: the map's form, now and then another one or no date at all. */
function timeKey(rand: Rand, form: (t: number) => string, i: number): string {
  if (chance(rand, 0.04)) return pick(rand, ODD_KEYS);
  if (chance(rand, 0.04)) return pick(rand, FORMS)(BASE + i * TWO_MINUTES);
  return form(BASE + i * TWO_MINUTES);
}

/** One feature's OverviewMetric as an answer may carry it (valid), time keyed at the outer or the inner level. */
function feature(rand: Rand): unknown {
  const r = rand();
  if (r < 0.04) return null;
  if (r < 0.06) return {};
  const form = pick(rand, FORMS);
  const buckets = Math.floor(rand() * 35);
  const names = NAMES.filter(() => chance(rand, 0.6)).concat(
    chance(rand, 0.1) ? [pick(rand, ODD_NAMES)] : [],
  );
  const metrics: Record<string, Record<string, unknown> | null> = {};
  const timeOuter = chance(rand, 0.6);
  for (let i = 0; i < buckets; i++) {
    // Now and then the same instant twice, written two ways: its counts add up.
    const at = chance(rand, 0.05) ? Math.max(0, i - 1) : i;
    const key = timeKey(rand, form, at);
    if (timeOuter) {
      if (chance(rand, 0.05)) metrics[key] = null;
      else metrics[key] = Object.fromEntries(names.map((n) => [n, count(rand)]));
    } else
      for (const n of names) {
        metrics[n] ??= chance(rand, 0.05) ? null : {};
        const series = metrics[n];
        if (series) series[key] = count(rand);
      }
  }
  const m: Record<string, unknown> = {};
  if (chance(rand, 0.9)) m.metrics = chance(rand, 0.05) ? null : metrics;
  if (chance(rand, 0.85))
    m.totals = chance(rand, 0.1) ? null : Object.fromEntries(names.map((n) => [n, count(rand)]));
  if (chance(rand, 0.1)) m.somethingNew = { nested: [1, 2] };
  return m;
}

/** The same, with one thing the shape refuses somewhere (a non-integer count, a list for a map, …). */
function spoilt(rand: Rand, f: unknown): unknown {
  const bad = pick(rand, [
    1.5,
    "3",
    true,
    [],
    {},
    Number.MAX_SAFE_INTEGER + 1,
    1e300,
    Number.NaN,
  ] as unknown[]);
  if (f === null || typeof f !== "object") return pick(rand, [3, "waf", [], true]);
  const m = structuredClone(f) as { metrics?: Record<string, unknown> | null; totals?: unknown };
  const where = rand();
  if (where < 0.15 || !m.metrics || Object.keys(m.metrics).length === 0) {
    if (chance(rand, 0.5)) m.totals = { ...(m.totals as object), blockedRequests: bad };
    else m.metrics = pick(rand, [[], "none", 4] as unknown[]) as null;
    return m;
  }
  const outerKey = pick(rand, Object.keys(m.metrics));
  const series = m.metrics[outerKey];
  if (series === null || typeof series !== "object" || Object.keys(series).length === 0 || where < 0.3)
    m.metrics[outerKey] = pick(rand, [[1, 2], "x", 5] as unknown[]);
  else (series as Record<string, unknown>)[pick(rand, Object.keys(series))] = bad;
  return m;
}

function expectSame(actual: z.ZodSafeParseResult<unknown>, expected: z.ZodSafeParseResult<unknown>) {
  expect(actual.success).toBe(expected.success);
  if (expected.success) expect(actual.data).toStrictEqual(expected.data);
  else expect(actual.error?.issues).toStrictEqual(expected.error.issues);
}

describe("the detailed-metrics check", () => {
  it("reads every generated feature as the straightforward reading does", () => {
    const rand = rng(40);
    for (let i = 0; i < 600; i++) {
      const f = feature(rand);
      expectSame(overviewMetricSchema.safeParse(f), referenceOverviewMetricSchema.safeParse(f));
    }
  });

  it("refuses what the straightforward reading refuses, with the same faults", () => {
    const rand = rng(41);
    let refused = 0;
    for (let i = 0; i < 400; i++) {
      const f = spoilt(rand, feature(rand));
      const expected = referenceOverviewMetricSchema.safeParse(f);
      if (!expected.success) refused++;
      expectSame(overviewMetricSchema.safeParse(f), expected);
    }
    expect(refused).toBeGreaterThan(300);
  });

  it("reads whole answers, features absent, null or spoilt, as the straightforward reading does", () => {
    const rand = rng(42);
    // Every feature the answer names (an empty answer reads as each feature with nothing in it).
    const features = Object.keys(shieldDetailedMetricsSchema.parse({}).features);
    for (let i = 0; i < 150; i++) {
      const data: Record<string, unknown> = { totalCleanRequestsLimit: 1000, resolution: 1 };
      for (const name of features) if (chance(rand, 0.85)) data[name] = feature(rand);
      if (chance(rand, 0.2)) data[pick(rand, features)] = spoilt(rand, data.waf ?? null);
      // Through JSON, as the client reads it.
      const answer = JSON.parse(JSON.stringify({ data, error: null })) as unknown;
      expectSame(
        shieldOverviewMetricsResponseSchema.safeParse(answer),
        referenceOverviewMetricsResponseSchema.safeParse(answer),
      );
    }
  });

  it("reads the maps of one answer each on its own keys, also when they begin and end alike", () => {
    // Day-first once a key's day is over 12, month-first once its month is: the same first and last keys.
    const dayFirst = {
      "01/02/2026": { blocked: 1 },
      "13/02/2026": { blocked: 2 },
      "03/02/2026": { blocked: 3 },
    };
    const monthFirst = {
      "01/02/2026": { blocked: 1 },
      "02/13/2026": { blocked: 2 },
      "03/02/2026": { blocked: 3 },
    };
    for (const metrics of [dayFirst, monthFirst, dayFirst]) {
      const answer = { metrics, totals: null };
      const read = overviewMetricSchema.parse(answer);
      expect(read).toStrictEqual(referenceOverviewMetricSchema.parse(answer));
      expect(read.points.map((p) => new Date(p.at).toISOString().slice(0, 10))).toEqual(
        metrics === dayFirst
          ? ["2026-02-01", "2026-02-03", "2026-02-13"]
          : ["2026-01-02", "2026-02-13", "2026-03-02"],
      );
    }
  });

  it("leaves a __proto__ key out as the shape's check does", () => {
    const answer = JSON.parse(
      '{"metrics":{"__proto__":{"blocked":1},"2026-08-09T10:00:00Z":{"__proto__":2,"blocked":3}},"totals":{"__proto__":5,"blocked":4}}',
    ) as unknown;
    const read = overviewMetricSchema.parse(answer);
    expect(read).toStrictEqual(referenceOverviewMetricSchema.parse(answer));
    expect(read.points).toEqual([{ at: Date.parse("2026-08-09T10:00:00Z"), values: { blocked: 3 } }]);
  });
});
