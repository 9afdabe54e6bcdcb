import type { WebClient } from "@slack/web-api";
import { resolutionUntold } from "../../../alerts/episodes.js";
import { alertViewOf, parentDigest } from "../../../alerts/view.js";
import { slackErrorCode, toUserSentence, UserError } from "../../../errors.js";
import type { Logger } from "../../../log.js";
import {
  acknowledgeAlert,
  incidentWindowFor,
  type LoadedAlert,
  loadAlert,
  muteAlertWatch,
  unmuteAlertWatch,
} from "../../../services/alerts.js";
import { gatherIncident, incidentRange } from "../../../services/incident.js";
import {
  alertAcknowledgedReply,
  alertMutedReply,
  alertUnmutedReply,
  alreadyAcknowledgedText,
  incidentOverviewNotForApps,
  timelineNotForApps,
} from "../../blocks/alert-actions.js";
import { alertParentMessage, MUTE_BUTTON_MS } from "../../blocks/alerts.js";
import { gatheringMessage, incidentCard } from "../../blocks/incident.js";
import { type Reply, sentenceReply, WITHOUT_PICTURE } from "../../blocks/reply.js";
import { timelineAnswer } from "../../edge-commands/timeline.js";
import type { SlackEnv } from "../../edge-commands/types.js";
import { newRequestId } from "../../request-ids.js";
import {
  answerPrivately,
  type ButtonArgs,
  type ButtonContext,
  buttonContext,
  respondPrivately,
} from "./context.js";

/**
 * The buttons of an alert's parent message (value: the episode id). Acknowledge and Mute 1h change the rows and
 * render the parent again from them (so the poller's next update agrees), with a short reply in the thread;
 * Incident overview posts the /edge incident card in the thread; Timeline answers the presser alone.
 */

const EPISODE_ID = /^[\w-]{1,100}$/;
const STALE = "That button is out of date: the alert's latest message has the current buttons.";

/** The parent's ts: recorded on the episode, else the clicked message's. */
function parentTs(args: ButtonArgs, alert: LoadedAlert): string | undefined {
  return alert.episode.messageTs ?? args.body.message?.ts ?? args.body.container?.message_ts;
}

async function post(client: WebClient, channel: string, threadTs: string | undefined, r: Reply) {
  return client.chat.postMessage({
    channel,
    text: r.text,
    blocks: r.blocks,
    ...(threadTs ? { thread_ts: threadTs } : {}),
  });
}

/** Render the parent again from the rows; a parent that cannot be updated (deleted) is logged, not shown. */
async function refreshParent(args: ButtonArgs, env: SlackEnv, alert: LoadedAlert, logger: Logger) {
  const ts = parentTs(args, alert);
  if (!ts) return;
  const now = env.deps.clock.now();
  const view = alertViewOf(alert.episode, alert.watch);
  const message = alertParentMessage(view, now);
  const update = (m: Reply) =>
    args.client.chat.update({ channel: alert.episode.channelId, ts, text: m.text, blocks: m.blocks });
  try {
    try {
      await update(message);
    } catch (err) {
      // A picture Slack refuses: the parent goes without it, as the poller sends it.
      const without = message[WITHOUT_PICTURE];
      if (!without || slackErrorCode(err) !== "invalid_blocks") throw err;
      await update(without);
    }
    // What Slack shows now: the poller does not send it again. A resolution its thread was not told yet (it
    // resolved while muted) keeps its version unshown, so the poller still posts its replies.
    const e = alert.episode;
    await env.deps.store.episodes.setShown(
      e.id,
      resolutionUntold(e) ? (e.shownVersion ?? 0) : e.version,
      parentDigest(view, now),
    );
  } catch (err) {
    logger.warn({ err, episodeId: alert.episode.id }, "could not update the alert");
  }
}

/** Runs a button's work; a sentence for what the user can fix, a log line and a sentence for the rest. */
function alertButton(env: SlackEnv, work: (args: ButtonArgs, ctx: ButtonContext) => Promise<void>) {
  return async (args: ButtonArgs) => {
    await args.ack();
    const ctx = buttonContext(env, args);
    if (!EPISODE_ID.test(ctx.value)) return answerPrivately(args, STALE, ctx.logger);
    try {
      await work(args, ctx);
    } catch (err) {
      if (!(err instanceof UserError)) ctx.logger.warn({ err }, "alert button failed");
      await answerPrivately(args, toUserSentence(err), ctx.logger);
    }
  };
}

