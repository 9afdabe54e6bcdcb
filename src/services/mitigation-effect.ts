/**
 * Did it work? The measured effect of an applied mitigation, from the zone's event log and metrics: the rate
 * before the change (the impact preview's window: the hour before it) and after it took effect (from the first
 * whole minute after it was applied, the last hour at most), per minute, with what the edge did (blocked,
 * challenged, logged). An entry (a block or challenge of an IP, range, ASN, country or fingerprint) is measured
 * on its own events in the event log; a setting (DDoS sensitivity, WAF mode) on its feature's signal in the
 * zone's metrics. Where the data cannot say (no event log on the plan, too little traffic, another change on the
 * zone in the window, too soon, metrics unreadable), the effect says which instead of a number.
 *
 * `summariseEffect` is pure; `measureEffect` reads through the existing readers (readEventLogGroups, the
 * detailed metrics) as background work in the key's queue.
 */
import type { Deps } from "../deps.js";
import { EdgeApiError } from "../edge/errors.js";
import {
  actedOnCount,
  EVENT_LOG_RETENTION_MS,
  METRICS_RESOLUTION,
  type MetricFeature,
  type ShieldDetailedMetrics,
  unreadableMetricKeys,
  unreadableMetricsSentence,
} from "../edge/schemas/shield.js";
import { toUserSentence } from "../errors.js";
import type { ChangeRequest } from "../store/index.js";
import { incidentWindowFor } from "./alerts.js";
import { edgeAccessFor } from "./edge-access.js";
import { type GroupsRead, readEventLogGroups } from "./event-log-groups.js";
import {
  type ActionCounts,
  actionsOf,
  type ImpactTarget,
  impactTargetOf,
  PREVIEW_WINDOW_MS,
  valueQuery,
} from "./impact-preview.js";
import { EVENT_LOG_MARGIN_MS } from "./incident.js";
import { buildTimeline } from "./timeline.js";

const MINUTE = 60_000;
/** The metrics are read in two-minute slots (the incident card's hour): a window is whole slots. */
const METRICS_SLOT_MS = 2 * MINUTE;
/** Whole minutes after the change before its effect is measured: fewer say too little of a rate. */
export const EFFECT_MIN_MINUTES = 3;
/**
 * Events before the change under which there is too little traffic to speak of an effect: fewer than one a
 * minute over the hour, a fall to zero says nothing of the change.
 */
export const EFFECT_MIN_EVENTS_BEFORE = 60;
/** How often a change's effect is measured at most (the card's refresh while the zone's alert is open). */
export const EFFECT_REFRESH_MS = MINUTE;
/** The after window is the last hour at most, so "after" is the rate now, not an average since hours ago. */
export const EFFECT_AFTER_MAX_MS = PREVIEW_WINDOW_MS;

/** What a change's effect is measured on: an entry's own events, or a setting's feature. */
export type EffectTarget = Extract<ImpactTarget, { what: "entry" | "threats" }>;

/** The target of a change whose effect can be measured: blocks and challenges (and their lifting), DDoS sensitivity, WAF mode. */
export function effectTargetOf(change: { kind: string; params: unknown }): EffectTarget | undefined {
  const t = impactTargetOf(change);
  return t?.what === "entry" || t?.what === "threats" ? t : undefined;
}

export interface EffectWindows {
  appliedAt: number;
  /** Whole minutes: the hour before the minute the change was applied in. */
  before: { from: number; to: number };
  /** Whole minutes from the first after the change to the one in progress now (the last hour at most). */
  after: { from: number; to: number };
  /** The same in whole metrics slots. */
  metricsBefore: { from: number; to: number };
  metricsAfter: { from: number; to: number };
}

const floorTo = (t: number, step: number) => Math.floor(t / step) * step;
const ceilTo = (t: number, step: number) => Math.ceil(t / step) * step;

