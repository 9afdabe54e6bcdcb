import { createHash } from "node:crypto";
import type { WebClient } from "@slack/web-api";
import type { Deps } from "../deps.js";
import { slackErrorCode } from "../errors.js";
import type { Logger } from "../log.js";
import type { Lease } from "../scheduler/pool.js";
import { CHANNEL_ERRORS, tellCreator } from "../scheduler/run.js";
import {
  type AlertEvent,
  type AlertView,
  alertParentMessage,
  alertThreadReply,
  watchChannelFailingDm,
} from "../slack/blocks/alerts.js";
import type { Reply } from "../slack/blocks/common.js";
import type { AlertEpisode, Watch } from "../store/index.js";
import { alertViewOf } from "./view.js";

/**
 * Episodes and their messages. One episode is one parent message: opened once per (watch, subject, seq)
 * (the store's unique index; the replica that loses the race posts nothing), posted with
 * chat.postMessage and its ts recorded once, then updated in place with chat.update; every change in
 * between is a short reply in its thread. A resolved episode that fires again within the cool-down is
 * reopened (same parent, same thread) instead of a new one.
 *
 * Delivery follows the scheduler's rules (scheduler/run.ts): a channel that refuses posts
 * (not_in_channel, channel_not_found, is_archived) marks the watch failing and tells its creator once;
 * any other failure (429, 5xx) is logged. An episode whose parent was never delivered (or was held back by
 * a mute) keeps message_ts empty and is posted by the next evaluation that finds it still firing, so a
 * failure or a restart never loses an open alert, and the recorded ts means a restart never reposts one.
 * Each episode also records the version and digest of the parent Slack last accepted: a parent rendered the
 * same is not sent again, and one Slack refused (or a mute held back) is brought up to date by deliverPending.
 */

/** The subject-specific part of a parent message, kept in the episode's details. */
export type EpisodeSubject = AlertView["subject"];

export interface EpisodeDetails {
  subject: EpisodeSubject;
  reopened: number;
}

export interface EpisodeContext {
  deps: Deps;
  watch: Watch;
  /** The workspace's Web API client (may throw: e.g. the app was uninstalled). */
  client: () => Promise<WebClient>;
  logger: Logger;
  now: number;
  cooldownMs: number;
  /** The poller's claim on this evaluation: renewed before a parent is posted, which is not posted if lost. */
  lease?: Lease;
}

export type DeliveryOutcome =
  | "posted"
  | "updated"
  /** Slack already shows this parent: nothing sent. */
  | "unchanged"
  | "muted"
  | "channel_failing"
  | "slack_error"
  /** The evaluation's claim ended (another replica evaluates the watch now): nothing posted. */
  | "superseded"
  | "none";

/** The parent message of an episode as it stands (also for the button handlers that redraw it). */
export function parentOf(e: AlertEpisode, watch: Watch, now: number): Reply {
  return alertParentMessage(alertViewOf(e, watch), now);
}

/** What a parent shows, in a few bytes: the same digest means the same message in Slack. */
export function parentDigest(parent: Reply): string {
  return createHash("sha256")
    .update(JSON.stringify([parent.text, parent.blocks]))
    .digest("base64url");
}

