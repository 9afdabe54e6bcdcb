import type { WebClient } from "@slack/web-api";
import { z } from "zod";
import { slackErrorCode, toUserSentence, UserError } from "../../../errors.js";
import type { Logger } from "../../../log.js";
import { INCIDENT_WINDOWS } from "../../../services/incident.js";
import { chartAltText, timelineMitigations } from "../../../services/incident-chart.js";
import {
  type DraftEffect,
  type PostmortemChart,
  type PostmortemNames,
  postmortemMarkdown,
} from "../../../services/postmortem.js";
import { gatherTimeline, type TimelineStory } from "../../../services/timeline.js";
import { exportedReply } from "../../blocks/timeline.js";
import { timelineAnswer } from "../../edge-commands/timeline.js";
import type { SlackEnv } from "../../edge-commands/types.js";
import { currentEffect, entryStateOf } from "../../effects.js";
import { drawIncidentChart } from "../../incident-chart.js";
import { answerPrivately, onButton, replaceMessage, respondPrivately } from "./context.js";

/**
 * The buttons of the /edge timeline answer: Previous / Next replace it with another page of the same window
 * (it ends where the first answer's did); Export posts a Markdown postmortem draft as a file in the channel
 * (in the thread when the answer is in one), holding only what that channel may see.
 */

const pageValue = z.object({
  z: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER),
  w: z.enum(INCIDENT_WINDOWS),
  t: z.number().int().min(0),
  pg: z.number().int().min(1).max(1_000_000),
  l: z.string().max(253).optional(),
});

const STALE = "That button is out of date: run /edge timeline again.";

export function timelinePage(env: SlackEnv) {
  return onButton(env, pageValue, STALE, (args, ctx, value) =>
    replaceMessage(args, ctx.logger, () =>
      timelineAnswer(
        env,
        args.client,
        { ...ctx, isPublic: false },
        { zoneId: value.z, window: value.w, label: value.l ?? null, page: value.pg, to: value.t },
      ),
    ),
  );
}

const CANT_POST: Record<string, string> = {
  not_in_channel: "I can't post files in this channel: invite edgeops to it (/invite @edgeops).",
  channel_not_found: "I can't post files in this channel: invite edgeops to it (/invite @edgeops).",
  missing_scope:
    "Posting files needs the files:write scope: an admin adds it by reinstalling the app from manifest.yml.",
  is_archived: "This channel is archived: nothing can be posted in it.",
};

/** Names read for one draft at most, per kind (the rest stay ids). */
const NAMES_READ = 50;

/**
 * Names for the draft (a file shows no mentions): users.info for each person in it, conversations.info for each
 * channel; a name that can't be read stays an id.
 */
async function namesFor(
  client: WebClient,
  ids: { users: readonly string[]; channels: readonly string[] },
  logger: Logger,
): Promise<PostmortemNames> {
  const users = new Map<string, string>();
  const channels = new Map<string, string>();
  const read = async (into: Map<string, string>, id: string, lookup: () => Promise<string | undefined>) => {
    try {
      const name = await lookup();
      if (name) into.set(id, name);
    } catch (err) {
      logger.debug({ err, id }, "no name for the postmortem draft");
    }
  };
  await Promise.all([
    ...[...new Set(ids.users)].slice(0, NAMES_READ).map((id) =>
      read(users, id, async () => {
        const { user } = await client.users.info({ user: id });
        return user?.profile?.display_name || user?.real_name || user?.name;
      }),
    ),
    ...[...new Set(ids.channels)]
      .slice(0, NAMES_READ)
      .map((id) =>
        read(channels, id, async () => (await client.conversations.info({ channel: id })).channel?.name),
      ),
  ]);
  return { user: (id) => users.get(id) ?? id, channel: (id) => channels.get(id) ?? id };
}

/**
 * The draft's chart, uploaded beside it (same channel or thread) so the draft can link it by file name; null
 * (the draft keeps its table of numbers) when there is nothing to draw or the upload fails.
 */
