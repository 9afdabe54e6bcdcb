import type { Deps } from "../deps.js";
import type { Logger } from "../log.js";
import type { AlertEpisode, Watch } from "../store/index.js";
import {
  type AlertEvent,
  type AlertView,
  alertViewOf,
  type EpisodeDetails,
  type EpisodeSubject,
  isMutedAt,
  parentDigest,
} from "./view.js";

/**
 * Episodes: state only, no Slack. One episode is one parent message: opened once per (watch, subject, seq)
 * (the store's unique index; the replica that loses the race has nothing to say), then brought up to date in
 * place; every change in between is a short note in its thread. A resolved episode that fires again within
 * the cool-down is reopened (same parent, same thread) instead of a new one.
 *
 * fire and resolve answer with a notice (the episode to show, and what its thread should be told), which the
 * poller (jobs/alerts.ts) renders and delivers. An episode whose parent was never delivered (or was held back by
 * a mute) keeps message_ts empty and is posted by the next evaluation that finds it still firing, so a failure
 * or a restart never loses an open alert, and the recorded ts means a restart never reposts one. Each episode
 * also records the version and digest of the parent Slack last accepted: a parent that would show the same is
 * not sent again, and one Slack refused (or a mute held back) is brought up to date (undeliveredNotices,
 * staleNotices).
 */

export interface EpisodeContext {
  deps: Deps;
  watch: Watch;
  logger: Logger;
  now: number;
  cooldownMs: number;
}

/** An episode whose parent should show its current state, and what its thread should be told, if anything. */
export interface AlertNotice {
  episode: AlertEpisode;
  event?: AlertEvent | undefined;
}

const notice = (episode: AlertEpisode, event?: AlertEvent): AlertNotice => ({
  episode,
  ...(event ? { event } : {}),
});

/** What to send for a notice, decided from the rows just before sending. */
export type ParentPlan =
  /** The watch is muted: nothing is sent, the notice waits for the mute to end. */
  | { kind: "muted" }
  /**
   * The watch is muted and the alert has resolved: the parent is updated in place, nothing is posted in its
   * thread; the resolution's replies wait for the mute to end (resolutionUntold).
   */
  | { kind: "quiet"; view: AlertView; digest: string }
  /** Slack already shows this parent and there is nothing to say: nothing is sent. */
  | { kind: "unchanged" }
  | {
      kind: "send";
      /** The watch as it is now (its mute, whether it is failing). */
      watch: Watch;
      view: AlertView;
      digest: string;
      /** Slack shows an older parent (or none yet): post it, or update it in place. */
      changed: boolean;
      event?: AlertEvent | undefined;
    };

/**
 * What a notice needs sent now. The watch is read again just before rendering: a Mute or Acknowledge clicked
 * meanwhile must not be drawn over.
 */
export async function planParent(c: EpisodeContext, n: AlertNotice): Promise<ParentPlan> {
  const { deps } = c;
  const e = n.episode;
  const watch = (await deps.store.watches.get(c.watch.id)) ?? c.watch;
  c.watch.mutedUntil = watch.mutedUntil;
  const view = alertViewOf(e, watch);
  const digest = parentDigest(view, c.now);
  if (isMutedAt(watch, c.now)) {
    // A mute silences the channel, not the truth: a parent left saying Firing for the rest of the hour misleads.
    if (e.status === "resolved" && e.messageTs !== null && e.shownDigest !== digest)
      return { kind: "quiet", view, digest };
    return { kind: "muted" };
  }
  const unchanged = e.messageTs !== null && e.shownDigest === digest;
  if (unchanged && !n.event) {
    if (e.shownVersion !== e.version) await deps.store.episodes.setShown(e.id, e.version, digest);
    return { kind: "unchanged" };
  }
  return { kind: "send", watch, view, digest, changed: !unchanged, event: n.event };
}

/** Slack took the episode's first parent: its ts, and what it shows. */
export async function recordPosted(
  c: EpisodeContext,
  e: AlertEpisode,
  ts: string,
  digest: string,
): Promise<void> {
  if (!(await c.deps.store.episodes.setMessage(e.id, ts)))
    c.logger.error({ episodeId: e.id }, "an alert's parent was already recorded: posted twice");
  await c.deps.store.episodes.setShown(e.id, e.version, digest);
}

/** Slack shows this version of the parent now. */
export async function recordShown(c: EpisodeContext, e: AlertEpisode, digest: string): Promise<void> {
  await c.deps.store.episodes.setShown(e.id, e.version, digest);
}

/**
 * Slack shows this parent now, but its thread has not been told: the shown version stays behind, so the episode
 * is listed again (staleNotices) and the resolution's replies are posted once the mute ends.
 */
export async function recordShownQuietly(c: EpisodeContext, e: AlertEpisode, digest: string): Promise<void> {
  await c.deps.store.episodes.setShown(e.id, e.shownVersion ?? 0, digest);
}

