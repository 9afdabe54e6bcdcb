import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import type { AlertView, SignalNumbers } from "../../../src/alerts/view.js";
import type { DetailValue } from "../../../src/changes/details.js";
import type { DecisionOutcome } from "../../../src/changes/moves.js";
import type { DnsScan, DnsScanRecord } from "../../../src/edge/schemas/core.js";
import type { App } from "../../../src/edge/schemas/mc.js";
import type {
  BotCategory,
  BotDetection,
  ShieldZone,
  TriggeredRule,
} from "../../../src/edge/schemas/shield.js";
import type { DnsSummary, SnapRecord } from "../../../src/services/dns-summary.js";
import type { InForce } from "../../../src/services/in-force.js";
import {
  type IncidentPicture,
  incidentRange,
  OFFENDER_DIMENSIONS,
  type Offender,
  TRAFFIC_METRICS,
} from "../../../src/services/incident.js";
import type { MitigationEffect, Rate, Unsaid } from "../../../src/services/mitigation-effect.js";
import type { TimelineEntry, TimelineStory } from "../../../src/services/timeline.js";
import type { ZoneCheck, ZoneRanking } from "../../../src/services/unusual-zones.js";
import {
  agentTokenLine,
  agentTokenList,
  agentTokenMinted,
  agentTokenRevoked,
} from "../../../src/slack/blocks/agents.js";
import {
  alertAcknowledgedReply,
  alertMutedReply,
  alertUnmutedReply,
  alreadyAcknowledgedText,
  incidentOverviewNotForApps,
  timelineNotForApps,
} from "../../../src/slack/blocks/alert-actions.js";
import {
  alertParentMessage,
  alertThreadReply,
  alertTitle,
  signalLine,
  watchChannelFailingDm,
  watchCreatedMessage,
  watchLabel,
  watchListMessage,
  watchMutedMessage,
  watchRemovedChannelNotice,
  watchRemovedMessage,
  watchSensitivityChangedMessage,
} from "../../../src/slack/blocks/alerts.js";
import {
  appliedLine,
  approvalCard,
  categoryButtons,
  confirmChangeMessage,
  durationWords,
  rejectedAnswer,
  rejectReasonModal,
  relatedLines,
  requesterOutcome,
  requestStateSentence,
} from "../../../src/slack/blocks/approvals.js";
import {
  appStatusCard,
  appsMessage,
  skippedText,
  statusLook,
  totalsLine,
} from "../../../src/slack/blocks/apps.js";
import { auditMessage } from "../../../src/slack/blocks/audit.js";
import {
  actions,
  button,
  confirmDialog,
  context,
  divider,
  fields,
  header,
  packLines,
  section,
} from "../../../src/slack/blocks/block-kit.js";
import { botDetectionFields, botsMessage, categoryActionText } from "../../../src/slack/blocks/bots.js";
import { detailField, detailMrkdwn } from "../../../src/slack/blocks/change-details.js";
import { changeModal } from "../../../src/slack/blocks/change-modal.js";
import { notPostedIn } from "../../../src/slack/blocks/channel-failing.js";
import {
  cleanupChecklistMessage,
  undoHeadsUpMessage,
  undoScheduleAnswer,
  undoScheduleButtons,
} from "../../../src/slack/blocks/cleanup.js";
import {
  countsByType,
  dnsMessage,
  noScanMessage,
  scanNowButton,
  scanStartedMessage,
  scanStatusText,
} from "../../../src/slack/blocks/dns.js";
import { dnsSummaryFailedMessage, dnsSummaryMessage } from "../../../src/slack/blocks/dns-summary.js";
import {
  driftKeptMessage,
  driftMessage,
  driftPutBackAskedMessage,
  driftWatchGoneText,
} from "../../../src/slack/blocks/drift.js";
import { effectBlocks, whatWorkedMessage, withEffect } from "../../../src/slack/blocks/effect.js";
import { helpReply } from "../../../src/slack/blocks/help.js";
import { homeView } from "../../../src/slack/blocks/home.js";
import { impactPreviewBlocks, withImpactPreview } from "../../../src/slack/blocks/impact-preview.js";
import {
  changeText,
  chartBlock,
  gatheringMessage,
  incidentCard,
  incidentListMessage,
} from "../../../src/slack/blocks/incident.js";
import { keyDoneModal, keyModal, keyStatusText } from "../../../src/slack/blocks/key-modal.js";
import {
  channel,
  code,
  DATE_FORMATS,
  dateToken,
  fallbackText,
  joinMrkdwn,
  link,
  Mrkdwn,
  mention,
  mrkdwn,
  mrkdwnText,
  namedApprovers,
  packMrkdwn,
  plainText,
  truncate,
  usergroup,
} from "../../../src/slack/blocks/mrkdwn.js";
import {
  pickerMessage,
  pickerNotice,
  pickerOptions,
  pickerSelect,
} from "../../../src/slack/blocks/pickers.js";
import { policyMessage } from "../../../src/slack/blocks/policy.js";
import {
  rateLimitMessage,
  ruleWords,
  sparkline,
  zoneRateLimitsMessage,
} from "../../../src/slack/blocks/ratelimit.js";
import { reply, sentenceReply } from "../../../src/slack/blocks/reply.js";
import {
  channelFailingDm,
  scheduleCreatedMessage,
  scheduleLabel,
  scheduleListMessage,
  scheduleRemovedMessage,
  scheduleRemovedNote,
} from "../../../src/slack/blocks/schedules.js";
import { rankedCountText, rankedZoneLine, statusMessage } from "../../../src/slack/blocks/status.js";
import {
  exportedReply,
  gatheringTimelineMessage,
  timelineMessage,
} from "../../../src/slack/blocks/timeline.js";
import { wafMessage } from "../../../src/slack/blocks/waf.js";
import { wafReviewButtons } from "../../../src/slack/blocks/waf-review.js";
import {
  seriesText,
  slotWords,
  unusualZoneLine,
  zoneSearchMessage,
  zoneStatusCard,
  zonesMessage,
} from "../../../src/slack/blocks/zones.js";
import type {
  ApiKeyInfo,
  AuditEntry,
  ChangeRequest,
  ChangeState,
  EffectivePolicy,
  Schedule,
  Watch,
} from "../../../src/store/index.js";
import { type AgentToken, CHANGE_STATES } from "../../../src/store/index.js";
import { useHarness } from "../../support/use-harness.js";

// ---- what may reach Slack ---------------------------------------------------------------------------------

