import type { Button, KnownBlock } from "@slack/types";
import { signalLabel } from "../../alerts/view.js";
import { TRAFFIC_METRIC_LABELS } from "../../services/incident.js";
import type { ChangeStep, TimelineEntry, TimelineStory } from "../../services/timeline.js";
import { ACTIONS } from "../ids.js";
import { durationWords } from "./approvals.js";
import { actions, button, context, header, packLines, section } from "./block-kit.js";
import {
  channel,
  dateToken,
  joinMrkdwn,
  type Mrkdwn,
  type MrkdwnInput,
  mention,
  mrkdwn,
  truncate,
} from "./mrkdwn.js";
import { type Reply, reply } from "./reply.js";

/**
 * `/edge timeline`: the story of an incident on one shield zone, one line per thing that happened, oldest
 * first, paged so a message stays within Block Kit's limits (50 blocks, 3000 characters a section). Pure.
 */

/** Timeline lines one message shows; the rest are on the next pages. */
export const TIMELINE_PAGE_SIZE = 60;
/** Blocks the lines may take (the rest of the message takes at most 12). */
const LINE_BLOCKS = 36;

/** What a page button carries: zone, window, the window's end (so pages agree), page, and the domain typed. */
export interface TimelineButtonValue {
  z: number;
  w: string;
  t: number;
  pg: number;
  l?: string;
}

const STEP_LOOK: Record<ChangeStep, { emoji: string; verb: string }> = {
  asked: { emoji: ":memo:", verb: "asked for" },
  approval: { emoji: ":+1:", verb: "approved" },
  approved: { emoji: ":white_check_mark:", verb: "approved" },
  rejected: { emoji: ":no_entry:", verb: "rejected" },
  withdrawn: { emoji: ":leftwards_arrow_with_hook:", verb: "withdrew" },
  applied: { emoji: ":hammer_and_wrench:", verb: "applied" },
  failed: { emoji: ":x:", verb: "could not apply" },
  undone: { emoji: ":rewind:", verb: "undid" },
  undo_skipped: { emoji: ":fast_forward:", verb: "skipped the undo of" },
  expired: { emoji: ":hourglass:", verb: "let expire" },
  cancelled: { emoji: ":heavy_minus_sign:", verb: "cancelled" },
  retried: { emoji: ":repeat:", verb: "retried" },
};

function who(by: string | null): MrkdwnInput {
  if (by === null) return "The watch";
  if (by === "system") return "edgeops";
  return mention(by);
}

const n = (v: number) => Math.round(v).toLocaleString("en-US");

function entryLine(e: TimelineEntry): Mrkdwn {
  const when = dateToken(e.at);
  const where = e.channelId ? mrkdwn` in ${channel(e.channelId)}` : "";
  switch (e.kind) {
    case "alert_opened": {
      const over = e.signals.filter((s) => s.over);
      const asOf = e.latestReadings ? "latest readings (those at opening were not kept): " : "";
      const numbers =
        over.length > 0
          ? mrkdwn`: ${asOf}${over.map((s) => `${signalLabel(s.signal)} ${n(s.count)}/min (usually ${n(s.mean)})`).join(", ")}`
          : "";
      const of =
        e.topOffenderOfGroups === undefined ? "" : ` (top of the first ${n(e.topOffenderOfGroups)} groups)`;
      const top = e.topOffender ? mrkdwn`; busiest IP ${truncate(e.topOffender, 60)}${of}` : "";
      return mrkdwn`${when} :rotating_light: Alert opened${where}${numbers}${top}`;
    }
    case "alert_acknowledged":
      return mrkdwn`${when} :eyes: ${who(e.by)} acknowledged the alert`;
    case "alert_resolved":
      return e.watchRemoved
        ? mrkdwn`${when} :white_circle: Alert closed after ${durationWords(e.durationMs)}: its watch was removed (not resolved)`
        : mrkdwn`${when} :large_green_circle: Alert resolved after ${durationWords(e.durationMs)}`;
    case "dashboard_change":
      return mrkdwn`${when} :gear: ${truncate(e.title, 80)} changed outside edgeops: ${truncate(e.from, 80)} → ${truncate(e.to, 80)} (noticed by the config watch${where})`;
    case "watch_muted":
      return e.until === null
        ? mrkdwn`${when} :loud_sound: ${who(e.by)} unmuted the watch${where}`
        : mrkdwn`${when} :mute: ${who(e.by)} muted the watch${where} until ${dateToken(e.until)}`;
    case "change": {
      const look = STEP_LOOK[e.step];
      const count = e.approvals ? ` (${e.approvals.count} of ${e.approvals.needed})` : "";
      const note = e.note ? mrkdwn` — ${truncate(e.note, 300)}` : "";
      const how = e.withoutApproval
        ? " · without approval"
        : e.inForceMs !== undefined
          ? ` · after ${durationWords(e.inForceMs)} in force`
          : "";
      return mrkdwn`${when} ${look.emoji} ${who(e.by)} ${look.verb}${count}: ${truncate(e.change, 300)}${where}${how}${note}`;
    }
  }
}

