import type { UsersConversationsResponse, WebClient } from "@slack/web-api";
import { slackErrorCode, UserError } from "../errors.js";

/** Pages of users.conversations read at most (200 channels each). */
const MAX_PAGES = 10;
const PAGE_SIZE = 200;

const MISSING_SCOPE =
  "I can't tell which channels you are in: edgeops needs the channels:read and groups:read scopes. An admin adds them by reinstalling the app from manifest.yml; until then each channel's alerts are in the channel.";

/**
 * The channels (public, and private ones the bot shares) that the user is a member of, by users.conversations.
 * A workspace installed before alerts lacks the scopes: that is a sentence, not an error in the logs.
 * The other question, "who is in this one channel", is channel-members.ts: answering "which channels is
 * this user in" from member lists would read every channel's members, and the two fail differently
 * (missing scopes here, a channel edgeops is not in there).
 */
export async function userChannelIds(client: WebClient, userId: string): Promise<Set<string>> {
  const ids = new Set<string>();
  const options = {
    user: userId,
    types: "public_channel,private_channel",
    exclude_archived: true,
    limit: PAGE_SIZE,
  };
  try {
    let pages = 0;
    for await (const res of client.paginate("users.conversations", options)) {
      for (const c of (res as UsersConversationsResponse).channels ?? []) if (c.id) ids.add(c.id);
      if (++pages >= MAX_PAGES) break;
    }
  } catch (err) {
    const code = slackErrorCode(err);
    if (code === "missing_scope" || code === "not_allowed_token_type")
      throw new UserError("slack", MISSING_SCOPE, { cause: err });
    throw err;
  }
  return ids;
}
