import { describe, expect, it } from "vitest";
import type { EventGroup } from "../../src/edge/schemas/shield.js";
import type { GroupsRead } from "../../src/services/event-log-groups.js";
import {
  type ImpactTarget,
  impactTargetOf,
  LARGE_SHARE,
  type Match,
  matchFeature,
  matchValue,
  summarisePreview,
  valueQuery,
} from "../../src/services/impact-preview.js";
import { eventLogGroup } from "../support/event-log-group.js";

/** A group whose documented per-action counts account for its events (all blocked unless told). */
const group = (key: Record<string, string>, count: number, actions?: EventGroup["actions"]) =>
  eventLogGroup(key, count, { actions: actions ?? { blocked: count, challenged: 0, logged: 0 } });
const read = (groups: EventGroup[], readGroups?: number): GroupsRead => ({
  groups,
  total: readGroups === undefined ? groups.length : null,
  skippedGroups: 0,
  calls: 1,
  ...(readGroups === undefined ? {} : { readGroups }),
});
const found = (groups: EventGroup[], ofGroups?: number): Match => ({
  kind: "found",
  groups,
  filter: { field: "country", op: "in", value: ["CN", "cn"] },
  ...(ofGroups === undefined ? {} : { ofGroups }),
});

const CN: ImpactTarget = { what: "entry", shieldZoneId: 7, type: "country", value: "CN" };
const AS4134: Extract<ImpactTarget, { what: "entry" }> = {
  what: "entry",
  shieldZoneId: 7,
  type: "asn",
  value: "AS4134",
};
const DDOS: Extract<ImpactTarget, { what: "threats" }> = {
  what: "threats",
  shieldZoneId: 7,
  feature: "ddos",
};
const zone = read([group({ feature: "ddos" }, 900), group({ feature: "waf" }, 100)]);

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

  it("asks for an IP or a range as addresses, an ASN, a country or a fingerprint in every way of writing it", () => {
    const entry = (type: "ip" | "cidr" | "country", value: string) =>
      valueQuery({ what: "entry", shieldZoneId: 1, type, value }).filter;
    expect(entry("ip", "203.0.113.7")).toEqual({ field: "ip", op: "cidr", value: ["203.0.113.7/32"] });
    expect(entry("ip", "2001:db8::7")).toEqual({ field: "ip", op: "cidr", value: ["2001:db8::7/128"] });
    expect(entry("cidr", "10.0.0.0/8")).toEqual({ field: "ip", op: "cidr", value: ["10.0.0.0/8"] });
    expect(entry("country", "CN")).toEqual({ field: "country", op: "in", value: ["CN", "cn"] });
    expect(valueQuery(AS4134).filter).toEqual({
      field: "asn",
      op: "in",
      value: ["AS4134", "4134", "as4134", "As4134"],
    });
  });

  it("finds a feature however the event log writes it; names it does not know are 'could not be matched', not 0", () => {
    const upper = matchFeature(DDOS, read([group({ feature: "DDOS" }, 5), group({ feature: "WAF" }, 3)]));
    expect(upper).toMatchObject({ kind: "found", filter: { field: "feature", op: "eq", value: ["DDOS"] } });
    // Every name known and none is DDoS: the zone logged no DDoS event.
    const none = matchFeature(DDOS, read([group({ feature: "bot_detection" }, 5)]));
    expect(none).toMatchObject({ kind: "found", groups: [] });
    const words = matchFeature(
      DDOS,
      read([group({ feature: "ddos_protection" }, 5), group({ feature: "web_application_firewall" }, 3)]),
    );
    expect(words.kind).toBe("unmatched");
    expect(words.kind === "unmatched" && words.reason).toContain(
      'DDoS events could not be matched in the event log: it names its features "ddos_protection", "web_application_firewall"',
    );
    // Not every feature group read: an absent one proves nothing.
    expect(matchFeature(DDOS, read([group({ feature: "waf" }, 5)], 500)).kind).toBe("unmatched");
  });

  it("no events for an entry are nothing only when the log writes that dimension in a form the question covers", () => {
    const q = valueQuery(AS4134);
    const asns = (...keys: string[]) => keys.map((asn) => group({ asn }, 1));
    expect(matchValue(AS4134, q, read([]), asns("4837", "AS12389"))).toMatchObject({
      kind: "found",
      groups: [],
    });
    const other = matchValue(AS4134, q, read([]), asns("CHINANET-BACKBONE", "4837"));
    expect(other.kind === "unmatched" && other.reason).toBe(
      'AS4134 could not be matched in the event log: it writes ASNs as "CHINANET-BACKBONE", a form edgeops does not compare.',
    );
    // Events found are found, whatever the form of the others.
    expect(matchValue(AS4134, q, read([group({ feature: "waf" }, 3)]), asns("x")).kind).toBe("found");
  });

  it("counts, actions from each group's per-action counts, share, the top five paths, and a large-share warning for a country", () => {
    const p = summarisePreview(
      CN,
      { from: 0, to: 3_600_000 },
      {
        zone: read([group({ feature: "ddos" }, 900), group({ feature: "waf" }, 100)]),
        match: found([
          group({ feature: "ddos" }, 300),
          group({ feature: "waf" }, 110, { blocked: 10, challenged: 100, logged: 0 }),
        ]),
        paths: read(
          ["/a", "/b", "/c", "/d", "/e", "/f"].map((url, i) => group({ url }, 10 + i)),
          500,
        ),
      },
    );
    expect(p).toMatchObject({
      state: "estimated",
      matched: 410,
      actions: { blocked: 310, challenged: 100, logged: 0 },
      zoneTotal: 1000,
      share: 0.41,
      pathsPartial: true,
      largeShare: true,
    });
    expect(p.state === "estimated" && p.topPaths.map((t) => t.path)).toEqual(["/f", "/e", "/d", "/c", "/b"]);
  });

  it("no breakdown when the per-action counts do not account for the events; a partial read says of how many groups", () => {
    const p = summarisePreview(
      CN,
      { from: 0, to: 1 },
      {
        zone,
        match: found([group({ feature: "ddos" }, 9, { blocked: 0, challenged: 0, logged: 0 })], 2000),
        paths: read([]),
      },
    );
    expect(p).toMatchObject({ matched: 9, actions: null, matchedOfGroups: 2000 });
  });

  it("no warning below the threshold or for an IP; no share when the zone logged nothing; unmatched is unknown", () => {
    const small = summarisePreview(
      CN,
      { from: 0, to: 1 },
      {
        zone: read([group({ feature: "ddos" }, Math.ceil(1 / LARGE_SHARE) + 1)]),
        match: found([group({ feature: "ddos" }, 1)]),
        paths: read([]),
      },
    );
    expect(small).toMatchObject({ largeShare: false });
    const ip = summarisePreview(
      { what: "entry", shieldZoneId: 7, type: "ip", value: "203.0.113.7" },
      { from: 0, to: 1 },
      {
        zone: read([group({ feature: "waf" }, 10)]),
        match: found([group({ feature: "waf" }, 9)]),
        paths: read([]),
      },
    );
    expect(ip).toMatchObject({ share: 0.9, largeShare: false });
    const none = summarisePreview(CN, { from: 0, to: 1 }, { zone: read([]), match: found([]), paths: null });
    expect(none).toMatchObject({ matched: 0, zoneTotal: 0, share: null, largeShare: false });
    expect(
      summarisePreview(
        CN,
        { from: 0, to: 1 },
        { zone, match: { kind: "unmatched", reason: "r" }, paths: null },
      ),
    ).toEqual({ state: "unknown", target: CN, reason: "r" });
  });
});
