import { DEFAULT_ALERT_STATUSES } from "../../alerts/detect.js";
import { watchInterval } from "../../alerts/interval.js";
import { alertViewOf } from "../../alerts/view.js";
import { UserError, usage } from "../../errors.js";
import { appsInStatuses } from "../../services/apps.js";
import { edgeClientFor } from "../../services/edge-access.js";
import type { ActorInput } from "../../services/ownership.js";
import {
  createWatch,
  muteWatch,
  parseMuteDuration,
  parseSensitivity,
  parseWatchedStatuses,
  type RemovedWatch,
  removeWatch,
  setWatchSensitivity,
  WATCH_APPS_EXAMPLE,
  WATCH_CONFIG_EXAMPLE,
  WATCH_ZONE_EXAMPLE,
} from "../../services/watches.js";
import { resolveShieldZoneId, type ZoneRef } from "../../services/zone-lookup.js";
import type { Watch, WatchOptions } from "../../store/index.js";
import {
  alertParentMessage,
  watchCreatedMessage,
  watchListMessage,
  watchMutedMessage,
  watchRemovedChannelNotice,
  watchRemovedMessage,
  watchSensitivityChangedMessage,
} from "../blocks/alerts.js";
import type { Reply } from "../blocks/reply.js";
import { parseZoneRef } from "./parse.js";
import type { CommandContext, Subcommand } from "./types.js";

const MUTE_EXAMPLE = "/edge watch mute w7k2m9qa 2h";

function watchId(
  arg: string | undefined,
  verb: "remove" | "mute",
  extra: number,
  rest: readonly string[],
): string {
  const example = verb === "mute" ? MUTE_EXAMPLE : "/edge watch remove w7k2m9qa";
  if (arg === undefined) throw usage(`Which watch? For example: ${example} (ids are in /edge watch list)`);
  if (rest.length > extra) throw usage(`Too many words after the watch id. For example: ${example}`);
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(arg)) throw usage(`"${arg}" is not a watch id. For example: ${example}`);
  return arg;
}

function actor(ctx: CommandContext): ActorInput {
  return {
    teamId: ctx.teamId,
    userId: ctx.userId,
    isAdmin: () => ctx.env.admins.isAdmin(ctx.client, ctx.teamId, ctx.userId),
  };
}

async function watchZone(ctx: CommandContext): Promise<Reply> {
  const args = ctx.args.slice(1);
  const ref = parseZoneRef(args[0], "/edge watch zone 1234", WATCH_ZONE_EXAMPLE);
  const sensitivity = parseSensitivity(args.slice(1));
  const asked = args.length > 1;
  return watchShieldZone(ctx, "zone", ref, WATCH_ZONE_EXAMPLE, { sensitivity }, async (existing) => {
    // The channel watches the zone already: a sensitivity typed for it is a change of that watch.
    if (!asked || (existing.options.sensitivity ?? "normal") === sensitivity) return undefined;
    const { watch, was } = await setWatchSensitivity(ctx.env.deps, actor(ctx), existing.id, sensitivity);
    return watchSensitivityChangedMessage(watch, was);
  });
}

/** `/edge watch config <zone|domain>`: post each change of the zone's settings made outside edgeops. */
async function watchConfig(ctx: CommandContext): Promise<Reply> {
  const args = ctx.args.slice(1);
  const ref = parseZoneRef(args[0], "/edge watch config 1234", WATCH_CONFIG_EXAMPLE);
  if (args.length > 1) throw usage(`Too many words after the zone. For example: ${WATCH_CONFIG_EXAMPLE}`);
  return watchShieldZone(ctx, "config", ref, WATCH_CONFIG_EXAMPLE, {});
}

/** A watch of a shield zone in this channel, labelled with the domain when one was typed. */
async function watchShieldZone(
  ctx: CommandContext,
  kind: "zone" | "config",
  ref: ZoneRef,
  example: string,
  options: WatchOptions,
  /** What to do instead when the channel already watches it (undefined: say it does). */
  onExisting?: (existing: Watch) => Promise<Reply | undefined>,
): Promise<Reply> {
  const deps = ctx.env.deps;
  const shieldZoneId = await resolveShieldZoneId(deps, ctx.teamId, ref, example);
  // A watch of a zone this key cannot read would only ever fail: say so now.
  await (await edgeClientFor(deps, ctx.teamId)).getShieldZone(shieldZoneId);
  const { watch, existed } = await createWatch(deps, {
    teamId: ctx.teamId,
    channelId: ctx.channelId,
    userId: ctx.userId,
    kind,
    target: String(shieldZoneId),
    options: { ...options, ...(ref.kind === "name" ? { label: ref.name } : {}) },
  });
  const instead = existed && onExisting ? await onExisting(watch) : undefined;
  return instead ?? watchCreatedMessage(watch, existed, await watchInterval(deps, ctx.teamId));
}

