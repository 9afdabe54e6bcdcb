import { withDeadline } from "../deadline.js";
import type { Deps } from "../deps.js";
import type { EdgeClient } from "../edge/client.js";
import { EdgeApiError } from "../edge/errors.js";
import {
  ddosSensitivityLabel,
  type EventGroup,
  type EventLogsSearch,
  wafExecutionModeLabel,
} from "../edge/schemas/shield.js";
import { toUserSentence } from "../errors.js";
import { ACCESS_ENTRY_TYPES, type AccessEntryType, ENTRY_TYPE_WORDS } from "./access-entries.js";
import { edgeAccessFor } from "./edge-access.js";
import { type GroupsRead, readEventLogGroups } from "./event-log-groups.js";

/**
 * What a mitigation would have touched, read from the zone's event log of the last hour before anyone
 * confirms or approves it. The event log holds security events only (clean requests are not in it), so
 * every number here is "of the logged events"; the builder says so.
 *
 * The search document enumerates no dimension's values (how it writes a feature, an action or an ASN) and
 * does not say whether `eq` minds case. So a feature is found among the zone's own feature groups, an entry is
 * asked for in every way of writing it, the actions come from each group's documented per-action counts,
 * and "nothing matched" is said only when the log writes that dimension in a form the question covers;
 * otherwise the preview says the target could not be matched, never 0.
 */

export const PREVIEW_WINDOW_MS = 3_600_000;
/**
 * A country or ASN carrying at least this share of the zone's logged events gets a plain warning: a
 * tenth of everything the zone logged is far more than one attacker's part of a country.
 */
export const LARGE_SHARE = 0.1;
export const TOP_PATHS = 5;
/** Groups of the entry's dimension read to learn how the event log writes it. */
const FORM_SAMPLE = 50;

/** The entry, rule or feature whose events a change would touch. */
export type ImpactTarget =
  | { what: "entry"; shieldZoneId: number; type: AccessEntryType; value: string }
  | { what: "waf_rule"; shieldZoneId: number; ruleId: string }
  | { what: "threats"; shieldZoneId: number; feature: "ddos" | "waf"; setting?: SettingMove }
  | { what: "bots"; shieldZoneId: number; category: number };

/**
 * A setting's move (DDoS sensitivity, WAF mode): the event log holds what the current level handled, not what
 * the new one would, so the preview is titled for the former and says the difference cannot be estimated.
 */
export interface SettingMove {
  /** The level in force when asked ("Low"), or null when edgeops could not read it. */
  from: string | null;
  to: string;
  direction: "stricter" | "looser" | "unknown";
}

/** DDoS sensitivity (Off → Challenge) and WAF mode (Log → Block) are ordered from the least to the most acting. */
function settingMove(p: Record<string, unknown>, label: (v: number) => string): SettingMove | undefined {
  if (typeof p.value !== "number") return undefined;
  const seen = typeof p.seen === "number" ? p.seen : null;
  return {
    from: seen === null ? null : label(seen),
    to: label(p.value),
    direction: seen === null || seen === p.value ? "unknown" : p.value > seen ? "stricter" : "looser",
  };
}

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
      /** From the groups' per-action counts; null when they do not account for every event. */
      actions: ActionCounts | null;
      /** Set when not every matching group was read: `matched` and `actions` are of this many groups. */
      matchedOfGroups?: number;
      /** All of the zone's logged events in the window. */
      zoneTotal: number;
      /** matched / zoneTotal, or null when the zone logged nothing (or not every feature group was read). */
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
    case "waf_mode": {
      const feature = change.kind === "waf_mode" ? "waf" : "ddos";
      const setting = settingMove(p, feature === "waf" ? wafExecutionModeLabel : ddosSensitivityLabel);
      return { what: "threats", shieldZoneId, feature, ...(setting ? { setting } : {}) };
    }
    case "bot_category":
      return typeof p.category === "number"
        ? { what: "bots", shieldZoneId, category: p.category }
        : undefined;
    default:
      return undefined;
  }
}

type Filter = NonNullable<EventLogsSearch["filters"]>[number];

/** The features as the Shield documents name them (the metrics overview's keys). */
const KNOWN_FEATURES = [
  "waf",
  "ddos",
  "rateLimit",
  "accessLists",
  "botDetection",
  "uploadScanning",
  "apiGuardian",
];
/** A name without case or separators: "botDetection", "BOT_DETECTION" and "bot-detection" are one. */
const loose = (s: string) => s.toLowerCase().replace(/[^a-z0-9]/g, "");
const uniq = (values: string[]) => [...new Set(values)];

