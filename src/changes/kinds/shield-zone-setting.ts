import { z } from "zod";
import type { Deps } from "../../deps.js";
import {
  DDOS_SENSITIVITIES,
  ddosSensitivityLabel,
  learningModeEnded,
  type ShieldZone,
  type ShieldZoneUpdate,
  WAF_EXECUTION_MODES,
  wafExecutionModeLabel,
} from "../../edge/schemas/shield.js";
import { UserError } from "../../errors.js";
import { edgeClientFor } from "../../services/edge-access.js";
import { moved } from "../details.js";
import type { ChangeKind, ChangeScope, RiskLevel, TargetRead } from "../kind.js";

/**
 * One field of a shield zone (DDoS sensitivity, WAF execution mode, learning mode), changed with
 * PATCH /shield/shield-zone naming only that field. The PATCH can't say "only if it is still X", so
 * the change is refused when the field, as the engine read it right before (under the target's lock),
 * moved since the request saw it (`seen`): a concurrent change is never overwritten, and an undo only
 * puts back a value nobody has changed since. The zone is read once before the PATCH and once after.
 */
interface ShieldSetting<V extends number | boolean> {
  name: string;
  policyName: string;
  risk: RiskLevel;
  /** "DDoS sensitivity" */
  title: string;
  /** The command word: `/edge ddos …`. */
  command: string;
  value: z.ZodType<V>;
  read(zone: ShieldZone, now: number): V | null;
  /** The PATCH's fields for `value`, sent at `now`. */
  update(value: V, now: number): ShieldZoneUpdate;
  label(value: V | null): string;
  /** Settings that move with this one by design (learning mode's end time), beside `update`'s own. */
  movesWith?: readonly string[];
  /** Why the value, set, has no effect on the zone as read back (undefined: it has). */
  caveat?(zone: ShieldZone, value: V, shieldZoneId: number): string | undefined;
}

export interface ShieldSettingParams<V> {
  shieldZoneId: number;
  value: V;
  /** The value when the request was made; the change is refused if the zone no longer has it. */
  seen: V | null;
}

/** The zone and the setting's value in it. */
async function readSetting<V extends number | boolean>(
  s: ShieldSetting<V>,
  deps: Deps,
  scope: ChangeScope,
  shieldZoneId: number,
): Promise<TargetRead<V, ShieldZone>> {
  const client = await edgeClientFor(deps, scope.teamId);
  const zone = await client.getShieldZone(shieldZoneId);
  return { value: s.read(zone, deps.clock.now()), record: zone };
}

function shieldSettingKind<V extends number | boolean>(
  s: ShieldSetting<V>,
): ChangeKind<ShieldSettingParams<V>, V, ShieldZone> {
  const params = z.object({
    shieldZoneId: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER),
    value: s.value,
    seen: s.value.nullable(),
  }) as unknown as z.ZodType<ShieldSettingParams<V>>;
  return {
    name: s.name,
    params,
    approvers: "policy",
    policyName: s.policyName,
    risk: s.risk,
    // An on/off setting is turned on or off ("Turn learning mode on …"), not "set … to on".
    describe: (p) =>
      typeof p.value === "boolean"
        ? `Turn ${s.title.toLowerCase()} ${s.label(p.value)} for shield zone ${p.shieldZoneId}`
        : `Set ${s.title} of shield zone ${p.shieldZoneId} to ${s.label(p.value)}`,
    target: (p) => `shield zone ${p.shieldZoneId} / ${s.title}`,
    details: (p, observed) => [
      { label: "Shield zone", value: String(p.shieldZoneId) },
      {
        label: s.title.charAt(0).toUpperCase() + s.title.slice(1),
        value: moved(s.label(observed), s.label(p.value)),
      },
    ],
    askAgain: (p) => `/edge ${s.command} ${p.shieldZoneId} ${s.label(p.value).toLowerCase()}`,
    readCurrent: async (deps, scope, p) => (await readSetting(s, deps, scope, p.shieldZoneId)).value,
    readTarget: (deps, scope, p) => readSetting(s, deps, scope, p.shieldZoneId),
    targetKey: (p, scope) => `${scope.teamId}/shield zone ${p.shieldZoneId}/${s.name}`,
    valueLabel: s.label,
    inForce: (p, current) => current === p.value,
    // One PATCH for every setting of the zone: its settings are one target.
    lockKey: (p) => `shield-zone:${p.shieldZoneId}:settings`,
    async apply(deps, scope, p, read) {
      const client = await edgeClientFor(deps, scope.teamId);
      const before = read?.record ?? (await client.getShieldZone(p.shieldZoneId));
      const current = read ? read.value : s.read(before, deps.clock.now());
      if (current === p.value) return;
      if (current !== p.seen)
        throw new UserError(
          "usage",
          `The ${s.title} of shield zone ${p.shieldZoneId} changed from ${s.label(p.seen)} to ${s.label(current)} since this request was made, so edgeops left it as it is. To change it anyway, ask again: ${`/edge ${s.command} ${p.shieldZoneId} ${s.label(p.value).toLowerCase()}`}`,
        );
      const update = s.update(p.value, deps.clock.now());
      await client.updateShieldZone(p.shieldZoneId, update);
      // The API documents no "a field left out stays as it is": whatever else moved with the PATCH is said.
      let after: ShieldZone;
      try {
        after = await client.getShieldZone(p.shieldZoneId);
      } catch (err) {
        deps.logger.warn(
          { err, shieldZoneId: p.shieldZoneId },
          "could not read the shield zone after its PATCH; the read-back decides",
        );
        return;
      }
      const moved = movedSettings(before, after, [...Object.keys(update), ...(s.movesWith ?? [])]);
      const caveat = s.caveat?.(after, p.value, p.shieldZoneId);
      return {
        after: { value: s.read(after, deps.clock.now()) },
        ...(moved.length > 0
          ? { alsoChanged: moved.map((k) => movedSentence(k, before, after)), alsoChangedFields: moved }
          : {}),
        ...(caveat ? { caveat } : {}),
      };
    },
    undo: (p, observed) =>
      observed === null ? undefined : { shieldZoneId: p.shieldZoneId, value: observed, seen: p.value },
  };
}