export function alertAcknowledge(env: SlackEnv) {
  return alertButton(env, async (args, ctx) => {
    const r = await acknowledgeAlert(env.deps, ctx.teamId, ctx.value, ctx.userId);
    await refreshParent(args, env, r.alert, ctx.logger);
    if (r.outcome === "already")
      return answerPrivately(args, alreadyAcknowledgedText(r.by, r.at, r.by === ctx.userId), ctx.logger);
    await post(
      args.client,
      r.alert.episode.channelId,
      parentTs(args, r.alert),
      alertAcknowledgedReply(ctx.userId),
    );
  });
}

export function alertMute(env: SlackEnv) {
  return alertButton(env, async (args, ctx) => {
    const { alert, until } = await muteAlertWatch(env.deps, {
      teamId: ctx.teamId,
      userId: ctx.userId,
      episodeId: ctx.value,
      forMs: MUTE_BUTTON_MS,
      isAdmin: () => env.admins.isAdmin(args.client, ctx.teamId, ctx.userId),
    });
    await refreshWatchParents(args, env, alert, ctx.teamId, ctx.logger);
    await post(
      args.client,
      alert.episode.channelId,
      parentTs(args, alert),
      alertMutedReply(ctx.userId, until, MUTE_BUTTON_MS),
    );
  });
}

/** The alert's parent and the watch's other open alerts (an apps watch has one per app) show its mute as it is. */
async function refreshWatchParents(
  args: ButtonArgs,
  env: SlackEnv,
  alert: LoadedAlert,
  teamId: string,
  logger: Logger,
) {
  await refreshParent(args, env, alert, logger);
  const others = await env.deps.store.episodes.listOpen(teamId, [alert.watch.channelId], 100);
  for (const episode of others)
    if (episode.watchId === alert.watch.id && episode.id !== alert.episode.id && episode.messageTs)
      await refreshParent(args, env, { episode, watch: alert.watch }, logger);
}

/** Unmute: the parents lose their mute line and show Mute 1h again; the poller brings them up to date. */
export function alertUnmute(env: SlackEnv) {
  return alertButton(env, async (args, ctx) => {
    const alert = await unmuteAlertWatch(env.deps, {
      teamId: ctx.teamId,
      userId: ctx.userId,
      episodeId: ctx.value,
      isAdmin: () => env.admins.isAdmin(args.client, ctx.teamId, ctx.userId),
    });
    await refreshWatchParents(args, env, alert, ctx.teamId, ctx.logger);
    await post(args.client, alert.episode.channelId, parentTs(args, alert), alertUnmutedReply(ctx.userId));
  });
}

/**
 * The incident card of the alert's zone in its thread, over the shortest window that covers the alert: a
 * placeholder first (gathering takes seconds), replaced by the card, or by the sentence of what went wrong.
 */
export function alertIncident(env: SlackEnv) {
  return alertButton(env, async (args, ctx) => {
    const alert = await loadAlert(env.deps, ctx.teamId, ctx.value);
    if (alert.watch.kind !== "zone") return answerPrivately(args, incidentOverviewNotForApps(), ctx.logger);
    const zoneId = Number(alert.watch.target);
    const window = incidentWindowFor(alert.episode.openedAt, env.deps.clock.now());
    const channel = alert.episode.channelId;
    const placeholder = await post(
      args.client,
      channel,
      parentTs(args, alert),
      gatheringMessage(zoneId, incidentRange(window, 0)),
    );
    let card: Reply;
    try {
      const picture = await gatherIncident(env.deps, ctx.teamId, zoneId, window, channel);
      card = incidentCard(picture, { isPublic: true, newRequestId });
    } catch (err) {
      if (!(err instanceof UserError)) ctx.logger.warn({ err }, "incident overview failed");
      card = sentenceReply(toUserSentence(err));
    }
    if (!placeholder.ts) return;
    await args.client.chat.update({ channel, ts: placeholder.ts, text: card.text, blocks: card.blocks });
  });
}

/**
 * The zone's timeline over the shortest window that covers the alert, to the presser alone, exactly as
 * /edge timeline answers them (the entries of the channels they may read, with paging and Export).
 */
export function alertTimeline(env: SlackEnv) {
  return alertButton(env, async (args, ctx) => {
    const alert = await loadAlert(env.deps, ctx.teamId, ctx.value);
    if (alert.watch.kind !== "zone") return answerPrivately(args, timelineNotForApps(), ctx.logger);
    const answer = await timelineAnswer(
      env,
      args.client,
      { ...ctx, isPublic: false },
      {
        zoneId: Number(alert.watch.target),
        window: incidentWindowFor(alert.episode.openedAt, env.deps.clock.now()),
        label: alert.watch.options.label ?? null,
      },
    );
    await respondPrivately(args, answer, ctx.logger);
  });
}
