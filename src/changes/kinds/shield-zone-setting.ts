import { z } from "zod";
import type { Deps } from "../../deps.js";
import {
  DDOS_SENSITIVITIES,
  ddosSensitivityLabel,
  type ShieldZone,
  type ShieldZoneUpdate,
  WAF_EXECUTION_MODES,
  wafExecutionModeLabel,
} from "../../edge/schemas/shield.js";
import { UserError } from "../../errors.js";
import { edgeClientFor } from "../../services/edge-access.js";
import { mrkdwn } from "../../slack/blocks/common.js";
import type { ChangeKind, ChangeScope, RiskLevel } from "../kind.js";

/**
 * One field of a shield zone (DDoS sensitivity, WAF execution mode, learning mode), changed with
 * PATCH /shield/shield-zone naming only that field. The PATCH can't say "only if it is still X", so
 * the zone is read again right before it and the change is refused when the field moved since the
 * request saw it (`seen`): a concurrent change is never overwritten, and an undo only puts back a
 * value nobody has changed since.
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
  read(zone: ShieldZone): V | null;
  update(value: V): ShieldZoneUpdate;
  label(value: V | null): string;
}

export interface ShieldSettingParams<V> {
  shieldZoneId: number;
  value: V;
  /** The value when the request was made; the change is refused if the zone no longer has it. */
  seen: V | null;
}

async function readSetting<V extends number | boolean>(
  s: ShieldSetting<V>,
  deps: Deps,
  scope: ChangeScope,
  shieldZoneId: number,
): Promise<V | null> {
  const client = await edgeClientFor(deps, scope.teamId);
  return s.read(await client.getShieldZone(shieldZoneId));
}

function shieldSettingKind<V extends number | boolean>(
  s: ShieldSetting<V>,
): ChangeKind<ShieldSettingParams<V>, V> {
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
    describe: (p) => `Set ${s.title} of shield zone ${p.shieldZoneId} to ${s.label(p.value)}`,
    target: (p) => `shield zone ${p.shieldZoneId} / ${s.title}`,
    details: (p, observed) => [
      ["Shield zone", String(p.shieldZoneId)],
      [
        s.title.charAt(0).toUpperCase() + s.title.slice(1),
        mrkdwn`${s.label(observed)} → *${s.label(p.value)}*`,
      ],
    ],
    askAgain: (p) => `/edge ${s.command} ${p.shieldZoneId} ${s.label(p.value).toLowerCase()}`,
    readCurrent: (deps, scope, p) => readSetting(s, deps, scope, p.shieldZoneId),
    inForce: (p, current) => current === p.value,
    // One PATCH for every setting of the zone: its settings are one target.
    lockKey: (p) => `shield-zone:${p.shieldZoneId}:settings`,
    async apply(deps, scope, p) {
      const current = await readSetting(s, deps, scope, p.shieldZoneId);
      if (current === p.value) return;
      if (current !== p.seen)
        throw new UserError(
          "usage",
          `The ${s.title} of shield zone ${p.shieldZoneId} changed from ${s.label(p.seen)} to ${s.label(current)} since this request was made, so edgeops left it as it is. To change it anyway, ask again: ${`/edge ${s.command} ${p.shieldZoneId} ${s.label(p.value).toLowerCase()}`}`,
        );
      const client = await edgeClientFor(deps, scope.teamId);
      await client.updateShieldZone(p.shieldZoneId, s.update(p.value));
    },
    undo: (p, observed) =>
      observed === null ? undefined : { shieldZoneId: p.shieldZoneId, value: observed, seen: p.value },
  };
}

const ddosSensitivity = z.union(DDOS_SENSITIVITIES.map((n) => z.literal(n)));
const wafExecutionMode = z.union(WAF_EXECUTION_MODES.map((n) => z.literal(n)));
const isOneOf = <T extends number>(values: readonly T[], v: number | null): v is T =>
  v !== null && (values as readonly number[]).includes(v);

/** `/edge ddos <zone> off|low|medium|high|challenge`: DDoSShieldSensitivity 0..4. */
export const ddosSensitivityKind = shieldSettingKind({
  name: "ddos_sensitivity",
  policyName: "ddos",
  risk: "high",
  title: "DDoS sensitivity",
  command: "ddos",
  value: ddosSensitivity,
  read: (zone) =>
    isOneOf(DDOS_SENSITIVITIES, zone.ddosShieldSensitivity) ? zone.ddosShieldSensitivity : null,
  update: (value) => ({ dDoSShieldSensitivity: value }),
  label: (value) => (value === null ? "unknown" : ddosSensitivityLabel(value)),
});

/** `/edge waf-mode <zone> log|block`: WAFExecutionMode 0 Log, 1 Block. */
export const wafModeKind = shieldSettingKind({
  name: "waf_mode",
  policyName: "waf-mode",
  risk: "high",
  title: "WAF execution mode",
  command: "waf-mode",
  value: wafExecutionMode,
  read: (zone) => (isOneOf(WAF_EXECUTION_MODES, zone.wafExecutionMode) ? zone.wafExecutionMode : null),
  update: (value) => ({ wafExecutionMode: value }),
  label: (value) => (value === null ? "unknown" : wafExecutionModeLabel(value)),
});

/** `/edge learning <zone> on|off`: learning mode (the WAF only logs while it learns the site's traffic). */
export const learningModeKind = shieldSettingKind({
  name: "learning_mode",
  policyName: "learning",
  risk: "medium",
  title: "Learning mode",
  command: "learning",
  value: z.boolean(),
  read: (zone) => zone.learningMode ?? null,
  update: (value) => ({ learningMode: value }),
  label: (value) => (value === null ? "unknown" : value ? "on" : "off"),
});

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
