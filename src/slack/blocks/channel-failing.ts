import { channel, code, type Mrkdwn, mrkdwn } from "./mrkdwn.js";

const CHANNEL_REASONS: Record<string, string> = {
  not_in_channel: "I'm not a member of that channel",
  channel_not_found: "I can't find that channel (it was deleted, or it is private and I'm not in it)",
  is_archived: "that channel is archived",
};

/**
 * "could not be posted in #channel: why. How to fix it.", for the direct message the creator of a watch
 * or a schedule gets when its channel stops taking posts (`slackError`: Slack's error code).
 */
export function notPostedIn(
  slackError: string,
  channelId: string,
  owner: { kind: "watch" | "schedule"; id: string },
): Mrkdwn {
  const why = CHANNEL_REASONS[slackError] ?? `Slack answered "${slackError}"`;
  const where = channel(channelId);
  const remove = code(`/edge ${owner.kind} remove ${owner.id}`);
  const fix =
    slackError === "is_archived"
      ? mrkdwn`Unarchive ${where}, or remove the ${owner.kind} with ${remove}.`
      : mrkdwn`Invite me with ${code("/invite @edgeops")} in ${where}, or remove the ${owner.kind} with ${remove}.`;
  return mrkdwn`could not be posted in ${where}: ${why}. ${fix}`;
}
