/**
 * The story of an incident on one shield zone: one chronological list of what edgeops stored about it in a
 * window (alert episodes with their signals, acknowledgements, mutes, and every step of every change
 * request: asked, each approval, rejected, applied, undone, expired, failed; who and when), the mitigations
 * still in force, and the peak per signal from the Edge API. No Slack here: slack/blocks/timeline.ts draws it,
 * services/postmortem.ts writes it down.
 */
import { describeRequest } from "../changes/index.js";
import { withDeadline } from "../deadline.js";
import type { Deps } from "../deps.js";
import { toUserSentence } from "../errors.js";
import type { AlertEpisode, AuditStep, ZoneChange } from "../store/index.js";
import { edgeClientFor } from "./edge-access.js";
import {
  type IncidentRange,
  type IncidentWindow,
  incidentRange,
  parseIncidentWindow,
  type Section,
  sectionDeadlineMs,
  type TrafficMetric,
  type TrafficRow,
  trafficRows,
} from "./incident.js";

export const DEFAULT_TIMELINE_WINDOW: IncidentWindow = "24h";
export const TIMELINE_EXAMPLE = "/edge timeline 1234 6h";

/** The window a user typed (the same words as /edge incident), 24h when none. */
export function parseTimelineWindow(word: string | undefined): IncidentWindow {
  return parseIncidentWindow(word, { defaultWindow: DEFAULT_TIMELINE_WINDOW, example: TIMELINE_EXAMPLE });
}

/** Change requests read at most for one timeline (beyond: the story says it is cut). */
export const MAX_CHANGES = 2_000;
const MAX_AUDIT = 10_000;

export type ChangeStep =
  | "asked"
  /** One approval of several needed. */
  | "approval"
  | "approved"
  | "rejected"
  | "withdrawn"
  | "applied"
  | "failed"
  | "undone"
  /** A temporary change's undo, not done: the setting was changed since, or a later request set it. */
  | "undo_skipped"
  | "expired"
  | "cancelled"
  | "retried";

export interface SignalReading {
  signal: string;
  /** Per minute when it was read. */
  count: number;
  /** The baseline's mean, per minute. */
  mean: number;
  over: boolean;
}

/** One line of the story. `by`: a Slack user id, "system" (edgeops on its own), or null (the watch). */
export type TimelineEntry = {
  at: number;
  channelId: string;
  by: string | null;
} & (
  | {
      kind: "alert_opened";
      episodeId: string;
      signals: SignalReading[];
      /** Set when the readings at opening were not kept (an older episode): these are its last update's. */
      latestReadings?: true;
      topOffender: string | null;
      /** Set when not every IP group was read: the busiest IP is of this many groups. */
      topOffenderOfGroups?: number;
    }
  | {
      kind: "alert_resolved";
      episodeId: string;
      durationMs: number;
      /** Closed because its watch was removed, not because the zone calmed down. */
      watchRemoved: boolean;
    }
  | { kind: "alert_acknowledged"; episodeId: string }
  | { kind: "watch_muted"; until: number | null }
  /** A setting changed outside edgeops (the bunny.net dashboard, another tool), as a config watch noticed it. */
  | { kind: "dashboard_change"; title: string; from: string; to: string }
  | {
      kind: "change";
      step: ChangeStep;
      requestId: string;
      /** The change in plain words ("Block IP 1.2.3.4 on shield zone 1234"). */
      change: string;
      /** approval: how many so far of how many needed. */
      approvals?: { count: number; needed: number };
      /** Why, where the store says: a reject's reason, the error of a failure, why an undo was skipped. */
      note?: string;
      /** undone: how long the change was in force, from its apply. */
      inForceMs?: number;
      /** applied: no one approved it (the channel's policy asked no approval). */
      withoutApproval?: true;
    }
);

/** A change edgeops made that is still in force on the zone, whichever channel asked for it. */
export interface Mitigation {
  requestId: string;
  change: string;
  /**
   * Who asked and where; null when asked in a channel the audience is not in: such a mitigation is shown
   * by what it does only (it is in force on the zone all the same).
   */
  asked: { by: string; channelId: string } | null;
  appliedAt: number | null;
  /** When a temporary change is undone; null: permanent. */
  until: number | null;
}