async function watchApps(ctx: CommandContext): Promise<Reply> {
  const statuses = parseWatchedStatuses(ctx.args.slice(1));
  const deps = ctx.env.deps;
  // Without a key the watch could never read the apps: say so now. The apps already in a watched status are
  // its starting point (it posts changes from now on), so the confirmation names them.
  const watched = (statuses ?? DEFAULT_ALERT_STATUSES).filter((s) => s !== "progressing");
  const already = await appsInStatuses(await edgeClientFor(deps, ctx.teamId), watched);
  const { watch, existed } = await createWatch(deps, {
    teamId: ctx.teamId,
    channelId: ctx.channelId,
    userId: ctx.userId,
    kind: "apps",
    target: "",
    options: { statuses },
  });
  return watchCreatedMessage(watch, existed, await watchInterval(ctx.env.deps, ctx.teamId), already);
}

/**
 * A removed watch's alerts that were still firing: each parent says it is no longer tracked (no buttons), and the
 * channel is told once. Slack refusing is logged; the watch is removed either way.
 */
async function tellUntracked(ctx: CommandContext, { watch, openAlerts }: RemovedWatch): Promise<void> {
  if (openAlerts.length === 0) return;
  const at = ctx.env.deps.clock.now();
  for (const e of openAlerts) {
    if (e.messageTs === null) continue;
    const parent = alertParentMessage({ ...alertViewOf(e, watch), untracked: { by: ctx.userId, at } }, at);
    await ctx.client.chat
      .update({ channel: watch.channelId, ts: e.messageTs, text: parent.text, blocks: parent.blocks })
      .catch((err: unknown) =>
        ctx.logger.warn({ err, episodeId: e.id }, "could not mark a removed watch's alert as untracked"),
      );
  }
  const notice = watchRemovedChannelNotice(watch, ctx.userId, openAlerts.length);
  await ctx.client.chat
    .postMessage({ channel: watch.channelId, text: notice.text, blocks: notice.blocks })
    .catch((err: unknown) => ctx.logger.warn({ err }, "could not tell the channel its watch was removed"));
}

export const watchCommand: Subcommand = {
  name: "watch",
  usage:
    "watch apps [status…] | watch zone <shieldZoneId|domain> [sensitivity low|normal|high] | watch config <shieldZoneId|domain> | watch list | watch remove <id> | watch mute <id> <30m|2h|1d|off>",
  summary:
    "Post alerts in this channel when a Magic Containers app changes status or a shield zone comes under attack, updated in one thread until it is over; or when a zone's settings change outside edgeops (config). Its creator and admins can remove or mute it.",
  examples: [WATCH_ZONE_EXAMPLE, WATCH_APPS_EXAMPLE, WATCH_CONFIG_EXAMPLE, "/edge watch list", MUTE_EXAMPLE],
  shareable: (args) => (args[0] ?? "").toLowerCase() === "list",
  // `/edge watch zone` (or `/edge watch zone sensitivity high`) without a zone: a search menu of zones.
  picker: {
    source: "shield",
    missingAt: (args) =>
      ((args[0] ?? "").toLowerCase() === "zone" &&
        (args.length === 1 || (args[1] ?? "").toLowerCase() === "sensitivity")) ||
      ((args[0] ?? "").toLowerCase() === "config" && args.length === 1)
        ? 1
        : undefined,
  },
  async run(ctx) {
    const verb = (ctx.args[0] ?? "").toLowerCase();
    const deps = ctx.env.deps;
    switch (verb) {
      case "zone":
        return watchZone(ctx);
      case "config":
        return watchConfig(ctx);
      case "apps":
      case "app":
        return watchApps(ctx);
      case "list":
        if (ctx.args.length > 1) throw usage("Too many words: /edge watch list takes nothing more.");
        return watchListMessage(await deps.store.watches.list(ctx.teamId, ctx.channelId), deps.clock.now());
      case "remove":
      case "delete": {
        const id = watchId(ctx.args[1], "remove", 0, ctx.args.slice(2));
        const removed = await removeWatch(deps, actor(ctx), id);
        await tellUntracked(ctx, removed);
        return watchRemovedMessage(removed.watch);
      }
      case "mute": {
        const id = watchId(ctx.args[1], "mute", 1, ctx.args.slice(2));
        const ms = parseMuteDuration(ctx.args[2], MUTE_EXAMPLE);
        const until = ms === null ? null : deps.clock.now() + ms;
        return watchMutedMessage(await muteWatch(deps, actor(ctx), id, until), until);
      }
      case "unmute": {
        const id = watchId(ctx.args[1], "remove", 0, ctx.args.slice(2));
        return watchMutedMessage(await muteWatch(deps, actor(ctx), id, null), null);
      }
      default:
        throw new UserError(
          "usage",
          verb === ""
            ? `What should I watch? For example: ${WATCH_ZONE_EXAMPLE} or ${WATCH_APPS_EXAMPLE}`
            : `"${ctx.args[0]}" is not something /edge watch does: use apps, zone, config, list, remove or mute. For example: ${WATCH_ZONE_EXAMPLE}`,
        );
    }
  },
};