/** The control sequences edgeops itself writes: mentions, channels, user groups, dates and http(s) links. */
const OUR_TOKEN =
  /<(?:@[UW][A-Z0-9]+|#[CGD][A-Z0-9]+|!subteam\^[A-Z0-9]+|!date\^\d+\^[^<>|]*\|[^<>]*|https?:\/\/[^\s<>|]+(?:\|[^<>]*)?)>/g;
/** Marks only the hostile inputs carry: a token holding one was built from outside text. */
const HOSTILE_MARK = /HOSTILE|evil/;
/** Fields Slack never shows: ids and values that come back to us. */
const NOT_SHOWN = new Set(["action_id", "block_id", "value", "callback_id", "private_metadata"]);

/** Every string in a Slack payload that a person could read (block texts, plain_text, the `text` fallback). */
function shownStrings(payload: unknown): string[] {
  const out: string[] = [];
  const walk = (v: unknown, key: string) => {
    if (NOT_SHOWN.has(key)) return;
    if (typeof v === "string") out.push(v);
    else if (v instanceof Mrkdwn) out.push(mrkdwnText(v, Number.MAX_SAFE_INTEGER).text);
    else if (Array.isArray(v)) for (const x of v) walk(x, key);
    else if (v && typeof v === "object") for (const [k, x] of Object.entries(v)) walk(x, k);
  };
  walk(payload, "");
  return out;
}

/** What a token of ours points at: an id, a date, or a link's host (a link's path and label may be anything). */
function tokenTarget(token: string): string {
  if (!token.startsWith("<http")) return token;
  return new URL(token.slice(1).split(/[|>]/)[0] ?? "").host;
}

/**
 * Problems with what a builder returned: any `<` or `>` that does not belong to one of our tokens, or one
 * of our tokens aimed at something from the input. A plain string is what a builder hands to the block
 * helpers, so it is checked as they show it.
 */
function controlLeaks(output: unknown): string[] {
  const leaks: string[] = [];
  const payload = typeof output === "string" ? section(output) : output;
  for (const s of shownStrings(payload)) {
    for (const token of s.match(OUR_TOKEN) ?? [])
      if (HOSTILE_MARK.test(tokenTarget(token))) leaks.push(`input became a token: ${token}`);
    const rest = s.replace(OUR_TOKEN, "");
    const at = rest.search(/[<>]/);
    if (at !== -1)
      leaks.push(
        `unescaped control character in: ${JSON.stringify(rest.slice(Math.max(0, at - 30), at + 40))}`,
      );
  }
  return leaks;
}

// ---- a small seeded generator of hostile input -------------------------------------------------------------

const ATTACKS = [
  "<!here>",
  "<!channel>",
  "<!everyone>",
  "<@U0HOSTILE>",
  "<@W0HOSTILE|boss>",
  "<#C0HOSTILE>",
  "<#C0HOSTILE|general>",
  "<!subteam^S0HOSTILE>",
  "<https://evil.example|click>",
  "<http://evil.example>",
  "<mailto:ceo@evil.example|mail>",
  "<!date^1^{date}|HOSTILE>",
  "&lt;!here&gt;",
  "&amp;lt;@U0HOSTILE&amp;gt;",
  "<",
  ">",
  "&",
  "|",
  "*bold*",
  "`",
  "_",
  "~",
  "\n",
  "…",
  "🙂",
  " ",
];

class Gen {
  private state: number;
  constructor(seed: number) {
    this.state = seed >>> 0;
  }
  /** mulberry32 */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  int(max: number): number {
    return Math.floor(this.next() * max);
  }
  bool(): boolean {
    return this.next() < 0.5;
  }
  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)]!;
  }
  list<T>(make: () => T, max = 4): T[] {
    return Array.from({ length: this.int(max + 1) }, make);
  }
  maybe<T>(make: () => T): T | null {
    return this.next() < 0.2 ? null : make();
  }
  /** A hostile string: attacks mixed with text, sometimes padded so an attack straddles a length limit. */
  s(): string {
    const parts = Array.from({ length: 1 + this.int(6) }, () =>
      this.next() < 0.7
        ? this.pick(ATTACKS)
        : Math.random()
            .toString(36)
            .slice(2, 2 + this.int(10)),
    );
    const pad =
      this.next() < 0.15 ? "x".repeat(this.pick([20, 60, 70, 110, 140, 190, 290, 1990, 2950, 3000])) : "";
    return this.bool() ? pad + parts.join("") : parts.join("") + pad;
  }
  /** A Slack id: usually real-looking, sometimes hostile. */
  id(prefix: "U" | "C" | "S"): string {
    return this.next() < 0.5 ? `${prefix}0${this.pick(["ALICE", "BOB", "OPS", "42"])}` : this.s();
  }
  /** An ISO time, sometimes without a zone, sometimes not a date at all. */
  iso(): string {
    const r = this.next();
    if (r < 0.4) return new Date(1_700_000_000_000 + this.int(1e10)).toISOString();
    if (r < 0.5) return "2026-11-20T10:00:00";
    return this.s();
  }
  ms(): number {
    return 1_700_000_000_000 + this.int(1e10);
  }
}

// ---- domain objects with every string field hostile --------------------------------------------------------

/** Every request state but a temporary change's undo (undoing, undone). */
const STATES: readonly ChangeState[] = CHANGE_STATES.filter((s) => s !== "undoing" && s !== "undone");

function app(g: Gen): App {
  return {
    id: g.s(),
    name: g.s(),
    description: g.maybe(() => g.s()),
    displayEndpoint: g.maybe(() => ({ id: g.s(), address: g.s(), type: g.s() })),
    status: g.pick(["active", "failing", g.s()]),
  } as App;
}

function zone(g: Gen): ShieldZone {
  return {
    shieldZoneId: g.int(1e6),
    pullZoneId: g.maybe(() => g.int(1e6)),
    planType: g.int(6),
    learningMode: g.bool(),
    learningModeUntil: g.maybe(() => g.iso()),
    wafEnabled: g.bool(),
    wafExecutionMode: g.int(3),
    wafRealtimeThreatIntelligenceEnabled: g.bool(),
    wafProfileId: g.int(5),
    wafRequestBodyLimitAction: g.int(4),
    wafResponseBodyLimitAction: g.int(4),
    rateLimitRulesLimit: g.int(20),
    customWafRulesLimit: g.int(20),
    ddosShieldSensitivity: g.int(6),
    ddosExecutionMode: g.int(3),
    ddosChallengeWindow: g.int(60),
    whitelabelResponsePages: g.bool(),
  } as ShieldZone;
}

function detection(g: Gen): BotDetection {
  return {
    shieldZoneId: g.int(1e6),
    requestIntegrity: { sensitivity: g.int(5) },
    ipAddress: { sensitivity: g.int(5) },
    browserFingerprint: { sensitivity: g.int(5), aggression: g.int(5), complexEnabled: g.bool() },
    executionMode: g.int(3),
  } as BotDetection;
}

function categories(g: Gen): BotCategory[] {
  return g.list(
    () =>
      ({
        category: g.int(9),
        action: g.int(4),
        bots: g.list(() => ({
          botId: g.int(99),
          userAgentMatch: g.s(),
          category: 1,
          action: 0,
          isVerifiable: true,
        })),
      }) as BotCategory,
  );
}

function record(g: Gen): DnsScanRecord {
  return {
    name: g.s(),
    type: g.int(14),
    ttl: g.maybe(() => g.int(3600)),
    value: g.maybe(() => g.s()),
    priority: g.maybe(() => g.int(20)),
    weight: g.maybe(() => g.int(20)),
    port: g.maybe(() => g.int(70000)),
    isProxied: g.bool(),
  };
}

function scan(g: Gen): DnsScan {
  return {
    jobId: g.s(),
    zoneId: g.int(1e6),
    domain: g.maybe(() => g.s()),
    status: g.int(5),
    createdAt: g.maybe(() => g.iso()),
    completedAt: g.maybe(() => g.iso()),
    records: g.list(() => record(g), 6),
    error: g.maybe(() => g.s()),
  } as DnsScan;
}

function snap(g: Gen): SnapRecord {
  return { t: g.s(), n: g.s(), v: g.s(), ttl: g.maybe(() => g.int(3600)), p: g.bool(), x: g.s() };
}

function summary(g: Gen): DnsSummary {
  return {
    zoneId: g.int(1e6),
    domain: g.maybe(() => g.s()),
    scan: g.maybe(() => scan(g)),
    triggered: g.bool(),
    incomplete: g.bool(),
    counts: g.list(() => ({ type: g.s(), count: g.int(100) })),
    total: g.int(100),
    proxied: g.int(100),
    diff: g.maybe(() => ({
      added: g.list(() => snap(g), 20),
      removed: g.list(() => snap(g)),
      changed: g.list(() => ({ before: snap(g), after: snap(g) }), 20),
    })),
    previousScannedAt: g.maybe(() => g.iso()),
    countsFromPrevious: g.bool(),
  };
}

function approvers(g: Gen) {
  return g.bool()
    ? { kind: "admins" as const }
    : { kind: "list" as const, users: g.list(() => g.id("U")), usergroups: g.list(() => g.id("S")) };
}

function request(g: Gen): ChangeRequest {
  const kind = g.pick(["bot_category", "policy", g.s()]);
  const params =
    kind === "bot_category"
      ? { shieldZoneId: 1 + g.int(1e6), category: 1 + g.int(7), action: g.int(3) }
      : {
          channelId: g.maybe(() => g.id("C")),
          ...(g.bool()
            ? { reset: true }
            : {
                set: {
                  approvals: g.pick(["required", "off", null]),
                  approvers: g.maybe(() => approvers(g)),
                  expiryMinutes: g.maybe(() => 1 + g.int(100)),
                  approvalsNeeded: g.maybe(() => 1 + g.int(5)),
                },
              }),
        };
  const observed =
    kind === "policy"
      ? g.maybe(() => ({
          approvals: "required",
          approvers: approvers(g),
          expiryMinutes: g.maybe(() => g.int(100)),
          approvalsNeeded: g.maybe(() => g.int(5)),
        }))
      : g.maybe(() => g.int(3));
  return {
    id: g.s(),
    kind,
    teamId: g.s(),
    channelId: g.id("C"),
    requesterId: g.id("U"),
    params,
    observed,
    state: g.pick(STATES),
    decidedBy: g.maybe(() => g.id("U")),
    decidedAt: g.maybe(() => g.ms()),
    expiresAt: g.ms(),
    messageChannel: g.maybe(() => g.s()),
    messageTs: g.maybe(() => g.s()),
    attempts: g.int(3),
    lastError: g.maybe(() => ({ kind: g.pick(["unknown", "server", g.s()]), message: g.s() })),
    failedAt: g.maybe(() => g.ms()),
    approvalsNeeded: 1 + g.int(4),
    approvedBy: g.list(() => g.id("U")),
    undoAfterMs: g.maybe(() => g.ms()),
    undoAt: g.maybe(() => g.ms()),
    undoneBy: g.maybe(() => g.pick(["system", g.id("U")])),
    reason: g.maybe(() =>
      g.pick([
        { kind: "rejected", text: g.s() },
        { kind: "withdrawn" },
        { kind: "no_approval", approvals: g.pick(["off", "not_covered"]) },
      ]),
    ),
    createdAt: g.ms(),
    updatedAt: g.ms(),
  } as ChangeRequest;
}

