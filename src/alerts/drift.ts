import { resolveChange } from "../changes/index.js";
import type { ChangeKind } from "../changes/kind.js";
import { sameValue } from "../changes/kind.js";
import { botCategoryKind } from "../changes/kinds/bot-category.js";
import { ddosSensitivityKind, learningModeKind, wafModeKind } from "../changes/kinds/shield-zone-setting.js";
import { restoreOf } from "../changes/moves.js";
import type { Deps } from "../deps.js";
import type { EdgeClient } from "../edge/client.js";
import { intLabel } from "../edge/schemas/common.js";
import {
  ACCESS_LIST_ACTION_LABELS,
  ACCESS_LIST_ACTIONS,
  botCategoryActionLabel,
  botCategoryLabel,
  ddosExecutionModeLabel,
  ddosSensitivityLabel,
  learningModeEnded,
  wafExecutionModeLabel,
} from "../edge/schemas/shield.js";
import { UserError } from "../errors.js";
import { ACCESS_ENTRY_TYPES } from "../services/access-entries.js";
import { ACCESS_ACTIONS, edgeopsListName, edgeopsListOf } from "../services/access-lists.js";
import { type ActorInput, requireCreatorOrAdmin } from "../services/ownership.js";
import type { Watch } from "../store/index.js";

/**
 * Drift: a zone's settings changed outside edgeops (bunny.net has no webhooks or audit events for Shield
 * settings, so a config watch reads them each interval and compares with its snapshot). A difference is
 * drift unless edgeops made it: the change engine records, per target, the request that set it last
 * (change_targets, whichever replica applied it), so a setting whose current value is the one that request
 * left there is edgeops' own and only advances the snapshot. Drift is reported once per value; Keep makes the
 * new value the snapshot, Put it back asks for the snapshot's value through the usual change flow.
 */

/** A setting's value as the snapshot keeps it (JSON). */
export type SettingValue = number | boolean | { enabled: boolean; action: number } | null;

/** Settings by key: wafEnabled, wafMode, ddosSensitivity, ddosMode, learningMode, bot:<n>, list:<name>, customLists. */
export type ZoneConfig = Record<string, SettingValue>;

export interface ConfigState {
  /** When the snapshot's settings were last read. */
  readAt: number;
  snapshot: ZoneConfig;
  /** Drift already posted: the value it was posted for (not posted again while the setting stays there). */
  reported: Record<string, SettingValue>;
  /** When each reported drift was noticed (its post's time): a Keep on an older post of the same value is stale. */
  reportedAt?: Record<string, number>;
  /**
   * Differences seen once and not explained yet: posted when the next evaluation still sees them unexplained.
   * edgeops records a change's owner just after its write, so an evaluation reading in between would
   * otherwise take edgeops' own change for drift. `since`: the check before the first sighting; `at`: the
   * first sighting (the time the post says it was noticed).
   */
  suspects?: Record<string, { value: SettingValue; since: number; at: number }>;
  /**
   * When the learning period the last read saw ends (its learningModeUntil, Unix ms), if learning mode was
   * on with an end: learning mode off once that time has come is its planned end, not drift.
   */
  learningUntil?: number | null;
  /**
   * The post that opened the latest run of changes (one visit to the dashboard, several settings a check or
   * two apart): `ts` of that post in the watch's channel, and when its last change was posted. Kept by the
   * poller, which posts the run's later changes in that post's thread (DRIFT_VISIT_GAP_MS).
   */
  visit?: { ts: string; lastAt: number };
}

/** Changes posted no further apart than this are one visit: one post in the channel, the rest in its thread. */
export const DRIFT_VISIT_GAP_MS = 5 * 60_000;

/** What a Put it back button asks: a change kind's name and parameters (the change flow's own). */
export interface PutBack {
  k: string;
  p: unknown;
}

export interface Drift {
  key: string;
  /** "WAF execution mode" */
  title: string;
  fromLabel: string;
  toLabel: string;
  /** When an evaluation first saw it. */
  noticedAt: number;
  /** The new value (what Keep accepts); null for a list deleted. */
  to: SettingValue;
  /** Absent when edgeops has no change for this setting: it can only be kept (or put back in the dashboard). */
  putBack?: PutBack;
}

