import { z } from "zod";
import type { Deps } from "../../deps.js";
import {
  type Approvers,
  DEFAULT_POLICY,
  type EffectivePolicy,
  EVERY_CHANGE,
  type PolicyPatch,
  type PolicyRow,
  type PolicyValues,
} from "../../store/index.js";
import { channelRef, type DetailValue, joined, usergroupRef, userRef } from "../details.js";
import type { ChangeKind, ChangeScope } from "../kind.js";
import { coveredKinds } from "../policy-coverage.js";

const approversSchema = z.union([
  z.object({ kind: z.literal("admins") }),
  z.object({ kind: z.literal("list"), users: z.array(z.string()), usergroups: z.array(z.string()) }),
]);

export const policyParams = z.object({
  /** The workspace's rule, or one channel's override. */
  channelId: z.string().min(1).nullable(),
  /** Fields to set; null clears a channel's override of it. Absent with `reset`. */
  set: z
    .object({
      approvals: z.enum(["required", "off"]).nullable().optional(),
      approvers: approversSchema.nullable().optional(),
      expiryMinutes: z.number().int().min(1).nullable().optional(),
      approvalsNeeded: z.number().int().min(1).nullable().optional(),
      approvalsFor: z.array(z.string()).min(1).max(20).nullable().optional(),
    })
    .optional(),
  /** Remove the channel's overrides. */
  reset: z.literal(true).optional(),
});
export type PolicyParams = z.output<typeof policyParams>;

/** A scope's own row: what it overrides (null = inherits); null when it has no row. */
type PolicyLayer = Pick<
  PolicyRow,
  "approvals" | "approvers" | "expiryMinutes" | "approvalsNeeded" | "approvalsFor"
>;

/**
 * What the card's "Before" shows: the scope's own row and the policy it inherits (the workspace's for a
 * channel, the defaults for the workspace), so the card can say what was in force, not only "inherited".
 */
interface PolicyObserved {
  own: PolicyLayer | null;
  inherited: PolicyValues;
}

function layerOf(row: PolicyRow | undefined): PolicyLayer | null {
  if (!row) return null;
  return {
    approvals: row.approvals,
    approvers: row.approvers,
    expiryMinutes: row.expiryMinutes,
    approvalsNeeded: row.approvalsNeeded,
    approvalsFor: row.approvalsFor,
  };
}

/** "every change", or "purge, restart". */
export function approvalsForText(words: readonly string[] | null | undefined): string {
  // undefined: a layer stored by an older version, before approvals could name changes.
  if (words === null || words === undefined) return "inherited changes";
  return words.includes(EVERY_CHANGE) ? "every change" : words.join(", ");
}

/** Who approves, with mentions, for the card. */
function approversDetail(a: Approvers): DetailValue {
  if (a.kind === "admins") return "workspace admins";
  return joined([...a.users.map(userRef), ...a.usergroups.map(usergroupRef)], ", ");
}

const minutes = (n: number) => `${n} minute${n === 1 ? "" : "s"}`;
const approversPerRequest = (n: number | null) =>
  n === null ? "inherited number of approvers per request" : `${n} approver${n === 1 ? "" : "s"} per request`;

/** Who approves, as plain text (a count), for the one-line description. */
function approversCount(a: Approvers): string {
  if (a.kind === "admins") return "workspace admins";
  const n = a.users.length + a.usergroups.length;
  return n === 1 ? "1 listed person or group" : `${n} listed people or groups`;
}

/** The parts of the change; `who` writes the approvers (plain for the description, mentions for the card). */
function patchParts<T extends DetailValue>(p: PolicyParams, who: (a: Approvers) => T): (string | T)[] {
  if (p.reset) return ["remove this channel's overrides"];
  const parts: (string | T)[] = [];
  const s = p.set ?? {};
  if (s.approvals !== undefined) parts.push(`approvals ${s.approvals ?? "inherited"}`);
  if (s.approvers !== undefined) parts.push(s.approvers === null ? "approvers inherited" : who(s.approvers));
  if (s.expiryMinutes !== undefined)
    parts.push(`expiry ${s.expiryMinutes === null ? "inherited" : minutes(s.expiryMinutes)}`);
  if (s.approvalsNeeded !== undefined) parts.push(approversPerRequest(s.approvalsNeeded));
  if (s.approvalsFor !== undefined) parts.push(`approvals for ${approvalsForText(s.approvalsFor)}`);
  return parts;
}