function zoneTitle(zoneId: number, label: string | null): string {
  return label ? `${truncate(label, 80)} (shield zone ${zoneId})` : `shield zone ${zoneId}`;
}

function summaryLine(story: TimelineStory, now: number): Mrkdwn {
  const { alerts, range, entries } = story.timeline;
  const changes = new Set(entries.flatMap((e) => (e.kind === "change" ? [e.requestId] : []))).size;
  const alertWords =
    alerts.count === 0
      ? "no alert"
      : alerts.firing > 0
        ? `${alerts.count} alert${alerts.count === 1 ? "" : "s"}, still firing`
        : `${alerts.count} alert${alerts.count === 1 ? "" : "s"}`;
  const span =
    alerts.firstOpenedAt !== null
      ? mrkdwn`; first opened ${dateToken(alerts.firstOpenedAt)}, ${
          alerts.lastResolvedAt !== null
            ? `over after ${durationWords(alerts.lastResolvedAt - alerts.firstOpenedAt)}`
            : `${durationWords(now - alerts.firstOpenedAt)} so far`
        }`
      : "";
  return mrkdwn`*Last ${range.words}:* ${alertWords}${span}; ${changes} change request${changes === 1 ? "" : "s"}.`;
}

function peaksLine(story: TimelineStory): Mrkdwn | null {
  if (story.peaks === null) return null;
  if ("error" in story.peaks) return mrkdwn`*Peaks:* not available (${story.peaks.error})`;
  const busy = story.peaks.ok.filter((p) => p.peak > 0);
  if (busy.length === 0) return mrkdwn`*Peaks:* nothing blocked, challenged or logged in the window.`;
  return mrkdwn`*Peaks* (busiest ${durationWords(busy[0]?.bucketMs ?? 0)}): ${joinMrkdwn(
    busy.map(
      (p) =>
        mrkdwn`${TRAFFIC_METRIC_LABELS[p.metric]} ${n(p.peak)} in the ${durationWords(p.bucketMs)} to ${dateToken(p.endsAt, "{time}")}`,
    ),
    " · ",
  )}`;
}

function mitigationLines(story: TimelineStory): Mrkdwn[] {
  return story.timeline.mitigations.map(
    (m) =>
      mrkdwn`• ${truncate(m.change, 300)} (${m.asked ? mrkdwn`${mention(m.asked.by)} in ${channel(m.asked.channelId)}` : "asked in another channel"}) ${
        m.until === null ? "permanent" : mrkdwn`until ${dateToken(m.until)}`
      }`,
  );
}

export type TimelineScope = "workspace" | "yours" | "channel";

const SCOPE_NOTES: Record<TimelineScope, string> = {
  workspace: "Every channel's entries, as you are an admin: this answer is for you alone.",
  yours: "Only what happened in the channels you are in (admins see every channel's entries).",
  channel: "Only what happened in this channel.",
};

