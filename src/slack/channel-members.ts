import type { ConversationsMembersResponse, WebClient } from "@slack/web-api";
import type { Deps } from "../deps.js";
import { slackErrorCode, UserError } from "../errors.js";
import { LruCache } from "../lru.js";

/** How long a channel's member list is trusted: a member who leaves loses access this long after, at most. */
const TTL_MS = 30_000;
const CHANNELS_KEPT = 500;
/** Pages of conversations.members read at most (1000 members each). */
const MAX_PAGES = 20;
const PAGE_SIZE = 1000;

/** A cached list without the user asked about is read again once it is this old (they may just have joined). */
const RECHECK_MISSING_MS = 5_000;

type Cache = LruCache<string, { members: ReadonlySet<string>; readAt: number }>;
/** One cache per running app (its deps), so two apps in one process never share answers. */
const caches = new WeakMap<Deps, Cache>();

function cacheOf(deps: Deps): Cache {
  let cache = caches.get(deps);
  if (!cache) {
    cache = new LruCache(CHANNELS_KEPT);
    caches.set(deps, cache);
  }
  return cache;
}

const CANT_READ =
  "I can't read who is in that channel: invite edgeops to it (/invite @edgeops), or pick a channel it is in.";

/**
 * The members of a channel, by conversations.members, cached briefly per workspace and channel. A channel
 * edgeops can't see (not in it, not found) is a sentence saying what to do. The opposite question, which
 * channels one user is in, is user-channels.ts (users.conversations: one list per user instead of reading every channel).
 */
export async function channelMembers(
  deps: Deps,
  client: WebClient,
  teamId: string,
  channelId: string,
  /** The user the caller looks for: a list without them is trusted for a few seconds only. */
  lookingFor?: string,
): Promise<ReadonlySet<string>> {
  const cache = cacheOf(deps);
  const key = `${teamId}:${channelId}`;
  const hit = cache.get(key);
  const age = hit ? deps.clock.now() - hit.readAt : Number.POSITIVE_INFINITY;
  const missing = lookingFor !== undefined && hit !== undefined && !hit.members.has(lookingFor);
  if (hit && age < (missing ? RECHECK_MISSING_MS : TTL_MS)) return hit.members;
  const members = new Set<string>();
  try {
    let pages = 0;
    for await (const res of client.paginate("conversations.members", {
      channel: channelId,
      limit: PAGE_SIZE,
    })) {
      for (const m of (res as ConversationsMembersResponse).members ?? []) members.add(m);
      if (++pages >= MAX_PAGES) break;
    }
  } catch (err) {
    const code = slackErrorCode(err);
    if (code === "channel_not_found" || code === "not_in_channel" || code === "missing_scope")
      throw new UserError("slack", CANT_READ, { cause: err });
    throw err;
  }
  cache.set(key, { members, readAt: deps.clock.now() });
  return members;
}

/** Whether the user is a member of the channel; false when edgeops can't tell (the safe answer). */
export async function isChannelMember(
  deps: Deps,
  client: WebClient,
  teamId: string,
  channelId: string,
  userId: string,
): Promise<boolean> {
  return channelMembers(deps, client, teamId, channelId, userId).then(
    (members) => members.has(userId),
    () => false,
  );
}