/** How a setting reads in "what moved": its title and value in words where edgeops knows it. */
const SETTING_WORDS: Readonly<Record<string, [string, (v: unknown) => string]>> = {
  dDoSShieldSensitivity: [
    "DDoS sensitivity",
    (v) => (typeof v === "number" ? ddosSensitivityLabel(v) : show(v)),
  ],
  wafExecutionMode: [
    "WAF execution mode",
    (v) => (typeof v === "number" ? wafExecutionModeLabel(v) : show(v)),
  ],
  learningMode: ["Learning mode", (v) => (typeof v === "boolean" ? (v ? "on" : "off") : show(v))],
};

function show(v: unknown): string {
  const text = JSON.stringify(v ?? null);
  return text.length > 80 ? `${text.slice(0, 79)}…` : text;
}

/** Lists whose order means nothing: sets (rule ids, header names) and the WAF engine's variables. */
const UNORDERED = new Set([
  "wafDisabledRules",
  "wafLogOnlyRules",
  "wafRequestIgnoredHeaders",
  "wafEngineConfig",
]);
/** ShieldZoneResponse's nullable booleans. */
const NULLABLE_BOOLEANS = new Set([
  "learningMode",
  "wafEnabled",
  "wafRealtimeThreatIntelligenceEnabled",
  "whitelabelResponsePages",
]);

/**
 * A setting in one form for each value, where the documents allow several: an empty list is null (a
 * nullable list says "none" either way), a nullable boolean's false is null, and a list whose order means
 * nothing (or of strings) is sorted. wafCustomRuleOrder keeps its order: that is the setting.
 */
function comparable(key: string, v: unknown): unknown {
  if (Array.isArray(v)) {
    if (v.length === 0) return null;
    const unordered = UNORDERED.has(key) || v.every((x) => typeof x === "string");
    return unordered ? v.map((x) => JSON.stringify(x)).sort() : v;
  }
  if (v === false && NULLABLE_BOOLEANS.has(key)) return null;
  return v ?? null;
}

/** Every setting but `own` that differs between two reads of a zone, by its API name, sorted. */
function movedSettings(before: ShieldZone, after: ShieldZone, own: readonly string[]): string[] {
  const a = before.settings ?? {};
  const b = after.settings ?? {};
  return [...new Set([...Object.keys(a), ...Object.keys(b)])]
    .filter((k) => !own.includes(k))
    .filter((k) => JSON.stringify(comparable(k, a[k])) !== JSON.stringify(comparable(k, b[k])))
    .sort();
}

/** "WAF execution mode: Block → Log" */
function movedSentence(k: string, before: ShieldZone, after: ShieldZone): string {
  const [title, word] = SETTING_WORDS[k] ?? [k, show];
  return `${title}: ${word(before.settings?.[k])} → ${word(after.settings?.[k])}`;
}