/** Post or update the parent (unless Slack already shows it so), then the thread reply if any. Never throws. */
async function deliver(c: EpisodeContext, e: AlertEpisode, event?: AlertEvent): Promise<DeliveryOutcome> {
  const { deps, logger } = c;
  // Read again just before rendering: a Mute or Acknowledge clicked meanwhile must not be drawn over.
  const watch = (await deps.store.watches.get(c.watch.id)) ?? c.watch;
  c.watch.mutedUntil = watch.mutedUntil;
  if (watch.mutedUntil !== null && watch.mutedUntil > c.now) return "muted";
  const parent = parentOf(e, watch, c.now);
  const digest = parentDigest(parent);
  const unchanged = e.messageTs !== null && e.shownDigest === digest;
  if (unchanged && !event) {
    if (e.shownVersion !== e.version) await deps.store.episodes.setShown(e.id, e.version, digest);
    return "unchanged";
  }
  let client: WebClient;
  try {
    client = await c.client();
  } catch (err) {
    logger.warn({ err }, "no Slack client for the watch's workspace");
    return "slack_error";
  }
  if (e.messageTs === null && c.lease && !(await c.lease.stillMine())) {
    logger.warn(
      { episodeId: e.id },
      "the watch's claim ended before its alert was posted; another replica posts it",
    );
    return "superseded";
  }
  let method = "chat.postMessage";
  let outcome: DeliveryOutcome;
  try {
    if (e.messageTs === null) {
      const posted = await client.chat.postMessage({
        channel: watch.channelId,
        text: parent.text,
        blocks: parent.blocks,
        unfurl_links: false,
        unfurl_media: false,
      });
      if (typeof posted.ts !== "string") throw new Error("chat.postMessage returned no ts");
      if (!(await deps.store.episodes.setMessage(e.id, posted.ts)))
        logger.error({ episodeId: e.id }, "an alert's parent was already recorded: posted twice");
      await deps.store.episodes.setShown(e.id, e.version, digest);
      outcome = "posted";
      // The first post already shows the news; a reply would repeat it.
    } else {
      if (!unchanged) {
        method = "chat.update";
        await client.chat.update({
          channel: watch.channelId,
          ts: e.messageTs,
          text: parent.text,
          blocks: parent.blocks,
        });
      }
      // What Slack shows now, recorded before the reply: a reply that fails does not resend the parent.
      await deps.store.episodes.setShown(e.id, e.version, digest);
      if (event) {
        method = "chat.postMessage";
        const r = alertThreadReply(event);
        await client.chat.postMessage({
          channel: watch.channelId,
          thread_ts: e.messageTs,
          text: r.text,
          blocks: r.blocks,
          unfurl_links: false,
          unfurl_media: false,
        });
      }
      outcome = unchanged ? "unchanged" : "updated";
    }
  } catch (err) {
    const code = slackErrorCode(err) ?? "unknown";
    deps.metrics.slackApiErrors.inc({ method, error: code });
    if (CHANNEL_ERRORS.has(code)) {
      logger.warn({ slackError: code, alreadyFailing: watch.failing }, "watch's channel refuses alerts");
      await deps.store.watches.markFailing(watch.id, `Slack refused the alert (${code}).`);
      if (!watch.failing)
        await tellCreator(client, watch.createdBy, watchChannelFailingDm(watch, code), "watch", logger);
      c.watch.failing = true;
      return "channel_failing";
    }
    logger.warn({ err, slackError: code }, "delivering an alert failed; the next evaluation tries again");
    return "slack_error";
  }
  if (watch.failing) {
    await deps.store.watches.clearFailing(watch.id);
    c.watch.failing = false;
  }
  return outcome;
}

/** The subject's latest episode: `read` when the caller has it already (null: none), else from the store. */
async function latestEpisode(
  c: EpisodeContext,
  subjectId: string,
  read: AlertEpisode | null | undefined,
): Promise<AlertEpisode | undefined> {
  if (read !== undefined) return read ?? undefined;
  return c.deps.store.episodes.latest(c.watch.id, subjectId);
}

/**
 * The subject is in trouble now: open an episode (or reopen one resolved within the cool-down), or bring
 * the open one's parent up to date. `event`: the thread reply for what changed while it stayed open.
 * `read`: the subject's latest episode when the caller has just read it (null: it has none).
 */
