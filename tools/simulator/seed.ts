/**
 * Deterministic seed data for the Edge API simulator, written in the shapes of the provider's OpenAPI documents
 * (Magic Containers, Shield, Core). Structural facts (ids, statuses, plan types, scan states) never depend on the
 * PRNG seed so that `SIM_IDS` stays valid; the seed only varies "noise" (counters, TTLs, actions, names).
 */

import type { DateKeyFormat } from "./date-keys.js";
import type { RateLimitRule, ZoneTraffic } from "./traffic-model.js";
import type { ZoneEpoch } from "./zone-history.js";

// ---------------------------------------------------------------------------------------------------------------
// Shapes (subset of the spec's schemas that the simulator serves)

export interface McDisplayEndpoint {
  id: string;
  address: string;
  /** `cdn` | `anycast` | `publicIp` (older releases: capitalised). */
  type: string;
}

export interface McApp {
  id: string;
  name: string;
  description: string;
  displayEndpoint: McDisplayEndpoint;
  /** ApplicationStatus: unknown | active | progressing | inactive | failing | suspended (older: `Active`...). */
  status: string;
}

export interface WafEngineConfigVariable {
  name: string | null;
  valueEncoded: string | null;
}

export interface ShieldZone {
  shieldZoneId: number;
  pullZoneId: number | null;
  learningMode: boolean | null;
  learningModeUntil: string | null;
  wafEnabled: boolean | null;
  /** 0 Log, 1 Block */
  wafExecutionMode: number;
  wafDisabledRules: string[] | null;
  wafLogOnlyRules: string[] | null;
  wafCustomRuleOrder: number[] | null;
  wafRequestHeaderLoggingEnabled: boolean;
  requestBodyLoggingEnabled: boolean;
  wafRequestIgnoredHeaders: string[] | null;
  wafRealtimeThreatIntelligenceEnabled: boolean | null;
  wafProfileId: number | null;
  wafEngineConfig: WafEngineConfigVariable[] | null;
  /** 0 Block, 1 Log, 2 Ignore */
  wafRequestBodyLimitAction: number;
  wafResponseBodyLimitAction: number;
  rateLimitRulesLimit: number;
  customWafRulesLimit: number;
  /** 0 Basic, 1 Advanced, 2 Business, 3 Enterprise */
  planType: number;
  /** 0 Off, 1 Low, 2 Medium, 3 High, 4 Challenge */
  dDoSShieldSensitivity: number;
  /** 0 Log, 1 Block */
  dDoSExecutionMode: number;
  dDoSChallengeWindow: number | null;
  whitelabelResponsePages: boolean | null;
}

export interface BotDetectionState {
  shieldZoneId: number;
  requestIntegrity: { sensitivity: number };
  ipAddress: { sensitivity: number };
  browserFingerprint: { sensitivity: number; aggression: number; complexEnabled: boolean | null };
  /** 0 LogOnly, 1 Challenge */
  executionMode: number;
}

export interface BotDetails {
  botId: number;
  userAgentMatch: string | null;
  category: number;
  /** BotCategorizationAction: 0 None, 1 Block, 2 Allow, 3 Ignore */
  action: number;
  isVerifiable: boolean;
}

export interface BotCategoryGroup {
  /** 0 None, 1 SEO, 2 AIScraper, 3 AITool, 4 Tool, 5 Ads, 6 Preview, 7 Social, 255 System (read-only) */
  category: number;
  /** BotCategoryAction: 0 None, 1 Block, 2 Allow */
  categoryAction: number;
  bots: BotDetails[] | null;
}

export interface Breaches {
  totalBreaches: number;
  loggedBreaches: number;
  challengedBreaches: number;
  blockedBreaches: number;
}

export interface RateLimitMetrics {
  overview: Breaches;
  /** Keyed by UTC day `YYYY-MM-DD`; null for a rule with no history. */
  ratelimitOverviewPastTwentyEightDays: Record<string, Breaches> | null;
}

export interface ShieldGenericResponse {
  statusCode: number;
  success: boolean;
  message: string | null;
  errorKey: string | null;
}

export interface WafRecommendation {
  shieldZoneId: number;
  ruleId: string | null;
  success: boolean;
  recommendation: string | null;
  errorResponse: ShieldGenericResponse | null;
}

export interface DnsRecord {
  Name: string | null;
  /** 0 A, 1 AAAA, 2 CNAME, 3 TXT, 4 MX, 8 SRV, 9 CAA, 10 PTR, 12 NS, 13 SVCB, 14 HTTPS, 15 TLSA, 16 SOA */
  Type: number | null;
  Ttl: number | null;
  Value: string | null;
  Priority: number | null;
  Weight: number | null;
  Port: number | null;
  IsProxied: boolean;
}

export interface DnsScanJob {
  JobId: string;
  ZoneId: number | null;
  Domain: string | null;
  AccountId: string | null;
  /** 0 Pending, 1 InProgress, 2 Completed, 3 Failed */
  Status: number;
  CreatedAt: string;
  CompletedAt: string | null;
  Records: DnsRecord[] | null;
  Error: string | null;
}

/** A scan plus, while it runs, when and how it finishes (the transition happens lazily on read). */
export interface DnsScanEntry {
  job: DnsScanJob;
  finishesAt?: number;
  outcome?: { status: number; records: DnsRecord[] | null; error: string | null };
}

export interface DnsZone {
  id: number;
  domain: string;
  /** The records a scan of this zone discovers. */
  records: DnsRecord[];
  /** Scans of this zone end in Failed with this error text. */
  scanError?: string;
}

/** Core HostnameModel (certificate fields only when the caller asks with `includeCertificate`). */
export interface PullZoneHostname {
  Id: number;
  Value: string;
  ForceSSL: boolean;
  IsSystemHostname: boolean;
  IsManagedHostname: boolean;
  HasCertificate: boolean;
  Certificate: string | null;
  CertificateKey: string | null;
}