export function effectWindows(appliedAt: number, now: number): EffectWindows {
  const beforeTo = floorTo(appliedAt, MINUTE);
  const afterTo = floorTo(now, MINUTE);
  const metricsBeforeTo = floorTo(appliedAt, METRICS_SLOT_MS);
  const metricsAfterTo = floorTo(now, METRICS_SLOT_MS);
  return {
    appliedAt,
    before: { from: beforeTo - PREVIEW_WINDOW_MS, to: beforeTo },
    after: { from: Math.max(ceilTo(appliedAt, MINUTE), afterTo - EFFECT_AFTER_MAX_MS), to: afterTo },
    metricsBefore: { from: metricsBeforeTo - PREVIEW_WINDOW_MS, to: metricsBeforeTo },
    metricsAfter: {
      from: Math.max(ceilTo(appliedAt, METRICS_SLOT_MS), metricsAfterTo - EFFECT_AFTER_MAX_MS),
      to: metricsAfterTo,
    },
  };
}

const minutesOf = (w: { from: number; to: number }) => Math.max(0, Math.round((w.to - w.from) / MINUTE));

/** Events a minute over a window, and what the edge did with them (null when the log did not say for every one). */
export interface Rate {
  perMinute: number;
  actions: ActionCounts | null;
  /** Events counted in all (not per minute), for "too little traffic". */
  events: number;
  minutes: number;
}

/** The events of one window as read: a count, the per-action counts, and whether every group was read. */
export interface Tally {
  count: number;
  actions: ActionCounts | null;
  /** Not every group was read: the count is a lower bound. */
  partial: boolean;
}

export function tallyOf(read: GroupsRead): Tally {
  return {
    count: read.groups.reduce((n, g) => n + g.count, 0),
    actions: actionsOf(read.groups),
    partial: read.readGroups !== undefined,
  };
}

/** Another change on the same zone applied or undone in the windows, so a difference can't be put down to this one. */
export interface Overlap {
  change: string;
  at: number;
  step: "applied" | "undone";
}

export type Unsaid =
  | { why: "not_applied" }
  | { why: "too_soon"; minutes: number }
  /** Undone before it was in force for enough whole minutes to measure. */
  | { why: "too_short"; minutes: number }
  | { why: "no_event_log" }
  | { why: "too_little_traffic"; eventsBefore: number }
  | { why: "overlapping"; others: Overlap[] }
  | { why: "unreadable"; reason: string };

/** The zone's signal (all of its threat events, or one feature's) a minute before and after, from its metrics. */
export interface ZoneSignal {
  /** "threats": every feature; else the setting's feature. */
  of: "threats" | "ddos" | "waf";
  before: Rate;
  after: Rate;
}

export type MitigationEffect =
  | {
      state: "measured";
      target: EffectTarget;
      appliedAt: number;
      /** When it was measured. */
      asOf: number;
      /** The entry's own events (entries), or the setting's feature in the metrics (settings). */
      before: Rate;
      after: Rate;
      /** Entries: the zone's threats before and after; absent when another change on the zone blurs them. */
      zone?: ZoneSignal;
      /** Why the zone's line is missing, when it is. */
      zoneUnsaid?: string;
      /** The event log gave more groups than were read: the counts are lower bounds. */
      partial?: true;
      /** Undone at: the after window ended there. */
      endedAt?: number;
    }
  | {
      state: "cannot_say";
      target: EffectTarget;
      appliedAt: number | null;
      asOf: number;
      unsaid: Unsaid;
    };

const rateOf = (count: number, actions: ActionCounts | null, window: { from: number; to: number }): Rate => {
  const minutes = minutesOf(window);
  const per = (v: number) => (minutes === 0 ? 0 : v / minutes);
  return {
    perMinute: per(count),
    actions: actions && {
      blocked: per(actions.blocked),
      challenged: per(actions.challenged),
      logged: per(actions.logged),
    },
    events: count,
    minutes,
  };
};

const FEATURE_OF_SETTING: Record<"ddos" | "waf", MetricFeature> = { ddos: "ddos", waf: "waf" };

/** A feature's (or every feature's) events and actions in the metrics' slots that start inside `window`. */
function metricsTally(d: ShieldDetailedMetrics, of: ZoneSignal["of"], window: { from: number; to: number }) {
  const features = of === "threats" ? (Object.keys(d.features) as MetricFeature[]) : [FEATURE_OF_SETTING[of]];
  const actions: ActionCounts = { blocked: 0, challenged: 0, logged: 0 };
  let count = 0;
  for (const f of features)
    for (const p of d.features[f].points) {
      if (p.at < window.from || p.at >= window.to) continue;
      count += actedOnCount(p.values);
      actions.blocked += actedOnCount(p.values, /block/i);
      actions.challenged += actedOnCount(p.values, /challeng/i);
      actions.logged += actedOnCount(p.values, /logged/i);
    }
  const complete = actions.blocked + actions.challenged + actions.logged === count;
  return { count, actions: complete ? actions : null };
}