export interface SignalPeak {
  metric: TrafficMetric;
  /** The busiest bucket's count and when it ended (a bucket's start would date it before what it counts). */
  peak: number;
  endsAt: number;
  bucketMs: number;
  total: number;
}

/** Who reads the story: everything (an admin), or only what these channels saw. */
export type TimelineAudience = { kind: "all" } | { kind: "channels"; channelIds: ReadonlySet<string> };

export interface Timeline {
  teamId: string;
  zoneId: number;
  range: IncidentRange;
  /** Oldest first. */
  entries: TimelineEntry[];
  mitigations: Mitigation[];
  /** The episodes' span: first opened → last resolved (null: still firing, or no alert in the window). */
  alerts: { count: number; firstOpenedAt: number | null; lastResolvedAt: number | null; firing: number };
  /** Entries from channels the audience is not in, left out (their mitigations in force are not: see `asked`). */
  hidden: number;
  /** The store held more than one timeline reads: the oldest are left out. */
  cut: boolean;
}

// ---- the store's part --------------------------------------------------------------------------------

const CHANGE_STEPS: Record<string, (outcome: string) => ChangeStep | undefined> = {
  request: (o) => (o === "pending" ? "asked" : o === "applied" ? "applied" : undefined),
  approve: (o) => (o === "approved" ? "approved" : o === "recorded" ? "approval" : undefined),
  reject: (o) => (o === "rejected" ? "rejected" : undefined),
  withdraw: () => "withdrawn",
  cancel: () => "cancelled",
  expire: () => "expired",
  retry: (o) => (o === "approved" ? "retried" : o === "expired" ? "expired" : "cancelled"),
  apply: (o) =>
    o === "applied"
      ? "applied"
      : o === "failed" || o === "refused"
        ? "failed"
        : o === "already_set"
          ? "cancelled"
          : undefined,
  undo: (o) =>
    o === "undone"
      ? "undone"
      : o === "failed"
        ? "failed"
        : o === "left" || o === "kept" || o === "superseded"
          ? "undo_skipped"
          : undefined,
  reconcile: (o) =>
    o === "undone"
      ? "undone"
      : o === "applied"
        ? "applied"
        : o === "failed"
          ? "failed"
          : o === "expired"
            ? "expired"
            : undefined,
};

function stepOf(e: AuditStep): ChangeStep | undefined {
  const step = e.action.slice(e.action.lastIndexOf(".") + 1);
  return CHANGE_STEPS[step]?.(e.outcome);
}

/** The reasons edgeops itself writes as codes, in words (a person's reason, e.g. a reject's, is kept as typed). */
const REASON_WORDS: Record<string, string> = {
  changed_since: "the setting changed since it was asked, so edgeops left it as it is",
  unreadable: "edgeops could not read the setting back to check it",
  uninstalled: "edgeops was uninstalled, so it left the change in force",
};

function reasonWords(reason: string): string {
  return REASON_WORDS[reason] ?? (/^[a-z]+(_[a-z]+)+$/.test(reason) ? reason.replace(/_/g, " ") : reason);
}

/** Why an undo was skipped, from its audit outcome. */
const UNDO_SKIPPED_WORDS: Record<string, string> = {
  left: "the setting was changed since it was applied (in the dashboard, or by another request), so edgeops left it as it is",
  kept: "a later request keeps this for good, so edgeops left it in force",
  superseded: "a later request set this since, so edgeops left it as that request has it",
};

/** An audit step's details, parsed: only for the steps that tell more than who and when. */
function detailsOf(e: AuditStep): Record<string, unknown> {
  return (e.details === null ? null : (JSON.parse(e.details) as Record<string, unknown> | null)) ?? {};
}

function auditNote(e: AuditStep): string | undefined {
  const d = detailsOf(e);
  if (typeof d.reason === "string" && d.reason) return reasonWords(d.reason);
  const err = d.error as { message?: unknown } | string | undefined;
  if (typeof err === "string") return err;
  if (err && typeof err.message === "string") return err.message;
  return undefined;
}

