import type { WebClient } from "@slack/web-api";
import type { EpisodeContext } from "../alerts/episodes.js";
import { changesInForce } from "../services/in-force.js";
import { cleanupChecklistMessage } from "../slack/blocks/cleanup.js";
import type { Reply } from "../slack/blocks/reply.js";
import { publicChannelsAmong } from "../slack/public-channels.js";
import type { AlertEpisode, Watch } from "../store/index.js";

/**
 * When a zone's alert resolves, after its story: the cleanup checklist, every edgeops change in force on the
 * zone from every channel (services/in-force.ts), each temporary one with Undo now, Make permanent and Extend,
 * each permanent one with its review date. Who asked and where is shown for the watch's channel and public
 * channels; a change asked in a private channel (or one Slack can't tell about) by what it does alone. Nothing in
 * force: one line that says so. Best effort, as the story: never holds back the alert's own delivery.
 */
export async function postCleanupChecklist(
  d: Pick<EpisodeContext, "deps" | "logger">,
  watch: Watch,
  episode: AlertEpisode,
  client: () => Promise<WebClient>,
  post: (reply: Reply) => Promise<unknown>,
): Promise<void> {
  if (watch.kind !== "zone") return;
  try {
    const zoneId = Number(watch.target);
    const every = await changesInForce(d.deps, { teamId: watch.teamId, zoneId, audience: { kind: "all" } });
    const askedIn = every.items.flatMap((i) =>
      i.asked && i.asked.channelId !== watch.channelId ? [i.asked.channelId] : [],
    );
    const open = askedIn.length > 0 ? await publicChannelsAmong(await client(), askedIn) : new Set<string>();
    const inForce = await changesInForce(d.deps, {
      teamId: watch.teamId,
      zoneId,
      audience: { kind: "channels", channelIds: new Set([watch.channelId, ...open]) },
    });
    await post(cleanupChecklistMessage(inForce, { label: watch.options.label ?? null }));
  } catch (err) {
    d.logger.warn({ err, episodeId: episode.id }, "the resolved alert's cleanup checklist was not posted");
  }
}
