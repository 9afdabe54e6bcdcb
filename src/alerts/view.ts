/**
 * What an alert says, as data: the signals and their numbers, the parent message's view of an episode and its
 * watch, and what its thread should be told. slack/blocks/alerts renders them; the poller's delivery, the buttons
 * (Acknowledge, Mute 1h) and the App Home all build the view here. Everything but the subject's numbers comes from
 * the rows (who acknowledged, until when the watch is muted), so whoever renders last shows the same state.
 */
import { createHash } from "node:crypto";
import type { AlertEpisode, Watch } from "../store/index.js";

export type AlertSignal = "ddos" | "waf" | "rateLimit" | "bot";

/** What each signal is called, wherever it is named (alerts, the timeline, the postmortem draft). */
export const SIGNAL_LABELS: Record<AlertSignal, string> = {
  ddos: "DDoS",
  waf: "WAF",
  rateLimit: "Rate limits",
  bot: "Bot detection",
};

/** A stored signal's name in words (an unknown one as it is stored). */
export const signalLabel = (s: string): string => SIGNAL_LABELS[s as AlertSignal] ?? s;

export interface SignalNumbers {
  signal: AlertSignal;
  /** Per minute in the latest window (its bucket's count ÷ the bucket's minutes). */
  count: number;
  /** The baseline's mean, per minute. */
  mean: number;
  z: number;
  over: boolean;
}

/** What an alert's parent message shows: the episode and its watch as data (slack/blocks/alerts renders it). */
export interface AlertView {
  episodeId: string;
  status: "firing" | "resolved";
  openedAt: number;
  resolvedAt: number | null;
  acknowledgedBy: string | null;
  mutedUntil: number | null;
  /** How many times it fired again within the cool-down. */
  reopened: number;
  /** Its watch was removed while it was open: no longer tracked (who removed it, when). */
  untracked?: { by: string; at: number };
  /** The chart of its window, uploaded to Slack, which the parent shows (a zone alert's; absent: none). */
  chart?: { fileId: string; altText: string } | null;
  subject:
    | {
        kind: "zone";
        shieldZoneId: number;
        label: string | null;
        readings: SignalNumbers[];
        /** The busiest IP in the event log when it fired, if known. */
        topOffender: string | null;
        /** Set when not every IP group was read: the top offender is the busiest of this many groups. */
        topOffenderOfGroups?: number;
        /** The zone's DDoS sensitivity at the latest evaluation, if known (the DDoS button needs it). */
        ddosSensitivity: number | null;
        /** edgeops' block list in force held the top offender at the latest evaluation: no Block button. */
        topOffenderBlocked?: boolean;
      }
    | {
        kind: "app";
        appId: string;
        appName: string;
        status: string;
        transition: "failing" | "stuck_deploying";
        /** Since when it has had this status. */
        since: number;
        /** It had it already when the watch first looked: `since` is when the watch started, a lower bound. */
        sinceAtLeast?: boolean;
      };
}

/** What happened since the last message: what the episode's thread should be told. */
export type AlertEvent =
  | { kind: "worse"; signals: AlertSignal[]; readings: SignalNumbers[] }
  | { kind: "status"; appName: string; status: string }
  | { kind: "resolved"; durationMs: number }
  | { kind: "fired_again"; afterMs: number };

/** The subject-specific part of a parent message, kept in the episode's details. */
export type EpisodeSubject = AlertView["subject"];

export interface EpisodeDetails {
  subject: EpisodeSubject;
  reopened: number;
  /** The subject as it was when the episode opened (subject is brought up to date as it fires). */
  opening?: EpisodeSubject;
  /** The chart last drawn for the parent (jobs/alerts.ts), kept through the subject's updates. */
  chart?: AlertChartRecord;
}

/**
 * The chart drawn for a parent: a digest of the data it was drawn from (the same data is not drawn again), and
 * the uploaded file, or null when there is no picture for this data (empty, no files:write, the upload failed).
 */
export interface AlertChartRecord {
  digest: string;
  fileId: string | null;
  altText: string;
  /** Files this one replaced that Slack may still show (its parent was not sent yet): deleted once it is. */
  replaced?: string[];
}

/** The subject of an episode whose details are missing or of an unknown shape: named from the watch alone. */
function fallbackSubject(episode: AlertEpisode, watch: Watch): EpisodeSubject {
  if (watch.kind === "zone")
    return {
      kind: "zone",
      shieldZoneId: Number(watch.target),
      label: watch.options.label ?? null,
      readings: [],
      topOffender: null,
      ddosSensitivity: null,
    };
  return {
    kind: "app",
    appId: episode.subject,
    appName: episode.subject,
    status: "unknown",
    transition: episode.kind === "stuck_deploying" ? "stuck_deploying" : "failing",
    since: episode.openedAt,
  };
}

function detailsOf(episode: AlertEpisode): Partial<EpisodeDetails> | undefined {
  const d = episode.details as Partial<EpisodeDetails> | null | undefined;
  const kind = (d?.subject as { kind?: unknown } | undefined)?.kind;
  return d && (kind === "zone" || kind === "app") ? d : undefined;
}

export function alertViewOf(episode: AlertEpisode, watch: Watch): AlertView {
  const details = detailsOf(episode);
  return {
    episodeId: episode.id,
    status: episode.status,
    openedAt: episode.openedAt,
    resolvedAt: episode.resolvedAt,
    acknowledgedBy: episode.acknowledgedBy,
    mutedUntil: watch.mutedUntil,
    reopened: details?.reopened ?? 0,
    subject: details?.subject ?? fallbackSubject(episode, watch),
    ...(details?.chart?.fileId
      ? { chart: { fileId: details.chart.fileId, altText: details.chart.altText } }
      : {}),
  };
}

/** Whether the view shows its watch muted at `now` (the one thing of a parent that time changes). */
export const isMutedAt = (v: Pick<AlertView, "mutedUntil">, now: number): boolean =>
  v.mutedUntil !== null && v.mutedUntil > now;

/**
 * What a parent shows, in a few bytes (recorded as the episode's shown_digest): the same digest means Slack
 * already shows this parent. The view is hashed as a reader sees it: an ended mute is no mute, and a zone's
 * numbers count at the precision the parent gives them (whole events per minute, z to one decimal; readings
 * at zero and under the baseline are not listed), so a wobble nobody could see is not sent again.
 */
export function parentDigest(v: AlertView, now: number): string {
  const s = v.subject;
  const shown = {
    ...v,
    mutedUntil: isMutedAt(v, now) ? v.mutedUntil : null,
    subject:
      s.kind === "zone"
        ? {
            ...s,
            readings: s.readings
              .filter((r) => r.over || r.count > 0)
              .map((r) => ({
                signal: r.signal,
                over: r.over,
                count: Math.round(r.count),
                mean: Math.round(r.mean),
                z: r.z.toFixed(1),
              })),
          }
        : s,
  };
  return createHash("sha256").update(JSON.stringify(shown)).digest("base64url");
}
