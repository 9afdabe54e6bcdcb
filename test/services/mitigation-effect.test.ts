import { describe, expect, it } from "vitest";
import { shieldDetailedMetricsSchema } from "../../src/edge/schemas/shield.js";
import {
  EFFECT_MIN_EVENTS_BEFORE,
  EFFECT_MIN_MINUTES,
  type EffectReads,
  type EffectTarget,
  effectTargetOf,
  effectWindows,
  effectWords,
  overlapsWith,
  perMinuteWords,
  summariseEffect,
  type Tally,
} from "../../src/services/mitigation-effect.js";

const MIN = 60_000;
/** 14:56:20 UTC: the change was applied 20 s into a minute. */
const APPLIED = Date.UTC(2026, 10, 28, 14, 56, 20);
const IP: EffectTarget = { what: "entry", shieldZoneId: 7, type: "ip", value: "192.0.2.225" };
const WAF: EffectTarget = {
  what: "threats",
  shieldZoneId: 7,
  feature: "waf",
  setting: { from: "Log", to: "Block", direction: "stricter" },
};

const tally = (count: number, a?: Partial<Tally["actions"]>): Tally => ({
  count,
  actions: a === undefined ? null : { blocked: 0, challenged: 0, logged: 0, ...a },
  partial: false,
});

/** Detailed metrics with one feature's two-minute points: `perSlot(at)` its counts in the slot starting at `at`. */
function metrics(
  from: number,
  to: number,
  perSlot: (at: number) => Record<string, number>,
  feature = "waf",
  key: (at: number) => string = (at) => new Date(at).toISOString(),
) {
  const points: Record<string, Record<string, number>> = {};
  for (let at = from; at < to; at += 2 * MIN) points[key(at)] = perSlot(at);
  return shieldDetailedMetricsSchema.parse({ [feature]: { metrics: points, totals: null } });
}

const reads = (r: Partial<EffectReads>): EffectReads => ({
  others: [],
  metrics: { error: "not read in this test" },
  ...r,
});

describe("the windows an effect is measured over", () => {
  it("is the hour before the minute of the change, and whole minutes after it up to the one in progress", () => {
    const w = effectWindows(APPLIED, APPLIED + 10 * MIN);
    expect(new Date(w.before.from).toISOString()).toBe("2026-11-28T13:56:00.000Z");
    expect(new Date(w.before.to).toISOString()).toBe("2026-11-28T14:56:00.000Z");
    expect(new Date(w.after.from).toISOString()).toBe("2026-11-28T14:57:00.000Z");
    expect(new Date(w.after.to).toISOString()).toBe("2026-11-28T15:06:00.000Z");
    // Metrics in whole two-minute slots: the slot holding the change belongs to neither side.
    expect(new Date(w.metricsBefore.to).toISOString()).toBe("2026-11-28T14:56:00.000Z");
    expect(new Date(w.metricsAfter.from).toISOString()).toBe("2026-11-28T14:58:00.000Z");
  });

  it("keeps the after window to the last hour, so it says the rate now", () => {
    const w = effectWindows(APPLIED, APPLIED + 5 * 60 * MIN);
    expect(w.after.to - w.after.from).toBe(60 * MIN);
  });
});

