import type { WebClient } from "@slack/web-api";
import type { ApproverCheck } from "../changes/engine.js";
import { slackErrorCode } from "../errors.js";
import type { Approvers } from "../store/index.js";
import { channelMembers } from "./channel-members.js";
import type { SlackEnv } from "./edge-commands/types.js";

/**
 * May this person approve? "admins": the workspace's admins and owners plus ADMIN_USER_IDS. A list:
 * the listed users and the members of the listed user groups (usergroups.users.list).
 */
export function approverCheck(env: SlackEnv, client: WebClient, teamId: string): ApproverCheck {
  return async (userId, approvers) => {
    if (approvers.kind === "admins") return env.admins.isAdmin(client, teamId, userId);
    if (approvers.users.includes(userId)) return true;
    for (const usergroup of approvers.usergroups) {
      const res = await client.usergroups.users.list({ usergroup });
      if (res.users?.includes(userId)) return true;
    }
    return false;
  };
}

/** Who could approve a request, as far as Slack told (possibleApprovers). */
export interface PossibleApprovers {
  ids: ReadonlySet<string>;
  /** False where Slack did not list every admin: then more people may exist than `ids`. */
  complete: boolean;
  /** Listed groups Slack does not know (their members can't approve). */
  unknownGroups: string[];
  /** The card's channel is private: only its members see it, so only they are in `ids`. */
  privateChannel: boolean;
}

/**
 * The people who could approve a request posted in `channelId` under `approvers`: the workspace admins
 * (users.list, as approverCheck's users.info would find them) or the listed users and the members of the
 * listed groups; in a private channel only those who are its members, since nobody else sees the card.
 */
export async function possibleApprovers(
  env: SlackEnv,
  client: WebClient,
  teamId: string,
  approvers: Approvers,
  channelId?: string,
): Promise<PossibleApprovers> {
  const ids = new Set<string>();
  const unknownGroups: string[] = [];
  let complete = true;
  if (approvers.kind === "admins") {
    const admins = await env.admins.readAdmins(client, teamId);
    for (const id of admins.ids) ids.add(id);
    complete = admins.complete;
  } else {
    for (const id of approvers.users) ids.add(id);
    for (const usergroup of approvers.usergroups) {
      const members = await client.usergroups.users
        .list({ usergroup })
        .then((res) => res.users ?? [])
        .catch((err: unknown) => {
          const code = slackErrorCode(err);
          if (code === "no_such_subteam" || code === "subteam_not_found") return undefined;
          throw err;
        });
      if (members === undefined) unknownGroups.push(usergroup);
      for (const m of members ?? []) ids.add(m);
    }
  }
  // A channel edgeops can't see gets no card at all (posting it fails and says so): nothing to narrow.
  const privateChannel =
    channelId !== undefined &&
    (await client.conversations
      .info({ channel: channelId })
      .then((res) => res.channel?.is_private === true)
      .catch((err: unknown) => {
        if (slackErrorCode(err) === "channel_not_found") return false;
        throw err;
      }));
  if (!privateChannel) return { ids, complete, unknownGroups, privateChannel };
  const members = await channelMembers(env.deps, client, teamId, channelId);
  return { ids: new Set([...ids].filter((id) => members.has(id))), complete, unknownGroups, privateChannel };
}
