import { describe, expect, it } from "vitest";
import type { DnsScan } from "../../../src/edge/schemas/core.js";
import type { App } from "../../../src/edge/schemas/mc.js";
import type { ShieldZone } from "../../../src/edge/schemas/shield.js";
import type { ZoneCheck } from "../../../src/services/unusual-zones.js";
import { approvalCard, durationWords } from "../../../src/slack/blocks/approvals.js";
import { appsMessage } from "../../../src/slack/blocks/apps.js";
import { packLines } from "../../../src/slack/blocks/block-kit.js";
import { botsMessage } from "../../../src/slack/blocks/bots.js";
import { dnsMessage } from "../../../src/slack/blocks/dns.js";
import { helpReply } from "../../../src/slack/blocks/help.js";
import { homeView } from "../../../src/slack/blocks/home.js";
import { sparkline } from "../../../src/slack/blocks/ratelimit.js";
import { statusMessage } from "../../../src/slack/blocks/status.js";
import { wafMessage } from "../../../src/slack/blocks/waf.js";
import { zonesMessage } from "../../../src/slack/blocks/zones.js";
import { subcommandList } from "../../../src/slack/edge-commands/index.js";
import { ACTIONS } from "../../../src/slack/ids.js";
import type { ChangeRequest } from "../../../src/store/index.js";
import { CHANGE_STATES } from "../../../src/store/index.js";
import { checkBlockKitLimits } from "../../support/block-kit-limits.js";
import { blocksText } from "../../support/harness.js";

const statuses = ["active", "progressing", "inactive", "failing", "suspended", "unknown"];
const longText = (n: number) => "x".repeat(n);

function apps(n: number): App[] {
  return Array.from({ length: n }, (_, i) => ({
    id: `app-${i}`,
    name: `application-${i}-${longText(60)}`,
    description: longText(400),
    displayEndpoint: { id: `ep-${i}`, address: `app-${i}.b-cdn.net`, type: "cdn" },
    status: statuses[i % statuses.length]!,
  }));
}

function zone(i: number): ShieldZone {
  return {
    shieldZoneId: 1000 + i,
    pullZoneId: 2000 + i,
    planType: i % 5,
    learningMode: i % 2 === 0,
    learningModeUntil: "2026-12-01T00:00:00Z",
    wafEnabled: true,
    wafExecutionMode: 1,
    wafRealtimeThreatIntelligenceEnabled: true,
    wafProfileId: 1,
    wafRequestBodyLimitAction: 0,
    wafResponseBodyLimitAction: 1,
    rateLimitRulesLimit: 10,
    customWafRulesLimit: 20,
    ddosShieldSensitivity: 2,
    ddosExecutionMode: 1,
    ddosChallengeWindow: 30,
    whitelabelResponsePages: false,
  };
}

function scan(records: number): DnsScan {
  return {
    jobId: "job",
    zoneId: 5,
    domain: "example.com",
    status: 2,
    createdAt: "2026-11-20T10:00:00Z",
    completedAt: "2026-11-20T10:01:00Z",
    error: null,
    records: Array.from({ length: records }, (_, i) => ({
      name: `host-${i}-${longText(50)}`,
      type: [0, 1, 2, 3, 4, 8, 9, 12][i % 8]!,
      ttl: 300,
      value: `value-${i}-${longText(150)}`,
      priority: i % 8 === 4 ? 10 : null,
      weight: null,
      port: null,
      isProxied: i % 3 === 0,
    })),
  };
}

const request = (over: Partial<ChangeRequest> = {}): ChangeRequest => ({
  id: "req_0123456789abcdefghij",
  teamId: "T1",
  channelId: "C1",
  requesterId: "U1",
  kind: "bot_category",
  params: { shieldZoneId: 42, category: 2, action: 1 },
  observed: 0,
  state: "pending",
  decidedBy: null,
  decidedAt: null,
  expiresAt: Date.parse("2026-11-21T12:30:00Z"),
  messageChannel: "C1",
  messageTs: "1.1",
  attempts: 0,
  lastError: null,
  failedAt: null,
  approvalsNeeded: 1,
  approvedBy: [],
  undoAfterMs: null,
  undoAt: null,
  twinKey: null,
  createdAt: 0,
  updatedAt: 0,
  ...over,
});