function incidentPicture(g: Gen): IncidentPicture {
  const range = incidentRange(g.pick(["15m", "1h", "72h"] as const), g.ms());
  const err = () => ({ error: g.s() });
  const offenderList = (): Offender[] =>
    g.list(
      () => ({
        value: g.s(),
        count: g.int(1e6),
        action: g.maybe(() => g.s()),
        actions: { blocked: g.int(9), challenged: g.int(9), logged: g.int(9) },
        country: g.maybe(() => g.s()),
        asn: g.maybe(() => g.s()),
      }),
      8,
    ) as Offender[];
  const rule = (): TriggeredRule => ({
    ruleId: g.maybe(() => g.s()),
    description: g.maybe(() => g.s()),
    triggeredRequests: g.int(1e6),
    topUrls: g.list(() => ({ url: g.s(), hits: g.int(99) }), 2),
  });
  const app = (): App => ({
    id: g.s(),
    name: g.s(),
    description: g.maybe(() => g.s()),
    displayEndpoint: g.maybe(() => ({ id: g.s(), address: g.s(), type: g.s() })),
    status: g.s(),
  });
  return {
    zoneId: 1 + g.int(1e6),
    range,
    zone: g.bool()
      ? err()
      : {
          ok: {
            zone: zone(g),
            botDetection: g.bool() ? err() : { ok: detection(g) },
            hostnames: g.list(() => g.s(), 3),
            pullZoneName: g.maybe(() => g.s()),
          },
        },
    traffic: g.bool()
      ? err()
      : ({
          ok: {
            rows: TRAFFIC_METRICS.map((metric) => ({
              metric,
              count: g.int(1e9),
              previous: g.maybe(() => g.int(1e9)),
              change: g.pick([{ kind: "unknown" }, { kind: "up", percent: g.int(999) }] as const),
              series: g.list(() => g.int(999), 30),
            })),
            previousError: g.maybe(() => g.s()),
            requests: g.bool()
              ? err()
              : { ok: { billableThisMonth: g.int(1e9), cleanLimit: g.maybe(() => g.int(9)) } },
          },
        } as never),
    offenders: g.bool()
      ? err()
      : {
          ok: {
            byDimension: Object.fromEntries(
              OFFENDER_DIMENSIONS.map((d) => [
                d,
                g.bool() ? err() : { ok: { dimension: d, total: g.int(1e5), offenders: offenderList() } },
              ]),
            ) as never,
          },
        },
    waf: g.bool() ? err() : { ok: { total: g.int(600), rules: g.list(rule, 8) } },
    rateLimits: g.bool()
      ? err()
      : {
          ok: {
            rules: g.list(
              () => ({
                rateLimitId: g.int(1e6),
                ...(g.bool() ? { name: g.s() } : {}),
                breaches: { total: g.int(99), blocked: g.int(9), challenged: g.int(9), logged: g.int(9) },
                basis: g.pick(["days", "overview"] as const),
              }),
              8,
            ),
            skipped: g.int(3),
          },
        },
    apps: g.bool() ? err() : { ok: { apps: g.list(app, 8), read: g.int(99), complete: g.bool() } },
    mitigated: new Map(g.list(() => [`ip:${g.s()}`, g.pick(["block", "challenge"] as const)] as const)),
    pendingAccess: new Map(
      g.list(() => [`ip:${g.s()}`, g.pick(["block", "challenge", "none"] as const)] as const),
    ),
  };
}

function effectivePolicy(g: Gen): EffectivePolicy {
  const source = () => g.pick(["channel", "workspace", "default"] as const);
  return {
    approvals: g.pick(["required", "off"] as const),
    approvers: approvers(g),
    expiryMinutes: g.int(1000),
    approvalsNeeded: 1 + g.int(5),
    approvalsFor: g.list(() => g.s()),
    source: {
      approvals: source(),
      approvers: source(),
      expiryMinutes: source(),
      approvalsNeeded: source(),
      approvalsFor: source(),
    },
  };
}

/** Stored schedules print their time zone; only a just-created one formats times in it (it was validated). */
/** A rate-limit rule as its answers name it, every text hostile. */
function namedRule(g: Gen) {
  return {
    id: g.int(1e6),
    name: g.maybe(() => g.s()),
    zoneId: g.maybe(() => g.int(1e6)),
    domain: g.maybe(() => g.s()),
  };
}

function schedule(g: Gen, timezone = g.s()): Schedule {
  return {
    id: g.s(),
    teamId: g.s(),
    channelId: g.id("C"),
    createdBy: g.id("U"),
    kind: "dns",
    target: g.s(),
    spec: g.pick(["daily 09:00", "0 9 * * 1-5", g.s()]),
    timezone,
    nextRunAt: g.ms(),
    lastRunAt: g.maybe(() => g.ms()),
    lastOutcome: g.maybe(() => g.pick(["ok", "error", g.s()])),
    lastError: g.maybe(() => g.s()),
    failing: g.bool(),
    snapshot: null,
    createdAt: g.ms(),
  } as Schedule;
}

function watch(g: Gen): Watch {
  const kind = g.pick(["zone", "apps", "config"] as const);
  return {
    id: g.s(),
    teamId: g.s(),
    channelId: g.pick([g.id("C"), g.s()]),
    createdBy: g.pick([g.id("U"), g.s()]),
    kind,
    target: g.s(),
    options: {
      label: g.s(),
      sensitivity: g.pick(["low", "normal", "high"] as const),
      statuses: g.maybe(() => g.list(() => g.s(), 4)),
    },
    nextPollAt: g.ms(),
    lastPolledAt: g.maybe(() => g.ms()),
    lastError: g.maybe(() => g.s()),
    failing: g.bool(),
    mutedUntil: g.maybe(() => g.ms()),
    state: null,
    createdAt: g.ms(),
  };
}

function signalNumbers(g: Gen): SignalNumbers {
  return {
    signal: g.pick(["ddos", "waf", "rateLimit", "bot"] as const),
    count: g.int(1e6),
    mean: g.int(1e4),
    z: g.int(40),
    over: g.bool(),
  };
}

function alertView(g: Gen): AlertView {
  return {
    episodeId: g.s(),
    status: g.pick(["firing", "resolved"] as const),
    openedAt: g.ms(),
    resolvedAt: g.maybe(() => g.ms()),
    acknowledgedBy: g.maybe(() => g.pick([g.id("U"), g.s()])),
    mutedUntil: g.maybe(() => g.ms()),
    reopened: g.int(4),
    ...(g.bool() ? { untracked: { by: g.pick([g.id("U"), g.s()]), at: g.ms() } } : {}),
    subject: g.bool()
      ? {
          kind: "zone",
          shieldZoneId: 1 + g.int(1e6),
          label: g.maybe(() => g.s()),
          readings: g.list(() => signalNumbers(g), 4),
          topOffender: g.maybe(() => g.pick([g.s(), "203.0.113.7", "AS13335"])),
          ddosSensitivity: g.maybe(() => g.int(4)),
        }
      : {
          kind: "app",
          appId: g.s(),
          appName: g.s(),
          status: g.pick(["failing", "suspended", g.s()]),
          transition: g.pick(["failing", "stuck_deploying"] as const),
          since: g.ms(),
          ...(g.bool() ? { sinceAtLeast: true } : {}),
        },
  };
}

function keyInfo(g: Gen): ApiKeyInfo {
  return {
    fingerprint: g.s(),
    setBy: g.id("U"),
    setAt: g.ms(),
    rotatedAt: g.maybe(() => g.ms()),
    masterKeyId: g.s(),
  };
}

function audit(g: Gen): AuditEntry {
  return {
    id: g.int(1e6),
    at: g.ms(),
    teamId: g.s(),
    userId: g.pick(["system", g.id("U")]),
    action: g.s(),
    target: g.s(),
    outcome: g.s(),
    details: g.maybe(() => ({ channelId: g.id("C"), status: g.int(600), errorKey: g.s() })),
  };
}

