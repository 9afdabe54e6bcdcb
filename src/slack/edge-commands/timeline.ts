import type { WebClient } from "@slack/web-api";
import {
  INCIDENT_WINDOWS,
  type IncidentWindow,
  incidentRange,
  isIncidentWindow,
} from "../../services/incident.js";
import {
  gatherTimeline,
  parseTimelineWindow,
  TIMELINE_EXAMPLE,
  type TimelineAudience,
} from "../../services/timeline.js";
import { resolveShieldZoneId } from "../../services/zone-lookup.js";
import type { Reply } from "../blocks/reply.js";
import { gatheringTimelineMessage, type TimelineScope, timelineMessage } from "../blocks/timeline.js";
import { userChannelIds } from "../user-channels.js";
import { noMoreArgs, parseZoneRef, pickerBeforeWord } from "./parse.js";
import type { SlackEnv, Subcommand } from "./types.js";

const DOMAIN_EXAMPLE = "/edge timeline shop.example.com";

/**
 * Who may read which channels' entries: shared in a channel, that channel's; an admin, all; anyone else,
 * the channels they are in (as /edge audit), so a private channel's story stays with its members.
 */
export async function timelineAudience(
  env: SlackEnv,
  client: WebClient,
  who: { teamId: string; userId: string; channelId: string; isPublic: boolean },
): Promise<{ audience: TimelineAudience; scope: TimelineScope }> {
  if (who.isPublic)
    return { audience: { kind: "channels", channelIds: new Set([who.channelId]) }, scope: "channel" };
  if (await env.admins.isAdmin(client, who.teamId, who.userId))
    return { audience: { kind: "all" }, scope: "workspace" };
  return {
    audience: { kind: "channels", channelIds: await userChannelIds(client, who.userId) },
    scope: "yours",
  };
}

/**
 * The timeline answer for whoever asked, as /edge timeline gives it: the command, its Previous / Next and an
 * alert's Timeline button all read it here. Paging and Export on an answer for one reader; none when shared.
 */
export async function timelineAnswer(
  env: SlackEnv,
  client: WebClient,
  who: { teamId: string; userId: string; channelId: string; isPublic: boolean },
  q: { zoneId: number; window: IncidentWindow; label: string | null; page?: number; to?: number },
): Promise<Reply> {
  const { audience, scope } = await timelineAudience(env, client, who);
  const story = await gatherTimeline(env.deps, {
    teamId: who.teamId,
    zoneId: q.zoneId,
    window: q.window,
    audience,
    ...(q.to === undefined ? {} : { to: q.to }),
  });
  return timelineMessage(story, {
    page: q.page ?? 1,
    label: q.label,
    scope,
    buttons: who.isPublic ? "none" : "all",
    now: story.timeline.range.to,
  });
}

export const timelineCommand: Subcommand = {
  name: "timeline",
  usage: `timeline <shieldZoneId|domain> [${INCIDENT_WINDOWS.join("|")}]`,
  summary:
    "The story of an incident on one shield zone, oldest first: alerts with their signals, acknowledgements, mutes, every change asked, approved, rejected, applied, undone or expired (who and when), what is still in force and the peak per signal; Export posts a postmortem draft. Window 24h by default.",
  examples: ["/edge timeline 1234", TIMELINE_EXAMPLE, DOMAIN_EXAMPLE],
  picker: pickerBeforeWord("shield", isIncidentWindow),
  async run(ctx) {
    const zone = parseZoneRef(ctx.args[0], TIMELINE_EXAMPLE, DOMAIN_EXAMPLE);
    const window = parseTimelineWindow(ctx.args[1]);
    noMoreArgs(ctx.args, 2, TIMELINE_EXAMPLE);
    await ctx.placeholder?.(
      gatheringTimelineMessage(zone.kind === "id" ? zone.id : zone.name, incidentRange(window, 0).words),
    );
    const zoneId = await resolveShieldZoneId(ctx.env.deps, ctx.teamId, zone, TIMELINE_EXAMPLE);
    return timelineAnswer(ctx.env, ctx.client, ctx, {
      zoneId,
      window,
      label: zone.kind === "name" ? zone.name : null,
    });
  },
};