/** Core PullZoneModel: the fields the simulator serves (the real model has about 170). */
export interface PullZone {
  Id: number;
  Name: string;
  OriginUrl: string;
  Enabled: boolean;
  Suspended: boolean;
  Hostnames: PullZoneHostname[];
  StorageZoneId: number;
  /** 0 Premium, 1 Volume */
  Type: number;
  EnableLogging: boolean;
  MonthlyBandwidthUsed: number;
}

/** A custom access list with its configuration (the API shows both in GET …/access-lists). */
export interface SimAccessList {
  id: number;
  configurationId: number;
  name: string;
  description: string | null;
  /** AccessListType: 0 IP, 1 CIDR, 2 ASN, 3 Country, 4 Organization, 5 JA4. */
  type: number;
  content: string;
  isEnabled: boolean;
  /** AccessListAction: 0 None, 1 Allow, 2 Block, 3 Challenge, 4 Log, 5 Bypass. */
  action: number;
  lastModified: number;
}

export interface SimulatorState {
  /** The PRNG seed (the traffic model hashes it with zone and minute). */
  seed: number;
  apps: McApp[];
  shieldZones: ShieldZone[];
  /** Core pull zones: one behind each shield zone that has a pullZoneId, and a few without Shield. */
  pullZones: PullZone[];
  botDetection: Map<number, BotDetectionState>;
  botCategories: Map<number, BotCategoryGroup[]>;
  /** `${accessKey} ${zoneId}` → that key's own copy (SimulatorOptions.botCategoriesPerKey). */
  botCategoriesByKey: Map<string, BotCategoryGroup[]>;
  /** Zones whose plan lacks bot categorization (GET and PUT answer with errorKey `invalid_plan_type.*`). */
  botCategorizationUnavailable: Set<number>;
  /** Zones whose plan lacks the event log (search answers with errorKey `invalid_plan_type.event_logs`). */
  eventLogsUnavailable: Set<number>;
  /** HTTP status used for the "plan lacks feature" answer (the reference says 202 is seen; some tests use 403). */
  planFeatureErrorStatus: number;
  /** Per shield zone: the traffic model behind metrics, event logs, triggered WAF rules and rate-limit metrics. */
  shieldTraffic: Map<number, ZoneTraffic>;
  rateLimitMetrics: Map<number, RateLimitMetrics>;
  /** Keyed by `${shieldZoneId}/${ruleId}`. */
  wafRecommendations: Map<string, WafRecommendation>;
  dnsZones: Map<number, DnsZone>;
  /** Latest scan per DNS zone id. */
  dnsScans: Map<number, DnsScanEntry>;
  /** Scans triggered by a Domain that matches no zone, keyed by domain. */
  domainScans: Map<string, DnsScanEntry>;
  accountId: string;
  /** Restarts asked per application id, with when (mitigations). */
  appRestarts: Map<string, number[]>;
  /** Staged status timelines per application id, oldest step first (the fault plan, see plan.ts). */
  appStatusPlans: Map<string, Array<{ at: number; status: string }>>;
  /** Cache purges, in order (mitigations). */
  purges: SimPurge[];
  /** Custom access lists per shield zone (mitigations: /edge block). */
  accessLists: Map<number, SimAccessList[]>;
  /** The next custom list id (its configuration id is this + ACCESS_CONFIGURATION_OFFSET). */
  nextAccessListId: number;
  /**
   * How the Shield metrics maps write their date keys (see date-keys.ts); unset, the adversary chooses
   * ("iso" on the friendly simulator).
   */
  dateKeyFormat?: DateKeyFormat | undefined;
  /** Reviews of triggered WAF rules, in order (mitigations). */
  wafRuleReviews: SimWafRuleReview[];
  /**
   * Per shield zone: the configurations (settings, access lists) replaced by writes, oldest first, each with the
   * minute it ended (zone-history.ts). The traffic model reads minute m with the configuration in force at m.
   */
  configHistory: Map<number, ZoneEpoch[]>;
}

/** One POST /shield/waf/rules/review-triggered/{id}: action 0 Ignore, 1 LogOnly, 2 DisableRule. */
export interface SimWafRuleReview {
  shieldZoneId: number;
  ruleId: string;
  action: number;
  at: number;
}

export type SimPurge =
  | { kind: "pullZone"; pullZoneId: number; cacheTag: string | null; at: number }
  | { kind: "url"; url: string; at: number };

// ---------------------------------------------------------------------------------------------------------------
// Notable ids

/** Seeded data is anchored at this UTC day (the 28-day metrics end here; seeded scans are dated before it). */
export const SIM_ANCHOR_DATE = "2026-08-20";

const SHIELD_ZONE_BASE = 18_400;
const SHIELD_ZONE_COUNT = 27;
const APP_COUNT = 47;