/** A tagged-template strings array whose literal parts are hostile too (the template escapes them). */
function templateOf(g: Gen, n: number): TemplateStringsArray {
  const parts = Array.from({ length: n + 1 }, () => g.s());
  return Object.assign([...parts], { raw: [...parts] }) as unknown as TemplateStringsArray;
}

/** A timeline story (src/services/timeline.ts) with every string hostile and every entry kind. */
function timelineStory(g: Gen): TimelineStory {
  const at = g.ms();
  const base = () => ({ at: g.ms(), channelId: g.id("C"), by: g.pick([g.id("U"), "system", null]) });
  const entries: TimelineEntry[] = [
    {
      ...base(),
      kind: "alert_opened",
      episodeId: g.s(),
      signals: [{ signal: g.s(), count: g.int(9999), mean: g.int(99), over: true }],
      topOffender: g.pick([g.s(), null]),
    },
    {
      ...base(),
      kind: "alert_resolved",
      episodeId: g.s(),
      durationMs: g.ms(),
      watchRemoved: g.pick([true, false]),
    },
    { ...base(), kind: "alert_acknowledged", episodeId: g.s() },
    { ...base(), kind: "watch_muted", until: g.pick([g.ms(), null]) },
    { ...base(), kind: "dashboard_change", title: g.s(), from: g.s(), to: g.s() },
    {
      ...base(),
      kind: "change",
      step: g.pick(["asked", "approval", "rejected", "applied", "failed"] as const),
      requestId: g.s(),
      change: g.s(),
      approvals: { count: g.int(3), needed: 1 + g.int(3) },
      note: g.s(),
    },
  ];
  return {
    timeline: {
      teamId: "T0HOSTILE",
      zoneId: g.int(99999),
      range: incidentRange(g.pick(["15m", "1h", "72h"] as const), at),
      entries,
      mitigations: [
        {
          requestId: g.s(),
          change: g.s(),
          asked: { by: g.id("U"), channelId: g.id("C") },
          appliedAt: g.ms(),
          until: g.pick([g.ms(), null]),
        },
      ],
      alerts: { count: g.int(5), firstOpenedAt: g.ms(), lastResolvedAt: null, firing: g.int(2) },
      hidden: g.int(3),
      cut: g.pick([true, false]),
    },
    peaks: g.pick([
      {
        ok: [
          {
            metric: "waf" as const,
            peak: g.int(9999),
            endsAt: g.ms(),
            bucketMs: 60_000,
            total: g.int(99999),
          },
        ],
      },
      { error: g.s() },
      null,
    ]),
  };
}

// ---- every export of src/slack/blocks, and how to feed it ---------------------------------------------------

const TIME_ZONES = ["UTC", "Europe/Amsterdam", "America/New_York", "Asia/Kolkata"];

/** `file:export` → a call with every string argument and field hostile. */
/** A change kind's card value (src/changes/details.ts) with every string hostile, nested a little. */
function detailValue(g: Gen, depth = 0): DetailValue {
  const simple: DetailValue[] = [
    g.s(),
    { type: "move", from: g.s(), to: g.s() },
    { type: "emphasis", text: g.s() },
    { type: "code", text: g.s() },
    { type: "user", id: g.id("U") },
    { type: "channel", id: g.id("C") },
    { type: "usergroup", id: g.id("S") },
  ];
  if (depth >= 2 || g.bool()) return g.pick(simple);
  return { type: "join", parts: g.list(() => detailValue(g, depth + 1), 4), separator: g.s() };
}

/** The time the zone builders read learning mode against. */
const AS_OF = Date.UTC(2026, 10, 1);

/** An agent token as stored, with hostile names (never the token itself). */
function agentToken(g: Gen): AgentToken {
  return {
    id: g.s(),
    teamId: g.id("U"),
    userId: g.id("U"),
    name: g.s(),
    tokenHash: g.s(),
    createdAt: g.ms(),
    expiresAt: g.ms(),
    revokedAt: g.pick([null, g.ms()]),
    revokedBy: g.pick([null, g.id("U")]),
    lastUsedAt: g.pick([null, g.ms()]),
  };
}

/**
 * A request a cleanup button could be pressed on: any request (hostile kind, note, error), or one whose own
 * words carry a hostile name (an application's name is shown as typed; a temporary one is undone later).
 */
function undoableRequest(g: Gen): ChangeRequest {
  const r = request(g);
  if (g.bool()) return r;
  return {
    ...r,
    kind: "restart_app",
    params: { appId: "app-1", appName: g.s().slice(0, 200) },
    undoAt: g.maybe(() => g.ms()),
  } as ChangeRequest;
}

/** Every answer a cleanup button can get, its request's words and error hostile. */
function decisionOutcome(g: Gen): DecisionOutcome {
  const request = undoableRequest(g);
  return g.pick<DecisionOutcome>([
    { kind: "made_permanent", request },
    { kind: "extended", request, from: g.ms() },
    { kind: "extend_too_far", request, latest: g.ms() },
    { kind: "undone", request },
    { kind: "undo_failed", request },
    { kind: "undo_unknown", request },
    { kind: "not_approver", request },
    { kind: "not_found" },
    { kind: "not_undoable", request },
    { kind: "already_decided", request },
    { kind: "self_approval", request },
    { kind: "expired", request },
    { kind: "rejected", request },
    { kind: "withdrawn", request },
    { kind: "approval_recorded", request, remaining: g.int(3), dropped: g.list(() => g.id("U")) },
    { kind: "already_approved", request },
    { kind: "retry_closed", request },
    { kind: "unchanged" },
    { kind: "duplicate", request },
    { kind: "already_pending", request },
    { kind: "pending", request, policy: effectivePolicy(g) },
    { kind: "applied", request },
    { kind: "already_set", request },
    { kind: "failed", request },
    { kind: "unknown", request },
  ]);
}

/** What edgeops keeps in force on a zone: the changes' words, the command to undo, who asked and where hostile. */
function inForce(g: Gen): InForce {
  return {
    zoneId: g.int(1e6),
    items: g.list(
      () => {
        const until = g.maybe(() => g.ms());
        return {
          requestId: g.s(),
          change: g.s(),
          state: g.pick(["applied", "undoing"] as const),
          asked: g.maybe(() => ({ by: g.pick([g.id("U"), g.s()]), channelId: g.pick([g.id("C"), g.s()]) })),
          appliedAt: g.ms(),
          until,
          reviewOn: until === null ? g.ms() : null,
          undoCommand: g.maybe(() => g.s()),
        };
      },
      g.bool() ? 25 : 4,
    ),
    cut: g.bool(),
  };
}

function rate(g: Gen): Rate {
  return {
    perMinute: g.int(1e5) / 7,
    actions: g.maybe(() => ({ blocked: g.int(99), challenged: g.int(99), logged: g.int(99) })),
    events: g.int(1e6),
    minutes: g.int(60),
  };
}

/** A measured effect or why it cannot be said: the entry's value, the setting's levels, reasons and other changes hostile. */
function mitigationEffect(g: Gen): MitigationEffect {
  const target = g.pick([
    {
      what: "entry" as const,
      shieldZoneId: g.int(1e6),
      type: g.pick(["ip", "cidr", "asn", "country", "ja4"] as const),
      value: g.s(),
    },
    {
      what: "threats" as const,
      shieldZoneId: g.int(1e6),
      feature: g.pick(["ddos", "waf"] as const),
      ...(g.bool()
        ? {
            setting: {
              from: g.maybe(() => g.s()),
              to: g.s(),
              direction: g.pick(["stricter", "looser", "unknown"] as const),
            },
          }
        : {}),
    },
  ]);
  const unsaid = g.pick<Unsaid>([
    { why: "not_applied" },
    { why: "too_soon", minutes: g.int(3) },
    { why: "too_short", minutes: g.int(3) },
    { why: "no_event_log" },
    { why: "too_little_traffic", eventsBefore: g.int(60) },
    {
      why: "overlapping",
      others: g.list(() => ({ change: g.s(), at: g.ms(), step: g.pick(["applied", "undone"] as const) }), 4),
    },
    { why: "unreadable", reason: g.s() },
  ]);
  return g.bool()
    ? { state: "cannot_say", target, appliedAt: g.maybe(() => g.ms()), asOf: g.ms(), unsaid }
    : {
        state: "measured",
        target,
        appliedAt: g.ms(),
        asOf: g.ms(),
        before: rate(g),
        after: rate(g),
        ...(g.bool()
          ? { zone: { of: g.pick(["threats", "ddos", "waf"] as const), before: rate(g), after: rate(g) } }
          : g.bool()
            ? { zoneUnsaid: g.s() }
            : {}),
        ...(g.bool() ? { partial: true as const } : {}),
        ...(g.bool() ? { endedAt: g.ms() } : {}),
      };
}