/** The steps of a request whose audit entries are gone (pruned by age): what its row still says. */
function stepsFromRow(r: ZoneChange, change: string): TimelineEntry[] {
  const base = { channelId: r.channelId, requestId: r.id, change, kind: "change" as const };
  const out: TimelineEntry[] = [{ ...base, at: r.createdAt, by: r.requesterId, step: "asked" }];
  const decided = r.decidedAt ?? r.updatedAt;
  switch (r.state) {
    case "approved":
    case "applied":
    case "undoing":
    case "undone":
      // No approver recorded: the channel's policy asked none, edgeops applied it at once.
      out.push({ ...base, at: decided, by: r.decidedBy ?? "system", step: "approved" });
      break;
    case "rejected":
      out.push({
        ...base,
        at: decided,
        by: r.decidedBy ?? r.requesterId,
        step: "rejected",
        ...(r.reason?.kind === "rejected" && r.reason.text ? { note: r.reason.text } : {}),
      });
      break;
    case "expired":
      out.push({ ...base, at: r.expiresAt, by: "system", step: "expired" });
      break;
    case "cancelled":
      out.push({ ...base, at: r.updatedAt, by: r.decidedBy ?? "system", step: "cancelled" });
      break;
    case "failed":
      out.push({
        ...base,
        at: r.failedAt ?? r.updatedAt,
        by: "system",
        step: "failed",
        ...(r.lastError ? { note: r.lastError.message } : {}),
      });
      break;
    default:
      break;
  }
  if (r.state === "undone")
    out.push({ ...base, at: r.updatedAt, by: r.undoneBy ?? "system", step: "undone" });
  return out;
}

function readingsOf(e: AlertEpisode): {
  signals: SignalReading[];
  topOffender: string | null;
  topOffenderOfGroups?: number;
  latestReadings?: true;
} {
  const details = e.details as {
    subject?: Record<string, unknown>;
    opening?: Record<string, unknown>;
  } | null;
  const subject = details?.opening ?? details?.subject;
  const raw = Array.isArray(subject?.readings) ? (subject.readings as Record<string, unknown>[]) : [];
  const signals = raw
    .filter((r) => typeof r.signal === "string" && typeof r.count === "number")
    .map((r) => ({
      signal: String(r.signal),
      count: Number(r.count),
      mean: typeof r.mean === "number" ? r.mean : 0,
      over: r.over === true,
    }));
  const top = subject?.topOffender;
  const of = subject?.topOffenderOfGroups;
  return {
    signals,
    topOffender: typeof top === "string" ? top : null,
    ...(typeof top === "string" && typeof of === "number" ? { topOffenderOfGroups: of } : {}),
    ...(details?.opening ? {} : { latestReadings: true as const }),
  };
}

const within = (at: number, range: IncidentRange) => at >= range.from && at <= range.to;

/**
 * The story from the store alone (no Edge API call): a handful of queries and one sort. `audience` decides
 * which channels' entries are shown; the rest are counted in `hidden`.
 */