function zoneSignal(
  d: ShieldDetailedMetrics,
  of: ZoneSignal["of"],
  w: EffectWindows,
): ZoneSignal | { unreadable: string } {
  const features = of === "threats" ? undefined : [FEATURE_OF_SETTING[of]];
  const keys = unreadableMetricKeys(d, features);
  if (keys.length > 0)
    return { unreadable: unreadableMetricsSentence(keys, "its signal before and after is not known") };
  const b = metricsTally(d, of, w.metricsBefore);
  const a = metricsTally(d, of, w.metricsAfter);
  return {
    of,
    before: rateOf(b.count, b.actions, w.metricsBefore),
    after: rateOf(a.count, a.actions, w.metricsAfter),
  };
}

/** What the reads found, for the pure summary. */
export interface EffectReads {
  /** When the change stopped being in force (undone), if it did: the after window ends there. */
  endedAt?: number;
  /** Other changes on the zone applied or undone from the before window's start to now. */
  others: Overlap[];
  /** Entries: the entry's events before and after, or why the event log could not say. */
  events?: { before: Tally; after: Tally } | { noEventLog: true } | { error: string };
  /** The zone's detailed metrics over both windows, or why they could not be read. */
  metrics: ShieldDetailedMetrics | { error: string };
}

/**
 * Whether another change touches what this one is measured on: for a setting, any change on the zone (a block
 * moves the zone's threats too); for an entry, one on the same entry, or a zone-wide setting (which acts on its
 * events alike). Another entry's block does not move this entry's events.
 */
export function overlapsWith(target: EffectTarget, other: { kind: string; params: unknown }): boolean {
  if (target.what === "threats") return true;
  const t = effectTargetOf(other);
  if (!t) return other.kind === "waf_rule_review" || other.kind === "bot_category";
  return t.what === "threats" || (t.type === target.type && t.value === target.value);
}

/**
 * Pure: what the store alone decides (no Edge read needed): not applied, too soon, older than the event log
 * keeps, or another change on the zone in the windows. Undefined: the reads decide.
 */
export function storeVerdict(
  appliedAt: number | null,
  end: number,
  others: readonly Overlap[],
  now: number = end,
): Unsaid | undefined {
  if (appliedAt === null) return { why: "not_applied" };
  const w = effectWindows(appliedAt, end);
  const minutes = minutesOf(w.after);
  if (minutes < EFFECT_MIN_MINUTES || w.metricsAfter.to <= w.metricsAfter.from)
    return end < now ? { why: "too_short", minutes } : { why: "too_soon", minutes };
  if (w.before.from < now - EVENT_LOG_RETENTION_MS + EVENT_LOG_MARGIN_MS)
    return { why: "unreadable", reason: "The hour before it is older than the event log keeps (72 hours)." };
  if (others.length > 0) return { why: "overlapping", others: [...others] };
  return undefined;
}

