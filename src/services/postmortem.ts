/**
 * A postmortem draft in Markdown, written from an incident's timeline: a summary (what attacked, what was
 * done, what ended it, the times to acknowledge, to first mitigation and to calm), the impact (peak per
 * signal, read for the story's own window and saying which), one row per change (asked by, approved by,
 * applied, undone, how long in force), the timeline, the mitigations still in force, open questions. Plain
 * Markdown for a file, not Slack mrkdwn; every outside string is escaped here. Nothing here claims a cause
 * edgeops can't know (that a change ended the attack).
 */
import { type AlertSignal, SIGNAL_LABELS } from "../alerts/view.js";
import { TRAFFIC_METRIC_LABELS } from "./incident.js";
import { effectWords, type MitigationEffect } from "./mitigation-effect.js";
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
  undo_skipped: "skipped the undo of",
  expired: "let expire",
  cancelled: "cancelled",
  retried: "retried",
};

/**
 * A word a Markdown renderer would turn into a link or a mention by itself (GitHub's and most wikis'
 * autolinks): a URL, a `www.` or bare domain, an e-mail address, an @name.
 */
const LINKABLE =
  /[a-z][a-z0-9+.-]*:\/\/|^mailto:|^www\.|@|[a-z0-9-]\.[a-z][a-z0-9-]*[a-z0-9](?:$|[/:?#)\].,;!'"])/i;

/** A code span holding `s` as written: a fence longer than any run of backticks in it. */
function codeSpan(s: string): string {
  const longest = Math.max(0, ...(s.match(/`+/g) ?? []).map((r) => r.length));
  const fence = "`".repeat(longest + 1);
  const pad = s.startsWith("`") || s.endsWith("`") ? " " : "";
  return `${fence}${pad}${s}${pad}${fence}`;
}

/**
 * Markdown's special characters escaped, on one line. A word that would be autolinked (a URL or domain, an
 * e-mail address, an @name in a zone's name or a reason) is put in a code span, which no renderer links:
 * the export never carries a live link or mention that someone typed into a name.
 */
export function escapeMarkdown(s: string): string {
  return s
    .split(/\s+/)
    .map((word) =>
      LINKABLE.test(word) ? codeSpan(word) : word.replace(/[\\`*_{}[\]()<>#+!|~]/g, (c) => `\\${c}`),
    )
    .join(" ");
}

function durationWords(ms: number): string {
  const minutes = Math.max(1, Math.round(ms / 60_000));
  const h = Math.floor(minutes / 60);
  const m = minutes % 60;
  return [h > 0 ? `${h} h` : "", m > 0 || h === 0 ? `${m} min` : ""].filter(Boolean).join(" ");
}

const iso = (ms: number) => `${new Date(ms).toISOString().slice(0, 16).replace("T", " ")} UTC`;
/** The time alone on the story's last day, the date too on another. */
const at = (ms: number, storyEnd: number) =>
  new Date(ms).toISOString().slice(0, 10) === new Date(storyEnd).toISOString().slice(0, 10)
    ? `${new Date(ms).toISOString().slice(11, 16)} UTC`
    : iso(ms);
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

/** The signals over their baseline when the alert opened, and its busiest IP. */
function attackWords(e: TimelineEntry & { kind: "alert_opened" }): string {
  const numbers = e.signals
    .filter((s) => s.over)
    .map(
      (s) =>
        `${SIGNAL_LABELS[s.signal as AlertSignal] ?? escapeMarkdown(s.signal)} ${n(s.count)}/min (usually ${n(s.mean)})`,
    )
    .join(", ");
  const asOf = numbers && e.latestReadings ? "latest readings (those at opening were not kept): " : "";
  const of =
    e.topOffenderOfGroups === undefined ? "" : ` (top of the first ${n(e.topOffenderOfGroups)} groups)`;
  return [`${asOf}${numbers}`, e.topOffender ? `busiest IP ${escapeMarkdown(e.topOffender)}${of}` : ""]
    .filter(Boolean)
    .join("; ");
}

function entryText(e: TimelineEntry, names: PostmortemNames): string {
  const where = e.channelId ? ` in #${escapeMarkdown(names.channel(e.channelId))}` : "";
  switch (e.kind) {
    case "alert_opened": {
      const words = attackWords(e);
      return `Alert opened${where}${words ? `: ${words}` : ""}`;
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
      const how = e.withoutApproval
        ? " (without approval)"
        : e.inForceMs !== undefined
          ? ` after ${durationWords(e.inForceMs)} in force`
          : "";
      return `${who(e.by, names)} ${STEPS[e.step]}${count}: ${escapeMarkdown(e.change)}${where}${how}${note}`;
    }
  }
}

type ChangeEntry = TimelineEntry & { kind: "change" };

/** One change request as the story tells it: its steps, oldest first. */
interface ChangeRow {
  change: string;
  steps: ChangeEntry[];
}

function changeRows(story: TimelineStory): ChangeRow[] {
  const rows = new Map<string, ChangeRow>();
  for (const e of story.timeline.entries) {
    if (e.kind !== "change") continue;
    const row = rows.get(e.requestId) ?? { change: e.change, steps: [] };
    row.steps.push(e);
    rows.set(e.requestId, row);
  }
  return [...rows.values()];
}

const last = (row: ChangeRow, ...steps: ChangeEntry["step"][]) =>
  row.steps.filter((s) => steps.includes(s.step)).at(-1);

/** Who approved a change, in order of first approval ("no approval needed" where the policy asked none). */
function approvedByWords(row: ChangeRow, names: PostmortemNames): string {
  const approvers = [
    ...new Set(row.steps.filter((s) => s.step === "approval" || s.step === "approved").map((s) => s.by)),
  ];
  return approvers.length === 0
    ? "—"
    : approvers.map((by) => (by === "system" ? "no approval needed" : who(by, names))).join(", ");
}

/** Why a change that was asked is not in force, in words. */
function notApplied(row: ChangeRow, names: PostmortemNames): string {
  const end = row.steps.at(-1);
  const note = end?.note ? `: ${escapeMarkdown(end.note)}` : "";
  switch (end?.step) {
    case "failed":
      return `not applied${note}`;
    case "rejected":
      return `rejected by ${who(end.by, names)}${note}`;
    case "withdrawn":
      return `withdrawn by ${who(end.by, names)}`;
    case "expired":
      return "not applied: expired unanswered";
    case "cancelled":
      return `cancelled${note}`;
    case "asked":
    case "approval":
      return "not yet: waiting for approval";
    default:
      return "not applied";
  }
}

function changesTable(story: TimelineStory, names: PostmortemNames): string[] {
  const rows = changeRows(story);
  if (rows.length === 0) return ["No change was asked through edgeops in the window."];
  const end = story.timeline.range.to;
  const until = new Map(story.timeline.mitigations.map((m) => [m.requestId, m.until]));
  const out = [
    "| Change | Asked by | Approved by | Applied | Undone | In force for |",
    "| --- | --- | --- | --- | --- | --- |",
  ];
  for (const row of rows) {
    const asked = last(row, "asked");
    const approvedBy = approvedByWords(row, names);
    const applied = last(row, "applied");
    const undone = applied ? row.steps.find((s) => s.step === "undone" && s.at >= applied.at) : undefined;
    const requestId = row.steps[0]?.requestId ?? "";
    const ends = until.get(requestId);
    const skipped = applied
      ? row.steps.find((s) => s.step === "undo_skipped" && s.at >= applied.at)
      : undefined;
    const undoneCell = !applied
      ? "—"
      : skipped && !undone
        ? `undo skipped ${at(skipped.at, end)}${skipped.note ? `: ${escapeMarkdown(skipped.note)}` : ""}`
        : undone
          ? `${at(undone.at, end)}${undone.by && undone.by !== "system" ? ` by ${who(undone.by, names)}` : ""}`
          : until.has(requestId)
            ? `not yet (${ends === null || ends === undefined ? "permanent" : `ends ${at(ends, end)}`})`
            : "no longer in force; no undo recorded in the window";
    const inForce = !applied
      ? "—"
      : `${durationWords((undone?.at ?? end) - applied.at)}${undone ? "" : " so far"}`;
    out.push(
      `| ${escapeMarkdown(row.change)} | ${asked ? who(asked.by, names) : "—"} | ${approvedBy} | ${
        applied ? at(applied.at, end) : notApplied(row, names)
      } | ${undoneCell} | ${inForce} |`,
    );
  }
  return out;
}

/** A change's measured effect for the draft, with an entry's wanted state ("since the block…"). */
export interface DraftEffect {
  effect: MitigationEffect;
  state?: "block" | "challenge" | "none";
}

/**
 * One row per change applied in the window: what, asked by, approved by, applied at, in force for, and its
 * measured effect (or why it cannot be said; or that edgeops does not measure that kind of change).
 */
function whatWorkedTable(
  story: TimelineStory,
  names: PostmortemNames,
  effects: ReadonlyMap<string, DraftEffect>,
): string[] {
  const end = story.timeline.range.to;
  const rows = changeRows(story).filter((row) => last(row, "applied"));
  if (rows.length === 0) return ["No change was applied through edgeops in the window."];
  const out = [
    "| What | Asked by | Approved by | Applied at | In force for | Effect |",
    "| --- | --- | --- | --- | --- | --- |",
  ];
  for (const row of rows) {
    const applied = last(row, "applied");
    if (!applied) continue;
    const asked = last(row, "asked");
    const approvedBy = approvedByWords(row, names);
    const undone = row.steps.find((s) => s.step === "undone" && s.at >= applied.at);
    const inForce = `${durationWords((undone?.at ?? end) - applied.at)}${undone ? "" : " so far"}`;
    const measured = effects.get(applied.requestId);
    const effect = measured
      ? escapeMarkdown(effectWords(measured.effect, measured.state))
      : "not measured: edgeops measures blocks, challenges, DDoS sensitivity and WAF mode";
    out.push(
      `| ${escapeMarkdown(row.change)} | ${asked ? who(asked.by, names) : "—"} | ${approvedBy} | ${at(applied.at, end)} | ${inForce} | ${effect} |`,
    );
  }
  return out;
}

/** What attacked, what was done, what ended it, and how long each step took. */
function summaryLines(story: TimelineStory): string[] {
  const { timeline } = story;
  const { alerts, entries, range } = timeline;
  const opened = entries.find(
    (e): e is TimelineEntry & { kind: "alert_opened" } => e.kind === "alert_opened",
  );
  const start = alerts.firstOpenedAt;
  const attack = opened ? attackWords(opened) : "";
  const out: string[] = [];
  out.push(
    `- **What attacked:** ${
      start === null
        ? "no alert in the window: edgeops does not know of an attack."
        : attack || "the alert stored no reading: not known."
    }`,
  );

  const rows = changeRows(story);
  const applied = rows.flatMap((row) => {
    const a = last(row, "applied");
    return a ? [{ change: row.change, at: a.at }] : [];
  });
  const others = rows.length - applied.length;
  const done =
    applied.length === 0
      ? "no change was applied through edgeops"
      : applied.map((a) => `${escapeMarkdown(a.change)}, applied ${at(a.at, range.to)}`).join("; ");
  out.push(
    `- **What was done:** ${done}${
      others > 0
        ? `; ${others} ${applied.length > 0 ? "more " : ""}change${others === 1 ? " was" : "s were"} asked and not applied (see Changes)`
        : ""
    }.`,
  );

  const resolved = entries.filter((e) => e.kind === "alert_resolved").at(-1);
  let ended: string;
  if (start === null) ended = "no alert in the window.";
  else if (alerts.firing > 0) ended = "nothing yet: the alert is still firing.";
  else if (resolved?.kind === "alert_resolved" && resolved.watchRemoved)
    ended = "not known: the alert was closed when its watch was removed, not resolved.";
  else if (alerts.lastResolvedAt === null) ended = "not known: the alert's end is outside the window.";
  else {
    const calm = alerts.lastResolvedAt;
    const before = applied.filter((a) => a.at <= calm).at(-1);
    ended = before
      ? `the alert resolved at ${at(calm, range.to)}, ${durationWords(calm - before.at)} after the last change edgeops applied; edgeops does not know whether that change ended it.`
      : `the alert resolved at ${at(calm, range.to)} with no change applied through edgeops before it: it ended on its own or by something edgeops does not see.`;
  }
  out.push(`- **What ended it:** ${ended}`);

  if (start !== null) {
    const ack = entries.find((e) => e.kind === "alert_acknowledged" && e.at >= start);
    out.push(
      `- Time to acknowledge: ${ack ? durationWords(ack.at - start) : "nobody acknowledged the alert"}`,
    );
    const first = applied.find((a) => a.at >= start);
    out.push(
      `- Time to first mitigation: ${first ? durationWords(first.at - start) : "no change applied through edgeops after the alert"}`,
    );
    out.push(
      `- Time to calm: ${
        alerts.firing > 0
          ? `still firing (${durationWords(range.to - start)} so far)`
          : alerts.lastResolvedAt === null || (resolved?.kind === "alert_resolved" && resolved.watchRemoved)
            ? "not known"
            : durationWords(alerts.lastResolvedAt - start)
      }`,
    );
  }
  return out;
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

/** The chart uploaded beside the draft: its file name (the draft links to it) and what it shows in words. */
export interface PostmortemChart {
  filename: string;
  altText: string;
}

/** The chart's numbers: one row per slot, one column per traffic series (the picture's own data). */
function trafficTable(story: TimelineStory): string[] {
  const traffic = story.traffic;
  if (!traffic || "error" in traffic || traffic.ok.length === 0) return [];
  const { range } = story.timeline;
  const rows = traffic.ok;
  const slots = rows[0]?.series.length ?? 0;
  const out = [
    `| Slot (${durationWords(range.bucketMs)}, from) | ${rows.map((r) => TRAFFIC_METRIC_LABELS[r.metric]).join(" | ")} |`,
    `|---|${rows.map(() => "---:").join("|")}|`,
  ];
  for (let i = 0; i < slots; i++)
    out.push(
      `| ${iso(range.metricsFrom + i * range.bucketMs)} | ${rows.map((r) => n(r.series[i] ?? 0)).join(" | ")} |`,
    );
  return out;
}

/** The draft, as the text of a Markdown file. */
export function postmortemMarkdown(
  story: TimelineStory,
  label: string | null,
  names: PostmortemNames,
  chart: PostmortemChart | null = null,
  /** Each applied change's measured effect, by request id (the What worked table). */
  effects: ReadonlyMap<string, DraftEffect> = new Map(),
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
    ...summaryLines(story),
    "",
  );

  out.push("## Impact", "");
  if (duration !== null)
    out.push(`- Duration: ${durationWords(duration)}${alerts.firing > 0 ? " so far" : ""}`);
  out.push(
    `- Read from the Edge API for the story's window, ${iso(range.metricsFrom)} to ${iso(range.metricsTo)} in ${durationWords(range.bucketMs)} slots (the same window whenever the draft is exported).`,
  );
  if (peaks === null) out.push("- Peaks: not read for this draft.");
  else if ("error" in peaks) out.push(`- Peaks: not available (${escapeMarkdown(peaks.error)})`);
  else
    for (const p of peaks.ok)
      out.push(
        `- ${TRAFFIC_METRIC_LABELS[p.metric]}: peak ${n(p.peak)} in the ${durationWords(p.bucketMs)} to ${iso(p.endsAt)}; ${n(p.total)} in the window`,
      );
  out.push("");

  out.push("## Changes", "", ...changesTable(story, names), "");

  out.push(
    "## What worked",
    "",
    "_Each change's effect as edgeops measured it when the draft was written: the hour before it against the minutes since (the last hour at most). Events are security events only; a number is not proof that the change ended the attack._",
    "",
    ...whatWorkedTable(story, names, effects),
    "",
  );

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
      `- ${escapeMarkdown(m.change)} (${m.asked ? `asked by ${who(m.asked.by, names)}` : "asked in another channel"}${m.appliedAt !== null ? `, applied ${iso(m.appliedAt)}` : ""}): ${
        m.until === null ? "permanent" : `temporary, undone at ${iso(m.until)}`
      }`,
    );
  out.push("");

  out.push("## Open questions", "");
  for (const q of openQuestions(story)) out.push(`- ${q}`);
  out.push("");

  // Last: the picture (uploaded beside the draft, linked by its file name) and its numbers.
  const table = trafficTable(story);
  if (chart || table.length > 0) {
    out.push("## Traffic and threats", "");
    if (chart) out.push(`![${escapeMarkdown(chart.altText)}](${encodeURI(chart.filename)})`, "");
    if (table.length > 0)
      out.push(
        "Requests per slot (the chart draws each slot's count divided by its minutes):",
        "",
        ...table,
        "",
      );
  }
  return out.join("\n");
}