const ENTRY_STATES = ["block", "challenge", "none", undefined] as const;

const BUILDERS: Record<string, (g: Gen) => unknown> = {
  "cleanup.ts:undoScheduleButtons": (g) => actions(...undoScheduleButtons(g.s(), g.s(), g.bool())),
  "cleanup.ts:cleanupChecklistMessage": (g) =>
    cleanupChecklistMessage(inForce(g), { label: g.maybe(() => g.s()) }),
  "cleanup.ts:undoHeadsUpMessage": (g) =>
    undoHeadsUpMessage({ requestId: g.s(), change: g.s(), undoAt: g.ms() }, g.ms()),
  // The whole answer: its sentence and anything else it grows.
  "cleanup.ts:undoScheduleAnswer": (g) => undoScheduleAnswer(decisionOutcome(g)),
  "effect.ts:effectBlocks": (g) => effectBlocks(mitigationEffect(g), g.pick(ENTRY_STATES)),
  "effect.ts:withEffect": (g) =>
    withEffect(
      reply(g.s(), [section(g.s()), ...(g.bool() ? [actions(button(g.s(), g.s(), g.s()))] : [])]),
      mitigationEffect(g),
      g.pick(ENTRY_STATES),
    ),
  "effect.ts:whatWorkedMessage": (g) =>
    whatWorkedMessage(
      g.list(() => {
        const state = g.pick(ENTRY_STATES);
        return { change: g.s(), effect: mitigationEffect(g), ...(state ? { state } : {}) };
      }, 30),
      g.ms(),
      g.int(5),
    ),
  // The file id is Slack's own; the alt text carries names people typed.
  "incident.ts:chartBlock": (g) => chartBlock({ fileId: `F${g.int(1e9)}`, altText: g.s() }),
  "agents.ts:agentTokenLine": (g) => agentTokenLine(agentToken(g)),
  "agents.ts:agentTokenMinted": (g) => agentTokenMinted(agentToken(g), g.s(), 1 + g.int(30), 1 + g.int(90)),
  "agents.ts:agentTokenRevoked": (g) => agentTokenRevoked(agentToken(g)),
  "agents.ts:agentTokenList": (g) => agentTokenList(g.list(() => agentToken(g), 4)),
  "change-details.ts:detailMrkdwn": (g) => detailMrkdwn(detailValue(g)),
  "change-details.ts:detailField": (g) => detailField({ label: g.s(), value: detailValue(g) }),
  "alerts.ts:alertParentMessage": (g) => alertParentMessage(alertView(g), g.ms()),
  "alerts.ts:alertThreadReply": (g) =>
    alertThreadReply(
      g.pick([
        {
          kind: "worse" as const,
          signals: ["ddos" as const, "waf" as const],
          readings: g.list(() => signalNumbers(g), 4),
        },
        { kind: "status" as const, appName: g.s(), status: g.s() },
        { kind: "resolved" as const, durationMs: g.int(1e8) },
        { kind: "fired_again" as const, afterMs: g.int(1e7) },
      ]),
    ),
  "alerts.ts:signalLine": (g) => signalLine(signalNumbers(g)),
  "timeline.ts:timelineMessage": (g) =>
    timelineMessage(timelineStory(g), {
      page: 1 + g.int(3),
      label: g.pick([g.s(), null]),
      scope: g.pick(["workspace", "yours", "channel"] as const),
      buttons: g.pick(["all", "export", "none"] as const),
      now: g.ms(),
    }),
  "timeline.ts:gatheringTimelineMessage": (g) => gatheringTimelineMessage(g.s(), g.s()),
  "timeline.ts:exportedReply": (g) => exportedReply(g.id("C"), g.s()),
  "drift.ts:driftMessage": (g) =>
    driftMessage(
      watch(g),
      {
        key: g.s(),
        title: g.s(),
        fromLabel: g.s(),
        toLabel: g.s(),
        noticedAt: g.ms(),
        to: g.pick([g.int(5), g.bool(), null]),
        ...(g.bool() ? { putBack: { k: g.s(), p: { shieldZoneId: g.int(1e6), value: g.s() } } } : {}),
      },
      () => g.s(),
    ),
  "drift.ts:driftPutBackAskedMessage": (g) =>
    driftPutBackAskedMessage(
      watch(g),
      { c: g.s(), n: g.ms() },
      g.id("U"),
      g.ms(),
      g.pick(["pending", "applied", "other"] as const),
    ),
  "drift.ts:driftKeptMessage": (g) =>
    driftKeptMessage(watch(g), { w: g.s(), s: g.s(), v: g.int(5), c: g.s(), n: g.ms() }, g.id("U"), g.ms()),
  "drift.ts:driftWatchGoneText": () => driftWatchGoneText(),
  "alerts.ts:watchLabel": (g) => watchLabel(watch(g)),
  "alerts.ts:watchCreatedMessage": (g) => watchCreatedMessage(watch(g), g.bool(), g.int(1e7)),
  "alerts.ts:watchListMessage": (g) =>
    watchListMessage(
      g.list(() => watch(g), 20),
      g.ms(),
    ),
  "alerts.ts:watchRemovedMessage": (g) => watchRemovedMessage(watch(g)),
  "alerts.ts:watchRemovedChannelNotice": (g) => watchRemovedChannelNotice(watch(g), g.id("U"), g.int(50)),
  "alerts.ts:watchMutedMessage": (g) =>
    watchMutedMessage(
      watch(g),
      g.maybe(() => g.ms()),
    ),
  "alerts.ts:watchSensitivityChangedMessage": (g) =>
    watchSensitivityChangedMessage(watch(g), g.pick(["low", "normal", "high", g.s()])),
  "alerts.ts:watchChannelFailingDm": (g) =>
    watchChannelFailingDm(watch(g), g.pick(["not_in_channel", "is_archived", g.s()])),
  "channel-failing.ts:notPostedIn": (g) =>
    notPostedIn(g.pick(["not_in_channel", "is_archived", g.s()]), g.s(), {
      kind: g.pick(["watch", "schedule"] as const),
      id: g.s(),
    }),
  "mrkdwn.ts:mrkdwn": (g) => mrkdwn(templateOf(g, 3), g.s(), g.int(10), mrkdwn`${g.s()}`),
  "mrkdwn.ts:joinMrkdwn": (g) => joinMrkdwn([g.s(), mention(g.id("U")), code(g.s())], g.s()),
  "mrkdwn.ts:mention": (g) => mention(g.s()),
  "mrkdwn.ts:channel": (g) => channel(g.s()),
  "mrkdwn.ts:usergroup": (g) => usergroup(g.s()),
  "mrkdwn.ts:namedApprovers": (g) => namedApprovers({ users: [g.s(), g.id("U")], usergroups: [g.s()] }),
  "mrkdwn.ts:link": (g) =>
    link(
      g.pick([g.s(), `https://bunny.net/${g.s()}`, `http://x.example/?a=<b>&c=|d`, "javascript:alert(1)"]),
      g.s(),
    ),
  "mrkdwn.ts:code": (g) => code(g.s(), 1 + g.int(300)),
  "mrkdwn.ts:dateToken": (g) => dateToken(g.pick([g.iso(), g.ms(), null]), g.pick(DATE_FORMATS)),
  "mrkdwn.ts:mrkdwnText": (g) => mrkdwnText(g.s(), 1 + g.int(3000)),
  "mrkdwn.ts:plainText": (g) => plainText(g.s(), 1 + g.int(3000)),
  "mrkdwn.ts:fallbackText": (g) => ({ text: fallbackText(g.s()) }),
  "mrkdwn.ts:packMrkdwn": (g) =>
    packMrkdwn(
      g.list(() => g.s(), 40),
      1 + g.int(3000),
    ),
  "mrkdwn.ts:truncate": (g) => truncate(g.s(), 1 + g.int(100)),
  "block-kit.ts:header": (g) => header(g.s()),
  "block-kit.ts:section": (g) => section(g.s(), button(g.s(), "a", g.s())),
  "block-kit.ts:fields": (g) => fields(g.list(() => g.s(), 12)),
  "block-kit.ts:context": (g) => context(...g.list(() => g.s(), 12)),
  "block-kit.ts:divider": () => divider(),
  "block-kit.ts:button": (g) => button(g.s(), g.s(), g.s(), "danger"),
  "block-kit.ts:actions": (g) => actions(button(g.s(), "a", "v"), button(g.s(), "b", "w")),
  "block-kit.ts:confirmDialog": (g) => confirmDialog(g.s(), g.s(), g.s(), "danger"),
  "block-kit.ts:packLines": (g) =>
    packLines(
      g.list(() => g.s(), 40),
      1 + g.int(4),
      g.s(),
    ),
  "reply.ts:reply": (g) => reply(g.s(), [section(g.s())]),
  "reply.ts:sentenceReply": (g) => sentenceReply(g.s(), g.s()),
  "approvals.ts:categoryButtons": (g) => categoryButtons(g.int(1e6), g.int(9), () => g.s()),
  "approvals.ts:confirmChangeMessage": (g) =>
    confirmChangeMessage(
      g.pick([
        {
          r: g.s(),
          k: "bot_category",
          p: { shieldZoneId: 1 + g.int(1e6), category: 1 + g.int(6), action: g.int(3) },
        },
        { r: g.s(), k: "restart_app", p: { appId: "app-1", appName: g.s() }, t: 60_000 * (1 + g.int(1440)) },
        { r: g.s(), k: "purge", p: { url: `https://example.com/${encodeURIComponent(g.s())}` } },
        { r: g.s(), k: g.s(), p: g.s() },
      ]),
      g.maybe(() => g.int(4)),
    ),
  "impact-preview.ts:impactPreviewBlocks": (g) => impactPreviewBlocks(impactView(g)),
  "impact-preview.ts:withImpactPreview": (g) =>
    withImpactPreview(reply(g.s(), [section(g.s()), actions(button(g.s(), g.s(), g.s()))]), impactView(g)),
  "approvals.ts:requestStateSentence": (g) => requestStateSentence(request(g)),
  "approvals.ts:durationWords": (g) => section(durationWords(g.int(25 * 3_600_000))),
  "approvals.ts:approvalCard": (g) =>
    approvalCard(
      request(g),
      g.bool() ? { approvers: approvers(g) } : undefined,
      g.list(() => g.id("U")),
    ),
  "approvals.ts:appliedLine": (g) => appliedLine(request(g)),
  "approvals.ts:rejectedAnswer": (g) => rejectedAnswer(request(g)),
  "approvals.ts:rejectReasonModal": (g) => rejectReasonModal(request(g)).blocks,
  "approvals.ts:requesterOutcome": (g) => requesterOutcome(request(g)) ?? sentenceReply("none"),
  "approvals.ts:relatedLines": (g) => {
    const r = request(g);
    const other = () => ({
      id: g.s(),
      userId: g.id("U"),
      channelId: g.bool() ? r.channelId : g.id("C"),
      change: g.s(),
      ...(g.bool() ? { temporaryMs: g.int(86_400_000) } : {}),
      ...(g.bool() ? { sameValue: true } : {}),
    });
    return relatedLines({ ...r, note: { kind: "conflicts", with: g.list(other, 8) } }).map((l) => section(l));
  },
  "apps.ts:statusLook": (g) => {
    const look = statusLook(g.s());
    return section(mrkdwn`${look.emoji} ${look.label}`);
  },
  "apps.ts:totalsLine": (g) => totalsLine({ active: g.int(9), [g.s()]: g.int(9) }),
  // Its words are edgeops' own (callers pass constants); the count varies.
  "apps.ts:skippedText": (g) => skippedText(g.int(9), "application", "an id"),
  "apps.ts:appStatusCard": (g) => appStatusCard(app(g)),
  "apps.ts:appsMessage": (g) =>
    appsMessage(
      {
        apps: g.list(() => app(g), 30),
        totals: { [g.s()]: g.int(9), failing: g.int(9) },
        read: g.int(100),
        totalItems: g.maybe(() => g.int(100)),
        nextCursor: g.maybe(() => g.s()),
      },
      { limit: 1 + g.int(100), isPublic: g.bool(), ...(g.bool() ? { status: g.s() } : {}) },
    ),
  "audit.ts:auditMessage": (g) =>
    auditMessage(
      g.list(() => audit(g), 30),
      g.pick([{ kind: "channel" as const, channelId: g.id("C") }, { kind: "yours" as const }]),
    ),
  "bots.ts:categoryActionText": (g) => categoryActionText(g.int(5)),
  "bots.ts:botDetectionFields": (g) => fields(botDetectionFields(detection(g))),
  "bots.ts:botsMessage": (g) =>
    botsMessage(g.int(1e6), detection(g), categories(g), () => g.s(), g.pick([g.s(), mrkdwn`${g.s()}`])),
  "dns-summary.ts:dnsSummaryMessage": (g) => [
    dnsSummaryMessage(summary(g), { id: g.s(), label: g.s() }),
    // Posted by a workflow step: no schedule.
    dnsSummaryMessage(summary(g), null),
  ],
  "dns-summary.ts:dnsSummaryFailedMessage": (g) =>
    dnsSummaryFailedMessage(g.int(1e6), g.s(), { id: g.s(), label: g.s() }),
  "dns.ts:scanNowButton": (g) => scanNowButton(g.int(1e6)),
  "dns.ts:countsByType": (g) => countsByType(g.list(() => record(g), 10)),
  "dns.ts:scanStatusText": (g) => scanStatusText(g.int(8) - 2),
  "dns.ts:dnsMessage": (g) => dnsMessage(g.int(1e6), scan(g)),
  "dns.ts:noScanMessage": (g) => noScanMessage(g.int(1e6)),
  "dns.ts:scanStartedMessage": (g) => scanStartedMessage(g.int(1e6)),
  "help.ts:helpReply": (g) =>
    helpReply(
      g.list(() => ({ name: g.s(), usage: g.s(), summary: g.s(), examples: g.list(() => g.s()) }), 12),
    ),
  "home.ts:homeView": (g) =>
    homeView({
      key: g.bool() ? keyInfo(g) : undefined,
      usingDeploymentKey: g.bool(),
      isAdmin: g.bool(),
      apps: g.pick([
        null,
        { error: g.s() },
        { total: g.int(100), byStatus: { [g.s()]: g.int(9) }, complete: g.bool() },
      ]),
      pendingApprovals: { requests: g.list(() => request(g), 8), total: g.int(50) },
      schedules: g.list(() => schedule(g), 8),
      openAlerts: g.pick([
        { error: g.s() },
        {
          alerts: g.list(
            () => ({ view: alertView(g), channelId: g.id("C"), messageTs: g.maybe(() => g.s()) }),
            8,
          ),
          more: g.bool(),
        },
      ]),
      unusualZones: g.pick([null, { error: g.s() }, ranking(g)]),
    }),
  "alert-actions.ts:alertAcknowledgedReply": (g) => alertAcknowledgedReply(g.id("U")),
  "alert-actions.ts:alertMutedReply": (g) => alertMutedReply(g.id("U"), g.ms(), g.int(1e8)),
  "alert-actions.ts:alertUnmutedReply": (g) => alertUnmutedReply(g.id("U")),
  "alert-actions.ts:alreadyAcknowledgedText": (g) =>
    section(
      alreadyAcknowledgedText(
        g.id("U"),
        g.maybe(() => g.ms()),
        g.bool(),
      ),
    ),
  "alert-actions.ts:incidentOverviewNotForApps": () => section(incidentOverviewNotForApps()),
  "alert-actions.ts:timelineNotForApps": () => section(timelineNotForApps()),
  "alerts.ts:alertTitle": (g) => header(alertTitle(alertView(g))),
  "key-modal.ts:keyStatusText": (g) => keyStatusText(g.bool() ? keyInfo(g) : undefined, g.bool()),
  "key-modal.ts:keyModal": (g) => keyModal(g.bool() ? keyInfo(g) : undefined, g.bool()),
  "key-modal.ts:keyDoneModal": (g) => keyDoneModal(g.s()),
  "policy.ts:policyMessage": (g) => policyMessage(effectivePolicy(g), g.id("C")),
  "ratelimit.ts:sparkline": (g) => sparkline(g.list(() => g.int(100), 28)),
  "ratelimit.ts:zoneRateLimitsMessage": (g) =>
    zoneRateLimitsMessage({
      zoneId: g.int(1e6),
      domain: g.maybe(() => g.s()),
      rules: g.list(
        () => ({ id: g.int(1e6), name: g.maybe(() => g.s()), breaches: g.maybe(() => g.int(1e6)) }),
        8,
      ),
      skipped: g.int(3),
      countersCame: g.bool(),
      complete: g.bool(),
    }),
  "ratelimit.ts:ruleWords": (g) => section(mrkdwn`${ruleWords(namedRule(g))}`),
  "ratelimit.ts:rateLimitMessage": (g) =>
    rateLimitMessage(
      g.int(1e6),
      {
        overview: g.maybe(() => ({
          totalBreaches: 1,
          loggedBreaches: 2,
          challengedBreaches: 3,
          blockedBreaches: 4,
        })),
        days: g.list(
          () => ({
            day: g.s(),
            totalBreaches: g.int(9),
            loggedBreaches: 0,
            challengedBreaches: 0,
            blockedBreaches: 0,
          }),
          28,
        ),
        unreadableDays: g.list(() => g.s(), 3),
      } as Parameters<typeof rateLimitMessage>[1],
      g.maybe(() => namedRule(g)),
    ),
  "schedules.ts:scheduleLabel": (g) => scheduleLabel({ spec: g.s(), timezone: g.s() }),
  "schedules.ts:scheduleCreatedMessage": (g) =>
    scheduleCreatedMessage(
      schedule(g, g.pick(TIME_ZONES)),
      g.list(() => g.ms()),
      g.bool(),
      g.maybe(() => g.s()),
    ),
  "schedules.ts:scheduleListMessage": (g) => scheduleListMessage(g.list(() => schedule(g), 20)),
  "schedules.ts:scheduleRemovedMessage": (g) => scheduleRemovedMessage(schedule(g)),
  "schedules.ts:scheduleRemovedNote": (g) =>
    scheduleRemovedNote(
      schedule(g),
      g.id("U"),
      g.maybe(() => g.id("C")),
    ),
  "schedules.ts:channelFailingDm": (g) =>
    channelFailingDm(schedule(g), g.pick(["not_in_channel", "is_archived", g.s()])),
  "waf-review.ts:wafReviewButtons": (g) => actions(...wafReviewButtons(g.int(1e6), g.s(), () => g.s())),
  "waf.ts:wafMessage": (g) =>
    wafMessage(
      g.int(1e6),
      g.s(),
      {
        shieldZoneId: g.int(1e6),
        ruleId: g.s(),
        success: g.bool(),
        recommendation: g.maybe(() => g.list(() => g.s(), 30).join("\n")),
        message: g.maybe(() => g.s()),
      },
      () => g.s(),
    ),
  "incident.ts:incidentCard": (g) =>
    incidentCard(incidentPicture(g), { isPublic: g.bool(), newRequestId: () => g.s() }),
  "incident.ts:gatheringMessage": (g) => gatheringMessage(g.bool() ? g.s() : g.int(1e6), { words: g.s() }),
  "incident.ts:changeText": (g) =>
    section(
      changeText(g.pick([{ kind: "up", percent: g.int(999) }, { kind: "same" }, { kind: "new" }] as const)),
    ),
  "incident.ts:incidentListMessage": (g) => {
    const p = incidentPicture(g);
    const paging = { page: 1 + g.int(3), totalPages: 1 + g.int(9), total: g.int(999), range: p.range };
    const kind = g.pick(["offenders", "waf", "ratelimits", "apps"] as const);
    const rules = "ok" in p.waf ? p.waf.ok.rules : [];
    const apps = "ok" in p.apps ? p.apps.ok.apps : [];
    const rl = "ok" in p.rateLimits ? p.rateLimits.ok.rules : [];
    const page =
      kind === "offenders"
        ? {
            ...paging,
            kind,
            dimension: "ip" as const,
            offenders: g.list(
              () => ({
                value: g.s(),
                count: 1,
                action: g.s(),
                actions: { blocked: 1, challenged: 0, logged: 0 },
                country: g.s(),
                asn: g.s(),
              }),
              9,
            ),
            mitigated: new Map(),
            pendingAccess: new Map(),
          }
        : kind === "waf"
          ? { ...paging, kind, rules }
          : kind === "ratelimits"
            ? { ...paging, kind, rules: rl }
            : { ...paging, kind, apps, complete: g.bool() };
    return incidentListMessage(
      p.zoneId,
      page as never,
      g.pick(["ip", "waf", "ratelimits", "apps"] as const),
      false,
      () => "r1",
    );
  },
  "change-modal.ts:changeModal": (g) => {
    const forms = Object.fromEntries(
      g.list(
        () => [
          g.s(),
          {
            command: g.s(),
            label: g.s(),
            source: g.pick(["shield", "dns", "app", "pull"] as const),
            fields: g.list(
              () => ({
                id: g.s(),
                label: g.s(),
                placeholder: g.s(),
                ...(g.bool() ? { choices: g.list(() => g.s(), 6) } : {}),
              }),
              3,
            ),
            temporary: g.bool(),
          },
        ],
        5,
      ),
    );
    const keys = Object.keys(forms);
    return changeModal(forms, keys.length > 0 && g.bool() ? g.pick(keys) : undefined);
  },
  "pickers.ts:pickerSelect": (g) => pickerSelect(g.pick(["shield", "dns", "app", "pull"] as const)),
  "pickers.ts:pickerMessage": (g) =>
    pickerMessage(
      g.pick(["shield", "dns", "app", "pull"] as const),
      `/edge ${g.s()} <shield zone> ${g.s()}`,
      g.s(),
    ),
  "pickers.ts:pickerOptions": (g) => {
    const choices = g.list(
      () => ({ value: g.s(), label: g.s(), ...(g.bool() ? { group: g.s() } : {}) }),
      g.bool() ? 130 : 8,
    );
    return pickerOptions({ choices, total: choices.length + g.int(50) });
  },
  "pickers.ts:pickerNotice": (g) => pickerNotice(g.s()),
  "zones.ts:zoneStatusCard": (g) =>
    zoneStatusCard(
      { zone: zone(g), pullZoneName: g.maybe(() => g.s()), hostnames: g.list(() => g.s(), 4) },
      AS_OF,
    ),
  "zones.ts:zoneSearchMessage": (g) =>
    zoneSearchMessage(
      {
        text: g.s(),
        matches: g.list(
          () => ({
            zone: zone(g),
            pullZoneName: g.maybe(() => g.s()),
            hostnames: g.list(() => g.s(), 5),
          }),
          30,
        ),
        unshieldedMatches: g.list(
          () => ({
            pullZoneId: g.int(1e6),
            pullZoneName: g.maybe(() => g.s()),
            hostnames: g.list(() => g.s(), 4),
          }),
          12,
        ),
        totalZones: g.int(20_000),
        complete: g.bool(),
      },
      AS_OF,
    ),
  "zones.ts:unusualZoneLine": (g) =>
    section(
      unusualZoneLine({
        zoneId: g.int(1e6),
        state: "unusual",
        reading: { signal: "bot", count: g.int(1e9), mean: g.int(100), std: 1, z: 9, over: true },
        series: g.list(() => g.int(1e9), 30),
        watched: g.bool(),
      }),
    ),
  "zones.ts:zonesMessage": (g) => {
    const items = g.list(() => zone(g), 20);
    const named = items.map((z) => ({
      zone: z,
      pullZoneName: g.maybe(() => g.s()),
      hostnames: g.list(() => g.s(), 5),
    }));
    return zonesMessage(
      {
        items,
        page: 1 + g.int(5),
        perPage: 10,
        totalCount: g.int(100),
        totalPages: g.int(10),
        nextPage: g.maybe(() => g.int(10)),
        hasNext: g.bool(),
      },
      g.bool(),
      g.bool() ? named : null,
      AS_OF,
      g.bool() ? items.map((z) => ({ ...zoneCheck(g), zoneId: z.shieldZoneId })) : undefined,
    );
  },
  "zones.ts:slotWords": (g) => section(slotWords(signalReading(g))),
  "zones.ts:seriesText": (g) => section(seriesText(g.list(() => g.int(1e6), 30))),
  "status.ts:statusMessage": (g) => statusMessage(ranking(g)),
  "status.ts:rankedCountText": (g) => section(rankedCountText(ranking(g))),
  "status.ts:rankedZoneLine": (g) => {
    const c = zoneCheck(g);
    return section(
      c.state === "unknown"
        ? rankedZoneLine({ ...c, state: "usual", reading: signalReading(g), series: [] }, 1)
        : rankedZoneLine(c, 1 + g.int(25)),
    );
  },
};