export interface ConfigEvaluation {
  state: ConfigState;
  drifts: Drift[];
  /** Edge calls made. */
  calls: number;
}

/** Calls a config evaluation makes: the zone, its bot categories, its access lists. */
export const CONFIG_CALLS = 3;

/** edgeops' own list names, with the action edgeops keeps each at. */
const EDGEOPS_LISTS: ReadonlyMap<string, number> = new Map(
  ACCESS_ENTRY_TYPES.flatMap((type) =>
    ACCESS_ACTIONS.map((action) => [edgeopsListName(type, action), ACCESS_LIST_ACTIONS[action]] as const),
  ),
);

interface SettingRule {
  title: string;
  label(v: SettingValue): string;
  /** The change kind that sets it, and its parameters for a value (`seen`: the value in force now). */
  // biome-ignore lint/suspicious/noExplicitAny: any kind's parameters
  kind?: ChangeKind<any, any>;
  params?(zoneId: number, value: SettingValue, seen: SettingValue): unknown;
}

const shieldParams = (zoneId: number, value: SettingValue, seen: SettingValue) => ({
  shieldZoneId: zoneId,
  value,
  seen,
});
const unknownOr = (label: (n: number | null) => string) => (v: SettingValue) =>
  v === null ? "unknown" : label(typeof v === "number" ? v : null);
const onOff = (v: SettingValue) => (v === null ? "unknown" : v ? "on" : "off");

const FIXED: Readonly<Record<string, SettingRule>> = {
  wafEnabled: { title: "WAF", label: onOff },
  wafMode: {
    title: "WAF execution mode",
    label: unknownOr(wafExecutionModeLabel),
    kind: wafModeKind,
    params: shieldParams,
  },
  ddosSensitivity: {
    title: "DDoS sensitivity",
    label: unknownOr(ddosSensitivityLabel),
    kind: ddosSensitivityKind,
    params: shieldParams,
  },
  ddosMode: { title: "DDoS execution mode", label: unknownOr(ddosExecutionModeLabel) },
  learningMode: { title: "Learning mode", label: onOff, kind: learningModeKind, params: shieldParams },
  customLists: {
    title: "Number of your own custom access lists",
    label: (v) => (v === null ? "unknown" : String(v)),
  },
};

function ruleFor(key: string): SettingRule {
  const fixed = FIXED[key];
  if (fixed) return fixed;
  if (key.startsWith("bot:")) {
    const category = Number(key.slice(4));
    const rule: SettingRule = {
      title: `Bot category ${botCategoryLabel(category)}`,
      label: unknownOr(botCategoryActionLabel),
    };
    if (category < 1 || category > 7) return rule;
    return {
      ...rule,
      kind: botCategoryKind,
      params: (zoneId, value) => ({ shieldZoneId: zoneId, category, action: value }),
    };
  }
  return {
    title: `edgeops' access list "${key.slice(5)}"`,
    label: (v) =>
      v === null || typeof v !== "object"
        ? "deleted"
        : v.enabled
          ? `on (${intLabel(ACCESS_LIST_ACTION_LABELS, v.action)})`
          : "off",
  };
}

/**
 * The settings a config watch compares, read through the key's queue (CONFIG_CALLS calls), and when the
 * learning period in force ends (null: learning mode off, or on with no end).
 */
