import type { KnownBlock } from "@slack/types";
import { formatInZone, parseSpec } from "../../services/schedules.js";
import type { Schedule } from "../../store/index.js";
import { context, header, packLines, section } from "./block-kit.js";
import { notPostedIn } from "./channel-failing.js";
import { channel, code, dateToken, type Mrkdwn, mention, mrkdwn } from "./mrkdwn.js";
import { type Reply, reply } from "./reply.js";

/** `daily at 09:00 (Europe/Amsterdam)`; a stored spec that no longer reads is shown as stored. */
export function scheduleLabel(s: Pick<Schedule, "spec" | "timezone">): string {
  let label: string;
  try {
    label = parseSpec(s.spec).label;
  } catch {
    label = s.spec;
  }
  return `${label} (${s.timezone})`;
}

export function scheduleCreatedMessage(
  s: Schedule,
  upcoming: readonly number[],
  existed: boolean,
  domain: string | null,
): Reply {
  const zone = domain ? `${domain} (zone ${s.target})` : `DNS zone ${s.target}`;
  const lead = existed
    ? `:calendar: This channel already gets a DNS summary of ${zone} ${scheduleLabel(s)}.`
    : `:calendar: Scheduled: a DNS summary of ${zone} in this channel, ${scheduleLabel(s)}.`;
  const runs = upcoming.map((ms) => `• ${formatInZone(ms, s.timezone)}`).join("\n");
  return reply(
    `${existed ? "Already scheduled" : "Scheduled"}: DNS summary of zone ${s.target}, ${scheduleLabel(s)}`,
    [
      section(lead),
      section(`*Next runs (${s.timezone}):*\n${runs}`),
      context(
        mrkdwn`Id ${code(s.id)} · post one now with ${code(`/edge schedule run ${s.id}`)} · stop with ${code(`/edge schedule remove ${s.id}`)}`,
      ),
    ],
  );
}

const OUTCOME_TEXT: Record<string, string> = {
  ok: ":white_check_mark: posted",
  partial: ":hourglass: posted (scan unfinished)",
  edge_error: ":warning: posted, Edge API error",
  channel_failing: ":no_entry: could not post here",
  slack_error: ":warning: Slack refused the post",
  error: ":x: failed",
};

function scheduleLine(s: Schedule): Mrkdwn {
  const last =
    s.lastRunAt === null
      ? "never run"
      : mrkdwn`last ${dateToken(s.lastRunAt)} ${OUTCOME_TEXT[s.lastOutcome ?? ""] ?? s.lastOutcome ?? ""}`;
  const failing = s.failing
    ? `\n:rotating_light: Failing: ${s.lastError ?? "the last post did not arrive"}`
    : "";
  return mrkdwn`${code(s.id)} · DNS zone ${s.target} · ${scheduleLabel(s)}\nnext ${dateToken(s.nextRunAt)} · ${last}${failing}`;
}

export function scheduleListMessage(schedules: readonly Schedule[]): Reply {
  if (schedules.length === 0)
    return reply("No schedules in this channel", [
      section(
        ":calendar: No DNS summaries are scheduled in this channel. Add one with `/edge schedule dns 5678 daily 09:00 Europe/Amsterdam`.",
      ),
    ]);
  const blocks: KnownBlock[] = [
    header(`Scheduled DNS summaries (${schedules.length})`),
    ...packLines(schedules.map(scheduleLine), 45, "schedules"),
    context("Remove one with `/edge schedule remove <id>`; post one now with `/edge schedule run <id>`."),
  ];
  return reply(`${schedules.length} scheduled DNS summaries in this channel`, blocks);
}

export function scheduleRemovedMessage(s: Schedule): Reply {
  return reply(`Removed schedule ${s.id}`, [
    section(
      mrkdwn`:wastebasket: Removed ${code(s.id)}: the DNS summary of zone ${s.target} ${scheduleLabel(s)} in ${channel(s.channelId)}.`,
    ),
  ]);
}

/**
 * The note left where a schedule posted when someone removes it from another channel: who removed it, and
 * from where only when that channel is public (a private channel is never named to another).
 */
export function scheduleRemovedNote(s: Schedule, removedBy: string, from: string | null): Reply {
  const where = from === null ? "from another channel" : mrkdwn`from ${channel(from)}`;
  const text = mrkdwn`:wastebasket: ${mention(removedBy)} removed the scheduled DNS summary of zone ${s.target} (${code(s.id)}, ${scheduleLabel(s)}) that posted here, ${where}. No more summaries of it will be posted in this channel.`;
  return reply(text, [section(text)]);
}

/** The one direct message a schedule's creator gets when its channel stops taking posts. */
export function channelFailingDm(s: Schedule, slackError: string): Reply {
  const problem = notPostedIn(slackError, s.channelId, { kind: "schedule", id: s.id });
  const text = mrkdwn`:rotating_light: Your scheduled DNS summary of zone ${s.target} (${code(s.id)}) ${problem} I'll try again at its next run and won't message you again about it until it works.`;
  return reply(text, [section(text)]);
}