function signalReading(g: Gen) {
  return {
    signal: g.pick(["ddos", "waf", "rateLimit", "bot"] as const),
    count: g.int(1e9),
    mean: g.int(100),
    std: 1,
    z: g.int(1e6) - 100,
    over: g.bool(),
  };
}

/** Any zone check: unusual (watched or not), usual, or unknown with a hostile reason. */
function zoneCheck(g: Gen): ZoneCheck {
  return g.pick<ZoneCheck>([
    {
      zoneId: g.int(1e6),
      state: "unusual",
      reading: signalReading(g),
      series: g.list(() => g.int(1e6), 30),
      watched: g.bool(),
    },
    { zoneId: g.int(1e6), state: "usual", reading: signalReading(g), series: g.list(() => g.int(1e6), 30) },
    { zoneId: g.int(1e6), state: "unknown", why: g.s() },
  ]);
}

function ranking(g: Gen): ZoneRanking {
  return {
    checks: g.list(() => zoneCheck(g), 25),
    totalCount: g.maybe(() => g.int(20_000)) ?? undefined,
    more: g.bool(),
    pending: g.int(25),
    at: AS_OF,
  };
}

/** Exports that are not text builders, and why. */
/** An impact preview of any state, its entry, rule, paths and reason hostile. */
function impactView(g: Gen): Parameters<typeof impactPreviewBlocks>[0] {
  const target = g.pick([
    {
      what: "entry" as const,
      shieldZoneId: 1,
      type: g.pick(["ip", "country", "asn"] as const),
      value: g.s(),
    },
    { what: "waf_rule" as const, shieldZoneId: 1, ruleId: g.s() },
    { what: "threats" as const, shieldZoneId: 1, feature: g.pick(["ddos", "waf"] as const) },
    { what: "bots" as const, shieldZoneId: 1, category: 1 + g.int(7) },
  ]);
  const matched = g.int(1000);
  return g.pick([
    { state: "estimating" as const },
    { state: "no_event_log" as const, target },
    { state: "unknown" as const, target, reason: g.s() },
    {
      state: "estimated" as const,
      target,
      from: 0,
      to: 3_600_000,
      matched,
      actions: { blocked: g.int(matched), challenged: g.int(10), logged: g.int(10) },
      zoneTotal: matched + g.int(1000),
      share: g.maybe(() => g.int(101) / 100),
      topPaths: g.list(() => ({ path: g.s(), count: g.int(100) }), 5),
      pathsPartial: g.bool(),
      largeShare: g.bool(),
    },
  ]);
}