export async function readZoneConfig(
  client: EdgeClient,
  zoneId: number,
  now: number,
): Promise<{ config: ZoneConfig; learningUntil: number | null }> {
  const [zone, categories, lists] = await Promise.all([
    client.getShieldZone(zoneId),
    // A plan without bot categorisation answers an error: the zone simply has none to compare.
    client.getBotCategories(zoneId).catch(() => []),
    client.listCustomAccessLists(zoneId),
  ]);
  const config: ZoneConfig = {
    wafEnabled: zone.wafEnabled ?? null,
    wafMode: zone.wafExecutionMode ?? null,
    ddosSensitivity: zone.ddosShieldSensitivity ?? null,
    ddosMode: zone.ddosExecutionMode ?? null,
    // On "until" a time already past is off, as the learning mode kind reads it.
    learningMode: learningModeEnded(zone, now) ? false : (zone.learningMode ?? null),
    customLists: lists.filter((l) => !edgeopsListOf(l)).length,
  };
  for (const c of categories) if (c.category !== 255) config[`bot:${c.category}`] = c.action;
  // Keyed by the name edgeops gives it, however the API spells it back. Of two lists with that name (two
  // replicas made it at once) the lowest id is compared, the one edgeops writes to, whatever the API's order.
  for (const l of [...lists].sort((a, b) => b.listId - a.listId)) {
    const own = edgeopsListOf(l);
    if (own)
      config[`list:${edgeopsListName(own.type, own.action)}`] = { enabled: l.isEnabled, action: l.action };
  }
  const until = config.learningMode === true ? Date.parse(zone.learningModeUntil ?? "") : Number.NaN;
  return { config, learningUntil: Number.isFinite(until) ? until : null };
}

/** Learning mode on → off once the end the snapshot's read saw has come: it ended as planned. */
function learningEnded(
  key: string,
  before: SettingValue,
  after: SettingValue,
  state: ConfigState,
  now: number,
) {
  return (
    key === "learningMode" &&
    before === true &&
    after === false &&
    state.learningUntil != null &&
    state.learningUntil <= now
  );
}

/**
 * Whether edgeops left `current` on the setting: the request that set its target last (any replica's) was
 * recorded after `since` and left this value (applied, or undone back to it).
 */
async function madeByEdgeops(
  deps: Deps,
  teamId: string,
  zoneId: number,
  rule: SettingRule,
  current: SettingValue,
  since: number,
): Promise<boolean> {
  if (!rule.kind?.targetKey || !rule.params) return false;
  const key = rule.kind.targetKey(rule.params(zoneId, current, null), { teamId, channelId: "", userId: "" });
  const owner = await deps.store.changeRequests.targetOwner(teamId, key);
  if (!owner || owner.since < since) return false;
  const request = await deps.store.changeRequests.get(owner.requestId);
  const change = request && resolveChange(request);
  if (!request || !change) return false;
  if (request.state === "applied" || request.state === "approved")
    return change.kind.inForce(change.params, current);
  if (request.state === "undone") return sameValue(restoreOf(request), current);
  return false;
}

/** The zone's field each shield setting of the snapshot is read from. */
const ZONE_FIELDS: Readonly<Record<string, string>> = {
  wafEnabled: "wafEnabled",
  wafMode: "wafExecutionMode",
  ddosSensitivity: "dDoSShieldSensitivity",
  ddosMode: "dDoSExecutionMode",
  learningMode: "learningMode",
};

/**
 * Whether the setting moved with a PATCH edgeops made to the zone after `since`: the request that set one of
 * the zone's settings last noted it among the other settings that moved with its write (its card named it;
 * the documents do not say what a PATCH does to the fields it was not sent).
 */
async function movedWithEdgeopsPatch(
  deps: Deps,
  teamId: string,
  zoneId: number,
  key: string,
  since: number,
): Promise<boolean> {
  const field = ZONE_FIELDS[key];
  if (field === undefined) return false;
  const scope = { teamId, channelId: "", userId: "" };
  for (const kind of [ddosSensitivityKind, wafModeKind, learningModeKind]) {
    // Each setting's target is named by the zone alone (and the kind).
    const target = kind.targetKey?.({ shieldZoneId: zoneId } as never, scope);
    const owner =
      target === undefined ? undefined : await deps.store.changeRequests.targetOwner(teamId, target);
    if (!owner || owner.since < since) continue;
    const request = await deps.store.changeRequests.get(owner.requestId);
    if (request?.lastError?.moved?.includes(field)) return true;
  }
  return false;
}

/** edgeops keeps its lists on, with their action: a list back that way (or new) is not drift. */
function asEdgeopsKeepsIt(key: string, v: SettingValue): boolean {
  const action = EDGEOPS_LISTS.get(key.slice(5));
  return typeof v === "object" && v !== null && v.enabled && v.action === action;
}