describe("an entry's effect from its events in the event log", () => {
  it("says how many a minute got through before and after, and what the edge does with them now", () => {
    const now = APPLIED + 10 * MIN + 5_000;
    const e = summariseEffect(IP, APPLIED, now, {
      others: [],
      events: {
        before: tally(27_300, { logged: 27_300 }),
        // 9 whole minutes after (14:57 to 15:06), all blocked.
        after: tally(9 * 455, { blocked: 9 * 455 }),
      },
      metrics: metrics(
        effectWindows(APPLIED, now).metricsBefore.from,
        effectWindows(APPLIED, now).metricsAfter.to,
        (at) => ({ blockedRequests: 0, loggedRequests: at < APPLIED ? 1_000 : 620 }),
      ),
    });
    expect(e.state).toBe("measured");
    if (e.state !== "measured") return;
    expect(e.before.perMinute).toBe(455);
    expect(e.before.actions).toEqual({ blocked: 0, challenged: 0, logged: 455 });
    expect(e.after.actions).toEqual({ blocked: 455, challenged: 0, logged: 0 });
    // 1,000 then 620 per two-minute slot: 500 → 310 a minute.
    expect(e.zone?.before.perMinute).toBe(500);
    expect(e.zone?.after.perMinute).toBe(310);
    expect(effectWords(e, "block")).toBe(
      "Since the block at 14:56 UTC, 192.0.2.225 went from 455 to 0 events a minute getting through (of 455 a minute in the event log before); 455 blocked a minute now. The zone's threats fell 38 % (500 → 310 a minute).",
    );
  });

  it("does not claim a block when the entry has no event at all after it", () => {
    const e = summariseEffect(IP, APPLIED, APPLIED + 10 * MIN, {
      ...reads({}),
      events: { before: tally(6_000, { logged: 6_000 }), after: tally(0, {}) },
    });
    expect(effectWords(e, "block")).toMatch(
      /^Since the block at 14:56 UTC, 192\.0\.2\.225 went from 100 to 0 events a minute in the event log \(the log can't tell blocked from gone\)\. The zone's threats: not known \(not read in this test\)\.$/,
    );
  });

  it("says it cannot say rather than give a number", () => {
    const events = { before: tally(6_000, { logged: 6_000 }), after: tally(0, {}) };
    const cases: [string, ReturnType<typeof summariseEffect>][] = [
      ["not applied", summariseEffect(IP, null, APPLIED, reads({ events }))],
      ["too soon", summariseEffect(IP, APPLIED, APPLIED + 2 * MIN, reads({ events }))],
      [
        "no event log",
        summariseEffect(IP, APPLIED, APPLIED + 10 * MIN, reads({ events: { noEventLog: true } })),
      ],
      [
        "too little traffic",
        summariseEffect(
          IP,
          APPLIED,
          APPLIED + 10 * MIN,
          reads({ events: { before: tally(EFFECT_MIN_EVENTS_BEFORE - 1), after: tally(0) } }),
        ),
      ],
      [
        "overlapping",
        summariseEffect(
          IP,
          APPLIED,
          APPLIED + 10 * MIN,
          reads({
            events,
            others: [
              { change: "Set WAF mode of shield zone 7 to Block", at: APPLIED + MIN, step: "applied" },
            ],
          }),
        ),
      ],
      ["unreadable", summariseEffect(IP, APPLIED, APPLIED + 10 * MIN, reads({ events: { error: "Boom." } }))],
    ];
    const words = Object.fromEntries(cases.map(([k, e]) => [k, effectWords(e, "block")]));
    for (const [, e] of cases) expect(e.state).toBe("cannot_say");
    expect(words).toEqual({
      "not applied": "Not applied, so there is no effect to measure.",
      "too soon": `Too soon to say: 1 whole minute since it was applied; edgeops measures from ${EFFECT_MIN_MINUTES}.`,
      "no event log":
        "Cannot say: this zone's plan has no event log, so edgeops cannot measure 192.0.2.225's events.",
      "too little traffic": `Too little traffic to say: 192.0.2.225 had ${EFFECT_MIN_EVENTS_BEFORE - 1} events in the hour before it (edgeops measures from ${EFFECT_MIN_EVENTS_BEFORE}).`,
      overlapping:
        "Cannot say: another change on this zone in the same window (Set WAF mode of shield zone 7 to Block (applied 14:57 UTC)), so a difference can't be put down to this one.",
      unreadable: "Cannot say: Boom.",
    });
  });

  it("counts another entry's block as no overlap, the same entry's or a setting as one", () => {
    const block = (value: string) => ({
      kind: "access_block",
      params: { shieldZoneId: 7, type: "ip", value, state: "block" },
    });
    expect(overlapsWith(IP, block("192.0.2.9"))).toBe(false);
    expect(overlapsWith(IP, block("192.0.2.225"))).toBe(true);
    expect(overlapsWith(IP, { kind: "waf_mode", params: { shieldZoneId: 7, value: 1, seen: 0 } })).toBe(true);
    // A setting's signal moves with any change on the zone.
    expect(overlapsWith(WAF, block("192.0.2.9"))).toBe(true);
  });
});

describe("a setting's effect from its feature in the zone's metrics", () => {
  it("says its feature's events a minute before and after, and what the edge did with them", () => {
    const now = APPLIED + 20 * MIN;
    const w = effectWindows(APPLIED, now);
    const e = summariseEffect(
      WAF,
      APPLIED,
      now,
      reads({
        metrics: metrics(w.metricsBefore.from, w.metricsAfter.to, (at) =>
          at < APPLIED ? { loggedRequests: 600 } : { blockedRequests: 640 },
        ),
      }),
    );
    expect(effectWords(e)).toBe(
      "Since the change at 14:56 UTC, WAF events went from 300 to 320 a minute in the zone's metrics (before: 300 logged and let through; now: 320 blocked).",
    );
    expect(
      effectTargetOf({ kind: "waf_mode", params: { shieldZoneId: 7, value: 1, seen: 0 } }),
    ).toMatchObject({
      what: "threats",
      feature: "waf",
    });
  });

  it("cannot say when the metrics' times are unreadable, or when there is too little of the signal", () => {
    const now = APPLIED + 20 * MIN;
    const w = effectWindows(APPLIED, now);
    const unreadable = summariseEffect(
      WAF,
      APPLIED,
      now,
      reads({
        metrics: metrics(
          w.metricsBefore.from,
          w.metricsAfter.to,
          () => ({ loggedRequests: 600 }),
          "waf",
          (at) => `when ${at}`,
        ),
      }),
    );
    expect(effectWords(unreadable)).toMatch(/^Cannot say: edgeops can't read this zone's metrics/);
    const quiet = summariseEffect(
      WAF,
      APPLIED,
      now,
      reads({ metrics: metrics(w.metricsBefore.from, w.metricsAfter.to, () => ({ loggedRequests: 1 })) }),
    );
    expect(effectWords(quiet)).toBe(
      `Too little traffic to say: WAF events had 30 events in the hour before it (edgeops measures from ${EFFECT_MIN_EVENTS_BEFORE}).`,
    );
  });
});

describe("rates in words", () => {
  it("rounds from ten, keeps one decimal below it", () => {
    expect([0, 0.04, 0.4, 3.25, 9.96, 10.4, 1234.5].map(perMinuteWords)).toEqual([
      "0",
      "<0.1",
      "0.4",
      "3.3",
      "10",
      "10",
      "1,235",
    ]);
  });
});
