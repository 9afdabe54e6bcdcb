import { normaliseAppStatus } from "../alerts/detect.js";
import type { Deps } from "../deps.js";
import { durationMs } from "../duration.js";
import { APP_STATUSES } from "../edge/schemas/mc.js";
import { UserError, usage } from "../errors.js";
import type { AlertEpisode, Sensitivity, Watch, WatchKind, WatchOptions } from "../store/index.js";
import { type ActorInput, requireCreatorOrAdmin } from "./ownership.js";
import { newShortId } from "./schedules.js";

/** /edge watch: create, list, remove and mute watches; the poller (src/jobs/alerts.ts) evaluates them with src/alerts. */

export const WATCH_ZONE_EXAMPLE = "/edge watch zone shop.example.com sensitivity high";
export const WATCH_APPS_EXAMPLE = "/edge watch apps failing suspended";
export const WATCH_CONFIG_EXAMPLE = "/edge watch config shop.example.com";
export const SENSITIVITY_WORDS: readonly Sensitivity[] = ["low", "normal", "high"];
/** Statuses a watch may name: the API's, and `deploying` (stuck in Deploying). */
export const WATCHABLE_STATUSES = APP_STATUSES.filter((s) => s !== "unknown");
export const MAX_MUTE_MS = 7 * 24 * 3_600_000;

export interface NewWatchInput {
  teamId: string;
  channelId: string;
  userId: string;
  kind: WatchKind;
  target: string;
  options: WatchOptions;
}

function limitReached(scope: "channel" | "workspace", limit: number): UserError {
  return scope === "channel"
    ? usage(
        `This channel already has ${limit} watches, the most allowed here. Remove one first (/edge watch list shows their ids), or watch from another channel.`,
      )
    : usage(
        `This workspace already has ${limit} watches, the most allowed. Remove one first with /edge watch remove <id>, or ask whoever runs edgeops to raise WATCHES_PER_WORKSPACE.`,
      );
}

/** Create a watch (once per channel, kind and target) within the channel's and workspace's caps; audit-logged. */
export async function createWatch(
  deps: Deps,
  input: NewWatchInput,
): Promise<{ watch: Watch; existed: boolean }> {
  const created = await deps.store.watches.createIfRoom(
    {
      id: newShortId("w"),
      teamId: input.teamId,
      channelId: input.channelId,
      createdBy: input.userId,
      kind: input.kind,
      target: input.target,
      options: input.options,
      // Evaluated at the next tick: the first evaluation learns the baseline.
      nextPollAt: deps.clock.now(),
    },
    deps.config.watches,
  );
  if (created.kind === "full") throw limitReached(created.scope, created.limit);
  if (created.kind === "exists") return { watch: created.item, existed: true };
  await deps.store.audit.append({
    teamId: input.teamId,
    userId: input.userId,
    action: "watch.create",
    target: `watch:${created.item.id}`,
    outcome: "ok",
    details: { kind: input.kind, target: input.target, channelId: input.channelId, ...input.options },
  });
  return { watch: created.item, existed: false };
}

/** A watch of this workspace that the actor may remove or mute: its creator or an admin (a refusal is audit-logged). */
async function watchForAction(
  deps: Deps,
  actor: ActorInput,
  id: string,
  action: "remove" | "mute" | "change",
): Promise<Watch> {
  const w = await deps.store.watches.get(id);
  if (!w || w.teamId !== actor.teamId)
    throw new UserError(
      "not_found",
      `There is no watch ${id} in this workspace. /edge watch list shows this channel's.`,
    );
  return requireCreatorOrAdmin(deps, actor, w, "watch", action);
}

const removedMeanwhile = (id: string) => new UserError("not_found", `Watch ${id} was removed meanwhile.`);

/** A removed watch and its alerts that were still firing with a parent in Slack (to say they are no longer tracked). */
export interface RemovedWatch {
  watch: Watch;
  openAlerts: AlertEpisode[];
}