/** Pure: the effect from what was read. `appliedAt` null: the change is not applied (or its time is not known). */
export function summariseEffect(
  target: EffectTarget,
  appliedAt: number | null,
  now: number,
  reads: EffectReads,
): MitigationEffect {
  const cannot = (unsaid: Unsaid): MitigationEffect => ({
    state: "cannot_say",
    target,
    appliedAt,
    asOf: now,
    unsaid,
  });
  const { others, events, metrics } = reads;
  const end = Math.min(now, reads.endedAt ?? now);
  const verdict = storeVerdict(appliedAt, end, others, now);
  if (verdict !== undefined || appliedAt === null) return cannot(verdict ?? { why: "not_applied" });
  const w = effectWindows(appliedAt, end);
  if (target.what === "threats") {
    if ("error" in metrics) return cannot({ why: "unreadable", reason: metrics.error });
    const signal = zoneSignal(metrics, target.feature, w);
    if ("unreadable" in signal) return cannot({ why: "unreadable", reason: signal.unreadable });
    if (signal.before.events < EFFECT_MIN_EVENTS_BEFORE)
      return cannot({ why: "too_little_traffic", eventsBefore: signal.before.events });
    return {
      state: "measured",
      target,
      appliedAt,
      asOf: now,
      before: signal.before,
      after: signal.after,
      ...(end < now ? { endedAt: end } : {}),
    };
  }
  if (!events) return cannot({ why: "unreadable", reason: "The event log was not read." });
  if ("noEventLog" in events) return cannot({ why: "no_event_log" });
  if ("error" in events) return cannot({ why: "unreadable", reason: events.error });
  if (events.before.count < EFFECT_MIN_EVENTS_BEFORE)
    return cannot({ why: "too_little_traffic", eventsBefore: events.before.count });
  const zone = "error" in metrics ? { unreadable: metrics.error } : zoneSignal(metrics, "threats", w);
  return {
    state: "measured",
    target,
    appliedAt,
    asOf: now,
    before: rateOf(events.before.count, events.before.actions, w.before),
    after: rateOf(events.after.count, events.after.actions, w.after),
    ...("unreadable" in zone ? { zoneUnsaid: zone.unreadable } : { zone }),
    ...(events.before.partial || events.after.partial ? { partial: true as const } : {}),
    ...(end < now ? { endedAt: end } : {}),
  };
}

/**
 * The change's applied time and the other changes on its zone applied or undone in its windows, from the store
 * alone (the incident timeline's read: every channel, since a change made elsewhere moves the zone all the same).
 */
async function storeReads(
  deps: Pick<Deps, "store" | "clock">,
  request: ChangeRequest,
  target: EffectTarget,
  now: number,
): Promise<{ appliedAt: number | null; endedAt?: number; others: Overlap[] }> {
  const provisional = request.decidedAt ?? request.updatedAt;
  const timeline = await buildTimeline(deps, {
    teamId: request.teamId,
    zoneId: target.shieldZoneId,
    window: incidentWindowFor(provisional - PREVIEW_WINDOW_MS, now),
    audience: { kind: "all" },
    now,
  });
  const steps = timeline.entries.flatMap((e) =>
    e.kind === "change" && (e.step === "applied" || e.step === "undone") ? [e] : [],
  );
  const applied = steps.filter((e) => e.requestId === request.id && e.step === "applied").at(-1);
  const inForce = request.state === "applied" || request.state === "undoing" || request.state === "undone";
  const appliedAt = applied?.at ?? (inForce ? request.decidedAt : null);
  if (appliedAt === null) return { appliedAt, others: [] };
  const undone = steps.find((e) => e.requestId === request.id && e.step === "undone" && e.at >= appliedAt);
  const endedAt = undone?.at ?? (request.state === "undone" ? request.updatedAt : undefined);
  const from = effectWindows(appliedAt, now).before.from;
  const requests = new Map(
    (await deps.store.timeline.changesOfZone(request.teamId, target.shieldZoneId, from, now, 2_000)).map(
      (r) => [r.id, r],
    ),
  );
  const others = steps
    .filter((e) => e.requestId !== request.id && e.at >= from && e.at <= (endedAt ?? now))
    .filter((e) => {
      const other = requests.get(e.requestId);
      return other === undefined || overlapsWith(target, other);
    })
    .map((e) => ({ change: e.change, at: e.at, step: e.step as Overlap["step"] }));
  return { appliedAt, ...(endedAt === undefined ? {} : { endedAt }), others };
}