const NOT_BUILDERS: Record<string, string> = {
  "mrkdwn.ts:Mrkdwn": "the safe-text type itself; it has no public constructor",
  "bots.ts:userCategories": "picks the categories botsMessage shows; returns Edge API data, not text",
};

const BLOCKS_DIR = fileURLToPath(new URL("../../../src/slack/blocks/", import.meta.url));
const RUNS = 150;

describe("one escaping boundary: hostile strings in every builder render as text", () => {
  it("every function exported by src/slack/blocks is fed hostile input here (a new builder must be added)", async () => {
    const exported: string[] = [];
    for (const file of readdirSync(BLOCKS_DIR).filter((f) => f.endsWith(".ts"))) {
      const mod = (await import(`${BLOCKS_DIR}${file}`)) as Record<string, unknown>;
      for (const [name, value] of Object.entries(mod))
        if (typeof value === "function") exported.push(`${file}:${name}`);
    }
    const unlisted = exported.filter((e) => !(e in BUILDERS) && !(e in NOT_BUILDERS));
    expect(unlisted, "add these exports to BUILDERS in test/slack/blocks/escaping.flow.test.ts").toEqual([]);
    expect(Object.keys(BUILDERS).filter((b) => !exported.includes(b))).toEqual([]);
  });

  for (const [name, build] of Object.entries(BUILDERS)) {
    it(`${name}: no <!…>, <@…>, <#…> or <http…> from the input survives (${RUNS} runs)`, () => {
      for (let run = 0; run < RUNS; run++) {
        const seed = run * 7919 + name.length;
        const output = build(new Gen(seed));
        const leaks = controlLeaks(output);
        expect(leaks, `${name} with seed ${seed}`).toEqual([]);
      }
    });
  }
});