export async function buildTimeline(
  deps: Pick<Deps, "store" | "clock">,
  input: { teamId: string; zoneId: number; window: IncidentWindow; audience: TimelineAudience; now?: number },
): Promise<Timeline> {
  const { store } = deps;
  const { teamId, zoneId, audience } = input;
  const range = incidentRange(input.window, input.now ?? deps.clock.now());
  const [all, requests, episodes] = await Promise.all([
    store.watches.list(teamId),
    store.timeline.zoneChanges(teamId, zoneId, range.from, range.to, MAX_CHANGES + 1),
    store.timeline.zoneEpisodes(teamId, zoneId, range.from, range.to),
  ]);
  // Zone watches' alerts and mutes, config watches' changes made outside edgeops.
  const watches = all.filter(
    (w) => (w.kind === "zone" || w.kind === "config") && w.target === String(zoneId),
  );
  // Removed watches' alerts stay in the story, and so do their acknowledgements and mutes.
  const watchIds = [...new Set([...watches.map((w) => w.id), ...episodes.map((e) => e.watchId)])];
  const cut = requests.length > MAX_CHANGES;
  const kept = cut ? requests.slice(requests.length - MAX_CHANGES) : requests;
  const inForce = kept.filter((r) => r.state === "applied" || r.state === "undoing");
  const [audit, owners] = await Promise.all([
    store.timeline.auditOf(teamId, {
      requestIds: kept.map((r) => r.id),
      watchIds,
      from: range.from,
      to: range.to,
      limit: MAX_AUDIT,
    }),
    store.timeline.ownersAmong(
      teamId,
      inForce.map((r) => r.id),
    ),
  ]);

  const entries: TimelineEntry[] = [];
  // Made in this order so that, at the same instant, the alert comes before what people did about it.
  for (const e of episodes) {
    const readings = readingsOf(e);
    const ep = { channelId: e.channelId, episodeId: e.id };
    if (within(e.openedAt, range))
      entries.push({ ...ep, kind: "alert_opened", at: e.openedAt, by: null, ...readings });
    if (e.acknowledgedAt !== null && within(e.acknowledgedAt, range))
      entries.push({ ...ep, kind: "alert_acknowledged", at: e.acknowledgedAt, by: e.acknowledgedBy });
    if (e.resolvedAt !== null && within(e.resolvedAt, range))
      entries.push({
        ...ep,
        kind: "alert_resolved",
        at: e.resolvedAt,
        by: null,
        durationMs: e.resolvedAt - e.openedAt,
        watchRemoved: (e.details as { closedBy?: unknown } | null)?.closedBy === "watch_removed",
      });
  }

  const described = new Map(kept.map((r) => [r.id, describeRequest(r)]));
  const byRequest = new Map<string, AuditStep[]>();
  for (const a of audit) {
    const id = a.requestId;
    if (typeof id === "string") {
      const list = byRequest.get(id) ?? [];
      list.push(a);
      byRequest.set(id, list);
    } else if (a.action === "watch.mute" || a.action === "watch.unmute") {
      const details = detailsOf(a);
      const until = details.until;
      entries.push({
        kind: "watch_muted",
        at: a.at,
        by: a.userId,
        channelId: String(details.channelId ?? ""),
        until: a.action === "watch.unmute" || typeof until !== "number" ? null : until,
      });
    } else if (a.action === "watch.drift") {
      const details = detailsOf(a);
      const text = (key: string) => String(details[key] ?? "unknown");
      entries.push({
        kind: "dashboard_change",
        at: typeof details.noticedAt === "number" ? details.noticedAt : a.at,
        by: null,
        channelId: text("channelId"),
        title: text("title"),
        from: text("from"),
        to: text("to"),
      });
    }
  }
  for (const r of kept) {
    const change = described.get(r.id) ?? r.kind;
    const steps = byRequest.get(r.id);
    if (!steps) {
      entries.push(...stepsFromRow(r, change).filter((e) => within(e.at, range)));
      continue;
    }
    let approvals = 0;
    let appliedAt: number | undefined;
    let rejected: (TimelineEntry & { kind: "change" }) | undefined;
    for (const a of steps) {
      // The reason of a rejection is added later, as its own audit entry.
      if (a.action.endsWith(".reject") && a.outcome === "reason" && rejected) {
        // As the person typed it.
        const note = detailsOf(a).reason;
        if (typeof note === "string" && note) rejected.note = note;
        continue;
      }
      const step = stepOf(a);
      if (!step) continue;
      if (step === "approval" || step === "approved") approvals++;
      const note =
        step === "failed" || step === "cancelled"
          ? auditNote(a)
          : step === "undo_skipped"
            ? UNDO_SKIPPED_WORDS[a.outcome]
            : undefined;
      const entry: TimelineEntry & { kind: "change" } = {
        kind: "change",
        at: a.at,
        by: a.userId,
        channelId: r.channelId,
        requestId: r.id,
        change,
        step,
        ...(step === "approval" || (step === "approved" && r.approvalsNeeded > 1)
          ? { approvals: { count: approvals, needed: r.approvalsNeeded } }
          : {}),
        ...(note ? { note } : {}),
      };
      if (step === "rejected") rejected = entry;
      if (step === "applied") {
        appliedAt = a.at;
        // Approved by no one before it applied: the channel's policy asked none.
        if (approvals === 0) entry.withoutApproval = true;
      }
      if (step === "undone" && appliedAt !== undefined) entry.inForceMs = a.at - appliedAt;
      entries.push(entry);
    }
  }
  const visible = (channelId: string) => audience.kind === "all" || audience.channelIds.has(channelId);
  const shown = entries.filter((e) => visible(e.channelId));
  // Stable: entries at the same instant keep the order they were made in (asked before applied).
  shown.sort((a, b) => a.at - b.at);

  // Every one in force on the zone, whoever asked: those of channels the audience doesn't see without who or where.
  const mitigations: Mitigation[] = inForce
    .filter((r) => owners.has(r.id))
    .map((r) => ({
      requestId: r.id,
      change: described.get(r.id) ?? r.kind,
      asked: visible(r.channelId) ? { by: r.requesterId, channelId: r.channelId } : null,
      appliedAt: r.decidedAt,
      until: r.undoAt,
    }));

  const seen = episodes.filter((e) => visible(e.channelId));
  const resolvedAts = seen.map((e) => e.resolvedAt).filter((t): t is number => t !== null);
  const firing = seen.filter((e) => e.status === "firing").length;
  return {
    teamId,
    zoneId,
    range,
    entries: shown,
    mitigations,
    alerts: {
      count: seen.length,
      firstOpenedAt: seen.length > 0 ? Math.min(...seen.map((e) => e.openedAt)) : null,
      lastResolvedAt: firing === 0 && resolvedAts.length > 0 ? Math.max(...resolvedAts) : null,
      firing,
    },
    hidden: entries.length - shown.length,
    cut,
  };
}

