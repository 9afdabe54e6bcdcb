/**
 * Each answer schema of the operation table accepts what the documents allow. Answers are generated from
 * each operation's documented 200 response schema (../shared/reference/edge-api, read in place) by a small
 * seeded JSON-schema data generator, over many seeds: nullables null, optionals absent, enums at every
 * documented value, strings and integers at their limits, random mixes of these; then each object that
 * may be null made null on its own; then the keys of maps keyed by date written in every form.
 */
import { describe, expect, it } from "vitest";
import { OPERATIONS } from "../../src/edge/operations.js";
import { ignoredBody } from "../../src/edge/schemas/common.js";
import { dayMonthEitherWay } from "../../src/edge/schemas/date-key.js";
import {
  DATE_KEY_FORMS,
  documentedOperation,
  everyNullObject,
  generate,
  type Mode,
  rng,
} from "../support/answer-generator.js";
import type { Json } from "../support/openapi.js";

const MODES: Mode[] = ["nulls", "absent", "full", "limits", "random"];
const SEEDS = 60;

/** Every row that reads its answer, with the documented 200 answer of its operation. */
const ROWS = Object.entries(OPERATIONS)
  .filter(([, row]) => row.schema !== ignoredBody)
  .map(([name, row]) => {
    const op = documentedOperation(row.method, row.path);
    const ok = op.statuses.find((s) => s.status === 200)?.schema;
    if (!ok) throw new Error(`${name}: ${row.method} ${op.template} documents no 200 JSON answer`);
    return { name, family: op.family, ok, schema: row.schema };
  });

const issues = (r: { success: boolean; error?: { issues: { path: PropertyKey[]; message: string }[] } }) =>
  (r.error?.issues ?? [])
    .slice(0, 2)
    .map((i) => `${i.path.join(".")}: ${i.message}`)
    .join("; ");

/** What a parsed answer read from its date keys: the keys it could not read, and the dates of each series. */
function datesRead(value: unknown, into = { unreadable: [] as string[], series: [] as (number | null)[][] }) {
  if (Array.isArray(value)) for (const v of value) datesRead(v, into);
  else if (value !== null && typeof value === "object")
    for (const [k, v] of Object.entries(value)) {
      if ((k === "unreadableDays" || k === "unreadableKeys") && Array.isArray(v))
        into.unreadable.push(...(v as string[]));
      else if ((k === "days" || k === "points") && Array.isArray(v))
        into.series.push(v.map((p) => (p as { at: number | null }).at));
      else datesRead(v, into);
    }
  return into;
}

const row = (name: string) => {
  const r = ROWS.find((x) => x.name === name);
  if (!r) throw new Error(`no row ${name}`);
  return r;
};

describe("the generator makes what these tests claim", () => {
  it("answers for every operation of the table that reads its answer", () => {
    expect(ROWS.map((r) => r.name)).toContain("listRateLimitRules");
  });

  it("nulls each kind of object that may be null: a bare reference, a nullable combinator, a nullable map", () => {
    const places = (name: string) => {
      const { family, ok } = row(name);
      return everyNullObject(family, ok, 1).map((p) => p.place);
    };
    expect(places("getBotDetection")).toContain("data.browserFingerprint");
    expect(places("listDnsZones")).toContain("Items[].Records[].IPGeoLocationInfo");
    expect(places("getRateLimitMetrics")).toContain("data.ratelimitOverviewPastTwentyEightDays");
  });

  it("writes date keys that the answers read, at both levels of the metrics series", () => {
    for (const name of ["getRateLimitMetrics", "getRateLimits", "getMetricsOverviewDetailed"]) {
      const { family, ok, schema } = row(name);
      const read = [1, 2, 3].flatMap((seed) => {
        const g = generate(family, ok, "limits", rng(seed), seed, { dateKeyForm: "en-us" });
        return datesRead(schema.parse(g.answer)).series.flat();
      });
      expect([name, read.length > 0]).toEqual([name, true]);
    }
    const { family, ok } = row("getMetricsOverviewDetailed");
    const shapes = new Set(
      [1, 2, 3, 4, 5, 6].map((seed) => {
        const waf = (generate(family, ok, "limits", rng(seed), seed).answer as { data: { waf: Json } }).data
          .waf;
        const first = Object.keys((waf.metrics as Json | null) ?? {})[0] ?? "";
        return /^\d/.test(first) ? "time outer" : "time inner";
      }),
    );
    expect(shapes).toEqual(new Set(["time outer", "time inner"]));
  });
});

describe("zod answer schemas accept every answer the documents allow", () => {
  for (const { name, family, ok, schema } of ROWS) {
    it(name, () => {
      const failures: string[] = [];
      for (const mode of MODES)
        for (let seed = 1; seed <= SEEDS; seed++) {
          const { answer } = generate(family, ok, mode, rng(seed), seed);
          const r = schema.safeParse(answer);
          if (!r.success && failures.length < 3) failures.push(`${mode} seed ${seed}: ${issues(r)}`);
        }
      expect(failures).toEqual([]);
    });
  }
});

describe("an object the documents let be null reads as absent, wherever it is", () => {
  for (const { name, family, ok, schema } of ROWS) {
    it(name, () => {
      const failures: string[] = [];
      for (let seed = 1; seed <= 3; seed++)
        for (const { place, answer } of everyNullObject(family, ok, seed)) {
          const r = schema.safeParse(answer);
          if (!r.success && failures.length < 5) failures.push(`${place} null: ${issues(r)}`);
        }
      expect(failures).toEqual([]);
    });
  }
});

describe("date keys in every form are read as the dates they name", () => {
  for (const { name, family, ok, schema } of ROWS) {
    it(name, () => {
      const failures: string[] = [];
      for (const form of DATE_KEY_FORMS)
        for (let seed = 1; seed <= 10; seed++) {
          const g = generate(family, ok, "full", rng(seed), seed, { dateKeyForm: form });
          if (g.dates.length === 0) continue;
          const r = schema.safeParse(g.answer);
          if (!r.success) {
            failures.push(`${form} seed ${seed}: ${issues(r)}`);
            continue;
          }
          const read = datesRead(r.data);
          const written = new Set(g.dates);
          // A map whose slashed keys do not say whether the day or the month comes first (4/3/2026 and
          // 4/4/2026) is unknown, never guessed: those keys are named unread, and only those.
          const undecided = read.unreadable.filter(dayMonthEitherWay);
          const unreadable = read.unreadable.filter((k) => !dayMonthEitherWay(k));
          const unread = read.series.flat().filter((at) => at === null).length;
          const wrong = read.series.flat().filter((at) => at !== null && !written.has(at));
          // Days not read follow the dated ones, as written: the dated ones are in order.
          const unsorted = read.series
            .map((ats) => ats.filter((at) => at !== null))
            .filter((ats) => ats.some((at, i) => i > 0 && at < (ats[i - 1] ?? 0)));
          if (unreadable.length > 0 || unread > undecided.length || wrong.length > 0 || unsorted.length > 0)
            failures.push(
              `${form} seed ${seed}: unreadable ${JSON.stringify(unreadable.slice(0, 2))}, ` +
                `dates not written ${JSON.stringify(wrong.slice(0, 2))}, unsorted series ${unsorted.length}`,
            );
        }
      expect(failures.slice(0, 5)).toEqual([]);
    });
  }
});