/** Remove a watch (its alerts go with it): its creator or an admin; audit-logged. */
export async function removeWatch(deps: Deps, actor: ActorInput, id: string): Promise<RemovedWatch> {
  const w = await watchForAction(deps, actor, id, "remove");
  const openAlerts = (await deps.store.episodes.listForWatch(id)).filter(
    (e) => e.status === "firing" && e.messageTs !== null,
  );
  if (!(await deps.store.watches.remove(actor.teamId, id))) throw removedMeanwhile(id);
  await deps.store.audit.append({
    teamId: actor.teamId,
    userId: actor.userId,
    action: "watch.remove",
    target: `watch:${id}`,
    outcome: "ok",
    details: { kind: w.kind, target: w.target, channelId: w.channelId },
  });
  return { watch: w, openAlerts };
}

/** Mute a watch until `until` (null unmutes): its creator or an admin; audit-logged. */
export async function muteWatch(
  deps: Deps,
  actor: ActorInput,
  id: string,
  until: number | null,
): Promise<Watch> {
  const w = await watchForAction(deps, actor, id, "mute");
  if (!(await deps.store.watches.mute(actor.teamId, id, until))) throw removedMeanwhile(id);
  await deps.store.audit.append({
    teamId: actor.teamId,
    userId: actor.userId,
    action: until === null ? "watch.unmute" : "watch.mute",
    target: `watch:${id}`,
    outcome: "ok",
    details: { until, channelId: w.channelId },
  });
  return { ...w, mutedUntil: until };
}

/**
 * Give an existing zone watch another sensitivity: its creator or an admin (as muting); audit-logged. Its
 * baseline stays: only how far above it counts as an attack changes, from the next evaluation.
 */
export async function setWatchSensitivity(
  deps: Deps,
  actor: ActorInput,
  id: string,
  sensitivity: Sensitivity,
): Promise<{ watch: Watch; was: Sensitivity }> {
  const w = await watchForAction(deps, actor, id, "change");
  const was = w.options.sensitivity ?? "normal";
  const options = { ...w.options, sensitivity };
  if (!(await deps.store.watches.setOptions(actor.teamId, id, options))) throw removedMeanwhile(id);
  await deps.store.audit.append({
    teamId: actor.teamId,
    userId: actor.userId,
    action: "watch.sensitivity",
    target: `watch:${id}`,
    outcome: "ok",
    details: { from: was, to: sensitivity, channelId: w.channelId },
  });
  return { watch: { ...w, options }, was };
}

/** `off` (unmute), or a duration like 30m, 2h, 1h30m, 1d: from one minute to seven days. */
export function parseMuteDuration(word: string | undefined, example: string): number | null {
  if (word === undefined) throw usage(`For how long? For example: ${example}`);
  const w = word.toLowerCase();
  if (w === "off" || w === "0") return null;
  const ms = durationMs(w, { days: true });
  if (!(ms >= 60_000 && ms <= MAX_MUTE_MS))
    throw usage(
      `"${word}" is not a mute duration: use 30m, 2h, 1d (up to 7d), or off. For example: ${example}`,
    );
  return ms;
}

/** The statuses typed after `/edge watch apps`, checked; none: null (the defaults). */
export function parseWatchedStatuses(words: readonly string[]): string[] | null {
  if (words.length === 0) return null;
  const out: string[] = [];
  for (const word of words) {
    const s = normaliseAppStatus(word.replace(/,$/, ""));
    if (!(WATCHABLE_STATUSES as readonly string[]).includes(s))
      throw usage(
        `"${word}" is not an app status: use ${WATCHABLE_STATUSES.map((x) => (x === "progressing" ? "deploying" : x)).join(", ")}. For example: ${WATCH_APPS_EXAMPLE}`,
      );
    if (!out.includes(s)) out.push(s);
  }
  return out;
}

/** `[sensitivity] low|normal|high` after the zone; none: normal. */
export function parseSensitivity(words: readonly string[]): Sensitivity {
  const rest = words[0]?.toLowerCase() === "sensitivity" ? words.slice(1) : words;
  if (rest.length === 0) {
    if (words.length > 0)
      throw usage(`Which sensitivity? low, normal or high. For example: ${WATCH_ZONE_EXAMPLE}`);
    return "normal";
  }
  const word = rest[0]?.toLowerCase() as Sensitivity;
  if (!SENSITIVITY_WORDS.includes(word) || rest.length > 1)
    throw usage(
      `"${rest.join(" ")}" is not a sensitivity: use low, normal or high. For example: ${WATCH_ZONE_EXAMPLE}`,
    );
  return word;
}