const featureOf = (t: Extract<ImpactTarget, { what: "threats" | "bots" }>) =>
  t.what === "bots" ? "botDetection" : t.feature;
const FEATURE_WORDS: Record<string, string> = {
  waf: "WAF events",
  ddos: "DDoS events",
  botDetection: "Bot-detection events",
};

/** How the event log is asked for an entry's or a rule's events. */
export interface ValueQuery {
  filter: Filter;
  /** The dimension whose written form decides whether no match means nothing (none for IPs and rules). */
  dimension?: "asn" | "country" | "ja4";
  /** The forms of `dimension` that `filter` covers. */
  form?: RegExp;
}

/**
 * An IP or a range is compared as an address (`cidr`); an ASN, a country or a fingerprint is asked for in
 * every way of writing it (`in`), whichever case `eq` minds.
 */
export function valueQuery(t: Extract<ImpactTarget, { what: "entry" | "waf_rule" }>): ValueQuery {
  if (t.what === "waf_rule") return { filter: { field: "ruleId", op: "eq", value: [t.ruleId] } };
  const v = t.value;
  switch (t.type) {
    case "ip":
      return { filter: { field: "ip", op: "cidr", value: [`${v}/${v.includes(":") ? 128 : 32}`] } };
    case "cidr":
      return { filter: { field: "ip", op: "cidr", value: [v] } };
    case "asn": {
      const n = v.replace(/^as/i, "");
      return {
        filter: { field: "asn", op: "in", value: uniq([`AS${n}`, n, `as${n}`, `As${n}`]) },
        dimension: "asn",
        form: /^(as)?\d+$/i,
      };
    }
    case "country":
      return {
        filter: { field: "country", op: "in", value: uniq([v.toUpperCase(), v.toLowerCase()]) },
        dimension: "country",
        form: /^[a-z]{2}$/i,
      };
    case "ja4":
      return {
        filter: { field: "ja4", op: "in", value: uniq([v, v.toLowerCase(), v.toUpperCase()]) },
        dimension: "ja4",
        form: /^[a-z0-9]{10}_[0-9a-f]{12}_[0-9a-f]{12}$/i,
      };
  }
}

/** What the event log says of the target: its groups (none: confirmed nothing), or why it cannot say. */
export type Match =
  | { kind: "found"; groups: EventGroup[]; ofGroups?: number; filter: Filter }
  | { kind: "unmatched"; reason: string };

const quoted = (values: readonly string[]) => {
  const shown = values.slice(0, 3).map((v) => `"${v.slice(0, 40)}"`);
  return `${shown.join(", ")}${values.length > 3 ? ` and ${values.length - 3} more` : ""}`;
};

/** The target feature among the zone's feature groups, however the log writes it. */
export function matchFeature(
  t: Extract<ImpactTarget, { what: "threats" | "bots" }>,
  zone: GroupsRead,
): Match {
  const wanted = loose(featureOf(t));
  const hits = zone.groups.filter((g) => loose(g.key.feature ?? "") === wanted);
  const names = uniq(zone.groups.map((g) => g.key.feature ?? ""));
  if (
    hits.length > 0 ||
    (zone.readGroups === undefined && names.every((n) => KNOWN_FEATURES.some((k) => loose(k) === loose(n))))
  ) {
    const spelled = uniq(hits.map((g) => g.key.feature ?? ""));
    return {
      kind: "found",
      groups: hits,
      filter: { field: "feature", op: spelled.length === 1 ? "eq" : "in", value: spelled },
    };
  }
  return {
    kind: "unmatched",
    reason: `${FEATURE_WORDS[featureOf(t)] ?? "These events"} could not be matched in the event log: it names its features ${quoted(names)}, which edgeops does not know.`,
  };
}