export async function fire(
  c: EpisodeContext,
  subjectId: string,
  kind: string,
  subject: EpisodeSubject,
  event?: (previous: EpisodeDetails) => AlertEvent | undefined,
  read?: AlertEpisode | null,
): Promise<DeliveryOutcome> {
  const { deps, watch } = c;
  const latest = await latestEpisode(c, subjectId, read);
  if (latest?.status === "firing") {
    const previous = latest.details as EpisodeDetails;
    const moved = await deps.store.episodes.update(latest.id, latest.version, {
      kind,
      details: { subject, reopened: previous.reopened ?? 0 } satisfies EpisodeDetails,
    });
    if (!moved) return "none";
    return deliver(c, moved, moved.messageTs === null ? undefined : event?.(previous));
  }
  if (
    latest?.status === "resolved" &&
    latest.resolvedAt !== null &&
    c.now - latest.resolvedAt < c.cooldownMs
  ) {
    const previous = latest.details as EpisodeDetails;
    const reopened = await deps.store.episodes.update(latest.id, latest.version, {
      kind,
      status: "firing",
      resolvedAt: null,
      details: { subject, reopened: (previous.reopened ?? 0) + 1 } satisfies EpisodeDetails,
    });
    if (!reopened) return "none";
    c.logger.info({ episodeId: latest.id, subjectId }, "alert fired again within the cool-down");
    return deliver(c, reopened, { kind: "fired_again", afterMs: c.now - latest.resolvedAt });
  }
  const opened = await deps.store.episodes.open({
    watchId: watch.id,
    teamId: watch.teamId,
    channelId: watch.channelId,
    subject: subjectId,
    seq: (latest?.seq ?? 0) + 1,
    kind,
    details: { subject, reopened: 0 } satisfies EpisodeDetails,
  });
  if (!opened) return "none";
  c.logger.info({ episodeId: opened.id, subjectId, kind }, "alert opened");
  return deliver(c, opened);
}

/** The subject is fine again: resolve its open episode (parent updated with the duration, a reply). */
export async function resolve(
  c: EpisodeContext,
  subjectId: string,
  subject?: EpisodeSubject,
  read?: AlertEpisode | null,
): Promise<DeliveryOutcome> {
  const latest = await latestEpisode(c, subjectId, read);
  if (latest?.status !== "firing") return "none";
  const previous = latest.details as EpisodeDetails;
  const resolved = await c.deps.store.episodes.update(latest.id, latest.version, {
    status: "resolved",
    resolvedAt: c.now,
    ...(subject ? { details: { subject, reopened: previous.reopened ?? 0 } satisfies EpisodeDetails } : {}),
  });
  if (!resolved) return "none";
  c.logger.info({ episodeId: latest.id, subjectId }, "alert resolved");
  // Never delivered (muted, or the channel refused it): nothing to update, nothing to say.
  if (resolved.messageTs === null) return "none";
  return deliver(c, resolved, { kind: "resolved", durationMs: c.now - resolved.openedAt });
}

/**
 * Bring the watch's alerts in Slack up to date: post the parents of firing episodes never delivered (held
 * back by a mute, or refused by Slack), so an open alert is never forgotten; then update every posted parent
 * that no longer shows what is true (a resolution Slack refused or a mute held back, with its "Resolved"
 * reply; a mute that has ended). A parent Slack already shows as it is costs nothing. Stops at the first
 * delivery that fails.
 */
export async function deliverPending(c: EpisodeContext): Promise<DeliveryOutcome[]> {
  if (c.watch.mutedUntil !== null && c.watch.mutedUntil > c.now) return [];
  const out: DeliveryOutcome[] = [];
  for (const e of await c.deps.store.episodes.listUndelivered(c.watch.id)) {
    const outcome = await deliver(c, e);
    out.push(outcome);
    if (outcome !== "posted") return out;
  }
  for (const e of await c.deps.store.episodes.listToRefresh(c.watch.id)) {
    // A resolved episode is listed only when Slack never took its last version, the resolution itself.
    const resolution: AlertEvent | undefined =
      e.status === "resolved" && e.resolvedAt !== null
        ? { kind: "resolved", durationMs: e.resolvedAt - e.openedAt }
        : undefined;
    const outcome = await deliver(c, e, resolution);
    if (outcome === "unchanged") continue;
    out.push(outcome);
    if (outcome !== "updated") break;
  }
  return out;
}
