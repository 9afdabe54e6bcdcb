import { describe, expect, it } from "vitest";
import type { App } from "../../../src/edge/schemas/mc.js";
import type { ShieldZone, TriggeredRule } from "../../../src/edge/schemas/shield.js";
import {
  type IncidentPicture,
  incidentRange,
  OFFENDER_DIMENSIONS,
  type Offender,
  type RateLimitInWindow,
  TRAFFIC_METRICS,
} from "../../../src/services/incident.js";
import { incidentCard, incidentListMessage } from "../../../src/slack/blocks/incident.js";
import { withShareButton } from "../../../src/slack/edge-commands/run.js";
import { ACTION_PATTERNS, ACTIONS } from "../../../src/slack/ids.js";
import { newRequestId } from "../../../src/slack/request-ids.js";
import { checkBlockKitLimits } from "../../support/block-kit-limits.js";
import { blocksText, findButtons } from "../../support/harness.js";

const NOW = Date.UTC(2024, 4, 10, 12, 15, 37);
const range = incidentRange("1h", NOW);
const HOSTILE = "<!here> <@U999> <https://evil.example|click> & `tick`";

const zone: ShieldZone = {
  shieldZoneId: 42,
  pullZoneId: 7,
  planType: 2,
  learningMode: false,
  learningModeUntil: null,
  wafEnabled: true,
  wafExecutionMode: 1,
  wafRealtimeThreatIntelligenceEnabled: true,
  wafProfileId: null,
  wafRequestBodyLimitAction: 0,
  wafResponseBodyLimitAction: 0,
  rateLimitRulesLimit: 10,
  customWafRulesLimit: 10,
  ddosShieldSensitivity: 3,
  ddosExecutionMode: 1,
  ddosChallengeWindow: null,
  whitelabelResponsePages: null,
};

function offenders(count: number, long = false): Offender[] {
  return Array.from({ length: count }, (_, i) => ({
    value: long ? `${HOSTILE} ${"x".repeat(500)} ${i}` : `198.51.${Math.floor(i / 256)}.${i % 256}`,
    count: count - i,
    action: "blocked",
    actions: { blocked: count - i, challenged: 0, logged: 0 },
    country: long ? HOSTILE.repeat(20) : "NL",
    asn: long ? HOSTILE.repeat(20) : "AS64500",
  }));
}

function rules(count: number): TriggeredRule[] {
  return Array.from({ length: count }, (_, i) => ({
    ruleId: i === 0 ? "has space" : `9${String(i).padStart(5, "0")}`,
    description: `${HOSTILE} ${"d".repeat(3000)}`,
    triggeredRequests: 10_000 - i,
    topUrls: [{ url: `/${HOSTILE}${"u".repeat(4000)}`, hits: 9 }],
  }));
}

function apps(count: number): App[] {
  return Array.from({ length: count }, (_, i) => ({
    id: `app-${i}`,
    name: `${HOSTILE} ${"n".repeat(400)}`,
    description: null,
    displayEndpoint: { id: "e", address: `${HOSTILE}.b-cdn.net`, type: "cdn" },
    status: i % 2 === 0 ? "failing" : "progressing",
  }));
}

function bigPicture(): IncidentPicture {
  const series = Array.from({ length: range.buckets }, (_, i) => i * 1000);
  const rateLimits: RateLimitInWindow[] = Array.from({ length: 500 }, (_, i) => ({
    rateLimitId: 1000 + i,
    breaches: { total: 5000 - i, blocked: 5000 - i, challenged: 0, logged: 0 },
    basis: "days",
  }));
  return {
    zoneId: 42,
    range,
    zone: {
      ok: {
        zone,
        botDetection: {
          ok: {
            shieldZoneId: 42,
            requestIntegrity: { sensitivity: 2 },
            ipAddress: { sensitivity: 0 },
            browserFingerprint: { sensitivity: 1, aggression: 1, complexEnabled: false },
            executionMode: 1,
          },
        },
        hostnames: [`${HOSTILE}.example.com`, "www.example.com"],
        pullZoneName: HOSTILE,
      },
    },
    traffic: {
      ok: {
        rows: TRAFFIC_METRICS.map((metric, i) => ({
          metric,
          count: 2_000_000_000 + i,
          previous: 1000,
          change: { kind: "up", percent: 199_999_900 },
          series,
        })),
        previousError: null,
        requests: { error: HOSTILE.repeat(200) },
      },
    },
    offenders: {
      ok: {
        byDimension: Object.fromEntries(
          OFFENDER_DIMENSIONS.map((d) => [
            d,
            { ok: { dimension: d, total: 10_000, offenders: offenders(10_000, true) } },
          ]),
        ) as never,
      },
    },
    waf: { ok: { total: 500, rules: rules(500) } },
    rateLimits: { ok: { rules: rateLimits, skipped: 0 } },
    apps: { ok: { apps: apps(5000), read: 5000, complete: false } },
    mitigated: new Map(),
    pendingAccess: new Map(),
  };
}

