import { durationWords } from "./approvals.js";
import { section } from "./block-kit.js";
import { dateToken, type Mrkdwn, mention, mrkdwn } from "./mrkdwn.js";
import { type Reply, reply } from "./reply.js";

/**
 * What the alert buttons say in the alert's thread (for everyone) and privately to the clicker. Pure.
 */

/** Thread reply: who took the alert. */
export function alertAcknowledgedReply(userId: string): Reply {
  const text = mrkdwn`:eyes: ${mention(userId)} acknowledged this alert and is on it.`;
  return reply(text, [section(text)]);
}

/** Thread reply: the watch is muted, by whom and until when. */
export function alertMutedReply(userId: string, until: number, forMs: number): Reply {
  const text = mrkdwn`:no_bell: ${mention(userId)} muted this watch for ${durationWords(forMs)}, until ${dateToken(until)}: it keeps tracking, nothing is posted until then, and what is still open then is posted.`;
  return reply(text, [section(text)]);
}

/** Thread reply: the watch's mute was ended, by whom. */
export function alertUnmutedReply(userId: string): Reply {
  const text = mrkdwn`:bell: ${mention(userId)} unmuted this watch: its alerts are posted and updated again.`;
  return reply(text, [section(text)]);
}

/** Private: someone took it first. */
export function alreadyAcknowledgedText(by: string, at: number | null, self: boolean): Mrkdwn {
  const when = at === null ? "" : mrkdwn` ${dateToken(at)}`;
  return self
    ? mrkdwn`You already acknowledged this alert${when}.`
    : mrkdwn`${mention(by)} already acknowledged this alert${when}: they are on it.`;
}

/** Private: the incident card is on its way into the thread (or why it cannot be). */
export function incidentOverviewNotForApps(): Mrkdwn {
  return mrkdwn`The incident overview is for shield zones; this alert is about an app. /edge apps shows the apps' statuses.`;
}

export function timelineNotForApps(): Mrkdwn {
  return mrkdwn`The timeline is for shield zones; this alert is about an app. /edge apps shows the apps' statuses.`;
}