/** The entry's or rule's events; none found means nothing only when the log writes the dimension as asked. */
export function matchValue(
  t: Extract<ImpactTarget, { what: "entry" | "waf_rule" }>,
  q: ValueQuery,
  matched: GroupsRead,
  sample: readonly EventGroup[] | undefined,
): Match {
  const found: Match = {
    kind: "found",
    groups: matched.groups,
    filter: q.filter,
    ...(matched.readGroups === undefined ? {} : { ofGroups: matched.readGroups }),
  };
  if (matched.groups.some((g) => g.count > 0) || q.dimension === undefined || q.form === undefined)
    return found;
  const form = q.form;
  // A group without a value (no country known, say) tells nothing of the form.
  const written = (sample ?? []).map((g) => g.key[q.dimension ?? ""] ?? "").filter((w) => w !== "");
  if (written.every((w) => form.test(w))) return found;
  const what = t.what === "entry" ? t.value : t.ruleId;
  return {
    kind: "unmatched",
    reason: `${what} could not be matched in the event log: it writes ${ENTRY_TYPE_WORDS[q.dimension].many} as ${quoted(uniq(written.filter((w) => !form.test(w))))}, a form edgeops does not compare.`,
  };
}

/** The groups' per-action counts, or null when they do not account for every event. */
export function actionsOf(groups: readonly EventGroup[]): ActionCounts | null {
  const actions: ActionCounts = { blocked: 0, challenged: 0, logged: 0 };
  for (const g of groups) {
    const { blocked, challenged, logged } = g.actions;
    if (blocked + challenged + logged !== g.count) return null;
    actions.blocked += blocked;
    actions.challenged += challenged;
    actions.logged += logged;
  }
  return actions;
}

const sum = (groups: readonly EventGroup[]) => groups.reduce((n, g) => n + g.count, 0);

/** Pure: the preview from the zone's feature groups, the target's match and its url groups. */
export function summarisePreview(
  target: ImpactTarget,
  window: { from: number; to: number },
  reads: { zone: GroupsRead; match: Match; paths: GroupsRead | null },
): ImpactPreview {
  const { zone, match, paths } = reads;
  if (match.kind === "unmatched") return { state: "unknown", target, reason: match.reason };
  const matched = sum(match.groups);
  const zoneTotal = sum(zone.groups);
  const share = zoneTotal > 0 && zone.readGroups === undefined ? Math.min(1, matched / zoneTotal) : null;
  const topPaths = (matched > 0 ? (paths?.groups ?? []) : [])
    .map((g) => ({ path: g.key.url ?? "", count: g.count }))
    .sort((a, b) => b.count - a.count || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
    .slice(0, TOP_PATHS);
  const broad = target.what === "entry" && (target.type === "country" || target.type === "asn");
  return {
    state: "estimated",
    target,
    ...window,
    matched,
    actions: actionsOf(match.groups),
    ...(match.ofGroups === undefined ? {} : { matchedOfGroups: match.ofGroups }),
    zoneTotal,
    share,
    topPaths,
    pathsPartial: matched > 0 && paths?.readGroups !== undefined,
    largeShare: broad && share !== null && share >= LARGE_SHARE,
  };
}

/** Read the event log for the preview: the zone's features, the target's groups and its top paths. */
async function readPreview(
  client: EdgeClient,
  target: ImpactTarget,
  window: { from: number; to: number },
): Promise<ImpactPreview> {
  const zoneId = target.shieldZoneId;
  const read = (search: Omit<EventLogsSearch, "from" | "to" | "page" | "pageSize">, maxPages?: number) =>
    readEventLogGroups(client, zoneId, { ...window, ...search }, maxPages === undefined ? {} : { maxPages });
  const pathsOf = (filter: Filter) => read({ filters: [filter], groupBy: ["url"] }, 1);
  if (target.what === "threats" || target.what === "bots") {
    // The filter is the log's own spelling of the feature, learned first.
    const zone = await read({ groupBy: ["feature"] });
    const match = matchFeature(target, zone);
    const paths = match.kind === "found" && sum(match.groups) > 0 ? await pathsOf(match.filter) : null;
    return summarisePreview(target, window, { zone, match, paths });
  }
  const q = valueQuery(target);
  const dimension = q.dimension;
  const [zone, matched, sample, paths] = await Promise.all([
    read({ groupBy: ["feature"] }),
    read({ filters: [q.filter], groupBy: ["feature"] }),
    dimension === undefined
      ? undefined
      : client
          .searchEventLogs(zoneId, { ...window, groupBy: [dimension], pageSize: FORM_SAMPLE })
          .then((r) => r.groups),
    pathsOf(q.filter),
  ]);
  return summarisePreview(target, window, { zone, match: matchValue(target, q, matched, sample), paths });
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
    return readPreview(client, target, { from, to });
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
