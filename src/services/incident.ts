import { waitingRequests } from "../changes/engine.js";
import { accessBlockKind, accessBlockParams } from "../changes/kinds/access-block.js";
import type { Clock } from "../clock.js";
import { withDeadline } from "../deadline.js";
import type { Deps } from "../deps.js";
import type { EdgeClient } from "../edge/client.js";
import { EdgeApiError, isEdgeApiError } from "../edge/errors.js";
import type { App } from "../edge/schemas/mc.js";
import {
  actedOnCount,
  type BotDetection,
  EVENT_LOG_RETENTION_MS,
  type EventGroup,
  isLastEventLogPage,
  METRICS_RESOLUTION,
  type MetricsResolution,
  type OverviewMetric,
  type ShieldDetailedMetrics,
  type ShieldMetricsOverview,
  type ShieldZone,
  seriesKeyTime,
  type TriggeredRule,
  unreadableMetricKeys,
  unreadableMetricsSentence,
  type ZoneRateLimitMetrics,
} from "../edge/schemas/shield.js";
import { toUserSentence, UserError, usage } from "../errors.js";
import { type AccessEntry, accessEntryOf } from "./access-entries.js";
import { type AccessAction, type EntryState, edgeopsEntries } from "./access-lists.js";
import { APPS_MAX_LIMIT } from "./apps.js";
import { edgeClientFor } from "./edge-access.js";
import { GROUPS_MAX_PAGES, readEventLogGroups } from "./event-log-groups.js";
import { rateLimitNames } from "./rate-limits.js";
import { zoneDirectory } from "./zone-lookup.js";

/**
 * The incident picture of one shield zone over a window: every section is gathered in parallel and
 * stands alone, as its data or the sentence saying why it is missing.
 */

// ---- windows --------------------------------------------------------------------------------------

export const INCIDENT_WINDOWS = ["15m", "1h", "6h", "24h", "72h"] as const;
export type IncidentWindow = (typeof INCIDENT_WINDOWS)[number];
export const DEFAULT_INCIDENT_WINDOW: IncidentWindow = "15m";
export const INCIDENT_EXAMPLE = "/edge incident 1234 1h";

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

const RESOLUTION_MS: Partial<Record<MetricsResolution, number>> = {
  [METRICS_RESOLUTION.twoMinutes]: 2 * MINUTE,
  [METRICS_RESOLUTION.tenMinutes]: 10 * MINUTE,
  [METRICS_RESOLUTION.hourly]: HOUR,
};

/**
 * Each window's metrics resolution and sparkline bucket. A bucket is a whole number of resolution
 * steps, so every point of the series falls in exactly one bucket; at most 37 buckets a line.
 */
const WINDOW_SPECS: Record<
  IncidentWindow,
  { lengthMs: number; resolution: MetricsResolution; bucketMs: number; words: string }
> = {
  "15m": {
    lengthMs: 15 * MINUTE,
    resolution: METRICS_RESOLUTION.twoMinutes,
    bucketMs: 2 * MINUTE,
    words: "15 minutes",
  },
  "1h": { lengthMs: HOUR, resolution: METRICS_RESOLUTION.twoMinutes, bucketMs: 2 * MINUTE, words: "hour" },
  "6h": {
    lengthMs: 6 * HOUR,
    resolution: METRICS_RESOLUTION.tenMinutes,
    bucketMs: 10 * MINUTE,
    words: "6 hours",
  },
  "24h": { lengthMs: 24 * HOUR, resolution: METRICS_RESOLUTION.hourly, bucketMs: HOUR, words: "24 hours" },
  "72h": {
    lengthMs: 72 * HOUR,
    resolution: METRICS_RESOLUTION.hourly,
    bucketMs: 2 * HOUR,
    words: "72 hours",
  },
};

/** Searches start a minute inside the event log's 72 hours, so a slow request is not refused. */
export const EVENT_LOG_MARGIN_MS = MINUTE;

/** Whether a word names one of the windows, in any case. */
export function isIncidentWindow(word: string): boolean {
  return (INCIDENT_WINDOWS as readonly string[]).includes(word.toLowerCase());
}