const isSubset = (a: readonly string[], b: readonly string[]) => a.every((x) => b.includes(x));

/**
 * The ways `after` is looser than `before` (empty when it is as strict or stricter): approvals turned
 * off, a longer expiry, approvers that are not a narrowing of the current list (admins is its own set).
 */
export function loosening(before: PolicyValues, after: PolicyValues): string[] {
  const reasons: string[] = [];
  if (before.approvals === "required" && after.approvals === "off") reasons.push("turns approvals off");
  if (after.expiryMinutes > before.expiryMinutes) reasons.push("gives requests longer to be approved");
  if (after.approvalsNeeded < before.approvalsNeeded) reasons.push("needs fewer approvers");
  if (!isSubset(coveredKinds(before.approvalsFor), coveredKinds(after.approvalsFor)))
    reasons.push("requires approval for fewer kinds of change");
  const a = before.approvers;
  const b = after.approvers;
  const narrower =
    b.kind === a.kind &&
    (b.kind === "admins" ||
      (a.kind === "list" && isSubset(b.users, a.users) && isSubset(b.usergroups, a.usergroups)));
  if (!narrower) reasons.push("changes who can approve");
  return reasons;
}

/** The policy in force in the scope once `p` is applied over `current` (its own row). */
export async function policyAfter(deps: Deps, teamId: string, p: PolicyParams): Promise<PolicyValues> {
  const workspace = await deps.store.policies.getEffective(teamId);
  const own = p.channelId ? layerOf(await deps.store.policies.getChannel(teamId, p.channelId)) : null;
  if (p.channelId === null) {
    const ws = layerOf(await deps.store.policies.getWorkspace(teamId));
    const s = p.set ?? {};
    const pick = <K extends keyof PolicyValues>(k: K): PolicyValues[K] =>
      ((s[k] !== undefined ? s[k] : ws?.[k]) ?? DEFAULT_POLICY[k]) as PolicyValues[K];
    return valuesFrom(pick);
  }
  const s = p.reset ? {} : (p.set ?? {});
  const base = p.reset ? null : own;
  const pick = <K extends keyof PolicyValues>(k: K): PolicyValues[K] =>
    ((s[k] !== undefined ? s[k] : base?.[k]) ?? workspace[k]) as PolicyValues[K];
  return valuesFrom(pick);
}

function valuesFrom(pick: <K extends keyof PolicyValues>(k: K) => PolicyValues[K]): PolicyValues {
  return {
    approvals: pick("approvals"),
    approvers: pick("approvers"),
    expiryMinutes: pick("expiryMinutes"),
    approvalsNeeded: pick("approvalsNeeded"),
    approvalsFor: pick("approvalsFor"),
  };
}

async function policyBefore(deps: Deps, teamId: string, p: PolicyParams): Promise<EffectivePolicy> {
  return deps.store.policies.getEffective(teamId, p.channelId ?? undefined);
}

/** Why this change loosens the rule in its scope (empty when it does not). */
export async function policyLoosening(deps: Deps, teamId: string, p: PolicyParams): Promise<string[]> {
  return loosening(await policyBefore(deps, teamId, p), await policyAfter(deps, teamId, p));
}

function toPatch(p: PolicyParams, userId: string): PolicyPatch {
  const patch: PolicyPatch = { updatedBy: userId };
  const s = p.set ?? {};
  if (s.approvals !== undefined) patch.approvals = s.approvals;
  if (s.approvers !== undefined) patch.approvers = s.approvers;
  if (s.expiryMinutes !== undefined) patch.expiryMinutes = s.expiryMinutes;
  if (s.approvalsNeeded !== undefined) patch.approvalsNeeded = s.approvalsNeeded;
  if (s.approvalsFor !== undefined) patch.approvalsFor = s.approvalsFor;
  return patch;
}

