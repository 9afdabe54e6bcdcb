import type { KnownBlock } from "@slack/types";
import { formatInZone, parseSpec } from "../../services/schedules.js";
import type { Schedule } from "../../store/index.js";
import { context, escapeMrkdwn, header, packLines, type Reply, section } from "./common.js";
import { slackDateFromMs } from "./dates.js";

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
  const zone = domain ? `${escapeMrkdwn(domain)} (zone ${s.target})` : `DNS zone ${s.target}`;
  const lead = existed
    ? `:calendar: This channel already gets a DNS summary of ${zone} ${escapeMrkdwn(scheduleLabel(s))}.`
    : `:calendar: Scheduled: a DNS summary of ${zone} in this channel, ${escapeMrkdwn(scheduleLabel(s))}.`;
  const runs = upcoming.map((ms) => `• ${formatInZone(ms, s.timezone)}`).join("\n");
  return {
    text: `${existed ? "Already scheduled" : "Scheduled"}: DNS summary of zone ${s.target}, ${scheduleLabel(s)}`,
    blocks: [
      section(lead),
      section(`*Next runs (${escapeMrkdwn(s.timezone)}):*\n${runs}`),
      context(
        `Id \`${s.id}\` · post one now with \`/edge schedule run ${s.id}\` · stop with \`/edge schedule remove ${s.id}\``,
      ),
    ],
  };
}

const OUTCOME_TEXT: Record<string, string> = {
  ok: ":white_check_mark: posted",
  partial: ":hourglass: posted (scan unfinished)",
  edge_error: ":warning: posted, Edge API error",
  channel_failing: ":no_entry: could not post here",
  slack_error: ":warning: Slack refused the post",
  error: ":x: failed",
};

function scheduleLine(s: Schedule): string {
  const last =
    s.lastRunAt === null
      ? "never run"
      : `last ${slackDateFromMs(s.lastRunAt)} ${OUTCOME_TEXT[s.lastOutcome ?? ""] ?? escapeMrkdwn(s.lastOutcome ?? "")}`;
  const failing = s.failing
    ? `\n:rotating_light: Failing: ${escapeMrkdwn(s.lastError ?? "the last post did not arrive")}`
    : "";
  return `\`${s.id}\` · DNS zone ${escapeMrkdwn(s.target)} · ${escapeMrkdwn(scheduleLabel(s))}\nnext ${slackDateFromMs(s.nextRunAt)} · ${last}${failing}`;
}

export function scheduleListMessage(schedules: readonly Schedule[]): Reply {
  if (schedules.length === 0)
    return {
      text: "No schedules in this channel",
      blocks: [
        section(
          ":calendar: No DNS summaries are scheduled in this channel. Add one with `/edge schedule dns 5678 daily 09:00 Europe/Amsterdam`.",
        ),
      ],
    };
  const blocks: KnownBlock[] = [
    header(`Scheduled DNS summaries (${schedules.length})`),
    ...packLines(schedules.map(scheduleLine), 45, "schedules"),
    context("Remove one with `/edge schedule remove <id>`; post one now with `/edge schedule run <id>`."),
  ];
  return { text: `${schedules.length} scheduled DNS summaries in this channel`, blocks };
}

export function scheduleRemovedMessage(s: Schedule): Reply {
  return {
    text: `Removed schedule ${s.id}`,
    blocks: [
      section(
        `:wastebasket: Removed \`${s.id}\`: the DNS summary of zone ${escapeMrkdwn(s.target)} ${escapeMrkdwn(scheduleLabel(s))} in <#${s.channelId}>.`,
      ),
    ],
  };
}

const CHANNEL_REASONS: Record<string, string> = {
  not_in_channel: "I'm not a member of that channel",
  channel_not_found: "I can't find that channel (it was deleted, or it is private and I'm not in it)",
  is_archived: "that channel is archived",
};

/** The one direct message a schedule's creator gets when its channel stops taking posts. */
export function channelFailingDm(s: Schedule, slackError: string): Reply {
  const why = CHANNEL_REASONS[slackError] ?? `Slack answered "${slackError}"`;
  const fix =
    slackError === "is_archived"
      ? `Unarchive <#${s.channelId}>, or remove the schedule with \`/edge schedule remove ${s.id}\`.`
      : `Invite me with \`/invite @edgeops\` in <#${s.channelId}>, or remove the schedule with \`/edge schedule remove ${s.id}\`.`;
  const text = `:rotating_light: Your scheduled DNS summary of zone ${s.target} (\`${s.id}\`) could not be posted in <#${s.channelId}>: ${why}. ${fix} I'll try again at its next run and won't message you again about it until it works.`;
  return { text, blocks: [section(text)] };
}
