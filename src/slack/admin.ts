import type { WebClient } from "@slack/web-api";
import type { AdminId } from "../config.js";
import { LruCache } from "../lru.js";

const CACHE_TTL_MS = 60_000;
const CACHE_MAX = 10_000;
const LIST_PAGES = 5;
const LIST_TTL_MS = 5 * 60_000;

/**
 * Admins are the workspace's admins and owners (users.info) plus ADMIN_USER_IDS (a `T…:U…` pair only in
 * its own workspace). Answers are cached
 * for a minute so a burst of clicks costs one users.info call. A list of the workspace's admins read
 * less than that minute ago (the card named them from it) answers too, as users.info would have then.
 */
export class AdminDirectory {
  private readonly cache = new LruCache<string, { admin: boolean; tz: string | undefined; until: number }>(
    CACHE_MAX,
  );

  constructor(
    private readonly extraAdmins: readonly AdminId[],
    private readonly now: () => number,
  ) {}

  async isAdmin(client: WebClient, teamId: string, userId: string): Promise<boolean> {
    if (this.extraAdmins.some((a) => a.userId === userId && (a.teamId === undefined || a.teamId === teamId)))
      return true;
    const known = this.known(teamId, userId);
    if (known) return known.admin;
    const listed = this.listed.get(teamId);
    // users.list describes each member as users.info does; only a list no older than a cached answer counts.
    if (listed && listed.readAt + CACHE_TTL_MS > this.now()) {
      if (listed.ids.includes(userId)) return true;
      if (listed.complete) return false;
    }
    return (await this.readUser(client, teamId, userId)).admin;
  }

  private readonly listed = new LruCache<
    string,
    { ids: string[]; complete: boolean; readAt: number; until: number }
  >(1_000);

  /**
   * Who the admins are, to name them on a card (so they are notified): ADMIN_USER_IDS of this workspace
   * and its Slack admins and owners (users.list, at most LIST_PAGES pages, cached LIST_TTL_MS). What
   * Slack won't list is left out: the card then names fewer people, approving still checks each one.
   */
  async listAdmins(client: WebClient, teamId: string): Promise<string[]> {
    return (await this.admins(client, teamId, false)).ids;
  }

  /**
   * listAdmins, and whether Slack listed every member (`complete`), for counting who could approve: a
   * list Slack cut short is read again rather than taken from the cache.
   */
  readAdmins(client: WebClient, teamId: string): Promise<{ ids: string[]; complete: boolean }> {
    return this.admins(client, teamId, true);
  }

  private async admins(client: WebClient, teamId: string, count: boolean) {
    const hit = this.listed.get(teamId);
    if (hit && hit.until > this.now() && (hit.complete || !count))
      return { ids: hit.ids, complete: hit.complete };
    const ids = new Set(
      this.extraAdmins.filter((a) => a.teamId === undefined || a.teamId === teamId).map((a) => a.userId),
    );
    let complete = false;
    try {
      let cursor: string | undefined;
      for (let page = 0; page < LIST_PAGES; page++) {
        const res = await client.users.list({ limit: 200, ...(cursor ? { cursor } : {}) });
        for (const u of res.members ?? [])
          if (u.id && !u.deleted && !u.is_bot && (u.is_admin || u.is_owner || u.is_primary_owner))
            ids.add(u.id);
        cursor = res.response_metadata?.next_cursor || undefined;
        if (!cursor) {
          complete = true;
          break;
        }
      }
    } catch {
      // Not listed (missing scope, Slack down): the ADMIN_USER_IDS alone.
    }
    const read = { ids: [...ids], complete };
    const readAt = this.now();
    this.listed.set(teamId, { ...read, readAt, until: readAt + LIST_TTL_MS });
    return read;
  }

  /** The user's IANA time zone from their Slack profile, if Slack knows it. */
  async timeZone(client: WebClient, teamId: string, userId: string): Promise<string | undefined> {
    return (this.known(teamId, userId) ?? (await this.readUser(client, teamId, userId))).tz;
  }

  /** users.info's answer for the user, read less than CACHE_TTL_MS ago. */
  private known(teamId: string, userId: string) {
    const hit = this.cache.get(`${teamId}:${userId}`);
    return hit && hit.until > this.now() ? hit : undefined;
  }

  private async readUser(client: WebClient, teamId: string, userId: string) {
    const res = await client.users.info({ user: userId });
    const u = res.user;
    const entry = {
      admin: Boolean(!u?.deleted && (u?.is_admin || u?.is_owner || u?.is_primary_owner)),
      tz: u?.tz,
      until: this.now() + CACHE_TTL_MS,
    };
    this.cache.set(`${teamId}:${userId}`, entry);
    return entry;
  }
}
