import { withDeadline } from "../deadline.js";
import type { Deps } from "../deps.js";
import { EdgeApiError } from "../edge/errors.js";
import {
  type EventGroup,
  type EventLogsSearch,
  type EventLogsSearchResult,
  isLastEventLogPage,
} from "../edge/schemas/shield.js";
import { toUserSentence } from "../errors.js";
import { ACCESS_ENTRY_TYPES, type AccessEntryType } from "./access-entries.js";
import { edgeAccessFor } from "./edge-access.js";

/**
 * What a mitigation would have touched, read from the zone's event log of the last hour before anyone
 * confirms or approves it. The event log holds security events only (clean requests are not in it), so
 * every number here is "of the logged events"; the builder says so.
 */

export const PREVIEW_WINDOW_MS = 3_600_000;
/**
 * A country or ASN carrying at least this share of the zone's logged events gets a plain warning: a
 * tenth of everything the zone logged is far more than one attacker's part of a country.
 */
export const LARGE_SHARE = 0.1;
export const TOP_PATHS = 5;
/** One page of url groups: the document promises no order, so past one page the top is of those read. */
const URL_PAGE_SIZE = 500;

/** The entry, rule or feature whose events a change would touch. */
export type ImpactTarget =
  | { what: "entry"; shieldZoneId: number; type: AccessEntryType; value: string }
  | { what: "waf_rule"; shieldZoneId: number; ruleId: string }
  | { what: "threats"; shieldZoneId: number; feature: "ddos" | "waf" }
  | { what: "bots"; shieldZoneId: number; category: number };

export interface ActionCounts {
  blocked: number;
  challenged: number;
  logged: number;
}

export type ImpactPreview =
  | {
      state: "estimated";
      target: ImpactTarget;
      from: number;
      to: number;
      /** Logged events the target matches in the window. */
      matched: number;
      actions: ActionCounts;
      /** All of the zone's logged events in the window. */
      zoneTotal: number;
      /** matched / zoneTotal, or null when the zone logged nothing. */
      share: number | null;
      topPaths: { path: string; count: number }[];
      /** More url groups than one page: the top paths are the top of those read. */
      pathsPartial: boolean;
      /** A country or ASN with a share of at least LARGE_SHARE: blocking it blocks everyone there. */
      largeShare: boolean;
    }
  | { state: "no_event_log"; target: ImpactTarget }
  | { state: "unknown"; target: ImpactTarget; reason: string };

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);
const zoneOf = (p: Record<string, unknown>) =>
  typeof p.shieldZoneId === "number" && Number.isSafeInteger(p.shieldZoneId) ? p.shieldZoneId : undefined;

/**
 * The target of a change (by its kind's stored name and parameters) that the event log can speak
 * to: blocks and challenges (and their lifting), a WAF rule review, DDoS sensitivity, WAF mode, a bot
 * category. Undefined for every other change (purge, restart, learning mode, the policy).
 */
export function impactTargetOf(change: { kind: string; params: unknown }): ImpactTarget | undefined {
  const p = change.params;
  if (!isRecord(p)) return undefined;
  const shieldZoneId = zoneOf(p);
  if (shieldZoneId === undefined) return undefined;
  switch (change.kind) {
    case "access_block":
      return typeof p.value === "string" && (ACCESS_ENTRY_TYPES as readonly unknown[]).includes(p.type)
        ? { what: "entry", shieldZoneId, type: p.type as AccessEntryType, value: p.value }
        : undefined;
    case "waf_rule_review":
      return typeof p.ruleId === "string" ? { what: "waf_rule", shieldZoneId, ruleId: p.ruleId } : undefined;
    case "ddos_sensitivity":
      return { what: "threats", shieldZoneId, feature: "ddos" };
    case "waf_mode":
      return { what: "threats", shieldZoneId, feature: "waf" };
    case "bot_category":
      return typeof p.category === "number"
        ? { what: "bots", shieldZoneId, category: p.category }
        : undefined;
    default:
      return undefined;
  }
}

type Filters = NonNullable<EventLogsSearch["filters"]>;

/** The event-log filters that select the target's events (per the OpenAPI's EventLogFilter). */
export function filtersFor(t: ImpactTarget): Filters {
  switch (t.what) {
    case "entry":
      switch (t.type) {
        case "ip":
          return [{ field: "ip", op: "eq", value: [t.value] }];
        case "cidr":
          return [{ field: "ip", op: "cidr", value: [t.value] }];
        case "asn":
          return [{ field: "asn", op: "eq", value: [t.value] }];
        case "country":
          return [{ field: "country", op: "eq", value: [t.value] }];
        case "ja4":
          return [{ field: "ja4", op: "eq", value: [t.value] }];
      }
      break;
    case "waf_rule":
      return [{ field: "ruleId", op: "eq", value: [t.ruleId] }];
    case "threats":
      return [{ field: "feature", op: "eq", value: [t.feature] }];
    case "bots":
      // The event log does not name a bot category: every bot-detection event is the closest it says.
      return [{ field: "feature", op: "eq", value: ["botDetection"] }];
  }
}