describe("Block Kit builders stay inside Slack's limits for large inputs", () => {
  it("1,000 applications", () => {
    const reply = appsMessage(
      {
        apps: apps(1000),
        totals: { active: 900, failing: 100 },
        read: 1000,
        totalItems: 5000,
        nextCursor: "c".repeat(500),
      },
      { limit: 1000, isPublic: false },
    );
    expect(checkBlockKitLimits("message", reply)).toEqual([]);
    expect(blocksText(reply.blocks)).toMatch(/and \d+ applications not shown/);
  });

  it("100 zones", () => {
    const reply = zonesMessage(
      {
        items: Array.from({ length: 100 }, (_, i) => zone(i)),
        page: 2,
        perPage: 100,
        totalCount: 300,
        totalPages: 3,
        nextPage: 3,
        hasNext: true,
      },
      false,
      null,
      Date.UTC(2026, 10, 1),
    );
    expect(checkBlockKitLimits("message", reply)).toEqual([]);
  });

  it("500 long DNS records: a type's pages hold each of its records once, whole, within the limits", () => {
    const records = scan(500);
    const a = records.records.filter((r) => r.type === 0);
    const first = blocksText(dnsMessage(5, records).blocks);
    const pages = Number(/A records 1–\d+ of 63 · page 1 of (\d+)/.exec(first)?.[1]);
    expect(pages).toBe(2);
    const texts = Array.from({ length: pages }, (_, i) => {
      const reply = dnsMessage(5, records, { type: "A", page: i + 1 });
      expect(checkBlockKitLimits("message", reply)).toEqual([]);
      return blocksText(reply.blocks);
    });
    // Three sections fill before 40 records of 250 characters: the page ends at the last whole record.
    expect(texts[0]!.match(/ · TTL 300/g)!.length).toBeLessThan(40);
    for (const r of a) expect(texts.filter((t) => t.includes(`\`${r.name}\``)).length, r.name ?? "").toBe(1);
    expect(texts.join("\n").match(/ · TTL 300/g)).toHaveLength(a.length);
    expect(texts.join("\n")).not.toContain("more records");
  });

  it("a long AI recommendation", () => {
    const reply = wafMessage(
      1,
      "942100",
      {
        shieldZoneId: 1,
        ruleId: "942100",
        success: true,
        recommendation: Array.from({ length: 400 }, () => longText(300)).join("\n"),
        message: null,
      },
      () => "r".repeat(22),
    );
    expect(checkBlockKitLimits("message", reply)).toEqual([]);
  });

  it("bots with every category and its buttons, and approval cards in every state", () => {
    const categories = [1, 2, 3, 4, 5, 6, 7, 255].map((c) => ({ category: c, action: c % 3, bots: [] }));
    let n = 0;
    const bots = botsMessage(
      42,
      {
        shieldZoneId: 42,
        requestIntegrity: { sensitivity: 1 },
        ipAddress: { sensitivity: 2 },
        browserFingerprint: { sensitivity: 3, aggression: 2, complexEnabled: true },
        executionMode: 1,
      },
      categories,
      () => `id${n++}-0123456789`,
      "banner",
    );
    expect(checkBlockKitLimits("message", bots)).toEqual([]);
    expect(blocksText(bots.blocks)).not.toContain("System");
    for (const state of CHANGE_STATES.filter((s) => s !== "undoing" && s !== "undone")) {
      const card = approvalCard(
        request({
          state,
          decidedBy: "U2",
          decidedAt: 1,
          lastError: { kind: "server", message: longText(5000) },
        }),
        { approvers: { kind: "admins" } },
      );
      expect(checkBlockKitLimits("message", card)).toEqual([]);
    }
  });

  it("help lists every subcommand", () => {
    const reply = helpReply(subcommandList());
    expect(checkBlockKitLimits("message", reply)).toEqual([]);
  });

  it("/edge status with 25 zones, huge counts and long reasons stays within Slack's limits and lists every zone", () => {
    const checks: ZoneCheck[] = Array.from({ length: 25 }, (_, i): ZoneCheck => {
      const reading = { signal: "ddos" as const, count: 1e12, mean: 1e9, std: 1, z: 1e6 - i, over: i < 12 };
      const series = Array.from({ length: 30 }, (_, j) => j * 1e9);
      if (i >= 20) return { zoneId: 2_147_483_000 + i, state: "unknown", why: longText(400) };
      return i < 12
        ? { zoneId: 2_147_483_000 + i, state: "unusual", reading, series, watched: i % 2 === 0 }
        : { zoneId: 2_147_483_000 + i, state: "usual", reading, series };
    });
    const reply = statusMessage({ checks, totalCount: 20_000, more: true, pending: 0, at: 0 });
    expect(checkBlockKitLimits("message", reply)).toEqual([]);
    const text = blocksText(reply.blocks);
    for (let i = 0; i < 20; i++) expect(text).toContain(`*Zone ${2_147_483_000 + i}*`);
    expect(text).toContain("Ranked 25 of 20000 zones");
    // Buttons for the ten furthest only; no Watch for the watched ones.
    const buttons = reply.blocks.flatMap((b) => (b.type === "actions" ? b.elements : []));
    expect(buttons.filter((b) => b.action_id === ACTIONS.statusIncident)).toHaveLength(10);
    expect(buttons.filter((b) => b.action_id === ACTIONS.statusWatch)).toHaveLength(5);
  });

  it("App Home with many open alerts, approvals and schedules", () => {
    const view = homeView({
      key: { fingerprint: "…abcd", setBy: "U1", setAt: 0, rotatedAt: null, masterKeyId: "k" },
      usingDeploymentKey: false,
      isAdmin: true,
      apps: { total: 1000, byStatus: { active: 1000 }, complete: true },
      pendingApprovals: { requests: Array.from({ length: 20 }, () => request()), total: 500 },
      schedules: [],
      openAlerts: {
        alerts: Array.from({ length: 500 }, (_, i) => ({
          channelId: `C${i}`,
          messageTs: null,
          view: {
            episodeId: `e${i}`,
            status: "firing" as const,
            openedAt: 0,
            resolvedAt: null,
            acknowledgedBy: "U1",
            mutedUntil: null,
            reopened: 0,
            subject: {
              kind: "app" as const,
              appId: `mc-${i}`,
              appName: "x".repeat(300),
              status: "failing",
              transition: "failing" as const,
              since: 0,
            },
          },
        })),
        more: true,
      },
      unusualZones: {
        checks: Array.from({ length: 10 }, (_, i) => ({
          zoneId: 18_400 + i,
          state: "unusual" as const,
          reading: { signal: "ddos" as const, count: 1e9, mean: 10, std: 1, z: 1e8, over: true },
          series: Array.from({ length: 30 }, (_, j) => j * 1e7),
          watched: i % 2 === 0,
        })),
        totalCount: 20_000,
        more: true,
        pending: 0,
        at: 0,
      },
    });
    expect(checkBlockKitLimits("home", view)).toEqual([]);
  });
});