function driftOf(
  key: string,
  zoneId: number,
  from: SettingValue,
  to: SettingValue,
  noticedAt: number,
): Drift {
  const rule = ruleFor(key);
  const putBack =
    rule.kind && rule.params && from !== null
      ? { k: rule.kind.name, p: rule.params(zoneId, from, to) }
      : undefined;
  return {
    key,
    title: rule.title,
    fromLabel: rule.label(from),
    toLabel: rule.label(to),
    noticedAt,
    to,
    ...(putBack ? { putBack } : {}),
  };
}

/**
 * One evaluation of a config watch: read the zone's settings, and compare with the snapshot. The first
 * evaluation only takes the snapshot. A difference edgeops did not make is drift once a second evaluation
 * still finds it unexplained (see ConfigState.suspects). A setting new to the snapshot (a bot category, a list edgeops
 * created) is learned; one that no longer reads (bot categories unavailable) is left as it was.
 */
export async function evaluateConfigWatch(
  deps: Deps,
  watch: Watch,
  client: EdgeClient,
  state: ConfigState | null,
  now: number,
): Promise<ConfigEvaluation> {
  const zoneId = Number(watch.target);
  const { config: current, learningUntil } = await readZoneConfig(client, zoneId, now);
  if (!state)
    return {
      state: { readAt: now, snapshot: current, reported: {}, learningUntil },
      drifts: [],
      calls: CONFIG_CALLS,
    };
  const snapshot: ZoneConfig = { ...state.snapshot };
  const reported: Record<string, SettingValue> = {};
  const reportedAt: Record<string, number> = {};
  const suspects: NonNullable<ConfigState["suspects"]> = {};
  const drifts: Drift[] = [];
  const keys = [...new Set([...Object.keys(state.snapshot), ...Object.keys(current)])].sort();
  for (const key of keys) {
    const before = state.snapshot[key];
    const isList = key.startsWith("list:");
    const after = current[key] ?? (isList ? null : undefined);
    if (after === undefined) continue;
    if (before === undefined || sameValue(before, after) || learningEnded(key, before, after, state, now)) {
      snapshot[key] = after;
      continue;
    }
    const seen = state.suspects?.[key];
    const suspect = seen && sameValue(seen.value, after) ? seen : undefined;
    const since = suspect?.since ?? state.readAt;
    if (
      (isList && asEdgeopsKeepsIt(key, after)) ||
      (await madeByEdgeops(deps, watch.teamId, zoneId, ruleFor(key), after, since)) ||
      (await movedWithEdgeopsPatch(deps, watch.teamId, zoneId, key, since))
    ) {
      snapshot[key] = after;
      continue;
    }
    if (Object.hasOwn(state.reported, key) && sameValue(state.reported[key], after)) {
      reported[key] = after;
      const at = state.reportedAt?.[key];
      if (at !== undefined) reportedAt[key] = at;
      continue;
    }
    if (!suspect) {
      suspects[key] = { value: after, since, at: now };
      continue;
    }
    reported[key] = after;
    reportedAt[key] = suspect.at;
    drifts.push(driftOf(key, zoneId, before, after, suspect.at));
  }
  for (const [key, v] of Object.entries(snapshot))
    if (key.startsWith("list:") && v === null) delete snapshot[key];
  return {
    state: { readAt: now, snapshot, reported, reportedAt, suspects, learningUntil },
    drifts,
    calls: CONFIG_CALLS,
  };
}

/** A drift whose post did not reach Slack is posted again at the next evaluation (still as noticed then). */
export function forgetReported(state: ConfigState, drift: Drift): ConfigState {
  const reported = { ...state.reported };
  delete reported[drift.key];
  const reportedAt = { ...state.reportedAt };
  delete reportedAt[drift.key];
  const suspect = { value: drift.to, since: state.readAt, at: drift.noticedAt };
  return { ...state, reported, reportedAt, suspects: { ...state.suspects, [drift.key]: suspect } };
}