/** The window a user typed (default 15m), or a sentence listing the windows. */
export function parseIncidentWindow(
  word: string | undefined,
  /** The command's own default window and example (`/edge timeline` reads the same words). */
  command: { defaultWindow: IncidentWindow; example: string } = {
    defaultWindow: DEFAULT_INCIDENT_WINDOW,
    example: INCIDENT_EXAMPLE,
  },
): IncidentWindow {
  if (word === undefined) return command.defaultWindow;
  if (isIncidentWindow(word)) return word.toLowerCase() as IncidentWindow;
  const choices = INCIDENT_WINDOWS.map((w) => (w === command.defaultWindow ? `${w} (the default)` : w));
  throw usage(
    `"${word}" is not a window. Use ${choices.slice(0, -1).join(", ")} or ${choices.at(-1)} (the event log keeps 72 hours): ${command.example}`,
  );
}

export interface IncidentRange {
  window: IncidentWindow;
  /** "15 minutes", "hour", … for sentences ("the last hour"). */
  words: string;
  lengthMs: number;
  /** Unix ms; the window is [from, to). */
  from: number;
  to: number;
  /**
   * What the metrics cover: whole sparkline buckets (`buckets` × `bucketMs`, at least the window's length), ending
   * where the slot still in progress begins, so no line ends in a half-counted slot.
   */
  metricsFrom: number;
  metricsTo: number;
  /** The same number of whole buckets just before, for a like-for-like change. */
  previousFrom: number;
  previousTo: number;
  resolution: MetricsResolution;
  bucketMs: number;
  /** Sparkline buckets, from `metricsFrom` to `metricsTo`. */
  buckets: number;
  /**
   * What event-log searches cover: the metrics' whole slots (kept inside the log's retention), so the card's
   * offenders and its traffic count the same minutes; a log read to now would count an attack's first minutes
   * that the traffic leaves out.
   */
  eventLogFrom: number;
  eventLogTo: number;
}

export function incidentRange(window: IncidentWindow, to: number): IncidentRange {
  const spec = WINDOW_SPECS[window];
  const from = to - spec.lengthMs;
  // Buckets start on multiples of their length (as the API's points do): the one holding `to` is in progress.
  const buckets = Math.ceil(spec.lengthMs / spec.bucketMs);
  const metricsTo = Math.floor(to / spec.bucketMs) * spec.bucketMs;
  const metricsFrom = metricsTo - buckets * spec.bucketMs;
  return {
    window,
    words: spec.words,
    lengthMs: spec.lengthMs,
    from,
    to,
    metricsFrom,
    metricsTo,
    previousFrom: metricsFrom - buckets * spec.bucketMs,
    previousTo: metricsFrom,
    resolution: spec.resolution,
    bucketMs: spec.bucketMs,
    buckets,
    eventLogFrom: Math.max(metricsFrom, to - EVENT_LOG_RETENTION_MS + EVENT_LOG_MARGIN_MS),
    eventLogTo: metricsTo,
  };
}

/** The resolution step in ms (undefined for Auto and the calendar ones). */
export function resolutionMs(resolution: MetricsResolution): number | undefined {
  return RESOLUTION_MS[resolution];
}

/**
 * Sum timed values into the range's sparkline buckets: bucket i covers
 * [metricsFrom + i·bucketMs, metricsFrom + (i + 1)·bucketMs). Points outside (the slot in progress) are dropped.
 */
export function bucketSeries(
  points: readonly { at: number; value: number }[],
  range: IncidentRange,
): number[] {
  const out = new Array<number>(range.buckets).fill(0);
  const start = range.metricsFrom;
  for (const p of points) {
    if (p.at < start || p.at >= range.metricsTo) continue;
    const i = Math.floor((p.at - start) / range.bucketMs);
    out[i] = (out[i] ?? 0) + p.value;
  }
  return out;
}

export type Change =
  | { kind: "unknown" }
  | { kind: "same" }
  | { kind: "new" }
  | { kind: "up" | "down"; percent: number };