export const SIM_IDS = {
  /** 47 apps: 3 pages at the default limit of 20. */
  appCount: APP_COUNT,
  /** App with an undocumented status value (`hibernating`) for unknown-enum handling. */
  appWithUnknownStatus: "mc-7q2vd0x1a9",
  /** Apps whose `status`/`displayEndpoint.type` use the older capitalised form (`Active`, `Cdn`). */
  appsWithCapitalisedStatus: ["mc-3k8rn2w5b7", "mc-5b1mt6y8c3", "mc-9f4hx0p2d6"],
  /** 27 shield zones: 3 pages at the default perPage of 10. */
  shieldZoneCount: SHIELD_ZONE_COUNT,
  firstShieldZone: SHIELD_ZONE_BASE + 1,
  /** Basic-plan zone without bot categorization (errorKey `invalid_plan_type.bot_categorization`). */
  zoneWithoutBotPlan: SHIELD_ZONE_BASE + 4,
  /** Another zone lacking bot categorization (Basic plan, learning mode on). */
  zoneWithoutBotPlan2: SHIELD_ZONE_BASE + 17,
  /** Zone whose `planType` is 9, an integer the spec's ShieldPlanType enum does not list. */
  zoneWithUnknownEnum: SHIELD_ZONE_BASE + 23,
  /** Enterprise zone with bot detection in Challenge mode, everything High. */
  zoneEnterprise: SHIELD_ZONE_BASE + 2,
  /**
   * Zone under attack: it started 12 minutes before the simulator started (its clock), ramps up over 15 minutes and
   * lasts 6 hours: DDoS, WAF (busiest rules 942100 and 941100, which have AI recommendations), rate-limit and bot
   * events from ~160 sources in 12 countries, plus its rate-limit rules `rateLimitRulesUnderAttack`.
   */
  zoneUnderAttack: SHIELD_ZONE_BASE + 1,
  /** Rate-limit rule ids of the zone under attack, busiest first. */
  rateLimitRulesUnderAttack: [7010, 7011, 7012, 7013, 7014] as const,
  /** Basic-plan zone: event-log search answers `invalid_plan_type.event_logs` (also zoneWithoutBotPlan2). */
  zoneWithoutEventLogs: SHIELD_ZONE_BASE + 4,
  /** A quiet zone: ordinary background noise only. */
  zoneQuiet: SHIELD_ZONE_BASE + 5,
  /** The domain of the zone under attack (a hostname of its pull zone). */
  domainUnderAttack: "shop.acme-example.com",
  /** Matches names and hostnames of several shield zones' pull zones: ambiguous. */
  ambiguousDomain: "acme",
  /** A pull zone that no shield zone protects. */
  pullZoneWithoutShield: 2_309_101,
  /** The pull zone behind the zone under attack (purges). */
  pullZoneUnderAttack: 2_310_037,
  /** A shield zone id that does not exist (404). */
  unknownShieldZone: 99_999,
  /**
   * Names behind the shield zones (GET /pullzone): the domain resolves to exactly one zone, "acme"
   * matches several (ambiguous), the unshielded domain belongs to a pull zone without a shield zone.
   */
  zoneByDomain: {
    domain: "shop.acme-example.com",
    pullZoneName: "acme-shop",
    shieldZoneId: SHIELD_ZONE_BASE + 1,
  },
  ambiguousName: "acme",
  unshieldedDomain: "staging.acme-example.com",
  /** Rate-limit rule ids that have 28 daily entries. */
  rateLimitIds: [7001, 7002, 7003] as const,
  /** Rate-limit rule with all-zero overview and `ratelimitOverviewPastTwentyEightDays: null`. */
  rateLimitNoHistory: 7004,
  /** AI recommendation whose text contains `<`, `>`, `&`, `*`, `_`, `` ` `` (Slack escaping). */
  waf: { zoneId: SHIELD_ZONE_BASE + 1, ruleId: "942100" },
  /** Second successful recommendation (plain text) on the same zone. */
  waf2: { zoneId: SHIELD_ZONE_BASE + 1, ruleId: "941100" },
  /** Recommendation that failed: success false, recommendation null, errorResponse set. */
  wafFailed: { zoneId: SHIELD_ZONE_BASE + 2, ruleId: "930120" },
  /** Succeeded but produced nothing: success true, recommendation null. */
  wafEmpty: { zoneId: SHIELD_ZONE_BASE + 3, ruleId: "920350" },
  /** DNS zone whose latest scan is Completed with ~30 records of every listed type. */
  dnsZoneCompleted: 51_001,
  /** DNS zone whose latest scan is Completed with 500+ records. */
  dnsZoneLarge: 51_002,
  /** DNS zone whose latest scan Failed (Error set, Records null); re-scans fail too. */
  dnsZoneFailedScan: 51_003,
  /** DNS zone whose latest scan is Pending (never finishes unless re-triggered). */
  dnsZonePendingScan: 51_004,
  /** DNS zone whose latest scan is InProgress (never finishes unless re-triggered). */
  dnsZoneInProgressScan: 51_005,
  /** DNS zone with no scan yet: GET returns 404 until one is triggered. */
  dnsZoneNoScan: 51_006,
  /** DNS zone whose completed scan has records with `Type: null` and an unlisted Type 11. */
  dnsZoneOddRecords: 51_007,
  /** A DNS zone id that does not exist (404). */
  unknownDnsZone: 59_999,
  /** The customer's own custom access list on the zone under attack (edgeops must never change it). */
  customerAccessList: {
    zoneId: SHIELD_ZONE_BASE + 1,
    listId: 8_101,
    configurationId: 9_101,
    name: "Office allowlist",
    content: "198.51.100.10\n203.0.113.7",
  },
} as const;

/** A custom list's configuration id is its list id plus this. */
export const ACCESS_CONFIGURATION_OFFSET = 1_000;

function seedAccessLists(now: number): Map<number, SimAccessList[]> {
  const c = SIM_IDS.customerAccessList;
  return new Map([
    [
      c.zoneId,
      [
        {
          id: c.listId,
          configurationId: c.configurationId,
          name: c.name,
          description: "Our offices, always let through",
          type: 0,
          content: c.content,
          isEnabled: true,
          action: 1,
          lastModified: now - 30 * 24 * 3_600_000,
        },
      ],
    ],
  ]);
}

// ---------------------------------------------------------------------------------------------------------------
// PRNG

export type Rng = () => number;

