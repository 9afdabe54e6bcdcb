import type { Deps } from "../deps.js";
import type { EdgeApi, EdgeClient } from "../edge/client.js";
import { LruCache } from "../lru.js";
import { type EdgeAccess, edgeAccessFor } from "./edge-access.js";

/**
 * Lists read from the Edge API and kept per API key (never per workspace: two workspaces with one key
 * see the same account, two keys never share an entry). One load at a time per key and list; a failed
 * load is not remembered. Commands wait for a value younger than the list's TTL; pickers, which must
 * answer Slack within 3 s, take a value up to `STALE_SUGGESTIONS_MS` old and refresh it behind.
 */

export interface KeyedList<T> {
  /** Distinguishes lists sharing the cache, e.g. "zones", "apps". */
  readonly name: string;
  readonly ttlMs: number;
  load(client: EdgeClient): Promise<T>;
}

export type Freshness = "fresh" | "suggest";

/** How old a list a picker still shows while a fresher one loads. */
export const STALE_SUGGESTIONS_MS = 10 * 60_000;
/** Entries kept at once (one per API key and list), least recently used dropped first. */
export const KEY_CACHE_MAX_ENTRIES = 800;

interface Entry<T> {
  last?: { readonly value: T; readonly loadedAt: number };
  pending?: Promise<T>;
}

// Entries belong to the EdgeApi that read them (as its per-key queues do): one bot, one cache;
// every test harness its own.
const cachesByApi = new WeakMap<EdgeApi, LruCache<string, Entry<unknown>>>();

function cacheFor(edge: EdgeApi): LruCache<string, Entry<unknown>> {
  let cache = cachesByApi.get(edge);
  if (!cache) {
    cache = new LruCache<string, Entry<unknown>>(KEY_CACHE_MAX_ENTRIES);
    cachesByApi.set(edge, cache);
  }
  return cache;
}

function startLoad<T>(entry: Entry<T>, list: KeyedList<T>, client: EdgeClient, now: number): Promise<T> {
  const pending = list.load(client);
  entry.pending = pending;
  pending.then(
    (value) => {
      entry.last = { value, loadedAt: now };
      if (entry.pending === pending) delete entry.pending;
    },
    () => {
      if (entry.pending === pending) delete entry.pending;
    },
  );
  return pending;
}

/** The workspace key's copy of `list`, as fresh as `freshness` asks. */
export async function cachedForKey<T>(
  deps: Deps,
  teamId: string,
  list: KeyedList<T>,
  freshness: Freshness = "fresh",
): Promise<T> {
  return cachedFor(deps, await edgeAccessFor(deps, teamId), list, freshness);
}

/** The same, for a caller that already holds the workspace's access (one key read, not two). */
export async function cachedFor<T>(
  deps: Deps,
  { client, keyId }: EdgeAccess,
  list: KeyedList<T>,
  freshness: Freshness = "fresh",
): Promise<T> {
  const cache = cacheFor(deps.edge);
  const cacheKey = `${list.name}:${keyId}`;
  let entry = cache.get(cacheKey) as Entry<T> | undefined;
  const now = deps.clock.now();
  const age = entry?.last ? now - entry.last.loadedAt : Number.POSITIVE_INFINITY;
  if (entry?.last && age < list.ttlMs) return entry.last.value;
  if (freshness === "suggest" && entry?.last && age < STALE_SUGGESTIONS_MS) {
    if (!entry.pending) startLoad(entry, list, client, now).catch(() => undefined);
    return entry.last.value;
  }
  if (entry?.pending) return entry.pending;
  if (!entry) {
    entry = {};
    cache.set(cacheKey, entry as Entry<unknown>);
  }
  return startLoad(entry, list, client, now);
}

/**
 * The key's copy of `list` if one is loaded and within its TTL, never loading it: for figures an answer
 * adds only when they cost no Edge call. By the id of the access the answer already holds (no key read).
 */
export function loadedFor<T>(deps: Deps, keyId: EdgeAccess["keyId"], list: KeyedList<T>): T | undefined {
  const entry = cacheFor(deps.edge).get(`${list.name}:${keyId}`) as Entry<T> | undefined;
  return entry?.last && deps.clock.now() - entry.last.loadedAt < list.ttlMs ? entry.last.value : undefined;
}

/** Start loading `list` for the workspace's key if it is not cached, without waiting (a picker about to open). */
export function warmForKey<T>(deps: Deps, teamId: string, list: KeyedList<T>): void {
  cachedForKey(deps, teamId, list, "suggest").catch((err: unknown) =>
    deps.logger.debug({ err, teamId, list: list.name }, "warming a list failed"),
  );
}

/** Every page of a paged list, up to `maxPages`; `complete` is false when more were left unread. */
export async function allPages<T>(
  read: (page: number) => Promise<{ items: T[]; hasNext: boolean }>,
  maxPages: number,
): Promise<{ items: T[]; complete: boolean }> {
  const items: T[] = [];
  for (let page = 1; page <= maxPages; page++) {
    const answer = await read(page);
    items.push(...answer.items);
    if (!answer.hasNext || answer.items.length === 0) return { items, complete: true };
  }
  return { items, complete: false };
}