/** The change of a count against the previous window (unknown when that window could not be read). */
export function changeAgainst(current: number, previous: number | null): Change {
  if (previous === null) return { kind: "unknown" };
  if (current === previous) return { kind: "same" };
  if (previous === 0) return { kind: "new" };
  const percent = Math.round((Math.abs(current - previous) / previous) * 100);
  return { kind: current > previous ? "up" : "down", percent };
}

// ---- sections -------------------------------------------------------------------------------------

/** A section's data, or the sentence saying why it could not be read. */
export type Section<T> = { ok: T } | { error: string };

function settled<T>(r: PromiseSettledResult<T>): Section<T> {
  return r.status === "fulfilled" ? { ok: r.value } : { error: toUserSentence(r.reason) };
}

export interface ZoneSection {
  zone: ShieldZone;
  botDetection: Section<BotDetection>;
  /** The site's hostnames and its pull zone's name (empty / null when the zone list did not say). */
  hostnames: readonly string[];
  pullZoneName: string | null;
}

/** Whether any of bot detection's checks is switched on. */
export function botDetectionOn(d: BotDetection): boolean {
  return [d.requestIntegrity.sensitivity, d.ipAddress.sensitivity, d.browserFingerprint.sensitivity].some(
    (s) => s !== null && s > 0,
  );
}

export const TRAFFIC_METRICS = ["blocked", "challenged", "waf", "ddos", "rateLimit", "botDetection"] as const;
export type TrafficMetric = (typeof TRAFFIC_METRICS)[number];

/** What each traffic metric is called (the incident card, the timeline, the postmortem draft). */
export const TRAFFIC_METRIC_LABELS: Record<TrafficMetric, string> = {
  blocked: "Blocked",
  challenged: "Challenged",
  waf: "WAF",
  ddos: "DDoS",
  rateLimit: "Rate limits",
  botDetection: "Bot detection",
};

export interface TrafficRow {
  metric: TrafficMetric;
  count: number;
  previous: number | null;
  change: Change;
  /** One count per sparkline bucket. */
  series: number[];
}

export interface TrafficSection {
  rows: TrafficRow[];
  /** Why the previous window is missing (its change is then unknown). */
  previousError: string | null;
  /** Set when some of the series' times did not read as dates (their counts are left out). */
  unreadable?: string | null;
  /**
   * The month's billable requests (the detailed answer's `totalBillableRequestsThisMonth`; null when it did not
   * come: unknown) and, from the overview, the plan's clean-request limit.
   */
  requests: Section<{
    billableThisMonth: number | null;
    cleanLimit: number | null;
    today: ShieldMetricsOverview;
  }>;
}

function metricCount(m: OverviewMetric, match?: RegExp): number {
  if (m.totals !== null) return actedOnCount(m.totals, match);
  return m.points.reduce((n, p) => n + actedOnCount(p.values, match), 0);
}

function metricPoints(m: OverviewMetric, match?: RegExp): { at: number; value: number }[] {
  return m.points.map((p) => ({ at: p.at, value: actedOnCount(p.values, match) }));
}

const FEATURE_OF: Partial<Record<TrafficMetric, keyof ShieldDetailedMetrics["features"]>> = {
  waf: "waf",
  ddos: "ddos",
  rateLimit: "rateLimit",
  botDetection: "botDetection",
};
const ACTION_OF: Partial<Record<TrafficMetric, RegExp>> = { blocked: /block/i, challenged: /challeng/i };

function trafficCount(d: ShieldDetailedMetrics, metric: TrafficMetric): number {
  const feature = FEATURE_OF[metric];
  if (feature) return metricCount(d.features[feature]);
  return Object.values(d.features).reduce((n, m) => n + metricCount(m, ACTION_OF[metric]), 0);
}

function trafficPoints(d: ShieldDetailedMetrics, metric: TrafficMetric): { at: number; value: number }[] {
  const feature = FEATURE_OF[metric];
  if (feature) return metricPoints(d.features[feature]);
  return Object.values(d.features).flatMap((m) => metricPoints(m, ACTION_OF[metric]));
}