async function postPostmortemChart(
  client: WebClient,
  story: TimelineStory,
  names: PostmortemNames,
  o: { filename: string; channelId: string; threadTs: string | undefined; logger: Logger },
): Promise<PostmortemChart | null> {
  const { traffic, timeline } = story;
  if (!traffic || "error" in traffic) return null;
  try {
    const drawn = await drawIncidentChart(
      {
        zoneId: timeline.zoneId,
        range: timeline.range,
        traffic: { ok: { rows: traffic.ok } },
      },
      { mitigations: timelineMitigations(timeline, names.user) },
    );
    if (!drawn) return null;
    const altText = chartAltText(drawn.chart);
    const file = {
      file: drawn.png,
      filename: o.filename,
      title: `Chart for the postmortem draft: shield zone ${timeline.zoneId}`,
      alt_text: altText,
    };
    await client.filesUploadV2(
      o.threadTs
        ? { ...file, channel_id: o.channelId, thread_ts: o.threadTs }
        : { ...file, channel_id: o.channelId },
    );
    return { filename: o.filename, altText };
  } catch (err) {
    o.logger.info({ err }, "the postmortem draft's chart was not uploaded");
    return null;
  }
}

/** Changes whose effect one draft measures at most (each a few background Edge reads). */
const DRAFT_EFFECTS_MAX = 20;

/** The measured effect of each change the story applied (the draft's What worked table). */
async function draftEffects(env: SlackEnv, story: TimelineStory): Promise<Map<string, DraftEffect>> {
  const ids = [
    ...new Set(
      story.timeline.entries.flatMap((e) =>
        e.kind === "change" && e.step === "applied" ? [e.requestId] : [],
      ),
    ),
  ].slice(0, DRAFT_EFFECTS_MAX);
  const out = new Map<string, DraftEffect>();
  for (const id of ids) {
    const request = await env.deps.store.changeRequests.get(id);
    const measured = request && (await currentEffect(env.deps, request));
    if (!request || !measured) continue;
    const state = entryStateOf(request);
    out.set(id, { effect: measured.effect, ...(state ? { state } : {}) });
  }
  return out;
}

export function timelineExport(env: SlackEnv) {
  return onButton(env, pageValue, STALE, async (args, ctx, value) => {
    const container = args.body.container as { thread_ts?: string } | undefined;
    const threadTs = container?.thread_ts ?? args.body.message?.thread_ts;
    try {
      // Posted for the whole channel: only what happened in it, whoever pressed the button.
      const story = await gatherTimeline(env.deps, {
        teamId: ctx.teamId,
        zoneId: value.z,
        window: value.w,
        audience: { kind: "channels", channelIds: new Set([ctx.channelId]) },
        to: value.t,
      });
      const { entries, mitigations } = story.timeline;
      const names = await namesFor(
        args.client,
        {
          users: [
            ...entries.flatMap((e) => (e.by && e.by !== "system" ? [e.by] : [])),
            ...mitigations.flatMap((m) => (m.asked ? [m.asked.by] : [])),
          ],
          channels: [
            ...entries.map((e) => e.channelId),
            ...mitigations.flatMap((m) => (m.asked ? [m.asked.channelId] : [])),
          ].filter(Boolean),
        },
        ctx.logger,
      );
      const day = new Date(value.t).toISOString().slice(0, 10);
      const chart = await postPostmortemChart(args.client, story, names, {
        filename: `postmortem-zone-${value.z}-${day}.png`,
        channelId: ctx.channelId,
        threadTs,
        logger: ctx.logger,
      });
      const effects = await draftEffects(env, story);
      const markdown = postmortemMarkdown(story, value.l ?? null, names, chart, effects);
      const filename = `postmortem-zone-${value.z}-${day}.md`;
      const file = {
        content: markdown,
        filename,
        title: `Postmortem draft: shield zone ${value.z}`,
        initial_comment: `Postmortem draft for shield zone ${value.z} (last ${story.timeline.range.words}), asked by <@${ctx.userId}>.`,
      };
      // files.getUploadURLExternal, the upload, then files.completeUploadExternal into the channel (or thread).
      await args.client.filesUploadV2(
        threadTs
          ? { ...file, channel_id: ctx.channelId, thread_ts: threadTs }
          : { ...file, channel_id: ctx.channelId },
      );
      await env.deps.store.audit.append({
        teamId: ctx.teamId,
        userId: ctx.userId,
        action: "timeline.export",
        target: `shield zone ${value.z}`,
        outcome: "ok",
        details: { channelId: ctx.channelId, window: value.w },
      });
      await respondPrivately(args, exportedReply(ctx.channelId, filename), ctx.logger);
    } catch (err) {
      const code = slackErrorCode(err);
      const sentence = code ? CANT_POST[code] : undefined;
      if (!sentence && !(err instanceof UserError))
        ctx.logger.warn({ err }, "exporting the postmortem draft failed");
      await answerPrivately(args, sentence ?? toUserSentence(err), ctx.logger);
    }
  });
}
