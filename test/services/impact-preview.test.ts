import { describe, expect, it } from "vitest";
import type { EventLogsSearchResult } from "../../src/edge/schemas/shield.js";
import {
  filtersFor,
  type ImpactTarget,
  impactTargetOf,
  LARGE_SHARE,
  summarisePreview,
} from "../../src/services/impact-preview.js";
import { eventLogGroup } from "../support/event-log-group.js";

const group = (key: Record<string, string>, count: number) => eventLogGroup(key, count);
const answer = (groups: ReturnType<typeof group>[], totalPages = 1): EventLogsSearchResult => ({
  groups,
  skippedGroups: 0,
  rowCount: 0,
  total: groups.length,
  totalPages,
  page: 0,
});

const CN: ImpactTarget = { what: "entry", shieldZoneId: 7, type: "country", value: "CN" };

describe("impact preview (pure)", () => {
  it("names the target of each change the event log can speak to, and none for the rest", () => {
    expect(
      impactTargetOf({
        kind: "access_block",
        params: { shieldZoneId: 7, type: "cidr", value: "10.0.0.0/8" },
      }),
    ).toEqual({ what: "entry", shieldZoneId: 7, type: "cidr", value: "10.0.0.0/8" });
    expect(
      impactTargetOf({ kind: "waf_rule_review", params: { shieldZoneId: 7, ruleId: "942100" } }),
    ).toEqual({
      what: "waf_rule",
      shieldZoneId: 7,
      ruleId: "942100",
    });
    expect(impactTargetOf({ kind: "ddos_sensitivity", params: { shieldZoneId: 7, value: 3 } })?.what).toBe(
      "threats",
    );
    expect(impactTargetOf({ kind: "waf_mode", params: { shieldZoneId: 7, value: 0 } })).toMatchObject({
      feature: "waf",
    });
    expect(impactTargetOf({ kind: "bot_category", params: { shieldZoneId: 7, category: 2 } })?.what).toBe(
      "bots",
    );
    expect(
      impactTargetOf({ kind: "learning_mode", params: { shieldZoneId: 7, value: true } }),
    ).toBeUndefined();
    expect(impactTargetOf({ kind: "purge", params: { url: "x" } })).toBeUndefined();
    expect(impactTargetOf({ kind: "access_block", params: "junk" })).toBeUndefined();
  });

  it("filters a range with the cidr operator and a feature by its event-log name", () => {
    expect(filtersFor({ what: "entry", shieldZoneId: 1, type: "cidr", value: "10.0.0.0/8" })).toEqual([
      { field: "ip", op: "cidr", value: ["10.0.0.0/8"] },
    ]);
    expect(filtersFor({ what: "bots", shieldZoneId: 1, category: 2 })).toEqual([
      { field: "feature", op: "eq", value: ["botDetection"] },
    ]);
  });

  it("counts, actions, share, the top five paths, and a large-share warning for a country", () => {
    const p = summarisePreview(
      CN,
      { from: 0, to: 3_600_000 },
      {
        matchedByAction: answer([group({ action: "block" }, 300), group({ action: "challenge" }, 110)]),
        matchedByPath: answer(
          ["/a", "/b", "/c", "/d", "/e", "/f"].map((url, i) => group({ url }, 10 + i)),
          2,
        ),
        zoneByAction: answer([group({ action: "block" }, 900), group({ action: "log" }, 100)]),
      },
    );
    expect(p).toMatchObject({
      state: "estimated",
      matched: 410,
      actions: { blocked: 300, challenged: 110, logged: 0 },
      zoneTotal: 1000,
      share: 0.41,
      pathsPartial: true,
      largeShare: true,
    });
    expect(p.state === "estimated" && p.topPaths.map((t) => t.path)).toEqual(["/f", "/e", "/d", "/c", "/b"]);
  });

  it("no warning below the threshold or for an IP; no share when the zone logged nothing", () => {
    const small = summarisePreview(
      CN,
      { from: 0, to: 1 },
      {
        matchedByAction: answer([group({ action: "block" }, 1)]),
        matchedByPath: answer([]),
        zoneByAction: answer([group({ action: "block" }, Math.ceil(1 / LARGE_SHARE) + 1)]),
      },
    );
    expect(small).toMatchObject({ largeShare: false });
    const ip = summarisePreview(
      { what: "entry", shieldZoneId: 7, type: "ip", value: "203.0.113.7" },
      { from: 0, to: 1 },
      {
        matchedByAction: answer([group({ action: "block" }, 9)]),
        matchedByPath: answer([]),
        zoneByAction: answer([group({ action: "block" }, 10)]),
      },
    );
    expect(ip).toMatchObject({ share: 0.9, largeShare: false });
    const none = summarisePreview(
      CN,
      { from: 0, to: 1 },
      {
        matchedByAction: answer([]),
        matchedByPath: answer([]),
        zoneByAction: answer([]),
      },
    );
    expect(none).toMatchObject({ matched: 0, zoneTotal: 0, share: null, largeShare: false });
  });
});