function unreadableTraffic(d: ShieldDetailedMetrics): string | null {
  const keys = unreadableMetricKeys(d);
  return keys.length === 0 ? null : unreadableMetricsSentence(keys, "the lines leave those times out");
}

/** The traffic rows: counts in the window, sparklines and the change against the previous window. */
export function trafficRows(
  current: ShieldDetailedMetrics,
  previous: ShieldDetailedMetrics | null,
  range: IncidentRange,
): TrafficRow[] {
  return TRAFFIC_METRICS.map((metric) => {
    const count = trafficCount(current, metric);
    const prev = previous ? trafficCount(previous, metric) : null;
    return {
      metric,
      count,
      previous: prev,
      change: changeAgainst(count, prev),
      series: bucketSeries(trafficPoints(current, metric), range),
    };
  });
}

export const OFFENDER_DIMENSIONS = ["ip", "asn", "country", "ja4"] as const;
export type OffenderDimension = (typeof OFFENDER_DIMENSIONS)[number];
export const CARD_TOP = 5;

export type OffenderAction = "blocked" | "challenged" | "logged";

export interface Offender {
  value: string;
  count: number;
  /** The action taken most often on this group's requests, if the API said. */
  action: OffenderAction | null;
  actions: Record<OffenderAction, number>;
  country: string | null;
  asn: string | null;
}

export interface OffenderTop {
  dimension: OffenderDimension;
  /** Distinct values in the window, as the API counts them; null when it did not say. */
  total: number | null;
  /** Busiest first. */
  offenders: Offender[];
  /** Set when not every group was read: the top is of this many groups. */
  readGroups?: number;
  /** Groups the API gave without a count, left out. */
  skippedGroups?: number;
}

export interface OffendersSection {
  byDimension: Record<OffenderDimension, Section<OffenderTop>>;
}

export function toOffender(group: EventGroup, dimension: OffenderDimension): Offender {
  const value = group.key[dimension] ?? Object.values(group.key)[0] ?? "";
  const { blocked, challenged, logged } = group.actions;
  const ranked = (
    [
      ["blocked", blocked],
      ["challenged", challenged],
      ["logged", logged],
    ] as const
  ).filter(([, n]) => n > 0);
  const top = ranked.reduce<readonly [OffenderAction, number] | undefined>(
    (best, x) => (best === undefined || x[1] > best[1] ? x : best),
    undefined,
  );
  return {
    value,
    count: group.count,
    action: top?.[0] ?? null,
    actions: { blocked, challenged, logged },
    country: group.country,
    asn: group.asn,
  };
}

/**
 * The access entry an offender is, if edgeops can block it. The event log's values are not enumerated in its
 * document: an ASN it writes as a bare number is still that AS (the group is of ASNs).
 */
export function offenderEntry(value: string, dimension: OffenderDimension): AccessEntry | undefined {
  return accessEntryOf(dimension === "asn" && /^\d+$/.test(value) ? `AS${value}` : value, dimension);
}

export const byCountDesc = <T extends { count: number }>(a: T, b: T) => b.count - a.count;

export interface RateLimitInWindow {
  rateLimitId: number;
  /** The rule's name, when the zone's rule list gave one. */
  name?: string;
  breaches: { total: number; blocked: number; challenged: number; logged: number };
  /** "days": the daily counters of the days the window touches; "overview": the rule's overall counters. */
  basis: "days" | "overview";
}

const DAY = 24 * HOUR;

