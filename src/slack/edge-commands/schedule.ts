import { slackErrorCode, UserError, usage } from "../../errors.js";
import { latestScan } from "../../services/dns.js";
import { edgeClientFor } from "../../services/edge-access.js";
import { dnsZoneKnown } from "../../services/pickers.js";
import {
  createSchedule,
  isKnownTimezone,
  listChannelSchedules,
  parseTimezone,
  parseWhenWords,
  removeSchedule,
  SCHEDULE_EXAMPLE,
  type ScheduleActionInput,
  scheduleForAction,
} from "../../services/schedules.js";
import type { Schedule } from "../../store/index.js";
import { context } from "../blocks/block-kit.js";
import { channel, type Mrkdwn, mrkdwn } from "../blocks/mrkdwn.js";
import { type Reply, sentenceReply } from "../blocks/reply.js";
import {
  scheduleCreatedMessage,
  scheduleListMessage,
  scheduleRemovedMessage,
  scheduleRemovedNote,
} from "../blocks/schedules.js";
import { postIn } from "../deliver.js";
import { runSchedule } from "../schedule-run.js";
import { dnsZoneIdOf, unknownDnsZone } from "./dns.js";
import { parseDnsZoneRef } from "./parse.js";
import type { CommandContext, Subcommand } from "./types.js";

const TRY = `Try: ${SCHEDULE_EXAMPLE}`;
/** How long `/edge schedule run` waits for a fresh scan before summarising what exists. */
export const RUN_NOW_SCAN_WAIT_MS = 60_000;

function scheduleId(arg: string | undefined, verb: "remove" | "run", extra: readonly string[]): string {
  const example = `/edge schedule ${verb} s7k2m9qa (ids are in /edge schedule list)`;
  if (arg === undefined) throw usage(`Which schedule? For example: ${example}`);
  if (extra.length > 0) throw usage(`Too many words after the schedule id. For example: ${example}`);
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(arg))
    throw usage(`"${arg}" is not a schedule id. For example: ${example}`);
  return arg;
}

/** The requesting user's Slack time zone (users.info), else UTC. */
async function userTimezone(ctx: CommandContext): Promise<{ tz: string; fromProfile: boolean }> {
  try {
    const info = await ctx.client.users.info({ user: ctx.userId });
    const tz = info.user?.tz;
    if (isKnownTimezone(tz)) return { tz: parseTimezone(tz), fromProfile: true };
  } catch (err) {
    ctx.logger.debug({ err }, "users.info failed; scheduling in UTC");
  }
  return { tz: "UTC", fromProfile: false };
}

async function scheduleDns(ctx: CommandContext): Promise<Reply> {
  const args = ctx.args.slice(1);
  // Read as /edge dns reads it: an id or a domain.
  const zoneRef = parseDnsZoneRef(args[0], SCHEDULE_EXAMPLE);
  const { when, used } = parseWhenWords(args.slice(1));
  const rest = args.slice(1 + used);
  if (rest.length > 1)
    throw usage(`Too many words: after the time comes only a time zone such as Europe/Amsterdam. ${TRY}`);
  const zone =
    rest[0] !== undefined ? { tz: parseTimezone(rest[0]), fromProfile: false } : await userTimezone(ctx);

  // A schedule without an Edge API key could never post a summary: say so now.
  const edge = await edgeClientFor(ctx.env.deps, ctx.teamId);
  const zoneId = await dnsZoneIdOf(ctx.env, ctx.teamId, zoneRef, SCHEDULE_EXAMPLE);
  // A schedule for a zone the key does not see would only post "not found" later.
  const known = await dnsZoneKnown(ctx.env.deps, ctx.teamId, zoneId).catch((err: unknown) => {
    ctx.logger.debug({ err, zoneId }, "could not read the DNS zone list while scheduling");
    return undefined;
  });
  if (known === false) throw unknownDnsZone(zoneId);
  let domain: string | null = null;
  try {
    domain = (await latestScan(edge, zoneId))?.domain ?? null;
  } catch (err) {
    ctx.logger.debug({ err, zoneId }, "could not read the zone's latest scan while scheduling");
  }

  const created = await createSchedule(ctx.env.deps, {
    teamId: ctx.teamId,
    channelId: ctx.channelId,
    userId: ctx.userId,
    zoneId,
    when,
    timezone: zone.tz,
  });
  const reply = scheduleCreatedMessage(created.schedule, created.upcoming, created.existed, domain);
  if (rest[0] === undefined)
    reply.blocks.push(
      context(
        zone.fromProfile
          ? `Times are in your Slack time zone, ${zone.tz}. To choose another, end the command with one, e.g. \`${SCHEDULE_EXAMPLE}\`.`
          : `Times are in UTC. To choose a time zone, end the command with one, e.g. \`${SCHEDULE_EXAMPLE}\`.`,
      ),
    );
  return reply;
}