export interface TimelineViewOptions {
  /** 1-based. */
  page: number;
  /** The zone's domain, when the user typed one. */
  label: string | null;
  /** Whose entries it holds: every channel's (an admin), the reader's channels', or this channel's (shared). */
  scope: TimelineScope;
  /** Buttons (paging, Export); none in a message edgeops posts on its own. */
  /**
   * Which buttons: all (paging and Export) on an answer for one reader; Export alone on a message the channel
   * sees (a page clicked there would show the clicker's channels to everyone); none when shared.
   */
  buttons: "all" | "export" | "none";
  now: number;
}

/** The story, one page of it. */
export function timelineMessage(story: TimelineStory, o: TimelineViewOptions): Reply {
  const { timeline } = story;
  const title = zoneTitle(timeline.zoneId, o.label);
  const pages = Math.max(1, Math.ceil(timeline.entries.length / TIMELINE_PAGE_SIZE));
  const page = Math.min(Math.max(1, o.page), pages);
  const shown = timeline.entries.slice((page - 1) * TIMELINE_PAGE_SIZE, page * TIMELINE_PAGE_SIZE);
  const blocks: KnownBlock[] = [header(truncate(`Timeline of ${title}`, 150))];
  const peaks = peaksLine(story);
  blocks.push(
    section(joinMrkdwn(peaks ? [summaryLine(story, o.now), peaks] : [summaryLine(story, o.now)], "\n")),
  );
  const mitigations = mitigationLines(story);
  if (mitigations.length > 0)
    blocks.push(...packLines([mrkdwn`*Still in force:*`, ...mitigations], 3, "mitigations"));
  const notes: MrkdwnInput[] = [];
  notes.push(SCOPE_NOTES[o.scope]);
  if (timeline.hidden > 0)
    notes.push(
      `${timeline.hidden} ${timeline.hidden === 1 ? "entry" : "entries"} from other channels ${timeline.hidden === 1 ? "is" : "are"} left out.`,
    );
  if (timeline.cut) notes.push("More changes than one timeline holds: the oldest are left out.");
  if (notes.length > 0) blocks.push(context(...notes));
  if (shown.length === 0) {
    blocks.push(
      section(`Nothing edgeops knows of happened on this zone in the last ${timeline.range.words}.`),
    );
  } else {
    blocks.push(...packLines(shown.map(entryLine), LINE_BLOCKS, "entries"));
    if (pages > 1)
      blocks.push(
        context(
          `Page ${page} of ${pages} (${timeline.entries.length} entries, ${TIMELINE_PAGE_SIZE} a page, oldest first).`,
        ),
      );
  }
  if (o.buttons !== "none") {
    const value = (pg: number) =>
      JSON.stringify({
        z: timeline.zoneId,
        w: timeline.range.window,
        t: timeline.range.to,
        pg,
        ...(o.label ? { l: o.label } : {}),
      } satisfies TimelineButtonValue);
    const row: Button[] = [];
    if (o.buttons === "all" && page > 1)
      row.push(button("Previous", ACTIONS.timelinePreviousPage, value(page - 1)));
    if (o.buttons === "all" && page < pages)
      row.push(button("Next", ACTIONS.timelineNextPage, value(page + 1)));
    row.push(button("Export postmortem draft", ACTIONS.timelineExport, value(1), "primary"));
    blocks.push(actions(...row));
  }
  return reply(
    `Timeline of ${title}: ${timeline.entries.length} entries in the last ${timeline.range.words}`,
    blocks,
  );
}

export function gatheringTimelineMessage(zone: number | string, words: string): Reply {
  const text = `Gathering the timeline of zone ${zone} over the last ${words}…`;
  return reply(text, [section(`:hourglass_flowing_sand: ${text}`)]);
}

/** What the person who pressed Export is told once the file is in the channel. */
export function exportedReply(channelId: string, fileName: string): Reply {
  return reply(`Posted ${fileName}`, [
    section(mrkdwn`:page_facing_up: Posted the postmortem draft ${fileName} in ${channel(channelId)}.`),
  ]);
}
