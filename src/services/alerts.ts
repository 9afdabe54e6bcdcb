/**
 * What people do with an alert once it is posted: acknowledge it, mute its watch, and see the open ones of
 * their channels. No Slack here: the listeners turn the results into messages.
 */
import { type AlertView, alertViewOf } from "../alerts/view.js";
import type { Deps } from "../deps.js";
import { UserError } from "../errors.js";
import type { AlertEpisode, Watch } from "../store/index.js";
import { INCIDENT_WINDOWS, type IncidentWindow, incidentRange } from "./incident.js";
import { muteWatch } from "./watches.js";

export interface LoadedAlert {
  episode: AlertEpisode;
  watch: Watch;
}

const GONE =
  "This alert is gone: its watch was removed. /edge watch list shows what this channel still watches.";

/** An episode of this workspace with its watch; one of another workspace, or of a removed watch, is gone. */
export async function loadAlert(deps: Deps, teamId: string, episodeId: string): Promise<LoadedAlert> {
  const episode = await deps.store.episodes.get(episodeId);
  if (!episode || episode.teamId !== teamId) throw new UserError("not_found", GONE);
  const watch = await deps.store.watches.get(episode.watchId);
  if (!watch || watch.teamId !== teamId) throw new UserError("not_found", GONE);
  return { episode, watch };
}

export type AcknowledgeResult =
  | { outcome: "acknowledged"; alert: LoadedAlert }
  /** Someone (maybe this user) took it first. */
  | { outcome: "already"; alert: LoadedAlert; by: string; at: number | null };

/** The first acknowledgement wins (compare-and-set in the store); a resolved alert is acknowledged too. */
export async function acknowledgeAlert(
  deps: Deps,
  teamId: string,
  episodeId: string,
  userId: string,
): Promise<AcknowledgeResult> {
  const before = await loadAlert(deps, teamId, episodeId);
  const won =
    before.episode.acknowledgedBy === null && (await deps.store.episodes.acknowledge(episodeId, userId));
  // Acknowledging changes the episode only: read it again (who won), not its watch.
  const episode = await deps.store.episodes.get(episodeId);
  if (!episode) throw new UserError("not_found", GONE);
  const alert: LoadedAlert = { episode, watch: before.watch };
  if (won) {
    await deps.store.audit.append({
      teamId,
      userId,
      action: "alert.acknowledge",
      target: `alert:${episodeId}`,
      outcome: "ok",
      details: { watchId: alert.watch.id, channelId: alert.watch.channelId, subject: alert.episode.subject },
    });
    return { outcome: "acknowledged", alert };
  }
  return {
    outcome: "already",
    alert,
    by: alert.episode.acknowledgedBy ?? userId,
    at: alert.episode.acknowledgedAt,
  };
}

export interface MuteInput {
  teamId: string;
  userId: string;
  episodeId: string;
  /** How long from now. */
  forMs: number;
  /** Whether the user is a workspace admin; asked only when they did not create the watch. */
  isAdmin: () => Promise<boolean>;
}

/**
 * Mutes the alert's watch from now for `forMs` as /edge watch mute does (its creator or a workspace admin,
 * audited): the poller keeps tracking, and posts what is still open when the mute ends.
 */
export async function muteAlertWatch(
  deps: Deps,
  input: MuteInput,
): Promise<{ alert: LoadedAlert; until: number }> {
  const { episode, watch } = await loadAlert(deps, input.teamId, input.episodeId);
  const until = deps.clock.now() + input.forMs;
  // muteWatch answers with the watch as muted; the episode does not change.
  return { alert: { episode, watch: await muteWatch(deps, input, watch.id, until) }, until };
}

/** Ends the mute of the alert's watch now (its creator or a workspace admin, audited, as /edge watch mute off). */
export async function unmuteAlertWatch(deps: Deps, input: Omit<MuteInput, "forMs">): Promise<LoadedAlert> {
  const { episode, watch } = await loadAlert(deps, input.teamId, input.episodeId);
  return { episode, watch: await muteWatch(deps, input, watch.id, null) };
}

/** An open alert as the App Home lists it. */
export interface OpenAlert {
  view: AlertView;
  channelId: string;
  messageTs: string | null;
}

/** How many open alerts the App Home lists at most. */
export const HOME_ALERTS_LIMIT = 20;

/**
 * The firing alerts of the workspace in these channels (the user's), newest first. Only channels that have
 * watches are asked for, so a member of thousands of channels costs one short query.
 */
export async function openAlertsIn(
  deps: Deps,
  teamId: string,
  channelIds: ReadonlySet<string>,
): Promise<{ alerts: OpenAlert[]; more: boolean }> {
  const watches = await deps.store.watches.list(teamId);
  const watched = [...new Set(watches.map((w) => w.channelId))].filter((c) => channelIds.has(c));
  if (watched.length === 0) return { alerts: [], more: false };
  const episodes = await deps.store.episodes.listOpen(teamId, watched, HOME_ALERTS_LIMIT + 1);
  const byId = new Map(watches.map((w) => [w.id, w]));
  const alerts: OpenAlert[] = [];
  for (const e of episodes.slice(0, HOME_ALERTS_LIMIT)) {
    const watch = byId.get(e.watchId);
    if (watch) alerts.push({ view: alertViewOf(e, watch), channelId: e.channelId, messageTs: e.messageTs });
  }
  return { alerts, more: episodes.length > HOME_ALERTS_LIMIT };
}

/** Minutes of calm before an alert that its incident overview shows as well. */
const BEFORE_ALERT_MS = 5 * 60_000;

/** The shortest incident window that covers the alert since it opened (and a little before); at most 72 h. */
export function incidentWindowFor(openedAt: number, now: number): IncidentWindow {
  const needed = Math.max(0, now - openedAt) + BEFORE_ALERT_MS;
  return (
    INCIDENT_WINDOWS.find((w) => incidentRange(w, now).lengthMs >= needed) ??
    INCIDENT_WINDOWS[INCIDENT_WINDOWS.length - 1] ??
    "72h"
  );
}
