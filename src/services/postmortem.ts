/**
 * A postmortem draft in Markdown, written from an incident's timeline: summary, impact (peak per signal,
 * duration), timeline, mitigations still in force (and when temporary ones end), open questions. Plain
 * Markdown for a file, not Slack mrkdwn; every outside string is escaped here.
 */
import { type AlertSignal, SIGNAL_LABELS } from "../alerts/view.js";
import { TRAFFIC_METRIC_LABELS } from "./incident.js";
import type { ChangeStep, TimelineEntry, TimelineStory } from "./timeline.js";

const STEPS: Record<ChangeStep, string> = {
  asked: "asked for",
  approval: "approved",
  approved: "approved",
  rejected: "rejected",
  withdrawn: "withdrew",
  applied: "applied",
  failed: "could not apply",
  undone: "undid",
  expired: "let expire",
  cancelled: "cancelled",
  retried: "retried",
};

/** Markdown's special characters, escaped, on one line. */
export function escapeMarkdown(s: string): string {
  return s.replace(/[\\`*_{}[\]()<>#+!|~]/g, (c) => `\\${c}`).replace(/\s+/g, " ");
}

function durationWords(ms: number): string {
  const minutes = Math.max(1, Math.round(ms / 60_000));
  const h = Math.floor(minutes / 60);
  const m = minutes % 60;
  return [h > 0 ? `${h} h` : "", m > 0 || h === 0 ? `${m} min` : ""].filter(Boolean).join(" ");
}

const iso = (ms: number) => `${new Date(ms).toISOString().slice(0, 16).replace("T", " ")} UTC`;
const n = (v: number) => Math.round(v).toLocaleString("en-US");

export interface PostmortemNames {
  /** A user's name for a Slack user id (falls back to the id). */
  user(id: string): string;
  /** A channel's name for its id (falls back to the id). */
  channel(id: string): string;
}

function who(by: string | null, names: PostmortemNames): string {
  if (by === null) return "The watch";
  if (by === "system") return "edgeops";
  return `@${escapeMarkdown(names.user(by))}`;
}

function entryText(e: TimelineEntry, names: PostmortemNames): string {
  const where = e.channelId ? ` in #${escapeMarkdown(names.channel(e.channelId))}` : "";
  switch (e.kind) {
    case "alert_opened": {
      const over = e.signals.filter((s) => s.over);
      const numbers = over
        .map(
          (s) =>
            `${SIGNAL_LABELS[s.signal as AlertSignal] ?? escapeMarkdown(s.signal)} ${n(s.count)}/min (usually ${n(s.mean)})`,
        )
        .join(", ");
      const of =
        e.topOffenderOfGroups === undefined ? "" : ` (top of the first ${n(e.topOffenderOfGroups)} groups)`;
      return `Alert opened${where}${numbers ? `: ${numbers}` : ""}${e.topOffender ? `; busiest IP ${escapeMarkdown(e.topOffender)}${of}` : ""}`;
    }
    case "alert_acknowledged":
      return `${who(e.by, names)} acknowledged the alert`;
    case "alert_resolved":
      return e.watchRemoved
        ? `Alert closed after ${durationWords(e.durationMs)}: its watch was removed (not resolved)`
        : `Alert resolved after ${durationWords(e.durationMs)}`;
    case "dashboard_change":
      return `${escapeMarkdown(e.title)} changed outside edgeops: ${escapeMarkdown(e.from)} → ${escapeMarkdown(e.to)} (noticed by the config watch${where})`;
    case "watch_muted":
      return e.until === null
        ? `${who(e.by, names)} unmuted the watch${where}`
        : `${who(e.by, names)} muted the watch${where} until ${iso(e.until)}`;
    case "change": {
      const count = e.approvals ? ` (${e.approvals.count} of ${e.approvals.needed})` : "";
      const note = e.note ? ` — ${escapeMarkdown(e.note)}` : "";
      return `${who(e.by, names)} ${STEPS[e.step]}${count}: ${escapeMarkdown(e.change)}${where}${note}`;
    }
  }
}

/** The questions the story leaves open, for the people who write the postmortem. */
function openQuestions(story: TimelineStory): string[] {
  const { timeline } = story;
  const qs: string[] = [];
  if (timeline.alerts.firing > 0) qs.push("The alert is still firing: is the incident over?");
  const acknowledged = timeline.entries.some((e) => e.kind === "alert_acknowledged");
  if (timeline.alerts.count > 0 && !acknowledged) qs.push("Nobody acknowledged the alert: who was on call?");
  const failed = timeline.entries.filter((e) => e.kind === "change" && e.step === "failed").length;
  if (failed > 0) qs.push(`${failed} change step${failed === 1 ? "" : "s"} failed: why, and was it retried?`);
  const expired = timeline.entries.filter((e) => e.kind === "change" && e.step === "expired").length;
  if (expired > 0)
    qs.push(`${expired} request${expired === 1 ? "" : "s"} expired unanswered: were approvers reachable?`);
  const temporary = timeline.mitigations.filter((m) => m.until !== null);
  if (temporary.length > 0)
    qs.push(
      "Temporary mitigations end on their own (see Mitigations still in force): keep them longer, make them permanent, or let them go?",
    );
  if (timeline.mitigations.some((m) => m.until === null))
    qs.push("Permanent mitigations are still in force: when are they reviewed?");
  qs.push("What was the root cause, and what would have caught it sooner?");
  return qs;
}

/** The draft, as the text of a Markdown file. */
export function postmortemMarkdown(
  story: TimelineStory,
  label: string | null,
  names: PostmortemNames,
): string {
  const { timeline, peaks } = story;
  const { range, alerts } = timeline;
  const zone = label
    ? `${escapeMarkdown(label)} (shield zone ${timeline.zoneId})`
    : `shield zone ${timeline.zoneId}`;
  const out: string[] = [`# Postmortem draft: ${zone}`, ""];
  out.push(
    `_Written by edgeops from what it stored, ${iso(range.from)} to ${iso(range.to)}. A draft: edit it._`,
    "",
  );

  out.push("## Summary", "");
  const requests = new Set(timeline.entries.flatMap((e) => (e.kind === "change" ? [e.requestId] : []))).size;
  const duration =
    alerts.firstOpenedAt === null ? null : (alerts.lastResolvedAt ?? range.to) - alerts.firstOpenedAt;
  out.push(
    alerts.count === 0
      ? `No alert on ${zone} in the last ${range.words}; ${requests} change request${requests === 1 ? "" : "s"}.`
      : `${alerts.count} alert${alerts.count === 1 ? "" : "s"} on ${zone}, first opened ${iso(alerts.firstOpenedAt ?? range.from)}${
          alerts.firing > 0 ? ", still firing" : `, over at ${iso(alerts.lastResolvedAt ?? range.to)}`
        }; ${requests} change request${requests === 1 ? "" : "s"}.`,
    "",
  );

  out.push("## Impact", "");
  if (duration !== null)
    out.push(`- Duration: ${durationWords(duration)}${alerts.firing > 0 ? " so far" : ""}`);
  if (peaks === null) out.push("- Peaks: not read for this draft.");
  else if ("error" in peaks) out.push(`- Peaks: not available (${escapeMarkdown(peaks.error)})`);
  else
    for (const p of peaks.ok)
      out.push(
        `- ${TRAFFIC_METRIC_LABELS[p.metric]}: peak ${n(p.peak)} in ${durationWords(p.bucketMs)} at ${iso(p.at)}; ${n(p.total)} in the window`,
      );
  out.push("");

  out.push("## Timeline", "");
  if (timeline.entries.length === 0) out.push("Nothing edgeops knows of happened in the window.");
  for (const e of timeline.entries) out.push(`- ${iso(e.at)} — ${entryText(e, names)}`);
  if (timeline.hidden > 0)
    out.push(
      "",
      `_${timeline.hidden} ${timeline.hidden === 1 ? "entry" : "entries"} from other channels ${timeline.hidden === 1 ? "is" : "are"} left out of this channel's draft._`,
    );
  if (timeline.cut) out.push("", "_More changes than one timeline holds: the oldest are left out._");
  out.push("");

  out.push("## Mitigations still in force", "");
  if (timeline.mitigations.length === 0) out.push("None that edgeops made.");
  for (const m of timeline.mitigations)
    out.push(
      `- ${escapeMarkdown(m.change)} (asked by ${who(m.requestedBy, names)}${m.appliedAt !== null ? `, applied ${iso(m.appliedAt)}` : ""}): ${
        m.until === null ? "permanent" : `temporary, undone at ${iso(m.until)}`
      }`,
    );
  out.push("");

  out.push("## Open questions", "");
  for (const q of openQuestions(story)) out.push(`- ${q}`);
  out.push("");
  return out.join("\n");
}