/** Every setting but `own` that differs between two reads of a zone: "WAF execution mode: Block → Log". */
export function otherSettingsMoved(before: ShieldZone, after: ShieldZone, own: readonly string[]): string[] {
  return movedSettings(before, after, own).map((k) => movedSentence(k, before, after));
}

/** A setting that is one of a few numbers, each with a label (DDoS sensitivity, WAF execution mode). */
function choiceSettingKind<N extends number>(
  c: Omit<ShieldSetting<N>, "value" | "read" | "update" | "label" | "caveat"> & {
    values: readonly N[];
    read(zone: ShieldZone): number | null | undefined;
    /** The PATCH field. */
    field: "dDoSShieldSensitivity" | "wafExecutionMode";
    label(value: N): string;
    caveat?(zone: ShieldZone, value: N, shieldZoneId: number): string | undefined;
  },
) {
  const { values, field, read, label, caveat, ...setting } = c;
  const isValue = (v: number | null | undefined): v is N => (values as readonly unknown[]).includes(v);
  return shieldSettingKind<N>({
    ...setting,
    value: z.union(values.map((n) => z.literal(n))) as unknown as z.ZodType<N>,
    read: (zone) => {
      const v = read(zone);
      return isValue(v) ? v : null;
    },
    update: (value) => ({ [field]: value }),
    label: (value) => (value === null ? "unknown" : label(value)),
    ...(caveat ? { caveat } : {}),
  });
}

/** `/edge ddos <zone> off|low|medium|high|challenge`: DDoSShieldSensitivity 0..4. */
export const ddosSensitivityKind = choiceSettingKind({
  name: "ddos_sensitivity",
  policyName: "ddos",
  risk: "high",
  title: "DDoS sensitivity",
  command: "ddos",
  values: DDOS_SENSITIVITIES,
  read: (zone) => zone.ddosShieldSensitivity,
  field: "dDoSShieldSensitivity",
  label: ddosSensitivityLabel,
});

/** `/edge waf-mode <zone> log|block`: WAFExecutionMode 0 Log, 1 Block. */
export const wafModeKind = choiceSettingKind({
  name: "waf_mode",
  policyName: "waf-mode",
  risk: "high",
  title: "WAF execution mode",
  command: "waf-mode",
  values: WAF_EXECUTION_MODES,
  read: (zone) => zone.wafExecutionMode,
  field: "wafExecutionMode",
  label: wafExecutionModeLabel,
  // The mode of a WAF that is off changes nothing until the WAF is on (a drift put-back asks no one first).
  caveat: (zone, value, id) =>
    zone.wafEnabled === false
      ? `The WAF of shield zone ${id} is off, so it neither blocks nor logs anything: ${wafExecutionModeLabel(value)} takes effect only once the WAF is turned on in the bunny.net dashboard.`
      : undefined,
});

/** `/edge learning <zone> on|off`: learning mode (the WAF only logs while it learns the site's traffic). */
export const learningModeKind = shieldSettingKind({
  name: "learning_mode",
  policyName: "learning",
  risk: "medium",
  title: "Learning mode",
  command: "learning",
  value: z.boolean(),
  // On "until" a time already past is off: it ended.
  read: (zone, now) => (learningModeEnded(zone, now) ? false : (zone.learningMode ?? null)),
  // On with its end time: "on" alone leaves a zone whose last period ended reading off (that period's
  // end still past), or on with no end at all.
  update: (value, now) =>
    value
      ? { learningMode: true, learningModeUntil: new Date(now + LEARNING_PERIOD_MS).toISOString() }
      : { learningMode: false },
  movesWith: ["learningModeUntil"],
  label: (value) => (value === null ? "unknown" : value ? "on" : "off"),
});

/** How long learning mode turned on through edgeops lasts (the documents name no default period). */
export const LEARNING_PERIOD_MS = 24 * 60 * 60_000;

/** The word a user types for learning mode. */
export const LEARNING_WORDS: Readonly<Record<string, boolean>> = { on: true, off: false };

/** The word a user types for each DDoS sensitivity, as DDoSShieldSensitivity names it. */
export const DDOS_WORDS: Readonly<Record<string, (typeof DDOS_SENSITIVITIES)[number]>> = {
  off: 0,
  low: 1,
  medium: 2,
  high: 3,
  challenge: 4,
};
/** The word a user types for each WAF execution mode. */
export const WAF_MODE_WORDS: Readonly<Record<string, (typeof WAF_EXECUTION_MODES)[number]>> = {
  log: 0,
  block: 1,
};
