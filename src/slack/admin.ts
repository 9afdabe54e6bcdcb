import type { WebClient } from "@slack/web-api";
import type { AdminId } from "../config.js";
import { LruCache } from "../lru.js";

const CACHE_TTL_MS = 60_000;
const CACHE_MAX = 10_000;

/**
 * Admins are the workspace's admins and owners (users.info) plus ADMIN_USER_IDS (a `T…:U…` pair only in
 * its own workspace). Answers are cached
 * for a minute so a burst of clicks costs one users.info call.
 */
export class AdminDirectory {
  private readonly cache = new LruCache<string, { admin: boolean; tz: string | undefined; until: number }>(
    CACHE_MAX,
  );

  constructor(
    private readonly extraAdmins: readonly AdminId[],
    private readonly now: () => number = Date.now,
  ) {}

  async isAdmin(client: WebClient, teamId: string, userId: string): Promise<boolean> {
    if (this.extraAdmins.some((a) => a.userId === userId && (a.teamId === undefined || a.teamId === teamId)))
      return true;
    return (await this.lookup(client, teamId, userId)).admin;
  }

  /** The user's IANA time zone from their Slack profile, if Slack knows it. */
  async timeZone(client: WebClient, teamId: string, userId: string): Promise<string | undefined> {
    return (await this.lookup(client, teamId, userId)).tz;
  }

  private async lookup(client: WebClient, teamId: string, userId: string) {
    const cacheKey = `${teamId}:${userId}`;
    const hit = this.cache.get(cacheKey);
    if (hit && hit.until > this.now()) return hit;
    const res = await client.users.info({ user: userId });
    const u = res.user;
    const entry = {
      admin: Boolean(!u?.deleted && (u?.is_admin || u?.is_owner || u?.is_primary_owner)),
      tz: u?.tz,
      until: this.now() + CACHE_TTL_MS,
    };
    this.cache.set(cacheKey, entry);
    return entry;
  }
}
