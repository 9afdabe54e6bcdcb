import { describe, expect, it } from "vitest";
import { UserError } from "../../src/errors.js";
import {
  formatInZone,
  nextRunAfter,
  nextRuns,
  parseSpec,
  parseTimezone,
  parseWhenWords,
  periodMs,
} from "../../src/services/schedules.js";

const words = (s: string) => s.split(" ");
const pattern = (s: string) => parseWhenWords(words(s)).when.pattern;
const iso = (ms: number[]) => ms.map((m) => new Date(m).toISOString());

function usageMessage(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(UserError);
    expect((err as UserError).kind).toBe("usage");
    return (err as UserError).message;
  }
  throw new Error("expected a usage error");
}

describe("parsing <when> into a cron pattern", () => {
  it("turns the three word forms into five-field patterns", () => {
    expect(pattern("daily 09:00")).toBe("0 9 * * *");
    expect(pattern("weekdays 08:30")).toBe("30 8 * * 1-5");
    expect(pattern("weekly mon 09:00")).toBe("0 9 * * 1");
    expect(pattern("weekly sun 23:59")).toBe("59 23 * * 0");
    expect(pattern("weekly Friday 7:05")).toBe("5 7 * * 5");
    expect(pattern("DAILY 0:00")).toBe("0 0 * * *");
  });

  it("keeps a canonical spec, a label, and says how many words it used", () => {
    expect(parseWhenWords(["daily", "9:00", "UTC"])).toEqual({
      when: { pattern: "0 9 * * *", spec: "daily 09:00", label: "daily at 09:00" },
      used: 2,
    });
    expect(parseWhenWords(["weekly", "monday", "09:00"]).when).toMatchObject({
      spec: "weekly mon 09:00",
      label: "every Monday at 09:00",
    });
    expect(parseWhenWords(["0 9 * * 1-5", "Europe/Amsterdam"])).toEqual({
      when: { pattern: "0 9 * * 1-5", spec: "0 9 * * 1-5", label: "cron `0 9 * * 1-5`" },
      used: 1,
    });
  });

  it("reads every stored spec back to the same pattern", () => {
    for (const w of ["daily 09:00", "weekdays 08:30", "weekly mon 09:00", "*/30 6-18 * * 1-5"]) {
      const parsed = parseSpec(w);
      expect(parseSpec(parsed.spec)).toEqual(parsed);
    }
  });

  it("validates quoted cron expressions with croner", () => {
    expect(parseWhenWords(["0 9 1,15 * *"]).when.pattern).toBe("0 9 1,15 * *");
    expect(parseWhenWords(["  15   9 * *  MON-FRI "]).when.pattern).toBe("15 9 * * MON-FRI");
    expect(usageMessage(() => parseWhenWords(["0 9 * *"]))).toContain("five fields");
    expect(usageMessage(() => parseWhenWords(["0 0 9 * * *"]))).toContain("five fields");
    expect(usageMessage(() => parseWhenWords(["61 9 * * *"]))).toContain("not a valid cron expression");
    expect(usageMessage(() => parseWhenWords(["0 9 31 2 *"]))).toContain("never happens");
    // 29 February happens, just not every year.
    expect(parseWhenWords(["0 9 29 2 *"]).when.pattern).toBe("0 9 29 2 *");
  });

  it("answers bad input with a sentence and a correct example", () => {
    const cases: [string[], string][] = [
      [[], "When should it run?"],
      [["hourly"], '"hourly" is not a schedule I know'],
      [["daily"], "At what time?"],
      [["daily", "25:00"], "25:00 is not a time of day"],
      [["daily", "09:60"], "09:60 is not a time of day"],
      [["weekdays", "nine"], '"nine" is not a time'],
      [["weekly", "someday", "09:00"], '"someday" is not a day of the week'],
      [["weekly", "mon"], "At what time?"],
      [["0", "9", "*", "*", "*"], "Put a cron expression in quotes"],
    ];
    for (const [input, start] of cases) {
      const msg = usageMessage(() => parseWhenWords(input));
      expect(msg).toContain(start);
      expect(msg).toMatch(/Try: \/edge schedule dns 5678 (daily|weekdays|weekly|"0 9 \* \* \*"|"30 8)/);
    }
  });
});

describe("time zones", () => {
  it("accepts IANA names in their canonical spelling", () => {
    expect(parseTimezone("Europe/Amsterdam")).toBe("Europe/Amsterdam");
    expect(parseTimezone("europe/amsterdam")).toBe("Europe/Amsterdam");
    expect(parseTimezone("UTC")).toBe("UTC");
    expect(parseTimezone("America/Indiana/Indianapolis")).toMatch(/^America\/(Indiana\/)?Indianapolis$/);
  });

  it("refuses unknown names and fixed offsets with an example", () => {
    for (const bad of ["Mars/Olympus", "Europe/Amsterdamm", "+01:00", "CEST!", "Europe/../etc"]) {
      const msg = usageMessage(() => parseTimezone(bad));
      expect(msg).toContain(`"${bad}" is not a time zone I know`);
      expect(msg).toContain("Try: /edge schedule dns 5678 daily 09:00 Europe/Amsterdam");
    }
  });
});

describe("next runs across daylight-saving changes", () => {
  it("daily 09:00 Europe/Amsterdam stays at 09:00 local over the March change (08:00Z → 07:00Z)", () => {
    const runs = nextRuns("0 9 * * *", "Europe/Amsterdam", Date.parse("2026-03-27T12:00:00Z"), 4);
    expect(iso(runs)).toEqual([
      "2026-03-28T08:00:00.000Z",
      "2026-03-29T07:00:00.000Z",
      "2026-03-30T07:00:00.000Z",
      "2026-03-31T07:00:00.000Z",
    ]);
    expect(runs.map((r) => formatInZone(r, "Europe/Amsterdam"))).toEqual([
      "Sat 28 Mar 2026, 09:00 CET",
      "Sun 29 Mar 2026, 09:00 CEST",
      "Mon 30 Mar 2026, 09:00 CEST",
      "Tue 31 Mar 2026, 09:00 CEST",
    ]);
  });

  it.each<[string, string, string, string, string[]]>([
    [
      "a time inside the spring gap runs once, at the first valid minute after it",
      "30 2 * * *",
      "Europe/Amsterdam",
      "2026-03-28T12:00:00Z",
      ["2026-03-29T01:00:00.000Z", "2026-03-30T00:30:00.000Z"],
    ],
    [
      "a time inside the repeated autumn hour runs once, not twice",
      "30 2 * * *",
      "Europe/Amsterdam",
      "2026-10-24T12:00:00Z",
      ["2026-10-25T00:30:00.000Z", "2026-10-26T01:30:00.000Z"],
    ],
    [
      "weekly mon 09:00 America/New_York moves from 13:00Z to 14:00Z after November's change",
      "0 9 * * 1",
      "America/New_York",
      "2026-10-20T00:00:00Z",
      ["2026-10-26T13:00:00.000Z", "2026-11-02T14:00:00.000Z", "2026-11-09T14:00:00.000Z"],
    ],
    [
      "a weekday cron in Australia/Sydney follows its April change (southern hemisphere)",
      "30 8 * * 1-5",
      "Australia/Sydney",
      "2026-04-02T00:00:00Z",
      // Fri 3 Apr 08:30 AEDT (+11), Mon 6 Apr 08:30 AEST (+10) after the 5 April change.
      ["2026-04-02T21:30:00.000Z", "2026-04-05T22:30:00.000Z", "2026-04-06T22:30:00.000Z"],
    ],
  ])("%s", (_name, cron, zone, from, expected) => {
    expect(iso(nextRuns(cron, zone, Date.parse(from), expected.length))).toEqual(expected);
  });

  it("nextRunAfter is strictly after, and the period is the gap between the next two runs", () => {
    const s = { spec: "daily 09:00", timezone: "UTC" };
    const nine = Date.parse("2026-05-01T09:00:00Z");
    expect(nextRunAfter(s, nine)).toBe(nine + 86_400_000);
    expect(periodMs(s, nine)).toBe(86_400_000);
    expect(periodMs({ spec: "weekly mon 09:00", timezone: "UTC" }, nine)).toBe(7 * 86_400_000);
    // Across the March change a local day is 23 hours.
    expect(
      periodMs({ spec: "daily 09:00", timezone: "Europe/Amsterdam" }, Date.parse("2026-03-27T10:00:00Z")),
    ).toBe(23 * 3_600_000);
  });
});
