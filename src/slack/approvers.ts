import type { WebClient } from "@slack/web-api";
import type { ApproverCheck } from "../changes/engine.js";
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