describe("pure helpers", () => {
  it("durationWords says seconds under a minute (a short watch interval), minutes and hours above", () => {
    expect(durationWords(5_000)).toBe("5 s");
    expect(durationWords(400)).toBe("1 s");
    expect(durationWords(60_000)).toBe("1 min");
    expect(durationWords(30 * 60_000)).toBe("30 min");
    expect(durationWords(90 * 60_000)).toBe("1 h 30 min");
  });

  it("sparkline scales to the largest value", () => {
    expect(sparkline([0, 5, 10])).toBe("▁▅█");
    // A series that never moves draws no line of equal bars, which would read as a level.
    expect(sparkline([0, 0, 0, 0, 0, 0, 0, 0])).toBe("steady  ");
    expect(sparkline([7, 7])).toBe("steady");
  });
  it("packLines counts what does not fit", () => {
    // Two 1000-character lines fit a section: two sections (four lines) and the "more" line.
    const blocks = packLines(
      Array.from({ length: 100 }, () => longText(1000)),
      3,
    );
    expect(blocks).toHaveLength(3);
    expect(blocksText(blocks)).toContain("…and 96 more not shown.");
    expect(packLines(["a", "b"], 3)).toHaveLength(1);
  });
  it("a conflict note names another request once, only where it was asked in the card's channel; others are only counted", () => {
    const here = { id: "req_here_000000000000", userId: "U7", channelId: "C1", change: "Allow AI scraper" };
    const secret = {
      id: "req_secret_0000000000",
      userId: "U8",
      channelId: "GSECRET",
      change: "Clear AI scraper",
    };
    const card = approvalCard(request({ note: { kind: "conflicts", with: [here, here, secret] } }), {
      approvers: { kind: "admins" },
    });
    const text = blocksText(card.blocks);
    expect(text).toContain(
      "Conflicts with <@U7>'s request (Allow AI scraper), waiting here; a request waiting in another channel.",
    );
    expect(text.split("<@U7>").length).toBe(2);
    expect(text).not.toContain("U8");
    expect(text).not.toContain("GSECRET");
    for (const note of [
      { kind: "kept" as const, by: secret, until: null },
      { kind: "superseded" as const, by: secret },
    ]) {
      const t = blocksText(approvalCard(request({ state: "applied", note })).blocks);
      expect(t).toContain("a request in another channel");
      expect(t).not.toContain("U8");
    }
  });
  it("a decided card names no request deadline (it would read as the change's end); a temporary change in force names its end", () => {
    const applied = (over: Partial<ChangeRequest>) =>
      blocksText(approvalCard(request({ state: "applied", decidedBy: "U2", decidedAt: 1, ...over })).blocks);
    const permanent = applied({});
    expect(permanent).not.toContain("Approve by");
    expect(permanent).not.toContain("Expires");
    expect(permanent).not.toContain("Ends at");
    const undoAt = Date.parse("2026-11-21T13:00:00Z");
    const temporary = applied({ undoAfterMs: 1_800_000, undoAt });
    expect(temporary).toContain(`*Ends at*\n<!date^${undoAt / 1000}^`);
    expect(temporary).not.toContain("Approve by");
    for (const state of ["rejected", "expired", "undone", "failed"] as const)
      expect(blocksText(approvalCard(request({ state })).blocks), state).not.toMatch(
        /Approve by|Expires|Ends at/,
      );
  });
  it("the approval card shows requester, zone, category, current and requested action, expiry, Approve (no dialog) and Reject", () => {
    const card = approvalCard(request(), { approvers: { kind: "admins" } });
    const text = blocksText(card.blocks);
    for (const part of ["<@U1>", "42", "AI scraper", "None → *Block*", "*Approve by*", "Approve", "Reject"])
      expect(text).toContain(part);
    // A non-approver is refused at the click, so Approve asks nothing before it is decided.
    expect(JSON.stringify(card.blocks)).not.toContain('"confirm"');
  });
});