/** mulberry32: small, fast, deterministic. Returns a float in [0, 1). */
export function createRng(seed: number): Rng {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const int = (rng: Rng, min: number, max: number): number => min + Math.floor(rng() * (max - min + 1));
function pick<T>(rng: Rng, items: readonly T[]): T {
  const v = items[Math.floor(rng() * items.length)];
  if (v === undefined) throw new Error("pick from empty list");
  return v;
}
const ALNUM = "abcdefghijklmnopqrstuvwxyz0123456789";
const token = (rng: Rng, n: number): string =>
  Array.from({ length: n }, () => pick(rng, [...ALNUM])).join("");
const hex = (rng: Rng, n: number): string =>
  Array.from({ length: n }, () => Math.floor(rng() * 16).toString(16)).join("");
export const guid = (rng: Rng): string =>
  `${hex(rng, 8)}-${hex(rng, 4)}-4${hex(rng, 3)}-${pick(rng, ["8", "9", "a", "b"])}${hex(rng, 3)}-${hex(rng, 12)}`;

function dayKey(anchor: string, daysBack: number): string {
  const d = new Date(`${anchor}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() - daysBack);
  return d.toISOString().slice(0, 10);
}

// ---------------------------------------------------------------------------------------------------------------
// Magic Containers apps

/** Status cycle: every status appears within each page of 20; half the apps are active. */
const MC_STATUS_CYCLE = [
  "active",
  "progressing",
  "active",
  "inactive",
  "active",
  "failing",
  "active",
  "suspended",
  "active",
  "unknown",
] as const;
const APP_WORDS = [
  "checkout",
  "catalog",
  "auth",
  "search",
  "image-resizer",
  "webhooks",
  "ledger",
  "notifier",
  "geo-router",
  "pricing",
  "inventory",
  "recommender",
  "thumbnailer",
  "session",
  "feature-flags",
  "chat-relay",
];
const ENVS = ["prod", "staging", "canary", "eu", "us", "apac"];
const DESCRIPTIONS: Record<string, string> = {
  active: "Serving traffic normally.",
  progressing: "Rolling out a new image.",
  inactive: "Scaled to zero; no running pods.",
  failing: "Pods crash-looping after the last deploy.",
  suspended: "Suspended by the account owner.",
  unknown: "Status could not be determined.",
};

function seedApps(rng: Rng): McApp[] {
  const ids = createRng(0xa995); // ids never depend on the seed
  const apps: McApp[] = [];
  for (let i = 0; i < APP_COUNT; i++) {
    const base = APP_WORDS[i % APP_WORDS.length] ?? "app";
    const env = ENVS[Math.floor(i / APP_WORDS.length) % ENVS.length] ?? "prod";
    const name = `${base}-${env}`;
    const status = MC_STATUS_CYCLE[i % MC_STATUS_CYCLE.length] ?? "active";
    const type = pick(rng, ["cdn", "cdn", "anycast", "publicIp"] as const);
    const address =
      type === "cdn"
        ? `${name}-${token(rng, 4)}.b-cdn.net`
        : type === "anycast"
          ? `185.93.${int(rng, 1, 3)}.${int(rng, 2, 250)}`
          : `${int(rng, 45, 212)}.${int(rng, 0, 255)}.${int(rng, 0, 255)}.${int(rng, 2, 250)}`;
    apps.push({
      id: `mc-${token(ids, 10)}`,
      name,
      description: `${name}: ${DESCRIPTIONS[status] ?? ""}`,
      displayEndpoint: { id: `ep-${token(ids, 8)}`, address, type },
      status,
    });
  }
  // Fixed notable ids (overwrite a few generated ones so SIM_IDS can name them).
  const setId = (index: number, id: string) => {
    const app = apps[index];
    if (app) app.id = id;
  };
  SIM_IDS.appsWithCapitalisedStatus.forEach((id, n) => {
    const index = 2 + n * 20; // one per page, all "active" in the cycle
    setId(index, id);
    const app = apps[index];
    if (app) {
      app.status = "Active";
      app.displayEndpoint.type = app.displayEndpoint.type === "publicIp" ? "PublicIp" : "Cdn";
      if (app.displayEndpoint.type === "Cdn") app.displayEndpoint.address = `${app.name}.b-cdn.net`;
    }
  });
  setId(44, SIM_IDS.appWithUnknownStatus);
  const odd = apps[44];
  if (odd) {
    odd.status = "hibernating";
    odd.description = `${odd.name}: status value not in the spec's ApplicationStatus enum.`;
  }
  return apps;
}

// ---------------------------------------------------------------------------------------------------------------
// Shield

const WAF_RULES = ["913100", "920350", "920420", "930120", "931130", "932100", "941100", "942100", "949110"];
const IGNORED_HEADERS = ["cookie", "authorization", "x-api-key", "x-forwarded-for"];

function seedShieldZones(rng: Rng): ShieldZone[] {
  const zones: ShieldZone[] = [];
  for (let i = 1; i <= SHIELD_ZONE_COUNT; i++) {
    const id = SHIELD_ZONE_BASE + i;
    const planType = 1 + (i % 3); // Advanced, Business, Enterprise in turn; Basic only where SIM_IDS says
    const learning = i % 7 === 3;
    const wafEnabled = i % 5 !== 0;
    zones.push({
      shieldZoneId: id,
      pullZoneId: i % 9 === 8 ? null : 2_310_000 + i * 37,
      learningMode: learning,
      learningModeUntil: learning ? `${dayKey(SIM_ANCHOR_DATE, -i)}T12:00:00Z` : null,
      wafEnabled,
      wafExecutionMode: i % 3 === 0 ? 0 : 1,
      wafDisabledRules: i % 4 === 1 ? [pick(rng, WAF_RULES)] : [],
      // A set in the document (uniqueItems): the picked rule may already be 949110.
      wafLogOnlyRules: i % 6 === 2 ? [...new Set([pick(rng, WAF_RULES), "949110"])] : [],
      wafCustomRuleOrder: planType >= 2 ? [int(rng, 100, 999), int(rng, 1000, 1999)] : null,
      wafRequestHeaderLoggingEnabled: i % 2 === 0,
      requestBodyLoggingEnabled: i % 5 === 1,
      wafRequestIgnoredHeaders: i % 3 === 1 ? IGNORED_HEADERS.slice(0, 1 + (i % 4)) : [],
      wafRealtimeThreatIntelligenceEnabled: planType >= 1 ? rng() < 0.7 : false,
      wafProfileId: i % 8 === 5 ? null : 1 + (i % 3),
      wafEngineConfig:
        planType === 3
          ? [
              { name: "paranoia_level", valueEncoded: String(1 + (i % 4)) },
              { name: "inbound_anomaly_score_threshold", valueEncoded: "5" },
            ]
          : [],
      wafRequestBodyLimitAction: i % 3,
      wafResponseBodyLimitAction: (i + 1) % 3,
      rateLimitRulesLimit: [2, 10, 25, 100][planType] ?? 2,
      customWafRulesLimit: [0, 10, 50, 250][planType] ?? 0,
      planType,
      dDoSShieldSensitivity: i % 5,
      dDoSExecutionMode: i % 4 === 0 ? 0 : 1,
      dDoSChallengeWindow: i % 5 === 4 ? int(rng, 1, 6) * 300 : null,
      whitelabelResponsePages: planType >= 2,
    });
  }
  const byId = (id: number) => zones.find((z) => z.shieldZoneId === id);
  const enterprise = byId(SIM_IDS.zoneEnterprise);
  if (enterprise) enterprise.planType = 3;
  for (const id of [SIM_IDS.zoneWithoutBotPlan, SIM_IDS.zoneWithoutBotPlan2]) {
    const z = byId(id);
    if (z) z.planType = 0;
  }
  const unknown = byId(SIM_IDS.zoneWithUnknownEnum);
  if (unknown) unknown.planType = 9;
  return zones;
}

function seedBotDetection(rng: Rng, zones: ShieldZone[]): Map<number, BotDetectionState> {
  const out = new Map<number, BotDetectionState>();
  for (const z of zones) {
    const high = z.shieldZoneId === SIM_IDS.zoneEnterprise;
    out.set(z.shieldZoneId, {
      shieldZoneId: z.shieldZoneId,
      requestIntegrity: { sensitivity: high ? 3 : int(rng, 0, 3) },
      ipAddress: { sensitivity: high ? 3 : int(rng, 0, 3) },
      browserFingerprint: {
        sensitivity: high ? 3 : int(rng, 0, 3),
        aggression: high ? 3 : int(rng, 0, 4),
        complexEnabled: high ? true : rng() < 0.5 ? rng() < 0.5 : null,
      },
      executionMode: high ? 1 : int(rng, 0, 1),
    });
  }
  return out;
}

const KNOWN_BOTS: ReadonlyArray<{ category: number; ua: string; verifiable: boolean }> = [
  { category: 1, ua: "Googlebot", verifiable: true },
  { category: 1, ua: "bingbot", verifiable: true },
  { category: 1, ua: "YandexBot", verifiable: true },
  { category: 2, ua: "GPTBot", verifiable: true },
  { category: 2, ua: "CCBot", verifiable: false },
  { category: 2, ua: "Bytespider", verifiable: false },
  { category: 3, ua: "ChatGPT-User", verifiable: true },
  { category: 3, ua: "Perplexity-User", verifiable: false },
  { category: 4, ua: "curl", verifiable: false },
  { category: 4, ua: "python-requests", verifiable: false },
  { category: 5, ua: "AdsBot-Google", verifiable: true },
  { category: 6, ua: "Slackbot-LinkExpanding", verifiable: true },
  { category: 6, ua: "Discordbot", verifiable: false },
  { category: 7, ua: "facebookexternalhit", verifiable: true },
  { category: 7, ua: "Twitterbot", verifiable: true },
  { category: 255, ua: "BunnyHealthCheck", verifiable: true },
];

function seedBotCategories(rng: Rng, zones: ShieldZone[]): Map<number, BotCategoryGroup[]> {
  const out = new Map<number, BotCategoryGroup[]>();
  for (const z of zones) {
    const groups: BotCategoryGroup[] = [];
    for (const category of [0, 1, 2, 3, 4, 5, 6, 7, 255]) {
      const categoryAction = category === 255 ? 2 : category === 2 ? 1 : pick(rng, [0, 0, 1, 2]);
      const bots = KNOWN_BOTS.filter((b) => b.category === category).map((b, n) => ({
        botId: category * 100 + n + 1,
        userAgentMatch: b.ua,
        category,
        action: category === 255 ? 3 : 0,
        isVerifiable: b.verifiable,
      }));
      groups.push({ category, categoryAction, bots: category === 0 ? [] : bots });
    }
    out.set(z.shieldZoneId, groups);
  }
  return out;
}

function breaches(logged: number, challenged: number, blocked: number): Breaches {
  return {
    totalBreaches: logged + challenged + blocked,
    loggedBreaches: logged,
    challengedBreaches: challenged,
    blockedBreaches: blocked,
  };
}

function seedRateLimits(rng: Rng): Map<number, RateLimitMetrics> {
  const out = new Map<number, RateLimitMetrics>();
  const profiles = [
    { logged: 40, challenged: 5, blocked: 120 },
    { logged: 900, challenged: 0, blocked: 0 },
    { logged: 3, challenged: 260, blocked: 35 },
  ];
  SIM_IDS.rateLimitIds.forEach((id, n) => {
    const p = profiles[n] ?? { logged: 1, challenged: 1, blocked: 1 };
    const days: Record<string, Breaches> = {};
    const sum = breaches(0, 0, 0);
    for (let back = 27; back >= 0; back--) {
      const spike = back === 6 ? 5 : 1;
      const day = breaches(
        Math.floor(p.logged * rng() * spike),
        Math.floor(p.challenged * rng() * spike),
        Math.floor(p.blocked * rng() * spike),
      );
      days[dayKey(SIM_ANCHOR_DATE, back)] = day;
      sum.totalBreaches += day.totalBreaches;
      sum.loggedBreaches += day.loggedBreaches;
      sum.challengedBreaches += day.challengedBreaches;
      sum.blockedBreaches += day.blockedBreaches;
    }
    out.set(id, { overview: sum, ratelimitOverviewPastTwentyEightDays: days });
  });
  out.set(SIM_IDS.rateLimitNoHistory, {
    overview: breaches(0, 0, 0),
    ratelimitOverviewPastTwentyEightDays: null,
  });
  return out;
}

/**
 * The advice of the busiest rules' AI recommendations, by rule id; the simulator writes the facts before it
 * from the rule's own traffic (shield.ts), so the text never contradicts the triggered-rules numbers.
 */
const WAF_RULE_ADVICE: Readonly<Record<string, string>> = {
  // Slack escaping: `<`, `>`, `&`, `*`, `_` and backticks.
  "942100":
    "*Recommendation:* keep the rule enabled. If `q` legitimately carries operators such as " +
    "`a < b && c > d` (e.g. the _price filter_), add an exception for ARGS:q on /search only & review weekly.",
  "941100": "The traffic looks malicious; no change is recommended.",
};
const DEFAULT_WAF_ADVICE = "The traffic looks malicious; keep the rule enabled.";
export const wafRuleAdvice = (ruleId: string) => WAF_RULE_ADVICE[ruleId] ?? DEFAULT_WAF_ADVICE;

/** Recommendations the API failed to make or made empty; the others are written from the traffic. */
function seedWafRecommendations(): Map<string, WafRecommendation> {
  const out = new Map<string, WafRecommendation>();
  const put = (r: WafRecommendation) => out.set(`${r.shieldZoneId}/${r.ruleId}`, r);
  put({
    shieldZoneId: SIM_IDS.wafFailed.zoneId,
    ruleId: SIM_IDS.wafFailed.ruleId,
    success: false,
    recommendation: null,
    errorResponse: {
      statusCode: 500,
      success: false,
      message: "The AI recommendation could not be generated. Please try again later.",
      errorKey: "waf.ai_recommendation.failed",
    },
  });
  put({
    shieldZoneId: SIM_IDS.wafEmpty.zoneId,
    ruleId: SIM_IDS.wafEmpty.ruleId,
    success: true,
    recommendation: null,
    errorResponse: null,
  });
  return out;
}

/** The hostname events of a shield zone are served on: its pull zone's first custom hostname. */
export function zoneHost(state: SimulatorState, shieldZoneId: number): string {
  const pullZoneId = state.shieldZones.find((z) => z.shieldZoneId === shieldZoneId)?.pullZoneId;
  const pz = state.pullZones.find((p) => p.Id === pullZoneId);
  const hosts = pz?.Hostnames ?? [];
  return (
    hosts.find((h) => !h.IsSystemHostname)?.Value ?? hosts[0]?.Value ?? `shield-zone-${shieldZoneId}.invalid`
  );
}

const RATE_LIMIT_PATHS = ["/login", "/api/v1/search", "/cart/checkout", "/api/v1/products", "/"];
const RATE_LIMIT_ACTIONS = ["block", "challenge", "block", "log", "block"] as const;
/** The first name carries Slack's control characters, so every place that shows it must escape it. */
const RATE_LIMIT_NAMES = [
  "Login <burst> & retries",
  "Search API",
  "Checkout",
  "Product API",
  "Everything else",
];

/**
 * Traffic per zone. Structural facts (rules, the attack's timing and size) never depend on the seed. Zone i has
 * rate-limit rules 7000 + 10 i + k (k < i % 4; five on the zone under attack).
 */
function seedTraffic(zones: ShieldZone[], now: number): Map<number, ZoneTraffic> {
  const out = new Map<number, ZoneTraffic>();
  for (const z of zones) {
    const i = z.shieldZoneId - SHIELD_ZONE_BASE;
    const underAttack = z.shieldZoneId === SIM_IDS.zoneUnderAttack;
    const ruleCount = underAttack ? 5 : i % 4;
    const rateLimitRules: RateLimitRule[] = Array.from({ length: ruleCount }, (_, k) => ({
      id: 7000 + i * 10 + k,
      name: RATE_LIMIT_NAMES[k] ?? `Rule ${k + 1}`,
      action: RATE_LIMIT_ACTIONS[k] ?? "block",
      path: RATE_LIMIT_PATHS[k] ?? "/",
      weight: 1 / (k + 1),
      attackWeight: [0.5, 0.25, 0.15, 0.07, 0.03][k] ?? 0.01,
    }));
    out.set(z.shieldZoneId, {
      baselinePerMinute: underAttack ? 6 : 0.3 + (i % 5) * 0.4,
      requestsPerMinute: underAttack ? 4_000 : 200 + (i % 7) * 150,
      attacks: underAttack
        ? [{ startedAt: now - 12 * 60_000, rampMinutes: 15, durationMinutes: 6 * 60, peakPerMinute: 6_000 }]
        : [],
      rateLimitRules,
      extraSources: 0,
      extraTriggeredRules: 0,
    });
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------------
// Core: DNS

const rec = (
  Name: string,
  Type: number | null,
  Value: string,
  Ttl: number | null,
  extra: Partial<Pick<DnsRecord, "Priority" | "Weight" | "Port" | "IsProxied">> = {},
): DnsRecord => ({
  Name,
  Type,
  Ttl,
  Value,
  Priority: extra.Priority ?? null,
  Weight: extra.Weight ?? null,
  Port: extra.Port ?? null,
  IsProxied: extra.IsProxied ?? false,
});

function baseRecords(rng: Rng, domain: string): DnsRecord[] {
  const ip4 = () => `${int(rng, 23, 212)}.${int(rng, 0, 255)}.${int(rng, 0, 255)}.${int(rng, 1, 254)}`;
  const ttl = () => pick(rng, [60, 300, 300, 3600, 86400]);
  return [
    rec("@", 16, `ns1.bunny.net. hostmaster.${domain}. 2026081901 7200 3600 1209600 300`, 3600),
    rec("@", 12, "kiki.bunny.net", 86400),
    rec("@", 12, "coco.bunny.net", 86400),
    rec("@", 0, ip4(), ttl(), { IsProxied: true }),
    rec("@", 1, `2a02:6ea0:c${int(rng, 100, 999)}::${int(rng, 1, 99)}`, ttl(), { IsProxied: true }),
    rec("www", 2, `${domain.replace(/\./g, "-")}.b-cdn.net`, 300, { IsProxied: true }),
    rec("api", 0, ip4(), ttl()),
    rec("api", 1, `2001:db8:${int(rng, 1, 9)}::${int(rng, 1, 99)}`, ttl()),
    rec("static", 2, `static-${token(rng, 5)}.b-cdn.net`, 3600, { IsProxied: true }),
    rec("@", 4, `mx1.mail.${domain}`, 3600, { Priority: 10 }),
    rec("@", 4, `mx2.mail.${domain}`, 3600, { Priority: 20 }),
    rec("@", 3, "v=spf1 include:_spf.google.com ~all", 3600),
    rec("_dmarc", 3, `v=DMARC1; p=quarantine; rua=mailto:dmarc@${domain}`, 3600),
    rec("google._domainkey", 3, `v=DKIM1; k=rsa; p=MIIBIjANBg${token(rng, 40)}`, 3600),
    rec("@", 3, `google-site-verification=${token(rng, 32)}`, 300),
    rec("_sip._tcp", 8, `sip.${domain}`, 3600, { Priority: 10, Weight: 60, Port: 5060 }),
    rec("_xmpp-server._tcp", 8, `xmpp.${domain}`, 3600, { Priority: 5, Weight: 0, Port: 5269 }),
    rec("@", 9, '0 issue "letsencrypt.org"', 3600),
    rec("@", 9, `0 iodef "mailto:security@${domain}"`, 3600),
    rec("4.3.2.1.in-addr.arpa", 10, `host.${domain}`, 3600),
    rec("_dns", 13, '1 . alpn="dot"', 300),
    rec("@", 14, '1 . alpn="h3,h2" ipv4hint=185.93.1.10', 300),
    rec("_443._tcp.mail", 15, `3 1 1 ${hex(rng, 64)}`, 3600),
    rec("blog", 2, `${domain.replace(/\./g, "-")}-blog.ghost.io`, 300),
    rec("status", 2, "statuspage.example.net", 300),
    rec("vpn", 0, ip4(), 60),
    rec("mail", 0, ip4(), 3600),
    rec("autodiscover", 2, "autodiscover.outlook.com", 3600),
  ];
}

function largeRecords(rng: Rng, domain: string): DnsRecord[] {
  const records = baseRecords(rng, domain);
  for (let i = 1; records.length < 540; i++) {
    const host = `edge-${String(i).padStart(3, "0")}`;
    const kind = i % 5;
    if (kind === 0)
      records.push(rec(host, 1, `2a02:6ea0:${hex(rng, 4)}::${i}`, 300, { IsProxied: i % 2 === 0 }));
    else if (kind === 1) records.push(rec(host, 2, `${host}.${domain}.b-cdn.net`, 300, { IsProxied: true }));
    else if (kind === 2) records.push(rec(`_acme-challenge.${host}`, 3, token(rng, 43), 60));
    else records.push(rec(host, 0, `10.${int(rng, 0, 255)}.${int(rng, 0, 255)}.${i % 250}`, 3600));
  }
  return records;
}

function iso(day: string, time: string): string {
  return `${day}T${time}Z`;
}

function seedDns(
  rng: Rng,
  accountId: string,
): { zones: Map<number, DnsZone>; scans: Map<number, DnsScanEntry> } {
  const zones = new Map<number, DnsZone>();
  const scans = new Map<number, DnsScanEntry>();
  const jobIds = createRng(0xd45); // job ids never depend on the seed
  const add = (id: number, domain: string, records: DnsRecord[], scanError?: string) => {
    const z: DnsZone = { id, domain, records };
    if (scanError !== undefined) z.scanError = scanError;
    zones.set(id, z);
    return z;
  };
  const scan = (z: DnsZone, Status: number, daysBack: number): void => {
    const day = dayKey(SIM_ANCHOR_DATE, daysBack);
    const done = Status === 2 || Status === 3;
    scans.set(z.id, {
      job: {
        JobId: guid(jobIds),
        ZoneId: z.id,
        Domain: z.domain,
        AccountId: accountId,
        Status,
        CreatedAt: iso(day, "09:14:03.512"),
        CompletedAt: done ? iso(day, "09:14:41.097") : null,
        Records: Status === 2 ? z.records.map((r) => ({ ...r })) : null,
        Error: Status === 3 ? (z.scanError ?? "Scan failed") : null,
      },
    });
  };
  scan(add(SIM_IDS.dnsZoneCompleted, "shop-example.com", baseRecords(rng, "shop-example.com")), 2, 2);
  scan(add(SIM_IDS.dnsZoneLarge, "bigcorp-example.net", largeRecords(rng, "bigcorp-example.net")), 2, 1);
  scan(
    add(
      SIM_IDS.dnsZoneFailedScan,
      "broken-example.org",
      [],
      "Could not query authoritative nameservers for broken-example.org (SERVFAIL).",
    ),
    3,
    3,
  );
  scan(add(SIM_IDS.dnsZonePendingScan, "queued-example.io", baseRecords(rng, "queued-example.io")), 0, 0);
  scan(add(SIM_IDS.dnsZoneInProgressScan, "busy-example.dev", baseRecords(rng, "busy-example.dev")), 1, 0);
  add(SIM_IDS.dnsZoneNoScan, "fresh-example.app", baseRecords(rng, "fresh-example.app"));
  const odd = add(SIM_IDS.dnsZoneOddRecords, "odd-example.net", [
    rec("@", 0, "203.0.113.10", 300),
    rec("legacy", null, "unparsed record data", null),
    rec("@", 11, "0 wks-data", 3600),
    rec("txt-quoted", 3, 'v=test1; note="a <b> & *c*"', 300),
  ]);
  scan(odd, 2, 5);
  return { zones, scans };
}

// ---------------------------------------------------------------------------------------------------------------
// Core pull zones

/** Pull zone name and custom hostnames behind shield zone `SHIELD_ZONE_BASE + i` (i = index + 1). */
const PULL_ZONE_SITES: ReadonlyArray<readonly [string, readonly string[]]> = [
  ["acme-shop", ["shop.acme-example.com"]],
  ["acme-api", ["api.acme-example.com"]],
  ["acme-www", ["acme-example.com", "www.acme-example.com"]],
  ["northwind-blog", ["blog.northwind-example.org"]],
  ["northwind-assets", ["assets.northwind-example.org", "static.northwind-example.org"]],
  ["globex-media", ["media.globex-example.net"]],
  ["globex-portal", ["globex-example.net", "portal.globex-example.net"]],
  ["", []], // i = 8: no pull zone
  ["initech-app", ["app.initech-example.io"]],
  ["initech-docs", ["docs.initech-example.io"]],
  ["umbrella-store", ["umbrella-example.co.uk", "www.umbrella-example.co.uk"]],
  ["hooli-search", ["search.hooli-example.com"]],
  ["hooli-mail", ["mail.hooli-example.com"]],
  ["stark-downloads", ["downloads.stark-example.dev"]],
  ["wayne-news", ["news.wayne-example.com"]],
  ["wonka-tickets", ["tickets.wonka-example.shop"]],
  ["", []], // i = 17: no pull zone
  ["cyberdyne-status", ["status.cyberdyne-example.ai"]],
  ["tyrell-images", ["img.tyrell-example.com", "cdn.tyrell-example.com"]],
  ["soylent-recipes", ["recipes.soylent-example.com"]],
  ["vandelay-import", ["import.vandelay-example.com"]],
  ["piedpiper-web", ["piedpiper-example.com", "www.piedpiper-example.com", "compress.piedpiper-example.com"]],
  ["massive-dynamic", ["massivedynamic-example.org"]],
  ["oscorp-labs", ["labs.oscorp-example.com"]],
  ["aperture-test", ["test.aperture-example.com"]],
  ["", []], // i = 26: no pull zone
  ["blackmesa-research", ["research.blackmesa-example.org"]],
];

/** Pull zones without a shield zone (Shield is per pull zone and optional). */
const UNSHIELDED_SITES: ReadonlyArray<readonly [number, string, readonly string[]]> = [
  [2_309_101, "acme-staging", ["staging.acme-example.com"]],
  [2_309_102, "northwind-video", ["video.northwind-example.org"]],
  [2_309_103, "legacy-downloads", []],
];

function pullZone(id: number, name: string, custom: readonly string[]): PullZone {
  const hostname = (n: number, Value: string, system: boolean): PullZoneHostname => ({
    Id: id * 10 + n,
    Value,
    ForceSSL: !system,
    IsSystemHostname: system,
    IsManagedHostname: false,
    HasCertificate: true,
    Certificate: null,
    CertificateKey: null,
  });
  return {
    Id: id,
    Name: name,
    OriginUrl: `https://origin.${custom[0] ?? `${name}.internal`}`,
    Enabled: true,
    Suspended: false,
    Hostnames: [hostname(0, `${name}.b-cdn.net`, true), ...custom.map((v, n) => hostname(n + 1, v, false))],
    StorageZoneId: 0,
    Type: id % 2,
    EnableLogging: true,
    MonthlyBandwidthUsed: (id % 997) * 1_048_576,
  };
}

function seedPullZones(shieldZones: ShieldZone[]): PullZone[] {
  const out: PullZone[] = [];
  for (const z of shieldZones) {
    const site = PULL_ZONE_SITES[z.shieldZoneId - SHIELD_ZONE_BASE - 1];
    if (z.pullZoneId === null || site === undefined) continue;
    out.push(pullZone(z.pullZoneId, site[0], site[1]));
  }
  for (const [id, name, custom] of UNSHIELDED_SITES) out.push(pullZone(id, name, custom));
  return out.sort((a, b) => a.Id - b.Id);
}

// ---------------------------------------------------------------------------------------------------------------

/**
 * A fresh, fully independent copy of the seeded state. `now` (Unix ms, the simulator's clock at start) anchors the
 * attack in progress; everything else about traffic is computed relative to the clock at request time.
 */
export function createState(seed = 1, now = Date.now()): SimulatorState {
  const rng = createRng(seed);
  const accountId = "a1b2c3d4-0000-4000-8000-5eed00000001";
  const shieldZones = seedShieldZones(rng);
  const dns = seedDns(rng, accountId);
  const planless = shieldZones.filter((z) => z.planType === 0).map((z) => z.shieldZoneId);
  return {
    seed,
    apps: seedApps(rng),
    shieldZones,
    pullZones: seedPullZones(shieldZones),
    botDetection: seedBotDetection(rng, shieldZones),
    botCategories: seedBotCategories(rng, shieldZones),
    botCategoriesByKey: new Map(),
    botCategorizationUnavailable: new Set(planless),
    eventLogsUnavailable: new Set(planless),
    planFeatureErrorStatus: 202,
    shieldTraffic: seedTraffic(shieldZones, now),
    rateLimitMetrics: seedRateLimits(rng),
    wafRecommendations: seedWafRecommendations(),
    dnsZones: dns.zones,
    dnsScans: dns.scans,
    domainScans: new Map(),
    accountId,
    appRestarts: new Map(),
    appStatusPlans: new Map(),
    purges: [],
    wafRuleReviews: [],
    accessLists: seedAccessLists(now),
    nextAccessListId: SIM_IDS.customerAccessList.listId + 1,
    configHistory: new Map(),
  };
}

export { baseRecords as recordsForDomain };