/** Breaches of each rule in the window (the API counts by day), busiest first; rules without any left out. */
export function rateLimitsInWindow(
  metrics: readonly ZoneRateLimitMetrics[],
  range: Pick<IncidentRange, "from" | "to">,
  names: ReadonlyMap<number, string> = new Map(),
): RateLimitInWindow[] {
  const out: RateLimitInWindow[] = [];
  for (const m of metrics) {
    const dated = m.days.map((d) => ({ d, at: seriesKeyTime(d.day) })).filter((x) => !Number.isNaN(x.at));
    const sum = { total: 0, blocked: 0, challenged: 0, logged: 0 };
    let basis: RateLimitInWindow["basis"] = "days";
    if (dated.length > 0) {
      for (const { d, at } of dated) {
        if (at + DAY <= range.from || at >= range.to) continue;
        sum.total += d.totalBreaches;
        sum.blocked += d.blockedBreaches;
        sum.challenged += d.challengedBreaches;
        sum.logged += d.loggedBreaches;
      }
    } else if (m.overview) {
      basis = "overview";
      sum.total = m.overview.totalBreaches;
      sum.blocked = m.overview.blockedBreaches;
      sum.challenged = m.overview.challengedBreaches;
      sum.logged = m.overview.loggedBreaches;
    }
    const name = names.get(m.rateLimitId);
    if (sum.total > 0)
      out.push({ rateLimitId: m.rateLimitId, ...(name === undefined ? {} : { name }), breaches: sum, basis });
  }
  return out.sort((a, b) => b.breaches.total - a.breaches.total || a.rateLimitId - b.rateLimitId);
}

/** Triggered rules, busiest first. */
export function busiestRules(rules: readonly TriggeredRule[]): TriggeredRule[] {
  return [...rules].sort((a, b) => b.triggeredRequests - a.triggeredRequests);
}

export interface WafSection {
  total: number;
  /** Busiest first. */
  rules: TriggeredRule[];
}

export interface AppsSection {
  /** Failing first, then deploying. */
  apps: App[];
  read: number;
  /** False when more apps exist than were read. */
  complete: boolean;
}

/** API pages of 1000 apps read at most for the Apps section. */
export const APPS_MAX_PAGES = 5;
const TROUBLED_STATUSES = ["failing", "progressing"];

export async function troubledApps(client: EdgeClient): Promise<AppsSection> {
  const apps: App[] = [];
  let read = 0;
  let cursor: string | undefined;
  for (let i = 0; i < APPS_MAX_PAGES; i++) {
    const page = await client.listApps({ limit: APPS_MAX_LIMIT, ...(cursor ? { cursor } : {}) });
    read += page.items.length;
    apps.push(...page.items.filter((a) => TROUBLED_STATUSES.includes(a.status)));
    if (!page.nextCursor) return { apps: sortTroubled(apps), read, complete: true };
    cursor = page.nextCursor;
  }
  return { apps: sortTroubled(apps), read, complete: false };
}

function sortTroubled(apps: App[]): App[] {
  return apps.sort(
    (a, b) =>
      TROUBLED_STATUSES.indexOf(a.status) - TROUBLED_STATUSES.indexOf(b.status) ||
      a.name.localeCompare(b.name),
  );
}

// ---- the picture ----------------------------------------------------------------------------------

export interface IncidentPicture {
  zoneId: number;
  range: IncidentRange;
  zone: Section<ZoneSection>;
  traffic: Section<TrafficSection>;
  offenders: Section<OffendersSection>;
  waf: Section<WafSection>;
  /** `skipped`: rules the answer gave without an id, left out. */
  rateLimits: Section<{ rules: RateLimitInWindow[]; skipped: number }>;
  apps: Section<AppsSection>;
  /** What edgeops already blocks or challenges on the zone (`type:value`); empty when unknown. */
  mitigated: ReadonlyMap<string, AccessAction>;
  /**
   * Block, challenge or unblock requests waiting for approval on the zone in the channel the picture is
   * shown in (`type:value` → the state asked).
   */
  pendingAccess: ReadonlyMap<string, EntryState>;
}

/**
 * Event-log groups read for the card's top 5: the document promises no order, so the top is certain only
 * once every group is read; past CARD_SEARCH_MAX_PAGES pages it is the top of those read.
 */
export const CARD_SEARCH_MAX_PAGES = GROUPS_MAX_PAGES;

export async function offendersSearch(
  client: EdgeClient,
  zoneId: number,
  range: Pick<IncidentRange, "eventLogFrom" | "eventLogTo">,
  dimension: OffenderDimension,
): Promise<OffenderTop> {
  const read = await readEventLogGroups(client, zoneId, {
    from: range.eventLogFrom,
    to: range.eventLogTo,
    groupBy: [dimension],
  });
  const offenders = read.groups
    .map((g) => toOffender(g, dimension))
    .sort(byCountDesc)
    .slice(0, CARD_TOP);
  return {
    dimension,
    total: read.total,
    offenders,
    ...(read.readGroups === undefined ? {} : { readGroups: read.readGroups }),
    ...(read.skippedGroups > 0 ? { skippedGroups: read.skippedGroups } : {}),
  };
}