// ---- the Edge API's part -----------------------------------------------------------------------------

/** The busiest bucket per signal in the window, from the zone's detailed metrics (one Edge call). */
export async function signalPeaks(
  deps: Deps,
  teamId: string,
  zoneId: number,
  range: IncidentRange,
): Promise<Section<SignalPeak[]>> {
  const traffic = await windowTraffic(deps, teamId, zoneId, range);
  return "error" in traffic ? traffic : { ok: peaksOf(traffic.ok, range) };
}

/** The busiest bucket of each traffic row. */
export function peaksOf(rows: readonly TrafficRow[], range: IncidentRange): SignalPeak[] {
  return rows.map((row) => {
    let best = 0;
    for (let i = 1; i < row.series.length; i++) if ((row.series[i] ?? 0) > (row.series[best] ?? 0)) best = i;
    return {
      metric: row.metric,
      peak: row.series[best] ?? 0,
      endsAt: range.metricsFrom + (best + 1) * range.bucketMs,
      bucketMs: range.bucketMs,
      total: row.count,
    };
  });
}

/** The window's traffic rows (the incident card's series), from the zone's detailed metrics (one Edge call). */
export async function windowTraffic(
  deps: Deps,
  teamId: string,
  zoneId: number,
  range: IncidentRange,
): Promise<Section<TrafficRow[]>> {
  try {
    const client = await edgeClientFor(deps, teamId);
    const metrics = await withDeadline(
      deps.clock,
      client.getMetricsOverviewDetailed(zoneId, {
        from: range.metricsFrom,
        to: range.metricsTo,
        resolution: range.resolution,
      }),
      sectionDeadlineMs(deps),
      () => {
        throw new Error("The Edge API did not answer in time for the peaks.");
      },
    );
    return { ok: trafficRows(metrics, null, range) };
  } catch (err) {
    return { error: toUserSentence(err) };
  }
}

export interface TimelineStory {
  timeline: Timeline;
  /** Null when not read (the automatic reply on a resolved alert costs no Edge call). */
  peaks: Section<SignalPeak[]> | null;
  /** The window's traffic rows the peaks were read from (absent where the peaks were not read). */
  traffic?: Section<TrafficRow[]>;
}

/** The story and the peaks, read side by side; the window ends at `to` (a page of an earlier answer) or now. */
export async function gatherTimeline(
  deps: Deps,
  input: { teamId: string; zoneId: number; window: IncidentWindow; audience: TimelineAudience; to?: number },
): Promise<TimelineStory> {
  const now = input.to ?? deps.clock.now();
  const range = incidentRange(input.window, now);
  const [timeline, traffic] = await Promise.all([
    buildTimeline(deps, { ...input, now }),
    windowTraffic(deps, input.teamId, input.zoneId, range),
  ]);
  return { timeline, peaks: "error" in traffic ? traffic : { ok: peaksOf(traffic.ok, range) }, traffic };
}