/**
 * What an evaluation records, with the Keeps clicked while it ran (read back just before recording): a
 * setting whose snapshot value someone kept meanwhile stays kept, and is no longer reported.
 */
export function withKeptMeanwhile(
  result: ConfigState,
  started: ConfigState | null,
  latest: ConfigState | null,
): ConfigState {
  if (!started || !latest) return result;
  const snapshot = { ...result.snapshot };
  const reported = { ...result.reported };
  for (const key of new Set([...Object.keys(started.snapshot), ...Object.keys(latest.snapshot)])) {
    if (sameValue(started.snapshot[key], latest.snapshot[key])) continue;
    const kept = latest.snapshot[key];
    if (kept === undefined) delete snapshot[key];
    else snapshot[key] = kept;
    delete reported[key];
  }
  return { ...result, snapshot, reported };
}

export type KeepOutcome =
  | { kind: "kept"; watch: Watch }
  | { kind: "gone" }
  /** The post no longer says what is true (a later change, a put-back, kept already): nothing was kept. */
  | { kind: "stale"; sentence: string };

/**
 * Keep: the drifted value becomes the snapshot (the watch compares with it from now on), by the watch's creator
 * or an admin (as muting it), and only while the post is the latest of its setting and the zone still has the
 * value (read now). "gone": the watch was removed. Audit-logged.
 */
export async function keepDrift(
  deps: Deps,
  client: EdgeClient,
  input: {
    actor: ActorInput;
    watchId: string;
    key: string;
    value: SettingValue;
    /** The post's noticed time. */
    noticedAt: number;
  },
): Promise<KeepOutcome> {
  const { actor } = input;
  const w = await deps.store.watches.get(input.watchId);
  if (!w || w.teamId !== actor.teamId || w.kind !== "config") return { kind: "gone" };
  await requireCreatorOrAdmin(deps, actor, w, "watch", "keep the changes noticed by");
  const state = w.state as ConfigState | null;
  if (!state) throw new UserError("unavailable", "This watch has no snapshot yet; try again in a minute.");
  const rule = ruleFor(input.key);
  const reportedAt = state.reportedAt?.[input.key];
  const later =
    Object.hasOwn(state.reported, input.key) &&
    (!sameValue(state.reported[input.key], input.value) ||
      (reportedAt !== undefined && reportedAt !== input.noticedAt));
  if (later)
    return {
      kind: "stale",
      sentence: `${rule.title} changed again after this post: Keep the newer post's change, or leave it. Nothing was kept.`,
    };
  const now = deps.clock.now();
  const { config: zone } = await readZoneConfig(client, Number(w.target), now);
  const current = zone[input.key] ?? (input.key.startsWith("list:") ? null : undefined);
  if (current === undefined || !sameValue(current, input.value))
    return {
      kind: "stale",
      sentence: `The zone no longer has ${rule.title} ${rule.label(input.value)}: it is ${current === undefined ? "unknown" : rule.label(current)} now. Nothing was kept.`,
    };
  if (!Object.hasOwn(state.reported, input.key) && sameValue(state.snapshot[input.key], input.value))
    return {
      kind: "stale",
      sentence: `${rule.title} ${rule.label(input.value)} is already what this watch compares with. Nothing changed.`,
    };
  const snapshot = { ...state.snapshot };
  if (input.value === null && input.key.startsWith("list:")) delete snapshot[input.key];
  else snapshot[input.key] = input.value;
  const reported = { ...state.reported };
  delete reported[input.key];
  const reportedAtNext = { ...state.reportedAt };
  delete reportedAtNext[input.key];
  const next: ConfigState = { ...state, reported, reportedAt: reportedAtNext, snapshot };
  await deps.store.watches.recordPoll(w.id, {
    at: w.lastPolledAt ?? now,
    state: next,
    error: w.lastError,
  });
  await deps.store.audit.append({
    teamId: actor.teamId,
    userId: actor.userId,
    action: "watch.drift_keep",
    target: `watch:${w.id}`,
    outcome: "ok",
    details: { setting: input.key, value: input.value },
  });
  return { kind: "kept", watch: w };
}
