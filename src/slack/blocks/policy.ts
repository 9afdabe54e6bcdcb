import { approvalsForText } from "../../changes/kinds/policy.js";
import type { Approvers, EffectivePolicy } from "../../store/index.js";
import { context, fields, header } from "./block-kit.js";
import { channel, code, joinMrkdwn, type MrkdwnInput, mrkdwn, namedApprovers } from "./mrkdwn.js";
import { type Reply, reply } from "./reply.js";

const SOURCE: Record<string, string> = {
  channel: "this channel",
  workspace: "workspace",
  default: "default",
};

function approversText(a: Approvers): MrkdwnInput {
  if (a.kind === "admins") return "Workspace admins and owners";
  return namedApprovers(a);
}

/** The approval policy in force in a channel, and where each part of it comes from. */
export function policyMessage(p: EffectivePolicy, channelId: string): Reply {
  const approvals =
    p.approvals === "required"
      ? p.approvalsNeeded > 1
        ? `Required (${p.approvalsNeeded} approvers, not the requester)`
        : "Required (a second person approves)"
      : "Off (applied at once)";
  const commands = [
    "/edge policy approvals required|off|<n> [for purge,restart|high] [here]",
    "/edge policy approvers admins|@group|@user … [here]",
    "/edge policy expiry <30m|2h|1d> [here]",
    "/edge policy reset here",
  ].map((c) => code(c));
  return reply(`Approval policy in this channel: approvals ${p.approvals}`, [
    header("Approval policy in force here"),
    fields([
      `*Approvals*\n${approvals}\n_${SOURCE[p.source.approvals]}_`,
      mrkdwn`*Approvers*\n${approversText(p.approvers)}\n_${SOURCE[p.source.approvers] ?? ""}_`,
      `*Expiry*\n${p.expiryMinutes} minute${p.expiryMinutes === 1 ? "" : "s"}\n_${SOURCE[p.source.expiryMinutes]}_`,
      `*Applies to*\n${p.approvals === "required" ? approvalsForText(p.approvalsFor) : "no change"}\n_${SOURCE[p.source.approvalsFor]}_`,
    ]),
    context(mrkdwn`Channel ${channel(channelId)}. Admins change it with ${joinMrkdwn(commands, ", ")}.`),
  ]);
}
