/**
 * What an alert's parent message shows, from the stored episode and its watch: the poller renders with it as it
 * posts and updates, the buttons (Acknowledge, Mute 1h) re-render with it, the App Home lists with it. Everything
 * but the subject's numbers comes from the rows (who acknowledged, until when the watch is muted), so whoever
 * renders last shows the same state.
 */
import type { AlertView } from "../slack/blocks/alerts.js";
import type { AlertEpisode, Watch } from "../store/index.js";
import type { EpisodeDetails } from "./episodes.js";

/** The subject of an episode whose details are missing or of an unknown shape: named from the watch alone. */
function fallbackSubject(episode: AlertEpisode, watch: Watch): AlertView["subject"] {
  if (watch.kind === "zone")
    return {
      kind: "zone",
      shieldZoneId: Number(watch.target),
      label: watch.options.label ?? null,
      readings: [],
      topOffender: null,
      ddosSensitivity: null,
    };
  return {
    kind: "app",
    appId: episode.subject,
    appName: episode.subject,
    status: "unknown",
    transition: episode.kind === "stuck_deploying" ? "stuck_deploying" : "failing",
    since: episode.openedAt,
  };
}

function detailsOf(episode: AlertEpisode): Partial<EpisodeDetails> | undefined {
  const d = episode.details as Partial<EpisodeDetails> | null | undefined;
  const kind = (d?.subject as { kind?: unknown } | undefined)?.kind;
  return d && (kind === "zone" || kind === "app") ? d : undefined;
}

export function alertViewOf(episode: AlertEpisode, watch: Watch): AlertView {
  const details = detailsOf(episode);
  return {
    episodeId: episode.id,
    status: episode.status,
    openedAt: episode.openedAt,
    resolvedAt: episode.resolvedAt,
    acknowledgedBy: episode.acknowledgedBy,
    mutedUntil: watch.mutedUntil,
    reopened: details?.reopened ?? 0,
    subject: details?.subject ?? fallbackSubject(episode, watch),
  };
}
