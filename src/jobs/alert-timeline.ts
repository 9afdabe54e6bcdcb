import type { EpisodeContext } from "../alerts/episodes.js";
import type { Deps } from "../deps.js";
import { incidentWindowFor } from "../services/alerts.js";
import { buildTimeline } from "../services/timeline.js";
import { whatWorkedMessage } from "../slack/blocks/effect.js";
import type { Reply } from "../slack/blocks/reply.js";
import { timelineMessage } from "../slack/blocks/timeline.js";
import { whatWorked } from "../slack/effects.js";
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

/** Changes the resolution's "what worked" reply names at most (the postmortem export has every one). */
export const WHAT_WORKED_MAX = 8;

/**
 * When a zone's alert resolves, after its story: what each change applied on the zone during the alert did (its
 * measured effect, services/mitigation-effect.ts; what, not who: a change asked in a private channel is named by
 * what it does). Nothing is posted when no such change was applied. Its Edge reads are background work in the
 * key's queue (an effect measured in the last minute is reused). Best effort, like the story.
 */
export async function postWhatWorked(
  d: Pick<EpisodeContext, "logger" | "now"> & { deps: Deps },
  watch: Watch,
  episode: AlertEpisode,
  post: (reply: Reply) => Promise<unknown>,
): Promise<void> {
  if (watch.kind !== "zone") return;
  try {
    const { items, more } = await whatWorked(
      d.deps,
      { teamId: watch.teamId, zoneId: Number(watch.target), openedAt: episode.openedAt },
      WHAT_WORKED_MAX,
    );
    if (items.length === 0) return;
    await post(whatWorkedMessage(items, d.deps.clock.now(), more));
  } catch (err) {
    d.logger.warn({ err, episodeId: episode.id }, "the resolved alert's what-worked reply was not posted");
  }
}