/** The three searches a preview needs, all for the same window. */
export function previewSearches(t: ImpactTarget, from: number, to: number) {
  const filters = filtersFor(t);
  return {
    matchedByAction: { from, to, filters, groupBy: ["action"], pageSize: 10 } satisfies EventLogsSearch,
    matchedByPath: { from, to, filters, groupBy: ["url"], pageSize: URL_PAGE_SIZE } satisfies EventLogsSearch,
    zoneByAction: { from, to, groupBy: ["action"], pageSize: 10 } satisfies EventLogsSearch,
  };
}

const ACTION_KEYS: Record<string, keyof ActionCounts> = {
  block: "blocked",
  challenge: "challenged",
  log: "logged",
};

function byAction(groups: readonly EventGroup[]): { total: number; actions: ActionCounts } {
  const actions: ActionCounts = { blocked: 0, challenged: 0, logged: 0 };
  let total = 0;
  for (const g of groups) {
    total += g.count;
    const key = ACTION_KEYS[(g.key.action ?? "").toLowerCase()];
    if (key) actions[key] += g.count;
  }
  return { total, actions };
}

/** Pure: the preview from the three searches' answers. */
export function summarisePreview(
  target: ImpactTarget,
  window: { from: number; to: number },
  answers: {
    matchedByAction: EventLogsSearchResult;
    matchedByPath: EventLogsSearchResult;
    zoneByAction: EventLogsSearchResult;
  },
): ImpactPreview {
  const matched = byAction(answers.matchedByAction.groups);
  const zoneTotal = byAction(answers.zoneByAction.groups).total;
  const share = zoneTotal > 0 ? Math.min(1, matched.total / zoneTotal) : null;
  const topPaths = answers.matchedByPath.groups
    .map((g) => ({ path: g.key.url ?? "", count: g.count }))
    .sort((a, b) => b.count - a.count || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
    .slice(0, TOP_PATHS);
  const broad = target.what === "entry" && (target.type === "country" || target.type === "asn");
  return {
    state: "estimated",
    target,
    ...window,
    matched: matched.total,
    actions: matched.actions,
    zoneTotal,
    share,
    topPaths,
    pathsPartial: !isLastEventLogPage(answers.matchedByPath, 0, URL_PAGE_SIZE),
    largeShare: broad && share !== null && share >= LARGE_SHARE,
  };
}

/**
 * Read the preview through the workspace's key (and so its queue), within `deadlineMs`. Never throws:
 * a plan without the event log and any failure or lateness are states of their own, never a number.
 */
export async function estimateImpact(
  deps: Deps,
  teamId: string,
  target: ImpactTarget,
  deadlineMs: number = deps.config.edge.timeoutMs,
): Promise<ImpactPreview> {
  const to = deps.clock.now();
  const from = to - PREVIEW_WINDOW_MS;
  const work = (async (): Promise<ImpactPreview> => {
    // Behind the key's commands: an estimate must never hold up the change it describes (or any command).
    const { client } = await edgeAccessFor(deps, teamId, { background: true });
    const q = previewSearches(target, from, to);
    const [matchedByAction, matchedByPath, zoneByAction] = await Promise.all([
      client.searchEventLogs(target.shieldZoneId, q.matchedByAction),
      client.searchEventLogs(target.shieldZoneId, q.matchedByPath),
      client.searchEventLogs(target.shieldZoneId, q.zoneByAction),
    ]);
    return summarisePreview(target, { from, to }, { matchedByAction, matchedByPath, zoneByAction });
  })().catch((err: unknown): ImpactPreview => {
    if (err instanceof EdgeApiError && err.kind === "plan_not_eligible")
      return { state: "no_event_log", target };
    deps.logger.warn({ err, shieldZoneId: target.shieldZoneId }, "impact preview failed");
    return { state: "unknown", target, reason: toUserSentence(err) };
  });
  return withDeadline(deps.clock, work, deadlineMs, () => ({
    state: "unknown",
    target,
    reason: `The event log did not answer within ${Math.round(deadlineMs / 100) / 10} s.`,
  }));
}