describe("the Mrkdwn API", () => {
  it("no file but blocks/mrkdwn.ts writes a Slack text object", () => {
    const src = fileURLToPath(new URL("../../../src/", import.meta.url));
    const files = (readdirSync(src, { recursive: true }) as string[]).filter((f) => f.endsWith(".ts"));
    const writers = files.filter(
      (f) =>
        join(src, f) !== join(BLOCKS_DIR, "mrkdwn.ts") &&
        /type:\s*["'](mrkdwn|plain_text)["']/.test(readFileSync(join(src, f), "utf8")),
    );
    expect(writers).toEqual([]);
  });

  it("escapes strings, keeps deliberate markup, and cannot be made from a raw string", () => {
    const name = "<!here> & <https://evil.example|click>";
    const text = mrkdwn`*${name}* by ${mention("U0ALICE")} in ${channel("C0OPS")}, ${usergroup("S0LEADS")} <@x>`;
    expect(String(text)).toBe(
      "*&lt;!here&gt; &amp; &lt;https://evil.example|click&gt;* by <@U0ALICE> in <#C0OPS>, <!subteam^S0LEADS> &lt;@x&gt;",
    );
    expect(section(name).text?.text).toBe("&lt;!here&gt; &amp; &lt;https://evil.example|click&gt;");
    expect(header(name).text.text).toBe("&lt;!here&gt; &amp; &lt;https://evil.example|click&gt;");
    expect(reply(name, []).text).toBe("&lt;!here&gt; &amp; &lt;https://evil.example|click&gt;");
    // A string made from Mrkdwn is a string again: escaped, never trusted.
    expect(section(`${text}`).text?.text).toContain("&lt;@U0ALICE&gt;");
    expect(() => new (Mrkdwn as unknown as new (s: string) => Mrkdwn)("<!here>")).toThrow(TypeError);
    expect(() => mrkdwn(["<!here>"] as unknown as TemplateStringsArray)).toThrow(TypeError);
  });

  it("ids that are not ids, links that are not http(s), code with backquotes, dates that are not dates", () => {
    expect(String(mention("<!here>"))).toBe("@&lt;!here&gt;");
    expect(String(channel("C1|x>"))).toBe("#C1|x&gt;");
    expect(String(link("javascript:alert(1)", "<b>"))).toBe("&lt;b&gt;");
    expect(String(link("https://bunny.net/a|b?c=<d>&e", "docs & <more>"))).toBe(
      "<https://bunny.net/a%7Cb?c=%3Cd%3E&amp;e|docs &amp; &lt;more&gt;>",
    );
    expect(String(code("a`b<c>"))).toBe("`a'b&lt;c&gt;`");
    expect(String(dateToken("<!here>"))).toBe("&lt;!here&gt;");
    expect(String(dateToken("2026-11-20T10:00:00"))).toBe(
      "<!date^1795168800^{date_short_pretty} {time}|2026-11-20 10:00 UTC>",
    );
    expect(String(dateToken(null))).toBe("–");
  });

  it("shortening never cuts an escape or a token in two", () => {
    const amp = section("&".repeat(4000)).text!.text;
    expect(amp.length).toBeLessThanOrEqual(3000);
    expect(amp).toMatch(/^(&amp;)+…$/);
    const mentions = section(joinMrkdwn(Array.from({ length: 800 }, () => mention("U0ALICE")))).text!.text;
    expect(mentions).toMatch(/^(<@U0ALICE>)+…$/);
  });
});

describe("end to end: names from the Edge API reach Slack as text", () => {
  const HOSTILE = "<!here> <https://evil|click>";
  const SHOWN = "&lt;!here&gt; &lt;https://evil|click&gt;";
  const h = useHarness({}, { resetEach: false });

  async function edge(text: string) {
    const res = await h.command(text);
    expect(res.status).toBe(200);
    return (await h.slack.waitForResponse(res.responseId)).body as { text: string; blocks: unknown[] };
  }

  it("/edge apps: an application named, described and addressed `<!here> <https://evil|click>`", async () => {
    const target = h.sim.state.apps[0]!;
    Object.assign(target, { name: HOSTILE, description: `${HOSTILE} <@U0001>`, status: HOSTILE });
    target.displayEndpoint.address = HOSTILE;
    const body = await edge("apps");
    const json = JSON.stringify(body);
    expect(json).toContain(`*${SHOWN}*`);
    expect(json).toContain(`Unknown (${SHOWN})`);
    expect(json).toContain("&lt;@U0001&gt;");
    expect(json).not.toContain("<!here>");
    expect(json).not.toContain("<https://evil");
    expect(controlLeaks(body)).toEqual([]);
  });

  it("/edge zones: a zone whose learning-mode date is `<!here> <https://evil|click>`", async () => {
    const target = h.sim.state.shieldZones[0]!;
    Object.assign(target, { learningMode: true, learningModeUntil: HOSTILE });
    const body = await edge("zones");
    const json = JSON.stringify(body);
    expect(json).toContain(`learning until ${SHOWN}`);
    expect(json).not.toContain("<!here>");
    expect(json).not.toContain("<https://evil");
    expect(controlLeaks(body)).toEqual([]);
  });
});