/** Each value of a policy or of a scope's own row, for the card (`inherited` where the row has none). */
function valueParts(v: PolicyLayer, inherited: string): DetailValue[] {
  return [
    `approvals ${v.approvals ?? inherited}`,
    v.approvers ? joined(["approvers ", approversDetail(v.approvers)]) : `approvers ${inherited}`,
    `expiry ${v.expiryMinutes === null ? inherited : minutes(v.expiryMinutes)}`,
    approversPerRequest(v.approvalsNeeded ?? null),
    `approvals for ${approvalsForText(v.approvalsFor)}`,
  ];
}

/**
 * The policy in force in the scope before the change: its own values, and what it inherits where it
 * overrides nothing ("inherited from the workspace: approvals required, …").
 */
function beforeDetail(p: PolicyParams, observed: PolicyObserved | PolicyLayer | null): DetailValue {
  // A request stored before the card read the inherited policy kept only the scope's own row.
  if (observed === null || !("inherited" in observed))
    return observed ? joined(valueParts(observed, "inherited"), ", ") : "no override (inherited)";
  const from = p.channelId ? "the workspace" : "the defaults";
  const { own, inherited } = observed;
  const inheritedParts = valueParts(inherited, "inherited");
  if (own === null) return joined([`no override, inherited from ${from}: `, joined(inheritedParts, ", ")]);
  const keys = ["approvals", "approvers", "expiryMinutes", "approvalsNeeded", "approvalsFor"] as const;
  const ownParts = valueParts(own, "inherited");
  const parts = keys.map((k, i) =>
    own[k] === null || own[k] === undefined
      ? joined([inheritedParts[i]!, ` (inherited from ${from})`])
      : ownParts[i]!,
  );
  return joined(parts, ", ");
}

/**
 * A change to the approval policy. Tightening applies at once; loosening a policy that requires
 * approvals needs a second admin, so the two-person rule has no side door.
 */
export const policyKind: ChangeKind<PolicyParams, PolicyObserved> = {
  name: "policy",
  params: policyParams,
  approvers: "admins",
  policyName: "policy",
  risk: "high",
  describe: (p) =>
    `Approval policy for ${p.channelId ? "this channel" : "the workspace"}: ${patchParts(p, (a) => `approvers ${approversCount(a)}`).join(", ")}`,
  target: (p) => (p.channelId ? `policy of channel ${p.channelId}` : "workspace policy"),
  details: (p, observed) => [
    { label: "Scope", value: p.channelId ? joined(["channel ", channelRef(p.channelId)]) : "workspace" },
    {
      label: "Change",
      value: joined(
        patchParts(p, (a) => joined(["approvers ", approversDetail(a)])),
        ", ",
      ),
    },
    { label: "Before", value: beforeDetail(p, observed) },
  ],
  askAgain: () => "/edge policy",
  async readCurrent(deps, scope, p) {
    const row = p.channelId
      ? await deps.store.policies.getChannel(scope.teamId, p.channelId)
      : await deps.store.policies.getWorkspace(scope.teamId);
    const inherited = p.channelId ? await deps.store.policies.getEffective(scope.teamId) : DEFAULT_POLICY;
    return { own: layerOf(row), inherited: valuesFrom((k) => inherited[k]) };
  },
  inForce(p, current) {
    const own = current?.own ?? null;
    if (p.reset) return own === null;
    const s = p.set ?? {};
    return (Object.keys(s) as (keyof typeof s)[]).every(
      (k) => JSON.stringify(s[k] ?? null) === JSON.stringify(own?.[k] ?? null),
    );
  },
  async apply(deps, scope: ChangeScope, p) {
    const { policies } = deps.store;
    if (p.channelId && p.reset) await policies.clearChannel(scope.teamId, p.channelId);
    else if (p.channelId) await policies.setChannel(scope.teamId, p.channelId, toPatch(p, scope.userId));
    else await policies.setWorkspace(scope.teamId, toPatch(p, scope.userId));
  },
  async needsApproval(p, _current, _policy, deps, scope) {
    const before = await policyBefore(deps, scope.teamId, p);
    if (before.approvals !== "required") return false;
    return (await policyLoosening(deps, scope.teamId, p)).length > 0;
  },
};