/**
 * `work`, or a timeout once `ms` pass: a section waiting on retries or a rate-limit pause must not hold
 * the whole card back. (The call itself finishes in its queue; its answer is dropped.)
 */
async function bounded<T>(clock: Clock, work: Promise<T>, ms: number, operation: string): Promise<T> {
  const settle = await withDeadline<() => T>(
    clock,
    work.then(
      (value) => () => value,
      (err: unknown) => () => {
        throw err;
      },
    ),
    ms,
    () => () => {
      throw new EdgeApiError({
        kind: "timeout",
        operation,
        message: `${operation}: no answer within ${ms} ms`,
      });
    },
  );
  return settle();
}

/** How long a section may take: three attempts' worth of the Edge API timeout. */
export const sectionDeadlineMs = (deps: Pick<Deps, "config">) => 3 * deps.config.edge.timeoutMs;

/**
 * Gather every section of the card at once through the workspace's key (and so its queue). A zone
 * the API does not know is one sentence for the whole answer; any other failure stays in its section.
 */
export async function gatherIncident(
  deps: Deps,
  teamId: string,
  zoneId: number,
  window: IncidentWindow,
  /**
   * The channel whose readers see the picture: only requests waiting there are marked, so a private
   * channel's request is not revealed elsewhere. null: none are looked up (a picture no one reads as a card).
   */
  pendingIn: string | null,
): Promise<IncidentPicture> {
  const client = await edgeClientFor(deps, teamId);
  const range = incidentRange(window, deps.clock.now());
  const ms = sectionDeadlineMs(deps);
  const detailed = (from: number, to: number) =>
    bounded(
      deps.clock,
      client.getMetricsOverviewDetailed(zoneId, { from, to, resolution: range.resolution }),
      ms,
      "getMetricsOverviewDetailed",
    );
  const offendersBy = (d: OffenderDimension) =>
    bounded(deps.clock, offendersSearch(client, zoneId, range, d), ms, "searchEventLogs");

  const sections = await Promise.allSettled([
    bounded(deps.clock, client.getShieldZone(zoneId), ms, "getShieldZone"),
    bounded(deps.clock, client.getBotDetection(zoneId), ms, "getBotDetection"),
    bounded(deps.clock, client.getMetricsOverview(zoneId), ms, "getMetricsOverview"),
    detailed(range.metricsFrom, range.metricsTo),
    detailed(range.previousFrom, range.previousTo),
    offendersBy("ip"),
    offendersBy("asn"),
    offendersBy("country"),
    offendersBy("ja4"),
    bounded(deps.clock, client.getTriggeredWafRules(zoneId), ms, "getTriggeredWafRules"),
    bounded(deps.clock, client.getRateLimits(zoneId), ms, "getRateLimits"),
    // The rules' names: without them the card still lists the rules by id.
    bounded(deps.clock, rateLimitNames(client, zoneId), ms, "listRateLimitRules"),
    bounded(deps.clock, troubledApps(client), ms, "listApps"),
    // The zone's domain and pull zone name, from the per-key directory (cached a minute).
    bounded(deps.clock, zoneDirectory(deps, teamId), ms, "listPullZones"),
    // What edgeops already blocks, so the card marks those offenders and offers Unblock.
    bounded(deps.clock, edgeopsEntries(client, zoneId), ms, "listCustomAccessLists"),
    // What someone already asked to block: marked, so the team approves that one instead of asking again.
    pendingIn === null
      ? new Map<string, EntryState>()
      : pendingAccessChanges(deps, teamId, zoneId, pendingIn),
  ] as const);
  for (const r of sections)
    if (r.status === "rejected") deps.logger.info({ err: r.reason, zoneId }, "incident section failed");
  const [
    zone,
    bots,
    overview,
    current,
    previous,
    ip,
    asn,
    country,
    ja4,
    waf,
    rateLimits,
    rateLimitNamed,
    apps,
    names,
    own,
    pending,
  ] = sections;
  const named =
    names.status === "fulfilled" ? names.value.zones.find((z) => z.zone.shieldZoneId === zoneId) : undefined;

  if (zone.status === "rejected" && isEdgeApiError(zone.reason) && zone.reason.kind === "not_found") {
    throw new UserError("not_found", toUserSentence(zone.reason), { cause: zone.reason });
  }

  const byDimension = { ip: settled(ip), asn: settled(asn), country: settled(country), ja4: settled(ja4) };
  const dims = Object.values(byDimension);
  const offenders: Section<OffendersSection> = dims.every((d) => "error" in d)
    ? (dims[0] as { error: string })
    : { ok: { byDimension } };

  const overviewSection = settled(overview);
  const traffic: Section<TrafficSection> =
    current.status === "rejected"
      ? settled(current)
      : {
          ok: {
            rows: trafficRows(current.value, previous.status === "fulfilled" ? previous.value : null, range),
            previousError: previous.status === "rejected" ? toUserSentence(previous.reason) : null,
            unreadable: unreadableTraffic(current.value),
            requests:
              "ok" in overviewSection
                ? {
                    ok: {
                      // Only the detailed answer's field names its period; the overview's gives none.
                      billableThisMonth: current.value.totalBillableRequestsThisMonth,
                      cleanLimit:
                        overviewSection.ok.totalCleanRequestsLimit ?? current.value.totalCleanRequestsLimit,
                      today: overviewSection.ok,
                    },
                  }
                : overviewSection,
          },
        };

  return {
    zoneId,
    range,
    zone:
      zone.status === "fulfilled"
        ? {
            ok: {
              zone: zone.value,
              botDetection: settled(bots),
              hostnames: named?.hostnames ?? [],
              pullZoneName: named?.pullZoneName ?? null,
            },
          }
        : settled(zone),
    traffic,
    offenders,
    waf:
      waf.status === "fulfilled"
        ? { ok: { total: waf.value.totalTriggeredRules, rules: busiestRules(waf.value.rules) } }
        : settled(waf),
    rateLimits:
      rateLimits.status === "fulfilled"
        ? {
            ok: {
              rules: rateLimitsInWindow(
                rateLimits.value.rules,
                range,
                rateLimitNamed.status === "fulfilled" ? rateLimitNamed.value : undefined,
              ),
              skipped: rateLimits.value.skipped,
            },
          }
        : settled(rateLimits),
    apps: settled(apps),
    mitigated: own.status === "fulfilled" ? own.value : new Map(),
    pendingAccess: pending.status === "fulfilled" ? pending.value : new Map(),
  };
}