/** A resolution whose replies its thread is still owed (held back by a mute, or refused by Slack). */
export const resolutionUntold = (e: AlertEpisode): boolean =>
  e.status === "resolved" && e.messageTs !== null && e.shownVersion !== e.version;

/** The watch's channel refused an alert (Slack's code): the watch is failing until a post arrives. */
export async function watchChannelRefused(c: EpisodeContext, slackError: string): Promise<void> {
  await c.deps.store.watches.markFailing(c.watch.id, `Slack refused the alert (${slackError}).`);
  c.watch.failing = true;
}

/** The watch's channel took an alert again. */
export async function watchChannelWorks(c: EpisodeContext): Promise<void> {
  await c.deps.store.watches.clearFailing(c.watch.id);
  c.watch.failing = false;
}

/**
 * The readings an episode opened with and its chart, kept through its updates (an episode opened before they were
 * kept has none).
 */
const openingOf = (
  previous: EpisodeDetails | null | undefined,
): Pick<EpisodeDetails, "opening" | "chart"> => ({
  ...(previous?.opening ? { opening: previous.opening } : {}),
  // The parent keeps its picture until a redraw replaces it (same parent, same file, to be deleted then).
  ...(previous?.chart ? { chart: previous.chart } : {}),
});

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
): Promise<AlertNotice | undefined> {
  const { deps, watch } = c;
  const latest = await latestEpisode(c, subjectId, read);
  if (latest?.status === "firing") {
    const previous = latest.details as EpisodeDetails;
    const moved = await deps.store.episodes.update(latest.id, latest.version, {
      kind,
      details: { ...openingOf(previous), subject, reopened: previous.reopened ?? 0 } satisfies EpisodeDetails,
    });
    if (!moved) return undefined;
    return notice(moved, moved.messageTs === null ? undefined : event?.(previous));
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
      details: {
        ...openingOf(previous),
        subject,
        reopened: (previous.reopened ?? 0) + 1,
      } satisfies EpisodeDetails,
    });
    if (!reopened) return undefined;
    c.logger.info({ episodeId: latest.id, subjectId }, "alert fired again within the cool-down");
    return notice(reopened, { kind: "fired_again", afterMs: c.now - latest.resolvedAt });
  }
  const opened = await deps.store.episodes.open({
    watchId: watch.id,
    teamId: watch.teamId,
    channelId: watch.channelId,
    subject: subjectId,
    seq: (latest?.seq ?? 0) + 1,
    kind,
    details: { subject, reopened: 0, opening: subject } satisfies EpisodeDetails,
  });
  if (!opened) return undefined;
  c.logger.info({ episodeId: opened.id, subjectId, kind }, "alert opened");
  return notice(opened);
}

/** The subject is fine again: resolve its open episode (parent updated with the duration, a reply). */
export async function resolve(
  c: EpisodeContext,
  subjectId: string,
  subject?: EpisodeSubject,
  read?: AlertEpisode | null,
): Promise<AlertNotice | undefined> {
  const latest = await latestEpisode(c, subjectId, read);
  if (latest?.status !== "firing") return undefined;
  const previous = latest.details as EpisodeDetails;
  const resolved = await c.deps.store.episodes.update(latest.id, latest.version, {
    status: "resolved",
    resolvedAt: c.now,
    ...(subject
      ? {
          details: {
            ...openingOf(previous),
            subject,
            reopened: previous.reopened ?? 0,
          } satisfies EpisodeDetails,
        }
      : {}),
  });
  if (!resolved) return undefined;
  c.logger.info({ episodeId: latest.id, subjectId }, "alert resolved");
  // Never delivered (muted, or the channel refused it): nothing to update, nothing to say.
  if (resolved.messageTs === null) return undefined;
  return notice(resolved, { kind: "resolved", durationMs: c.now - resolved.openedAt });
}

/** The parents of the watch's firing episodes never delivered (held back by a mute, or refused by Slack). */
export async function undeliveredNotices(c: EpisodeContext): Promise<AlertNotice[]> {
  return (await c.deps.store.episodes.listUndelivered(c.watch.id)).map((e) => notice(e));
}

/**
 * The posted parents that may no longer show what is true (a resolution Slack refused or a mute held back, with
 * its "Resolved" note; a mute that has ended).
 */
export async function staleNotices(c: EpisodeContext): Promise<AlertNotice[]> {
  return (await c.deps.store.episodes.listToRefresh(c.watch.id)).map((e) =>
    // A resolved episode is listed only when Slack never took its last version, the resolution itself.
    notice(
      e,
      e.status === "resolved" && e.resolvedAt !== null
        ? { kind: "resolved", durationMs: e.resolvedAt - e.openedAt }
        : undefined,
    ),
  );
}
