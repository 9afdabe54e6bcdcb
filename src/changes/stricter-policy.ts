import type { Deps } from "../deps.js";
import type { EffectivePolicy } from "../store/index.js";

/**
 * The stricter of two policies, for requests whose channel someone else chose (a workflow step's): approvals
 * required where either requires them, for the changes either covers, by as many approvers as either
 * needs, within the shorter expiry. Who approves is the channel's, as on its card.
 */
export function stricterPolicy(workspace: EffectivePolicy, channel: EffectivePolicy): EffectivePolicy {
  const requiring = [workspace, channel].filter((p) => p.approvals === "required");
  if (requiring.length === 0)
    return { ...channel, expiryMinutes: Math.min(workspace.expiryMinutes, channel.expiryMinutes) };
  return {
    ...channel,
    approvals: "required",
    approvalsFor: [...new Set(requiring.flatMap((p) => p.approvalsFor))],
    approvalsNeeded: Math.max(...requiring.map((p) => p.approvalsNeeded)),
    expiryMinutes: Math.min(workspace.expiryMinutes, channel.expiryMinutes),
  };
}

/** The policy a request is held to: its channel's, or (`strict`) the stricter of the workspace's and the channel's. */
export async function policyFor(
  deps: Deps,
  teamId: string,
  channelId: string,
  strict: boolean,
): Promise<EffectivePolicy> {
  const channel = await deps.store.policies.getEffective(teamId, channelId);
  return strict ? stricterPolicy(await deps.store.policies.getEffective(teamId), channel) : channel;
}