/** The effect's Edge reads: the entry's events before and after (entries) and the zone's metrics over both windows. */
async function edgeReads(
  deps: Deps,
  teamId: string,
  target: EffectTarget,
  w: EffectWindows,
  others: Overlap[],
): Promise<{ reads: EffectReads; calls: number }> {
  const { client } = await edgeAccessFor(deps, teamId, { background: true });
  const zoneId = target.shieldZoneId;
  let calls = 0;
  const metrics = client
    .getMetricsOverviewDetailed(zoneId, {
      from: w.metricsBefore.from,
      to: w.metricsAfter.to,
      resolution: METRICS_RESOLUTION.twoMinutes,
    })
    .then(
      (m): ShieldDetailedMetrics | { error: string } => m,
      (err: unknown) => ({ error: toUserSentence(err) }),
    );
  if (target.what === "threats") return { reads: { others, metrics: await metrics }, calls: 1 };
  calls++;
  const { filter } = valueQuery(target);
  const read = (window: { from: number; to: number }) =>
    readEventLogGroups(client, zoneId, { ...window, filters: [filter], groupBy: ["feature"] }).then((r) => {
      calls += r.calls;
      return tallyOf(r);
    });
  const events = await Promise.all([read(w.before), read(w.after)]).then(
    ([before, after]): NonNullable<EffectReads["events"]> => ({ before, after }),
    (err: unknown): NonNullable<EffectReads["events"]> =>
      err instanceof EdgeApiError && err.kind === "plan_not_eligible"
        ? { noEventLog: true }
        : { error: toUserSentence(err) },
  );
  return { reads: { others, events, metrics: await metrics }, calls };
}

/**
 * Measure a change's effect now: its applied time and overlapping changes from the store, then the Edge reads
 * (none when the store already says it cannot say: not applied, too soon, overlapping). Never throws.
 * `calls`: the Edge API calls it made (for the watches' budget).
 */
export async function measureEffect(
  deps: Deps,
  request: ChangeRequest,
): Promise<{ effect: MitigationEffect; calls: number } | undefined> {
  const target = effectTargetOf(request);
  if (!target) return undefined;
  const now = deps.clock.now();
  try {
    const { appliedAt, endedAt, others } = await storeReads(deps, request, target, now);
    const end = Math.min(now, endedAt ?? now);
    // What the store alone decides costs no Edge call.
    const verdict = storeVerdict(appliedAt, end, others, now);
    if (verdict !== undefined || appliedAt === null)
      return {
        effect: {
          state: "cannot_say",
          target,
          appliedAt,
          asOf: now,
          unsaid: verdict ?? { why: "not_applied" },
        },
        calls: 0,
      };
    const { reads, calls } = await edgeReads(
      deps,
      request.teamId,
      target,
      effectWindows(appliedAt, end),
      others,
    );
    if (endedAt !== undefined) reads.endedAt = endedAt;
    return { effect: summariseEffect(target, appliedAt, now, reads), calls };
  } catch (err) {
    deps.logger.warn({ err, requestId: request.id }, "measuring a change's effect failed");
    return {
      effect: {
        state: "cannot_say",
        target,
        appliedAt: null,
        asOf: now,
        unsaid: { why: "unreadable", reason: toUserSentence(err) },
      },
      calls: 0,
    };
  }
}

// ---- in words ------------------------------------------------------------------------------------------

/** A rate a minute: whole numbers from 10, one decimal below (0.4), 0 as 0. */
export function perMinuteWords(v: number): string {
  if (v === 0) return "0";
  if (v >= 10) return Math.round(v).toLocaleString("en-US");
  const one = Math.round(v * 10) / 10;
  return one === 0 ? "<0.1" : String(one);
}

const utc = (ms: number) => `${new Date(ms).toISOString().slice(11, 16)} UTC`;
const ENTRY_VERBS = { block: "the block", challenge: "the challenge", none: "the unblock" } as const;
const FEATURE_WORDS = { ddos: "DDoS events", waf: "WAF events" } as const;

function percentChange(before: number, after: number): string {
  if (before === 0) return after === 0 ? "no change" : "up from none";
  const p = Math.round((Math.abs(after - before) / before) * 100);
  if (p === 0) return "about the same";
  return after < before ? `fell ${p} %` : `rose ${p} %`;
}

/** "455 blocked, 0 challenged, 0 logged a minute" (what the edge did), or undefined when not known. */
function actionWords(r: Rate): string | undefined {
  const a = r.actions;
  if (!a) return undefined;
  const parts = [
    a.blocked > 0 ? `${perMinuteWords(a.blocked)} blocked` : "",
    a.challenged > 0 ? `${perMinuteWords(a.challenged)} challenged` : "",
    a.logged > 0 ? `${perMinuteWords(a.logged)} logged and let through` : "",
  ].filter(Boolean);
  return parts.length > 0 ? parts.join(", ") : undefined;
}