async function pendingAccessChanges(
  deps: Deps,
  teamId: string,
  zoneId: number,
  channelId: string,
): Promise<Map<string, EntryState>> {
  const out = new Map<string, EntryState>();
  for (const r of await waitingRequests(deps, teamId, accessBlockKind.name)) {
    if (r.channelId !== channelId) continue;
    const p = accessBlockParams.safeParse(r.params);
    if (p.success && p.data.shieldZoneId === zoneId) out.set(`${p.data.type}:${p.data.value}`, p.data.state);
  }
  return out;
}

// ---- "see all": one section as a paged list -------------------------------------------------------

export const INCIDENT_LIST_SECTIONS = [...OFFENDER_DIMENSIONS, "waf", "ratelimits", "apps"] as const;
export type IncidentListSection = (typeof INCIDENT_LIST_SECTIONS)[number];
/** Lines on one page of a "see all" list. */
export const LIST_PAGE_SIZE = 50;

export interface IncidentListQuery {
  zoneId: number;
  window: IncidentWindow;
  /** The end of the card's window (Unix ms), so every page shows the same window. */
  to: number;
  section: IncidentListSection;
  /** 1-based. */
  page: number;
}

interface Paging {
  page: number;
  /** When `total` is unknown, at least this many (one more while pages come back full). */
  totalPages: number;
  /** null: the Edge API did not say. */
  total: number | null;
}