/**
 * A schedule removed from another channel: the channel it posted in is told who removed it (and from where,
 * when this channel is public), if edgeops may still post there. Best effort: the removal stands either way.
 */
async function noteWhereItPosted(ctx: CommandContext, s: Schedule): Promise<Mrkdwn> {
  // Unknown counts as private: a channel is named elsewhere only when Slack says it is public.
  const isPublic = await ctx.client.conversations
    .info({ channel: ctx.channelId })
    .then((res) => res.channel?.is_private === false)
    .catch(() => false);
  try {
    await postIn(
      ctx.client,
      s.channelId,
      scheduleRemovedNote(s, ctx.userId, isPublic ? ctx.channelId : null),
    );
    return mrkdwn`${channel(s.channelId)} was told who removed it.`;
  } catch (err) {
    ctx.logger.info({ err, scheduleId: s.id }, "could not tell the schedule's channel it was removed");
    return mrkdwn`edgeops could not post a note about it in ${channel(s.channelId)} (${slackErrorCode(err) ?? "Slack refused"}).`;
  }
}

/** Who asks to act on schedule `id`: its creator or an admin may (src/slack/admin.ts decides admin). */
function actor(ctx: CommandContext, id: string): ScheduleActionInput {
  return {
    teamId: ctx.teamId,
    userId: ctx.userId,
    id,
    isAdmin: () => ctx.env.admins.isAdmin(ctx.client, ctx.teamId, ctx.userId),
  };
}

async function runNow(ctx: CommandContext): Promise<Reply | null> {
  const id = scheduleId(ctx.args[1], "run", ctx.args.slice(2));
  const deps = ctx.env.deps;
  const s = await scheduleForAction(deps, "run", actor(ctx, id));
  const result = await runSchedule(s, {
    deps,
    client: async () => ctx.client,
    logger: ctx.logger,
    now: deps.clock.now(),
    wait: { maxWaitMs: RUN_NOW_SCAN_WAIT_MS, firstDelayMs: 500, clock: deps.clock },
  });
  if (result.posted) {
    // The summary in the channel is the answer; elsewhere, say where it went.
    return s.channelId === ctx.channelId
      ? null
      : sentenceReply(
          mrkdwn`Posted the DNS summary of zone ${s.target} in ${channel(s.channelId)}.`,
          ":white_check_mark:",
        );
  }
  if (result.outcome === "channel_failing")
    throw new UserError(
      "slack",
      `${result.error ?? "I can't post in that channel."} Invite me with /invite @edgeops in that channel, or remove the schedule with /edge schedule remove ${s.id}.`,
    );
  throw new UserError("slack", result.error ?? "The summary could not be posted; try again in a minute.");
}

export const scheduleCommand: Subcommand = {
  name: "schedule",
  usage: "schedule dns <zoneId|domain> <when> [timezone] | list | remove <id> | run <id>",
  summary:
    'Post a DNS scan summary in this channel on a schedule: `daily HH:MM`, `weekdays HH:MM`, `weekly mon HH:MM` or a cron in quotes ("0 9 * * 1-5"), in your time zone or one you name. Its creator and admins can remove or run it.',
  examples: [SCHEDULE_EXAMPLE, "/edge schedule list"],
  shareable: (args) => (args[0] ?? "").toLowerCase() === "list",
  // `/edge schedule dns daily 09:00` (or a quoted cron right after dns): the DNS zone goes after `dns`.
  picker: {
    source: "dns",
    missingAt: (args) => {
      if ((args[0] ?? "").toLowerCase() !== "dns") return undefined;
      const next = args[1];
      // Only when the schedule itself was given: a bare `schedule dns` gets the example to copy.
      const isWhen =
        next !== undefined &&
        (/\s/.test(next) || ["daily", "weekdays", "weekly"].includes(next.toLowerCase()));
      return isWhen ? 1 : undefined;
    },
  },
  async run(ctx) {
    const verb = (ctx.args[0] ?? "").toLowerCase();
    switch (verb) {
      case "dns":
        return scheduleDns(ctx);
      case "list": {
        if (ctx.args.length > 1) throw usage("Too many words: /edge schedule list takes nothing more.");
        return scheduleListMessage(await listChannelSchedules(ctx.env.deps, ctx.teamId, ctx.channelId));
      }
      case "remove":
      case "delete": {
        const id = scheduleId(ctx.args[1], "remove", ctx.args.slice(2));
        const removed = await removeSchedule(ctx.env.deps, actor(ctx, id));
        const reply = scheduleRemovedMessage(removed);
        if (removed.channelId !== ctx.channelId)
          reply.blocks.push(context(await noteWhereItPosted(ctx, removed)));
        return reply;
      }
      case "run":
        return runNow(ctx);
      case "":
        throw usage(`What should I schedule? ${TRY}; see them with /edge schedule list.`);
      default:
        throw usage(`"${ctx.args[0]}" is not a schedule command: use dns, list, remove or run. ${TRY}`);
    }
  },
};