/**
 * The effect in plain words (no markup: the Slack card and the Markdown draft each escape it), times in UTC.
 * `state`: the entry's wanted state when the change is a block, challenge or unblock (its "since the block").
 */
export function effectWords(e: MitigationEffect, state?: "block" | "challenge" | "none"): string {
  const t = e.target;
  const subject = t.what === "entry" ? t.value : FEATURE_WORDS[t.feature];
  if (e.state === "cannot_say") {
    const u = e.unsaid;
    switch (u.why) {
      case "not_applied":
        return "Not applied, so there is no effect to measure.";
      case "too_soon":
        return `Too soon to say: ${u.minutes} whole minute${u.minutes === 1 ? "" : "s"} since it was applied; edgeops measures from ${EFFECT_MIN_MINUTES}.`;
      case "too_short":
        return `Cannot say: it was in force for ${u.minutes} whole minute${u.minutes === 1 ? "" : "s"} before it was undone; edgeops measures from ${EFFECT_MIN_MINUTES}.`;
      case "no_event_log":
        return `Cannot say: this zone's plan has no event log, so edgeops cannot measure ${subject}'s events.`;
      case "too_little_traffic":
        return `Too little traffic to say: ${subject} had ${u.eventsBefore.toLocaleString("en-US")} event${u.eventsBefore === 1 ? "" : "s"} in the hour before it (edgeops measures from ${EFFECT_MIN_EVENTS_BEFORE}).`;
      case "overlapping": {
        const shown = u.others
          .slice(0, 2)
          .map((o) => `${o.change} (${o.step} ${utc(o.at)})`)
          .join("; ");
        const more = u.others.length > 2 ? ` and ${u.others.length - 2} more` : "";
        return `Cannot say: another change on this zone in the same window (${shown}${more}), so a difference can't be put down to this one.`;
      }
      case "unreadable":
        return `Cannot say: ${u.reason}`;
    }
  }
  const until = e.endedAt === undefined ? "" : ` until its undo at ${utc(e.endedAt)}`;
  const since = `Since ${t.what === "entry" ? ENTRY_VERBS[state ?? "block"] : "the change"} at ${utc(e.appliedAt)}${until}`;
  const nowWord = e.endedAt === undefined ? "now" : "then";
  const lower = e.partial ? " (at least: the event log had more groups than edgeops read)" : "";
  const lines: string[] = [];
  if (t.what === "threats") {
    const before = actionWords(e.before);
    const after = actionWords(e.after);
    lines.push(
      `${since}, ${subject} went from ${perMinuteWords(e.before.perMinute)} to ${perMinuteWords(e.after.perMinute)} a minute in the zone's metrics${before || after ? ` (before: ${before ?? "none"}; ${nowWord}: ${after ?? "none"})` : ""}.`,
    );
    return lines.join(" ");
  }
  const b = e.before;
  const a = e.after;
  if (a.events === 0) {
    // The event log may not record what an access list blocks: nothing at all is not proof of a block.
    lines.push(
      `${since}, ${subject} went from ${perMinuteWords(b.perMinute)} to 0 events a minute in the event log (the log can't tell blocked from gone).`,
    );
  } else if (b.actions && a.actions) {
    const through = (r: Rate) => (r.actions ? r.actions.logged : 0);
    const now = actionWords(a);
    lines.push(
      `${since}, ${subject} went from ${perMinuteWords(through(b))} to ${perMinuteWords(through(a))} events a minute getting through (of ${perMinuteWords(b.perMinute)} a minute in the event log before)${lower}; ${now ? `${now} a minute ${nowWord}` : `none ${nowWord}`}.`,
    );
  } else {
    lines.push(
      `${since}, ${subject} went from ${perMinuteWords(b.perMinute)} to ${perMinuteWords(a.perMinute)} events a minute in the event log${lower}; the log did not say what the edge did with every one.`,
    );
  }
  if (e.zone)
    lines.push(
      `The zone's threats ${percentChange(e.zone.before.perMinute, e.zone.after.perMinute)} (${perMinuteWords(e.zone.before.perMinute)} → ${perMinuteWords(e.zone.after.perMinute)} a minute).`,
    );
  else if (e.zoneUnsaid) lines.push(`The zone's threats: not known (${e.zoneUnsaid}).`);
  return lines.join(" ");
}