describe("the incident card within Block Kit limits", () => {
  it("10,000 event-log groups a dimension, 500 triggered rules, 500 rate limits, 5,000 apps: still one valid message", () => {
    const card = withShareButton(
      incidentCard(bigPicture(), { isPublic: false, newRequestId }),
      "incident 42 1h",
    );
    expect(checkBlockKitLimits("message", card)).toEqual([]);
    expect(card.blocks.length).toBeLessThanOrEqual(50);
    const buttons = findButtons(card.blocks);
    expect(buttons.map((b) => b.action_id)).toContain(ACTIONS.shareInChannel);
    expect(buttons.map((b) => b.action_id)).toContain(ACTIONS.incidentRefresh);
    // Top 5 rules; the one whose id /edge waf cannot take has no recommendation button.
    expect(buttons.filter((b) => b.action_id === ACTIONS.incidentWafRecommendation)).toHaveLength(4);
    for (const s of ["ip", "asn", "country", "ja4", "waf", "ratelimits", "apps"])
      expect(buttons.some((b) => b.action_id === `${ACTIONS.incidentSeeAll}.${s}`)).toBe(true);
  });

  it("every valid top offender gets a Block button with a confirm dialog; the longest values still fit", () => {
    // The longest spellings of each kind, 10,000 groups a dimension.
    const valid: Record<string, (i: number) => string> = {
      ip: (i) => `2001:db8:1234:5678:9abc:def0:${(i % 65535).toString(16)}:1`,
      asn: (i) => `AS${4_294_967_295 - i}`,
      country: (i) => ["CN", "RU", "BR", "VN", "US"][i % 5]!,
      ja4: (i) => `t13d1516h2_8daaf6152771_${String(i).padStart(12, "0")}`,
    };
    const picture = bigPicture();
    picture.offenders = {
      ok: {
        byDimension: Object.fromEntries(
          OFFENDER_DIMENSIONS.map((d) => [
            d,
            {
              ok: {
                dimension: d,
                total: 10_000,
                offenders: offenders(10_000).map((o, i) => ({ ...o, value: valid[d]!(i) })),
              },
            },
          ]),
        ) as never,
      },
    };
    const card = withShareButton(incidentCard(picture, { isPublic: false, newRequestId }), "incident 42 1h");
    expect(checkBlockKitLimits("message", card)).toEqual([]);
    expect(card.blocks.length).toBeLessThanOrEqual(50);
    // Change buttons: the offenders' Block buttons, and the WAF rules' review buttons beside them.
    const blocks = findButtons(card.blocks).filter(
      (b) =>
        ACTION_PATTERNS.changeConfirm.test(b.action_id) && JSON.parse(b.value ?? "{}").k === "access_block",
    );
    expect(blocks).toHaveLength(4 * 5);
    for (const b of blocks) {
      expect(b.text).toMatch(/^Block /);
      expect(b.confirm).toBeDefined();
      const value = JSON.parse(b.value!);
      expect(value.k).toBe("access_block");
      expect(value.p).toMatchObject({ shieldZoneId: 42, state: "block" });
    }
    expect(new Set(blocks.map((b) => JSON.parse(b.value!).r)).size).toBe(20);
    // Values that can't be blocked (the hostile ones of the big picture) get no button.
    const hostile = incidentCard(bigPicture(), { isPublic: false, newRequestId });
    expect(
      findButtons(hostile.blocks).filter((b) => JSON.parse(b.value ?? "{}").k === "access_block"),
    ).toHaveLength(0);
  });

  it("escapes every external string: no mention, broadcast or link survives", () => {
    const card = incidentCard(bigPicture(), { isPublic: true, newRequestId });
    const text = `${blocksText(card.blocks)}\n${card.text}`;
    expect(text).toContain("&lt;!here&gt;");
    expect(text).not.toMatch(/<!here|<@U999|<https:\/\/evil/);
  });

  it("draws sparklines with unicode blocks and shows the change", () => {
    const text = blocksText(incidentCard(bigPicture(), { isPublic: false, newRequestId }).blocks);
    expect(text).toMatch(/[▁▂▃▄▅▆▇█]{10,}/);
    // 199,999,900 % more is two million times as many: said so.
    expect(text).toContain("▲ ×2,000,000");
  });

  it("says the month's billable requests are unknown when the field that names its period did not come", () => {
    const picture = bigPicture();
    if (!("ok" in picture.traffic)) throw new Error("the picture has traffic");
    const today = {
      ddosMitigated: 0,
      wafTriggeredRules: 0,
      rateLimitBreaches: 0,
      botDetectionChallenged: 0,
      accessListActions: 0,
      totalCleanRequestsLimit: 50_000_000,
      totalBillableRequests: 123_456,
    };
    picture.traffic.ok.requests = { ok: { billableThisMonth: null, cleanLimit: 50_000_000, today } };
    const text = blocksText(incidentCard(picture, { isPublic: false, newRequestId }).blocks);
    expect(text).toContain(
      "Requests: billable this month unknown (the Edge API did not say) (clean-request limit 50,000,000)",
    );
    expect(text).not.toContain("123,456");
  });

  it("a card whose every section failed is one line per section, with its reason", () => {
    const error = {
      error: "The Edge API is rate-limiting this workspace's requests; wait a minute and try again.",
    };
    const card = incidentCard(
      {
        zoneId: 42,
        range,
        mitigated: new Map(),
        pendingAccess: new Map(),
        zone: error,
        traffic: error,
        offenders: error,
        waf: error,
        rateLimits: error,
        apps: error,
      },
      { isPublic: false, newRequestId },
    );
    expect(checkBlockKitLimits("message", card)).toEqual([]);
    const text = blocksText(card.blocks);
    expect(text.match(/rate-limiting this workspace/g)).toHaveLength(6);
  });

  it("a 'see all' page of 10,000 groups (an API ignoring the page size) still fits, with paging", () => {
    const page = incidentListMessage(
      42,
      {
        kind: "offenders",
        dimension: "ip",
        offenders: offenders(10_000, true),
        mitigated: new Map(),
        pendingAccess: new Map(),
        page: 2,
        totalPages: 200,
        total: 10_000,
        range,
      },
      "ip",
      false,
      newRequestId,
    );
    expect(checkBlockKitLimits("message", page)).toEqual([]);
    const ids = findButtons(page.blocks).map((b) => b.action_id);
    expect(ids.filter((id) => !id.startsWith(ACTIONS.changeConfirm))).toEqual([
      ACTIONS.incidentPreviousPage,
      ACTIONS.incidentNextPage,
    ]);
    // Values that are no IP get no Block button.
    expect(ids.filter((id) => id.startsWith(ACTIONS.changeConfirm))).toEqual([]);
    // Valid ones: Block buttons for a page's worth of lines, not for every line an answer ignoring the page size sent.
    const ipPage = incidentListMessage(
      42,
      {
        kind: "offenders",
        dimension: "ip",
        offenders: offenders(10_000),
        mitigated: new Map(),
        pendingAccess: new Map(),
        page: 2,
        totalPages: 200,
        total: 10_000,
        range,
      },
      "ip",
      false,
      newRequestId,
    );
    expect(checkBlockKitLimits("message", ipPage)).toEqual([]);
    const blockIds = findButtons(ipPage.blocks).filter((b) => b.action_id.startsWith(ACTIONS.changeConfirm));
    expect(blockIds).toHaveLength(50);
    const rulesPage = incidentListMessage(
      42,
      { kind: "waf", rules: rules(500), page: 1, totalPages: 1, total: 500, range },
      "waf",
      false,
      newRequestId,
    );
    expect(checkBlockKitLimits("message", rulesPage)).toEqual([]);
    expect(findButtons(rulesPage.blocks)).toEqual([]);
  });
});