export type IncidentListPage = Paging &
  (
    | {
        kind: "offenders";
        dimension: OffenderDimension;
        offenders: Offender[];
        /** As on the card: what edgeops already blocks or challenges on the zone (empty when unknown). */
        mitigated: ReadonlyMap<string, AccessAction>;
        /** As on the card: access changes waiting for approval in the list's channel. */
        pendingAccess: ReadonlyMap<string, EntryState>;
      }
    | { kind: "waf"; rules: TriggeredRule[] }
    | { kind: "ratelimits"; rules: RateLimitInWindow[] }
    | { kind: "apps"; apps: App[]; complete: boolean }
  );

/** One page of `items` (1-based); a page past the end is the last page. */
export function pageOf<T>(items: readonly T[], page: number, size = LIST_PAGE_SIZE): Paging & { items: T[] } {
  const totalPages = Math.max(1, Math.ceil(items.length / size));
  const p = Math.min(Math.max(1, page), totalPages);
  return { page: p, totalPages, total: items.length, items: items.slice((p - 1) * size, p * size) };
}

/**
 * One page of a section's whole list. An offenders page is marked as the card's sections are (what edgeops
 * already blocks; what waits for approval in `pendingIn`, the channel it is shown in, as on the card).
 */
export async function listIncidentSection(
  deps: Deps,
  teamId: string,
  q: IncidentListQuery,
  pendingIn: string | null = null,
): Promise<IncidentListPage & { range: IncidentRange }> {
  const client = await edgeClientFor(deps, teamId);
  const range = incidentRange(q.window, q.to);
  switch (q.section) {
    case "waf": {
      const { rules } = await client.getTriggeredWafRules(q.zoneId);
      const { items, ...paging } = pageOf(busiestRules(rules), q.page);
      return { kind: "waf", rules: items, ...paging, range };
    }
    case "ratelimits": {
      const [metrics, names] = await Promise.all([
        client.getRateLimits(q.zoneId),
        rateLimitNames(client, q.zoneId).catch((err: unknown) => {
          deps.logger.info({ err, zoneId: q.zoneId }, "rate-limit names unavailable");
          return undefined;
        }),
      ]);
      const { items, ...paging } = pageOf(rateLimitsInWindow(metrics.rules, range, names), q.page);
      return { kind: "ratelimits", rules: items, ...paging, range };
    }
    case "apps": {
      const troubled = await troubledApps(client);
      const { items, ...paging } = pageOf(troubled.apps, q.page);
      return { kind: "apps", apps: items, complete: troubled.complete, ...paging, range };
    }
    default: {
      const dimension = q.section;
      const ms = sectionDeadlineMs(deps);
      const [r, own, pending] = await Promise.all([
        client.searchEventLogs(q.zoneId, {
          from: range.eventLogFrom,
          to: range.eventLogTo,
          groupBy: [dimension],
          page: q.page - 1,
          pageSize: LIST_PAGE_SIZE,
        }),
        // The marks fail alone: the list is still the list without them.
        bounded(deps.clock, edgeopsEntries(client, q.zoneId), ms, "listCustomAccessLists").catch(
          () => new Map<string, AccessAction>(),
        ),
        pendingIn === null
          ? new Map<string, EntryState>()
          : pendingAccessChanges(deps, teamId, q.zoneId, pendingIn).catch(
              () => new Map<string, EntryState>(),
            ),
      ]);
      const last = isLastEventLogPage(r, q.page - 1, LIST_PAGE_SIZE);
      const pages =
        r.totalPages ?? (r.total === null ? q.page + (last ? 0 : 1) : Math.ceil(r.total / LIST_PAGE_SIZE));
      return {
        kind: "offenders",
        dimension,
        offenders: r.groups.map((g) => toOffender(g, dimension)).sort(byCountDesc),
        mitigated: own,
        pendingAccess: pending,
        page: q.page,
        totalPages: Math.max(1, pages),
        total: r.total,
        range,
      };
    }
  }
}
