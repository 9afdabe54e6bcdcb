import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { exactPath, SIM_IDS } from "../../../tools/simulator/index.js";
import { steppedClock } from "../../support/clock.js";
import { answerTo, type Harness, startHarness, TEST_EDGE_KEY } from "../../support/harness.js";
import { incidentCard } from "../../support/incident-card.js";

/**
 * The rate-limit answers where the Edge API's documents are silent: the period of a rule's `overview`, a rule
 * without a metrics row, the form of the date keys, how many rules a page holds, and the period of the
 * overview's billable requests. Each reading is pinned on the simulator (tools/simulator/adversary.ts).
 */

const ZONE = SIM_IDS.zoneUnderAttack;
const RULES = SIM_IDS.rateLimitRulesUnderAttack;
// Early in a month: day-first keys of the month's first days read as other dates month-first.
const NOW = Date.UTC(2026, 7, 9, 10, 0, 30);

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ clock: steppedClock(() => NOW), simulatorOnClock: true });
});
afterAll(async () => {
  await h?.close();
});

/** Runs `work` with these readings pinned (on the run's seed, if any), then puts the adversary back. */
async function pinned<T>(pin: Record<string, unknown>, work: () => Promise<T>): Promise<T> {
  const seed = h.sim.adversary.seed;
  h.sim.setAdversary({ seed, pin });
  try {
    return await work();
  } finally {
    h.sim.setAdversary({ seed });
  }
}

/** The simulator's raw answer at `path` (as the Edge API wrote it). */
async function raw<T>(path: string): Promise<T> {
  const res = await fetch(`${h.sim.url}${path}`, { headers: { AccessKey: TEST_EDGE_KEY } });
  return ((await res.json()) as { data: T }).data;
}

type Counters = { totalBreaches: number };
interface RuleRow {
  ratelimitId: number;
  overview: Counters;
  ratelimitOverviewPastTwentyEightDays: Record<string, Counters>;
}

const n = (v: number) => v.toLocaleString("en-US");
/** The line of rule `id` in the zone's list. */
const lineOf = (text: string, id: number) =>
  text.split("\n").find((l) => l.includes(`rate limit ${id} `) || l.endsWith(`rate limit ${id}`));

describe("/edge ratelimit zone: breaches where the documents are silent", () => {
  it("counts each rule's breaches from its 28-day map, not from the overview whose period is not given", async () => {
    await pinned(
      { "metrics.total-breaches-period": "all-time", "rate-limits.metrics-missing": false },
      async () => {
        const rows = await raw<RuleRow[]>(`/shield/metrics/rate-limits/${ZONE}`);
        const { text } = await answerTo(h, `ratelimit zone ${ZONE}`, "U0002");
        for (const id of RULES) {
          const row = rows.find((r) => r.ratelimitId === id);
          const days = Object.values(row?.ratelimitOverviewPastTwentyEightDays ?? {});
          const sum = days.reduce((a, d) => a + d.totalBreaches, 0);
          // The reading is staged: the overview counts more than the 28 days it sits beside.
          expect(row?.overview.totalBreaches).toBeGreaterThan(sum);
          expect(lineOf(text, id)).toContain(` · ${n(sum)} breaches in 28 days`);
        }
      },
    );
  });

  it("a rule without a metrics row shows — and says its breaches are unknown, not 0", async () => {
    await pinned({ "rate-limits.metrics-missing": true }, async () => {
      const { text } = await answerTo(h, `ratelimit zone ${ZONE}`, "U0002");
      for (const id of RULES) {
        expect(lineOf(text, id)).toContain(" · — breaches");
        expect(lineOf(text, id)).not.toMatch(/ · 0 breaches/);
      }
      expect(text).toContain(`No breach counters came for ${RULES.length} rules`);
      expect(text).toContain("unknown");
    });
  });

  it("lists every rule when the API pages them two at a time and leaves out its page member", async () => {
    await pinned({ "rate-limits.page-size": "two", "rate-limits.page-info-missing": true }, async () => {
      h.sim.clearRequests();
      const { text } = await answerTo(h, `ratelimit zone ${ZONE}`, "U0002");
      for (const id of RULES) expect(text).toContain(`rate limit ${id}`);
      const pages = h.sim.requests.filter((r) => r.path === `/shield/rate-limits/${ZONE}`);
      expect(pages.length).toBeGreaterThan(1);
    });
  });
});

