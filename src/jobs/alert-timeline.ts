import type { EpisodeContext } from "../alerts/episodes.js";
import { incidentWindowFor } from "../services/alerts.js";
import { buildTimeline } from "../services/timeline.js";
import type { Reply } from "../slack/blocks/reply.js";
import { timelineMessage } from "../slack/blocks/timeline.js";
import type { AlertEpisode, Watch } from "../store/index.js";

/**
 * When a zone's alert resolves, its story goes in the alert's thread after the "Resolved" note: read from the store
 * alone (no Edge call from the watches' budget; /edge timeline adds the peaks), only what happened in the watch's
 * channel (everyone there sees it), over the shortest window that covers the alert, with Export. Best effort: a
 * story that can't be read or posted is logged and never holds back the alert's own delivery.
 */
export async function postResolvedTimeline(
  d: Pick<EpisodeContext, "deps" | "logger" | "now">,
  watch: Watch,
  episode: AlertEpisode,
  post: (reply: Reply) => Promise<unknown>,
): Promise<void> {
  if (watch.kind !== "zone") return;
  try {
    const timeline = await buildTimeline(d.deps, {
      teamId: watch.teamId,
      zoneId: Number(watch.target),
      window: incidentWindowFor(episode.openedAt, d.now),
      audience: { kind: "channels", channelIds: new Set([watch.channelId]) },
      now: d.now,
    });
    await post(
      timelineMessage(
        { timeline, peaks: null },
        { page: 1, label: watch.options.label ?? null, scope: "channel", buttons: "export", now: d.now },
      ),
    );
  } catch (err) {
    d.logger.warn({ err, episodeId: episode.id }, "the resolved alert's timeline was not posted");
  }
}