describe("/edge ratelimit <id>: the overall counters", () => {
  it("says the overall counters' period is not given, and counts the 28 days from the days", async () => {
    const id = RULES[0];
    await pinned({ "metrics.total-breaches-period": "all-time" }, async () => {
      const row = await raw<Omit<RuleRow, "ratelimitId">>(`/shield/metrics/rate-limit/${id}`);
      const sum = Object.values(row.ratelimitOverviewPastTwentyEightDays).reduce(
        (a, d) => a + d.totalBreaches,
        0,
      );
      expect(row.overview.totalBreaches).toBeGreaterThan(sum);
      const { text, body } = await answerTo(h, `ratelimit ${id}`, "U0002");
      expect(text).toContain(`*Total*\n${n(row.overview.totalBreaches)}`);
      expect(text).toContain("over a period the Edge API does not give");
      expect(text).toContain(`total ${n(sum)}`);
      expect(body.text).toBe(`Rate limit ${id}: ${n(sum)} breaches in the past 28 days`);
    });
  });

  it("shows — for counters that did not come, not 0", async () => {
    const id = RULES[0];
    h.sim.addFault({
      path: exactPath(`/shield/metrics/rate-limit/${id}`),
      status: 200,
      times: 1,
      body: { data: { overview: null, ratelimitOverviewPastTwentyEightDays: null }, error: null },
    });
    const { text } = await answerTo(h, `ratelimit ${id}`, "U0002");
    expect(text).toContain("*Total*\n—");
    expect(text).not.toContain("*Total*\n0");
  });
});

describe("/edge ratelimit <id>: day-first date keys", () => {
  it("reads day-first keys (09/08/2026) as the same days ISO keys name", async () => {
    const id = RULES[0];
    const friendly = await pinned({ "metrics.date-key-format": "iso" }, () =>
      answerTo(h, `ratelimit ${id}`, "U0002"),
    );
    const dayFirst = await pinned({ "metrics.date-key-format": "day-first" }, async () => {
      const keys = Object.keys(
        (await raw<RuleRow>(`/shield/metrics/rate-limit/${id}`)).ratelimitOverviewPastTwentyEightDays,
      );
      expect(keys).toContain("09/08/2026");
      return answerTo(h, `ratelimit ${id}`, "U0002");
    });
    expect(friendly.text).toContain("2026-07-13 → 2026-08-09");
    expect(dayFirst.text).toBe(friendly.text);
  });

  it("days no key dates day-first or month-first are shown as written and said to be unknown", async () => {
    const id = RULES[0];
    const counters = (total: number) => ({
      totalBreaches: total,
      loggedBreaches: 0,
      challengedBreaches: 0,
      blockedBreaches: total,
    });
    h.sim.addFault({
      path: exactPath(`/shield/metrics/rate-limit/${id}`),
      status: 200,
      times: 1,
      body: {
        data: {
          overview: counters(3),
          ratelimitOverviewPastTwentyEightDays: { "03/08/2026": counters(1), "05/08/2026": counters(2) },
        },
        error: null,
      },
    });
    const { text } = await answerTo(h, `ratelimit ${id}`, "U0002");
    expect(text).toContain("03/08/2026 → 05/08/2026");
    expect(text).toContain(
      "2 of these days came with a date which names one day read day-first and another read month-first",
    );
    expect(text).not.toContain("2026-03-08");
  });
});

describe("/edge incident: billable requests", () => {
  it("states the month's billable requests from the field that names its period", async () => {
    await pinned({ "metrics.billable-period": "28-days" }, async () => {
      const overview = await raw<{ totalBillableRequests: number }>(`/shield/metrics/overview/${ZONE}`);
      const detailed = await raw<{ totalBillableRequestsThisMonth: number }>(
        `/shield/metrics/overview/${ZONE}/detailed`,
      );
      expect(overview.totalBillableRequests).not.toBe(detailed.totalBillableRequestsThisMonth);
      const { text } = await incidentCard(h, ZONE);
      expect(text).toContain(`Requests: ${n(detailed.totalBillableRequestsThisMonth)} billable this month`);
      expect(text).not.toContain(n(overview.totalBillableRequests));
    });
  });
});
