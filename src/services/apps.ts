import type { EdgeClient } from "../edge/client.js";
import { APP_STATUSES, type App, type AppStatus } from "../edge/schemas/mc.js";
import { usage } from "../errors.js";

export const APPS_MAX_LIMIT = 1000;
export const APPS_DEFAULT_LIMIT = 20;
/** API pages read at most for one filtered answer, so a rare status cannot make one click read everything. */
const MAX_PAGES_PER_ANSWER = 5;

export interface AppsQuery {
  /** Only applications in one of these statuses (none: every application). */
  statuses?: readonly AppStatus[];
  limit: number;
  cursor?: string;
}

export interface AppsPage {
  apps: App[];
  /** Counts by status among the applications read for this answer. */
  totals: Partial<Record<string, number>>;
  read: number;
  /** Applications the API listed without an id (optional in the document), left out. */
  skipped?: number;
  totalItems: number | null;
  nextCursor: string | null;
  /** A search by name: how many applications matched (the totals count those). */
  matched?: number;
}

/** Words users type for a status, including "deploying" for progressing. */
export function parseAppStatus(word: string): AppStatus | undefined {
  const w = word.toLowerCase();
  if (w === "deploying") return "progressing";
  return (APP_STATUSES as readonly string[]).includes(w) ? (w as AppStatus) : undefined;
}

/**
 * One page of applications through the API's cursor. With a status filter the API's pages are read
 * in turn until `limit` matches are found (or MAX_PAGES_PER_ANSWER pages), and the cursor after the
 * last page read is handed back for the Next page button.
 */
export async function listAppsPage(client: EdgeClient, query: AppsQuery): Promise<AppsPage> {
  const apps: App[] = [];
  const totals: Partial<Record<string, number>> = {};
  let cursor = query.cursor;
  let read = 0;
  let skipped = 0;
  let totalItems: number | null = null;
  let nextCursor: string | null = null;
  const filtered = (query.statuses?.length ?? 0) > 0;
  for (let pages = 0; pages < MAX_PAGES_PER_ANSWER; pages++) {
    const page = await client.listApps({ limit: query.limit, ...(cursor ? { cursor } : {}) });
    totalItems = page.totalItems;
    nextCursor = page.nextCursor;
    skipped += page.skipped;
    for (const app of page.items) {
      read++;
      totals[app.status] = (totals[app.status] ?? 0) + 1;
      if (!filtered || query.statuses?.includes(app.status as AppStatus)) apps.push(app);
    }
    if (!filtered || apps.length >= query.limit || !nextCursor) break;
    cursor = nextCursor;
  }
  return { apps, totals, read, ...(skipped > 0 ? { skipped } : {}), totalItems, nextCursor };
}

/** The applications, a page of 1000 at a time through the API's cursor, at most `maxPages` pages. */
export async function* appPages(
  client: EdgeClient,
  maxPages: number,
): AsyncGenerator<{ items: App[]; last: boolean }> {
  let cursor: string | undefined;
  for (let i = 0; i < maxPages; i++) {
    const page = await client.listApps({ limit: APPS_MAX_LIMIT, ...(cursor ? { cursor } : {}) });
    yield { items: page.items, last: !page.nextCursor };
    if (!page.nextCursor) return;
    cursor = page.nextCursor;
  }
}

/** Counts by status over every application (App Home), reading at most `maxPages` pages of 1000. */
export async function countAppsByStatus(
  client: EdgeClient,
  maxPages = 10,
): Promise<{ total: number; byStatus: Record<string, number>; complete: boolean }> {
  const byStatus: Record<string, number> = {};
  let total = 0;
  for await (const page of appPages(client, maxPages)) {
    for (const app of page.items) {
      total++;
      byStatus[app.status] = (byStatus[app.status] ?? 0) + 1;
    }
    if (page.last) return { total, byStatus, complete: true };
  }
  return { total, byStatus, complete: false };
}

/**
 * The applications in one of `statuses` right now (status words as the API sends them, any case), at most
 * `maxPages` pages of 1000 read: what a new apps watch learns as its starting point and will not post about.
 */
export async function appsInStatuses(
  client: EdgeClient,
  statuses: readonly string[],
  maxPages = 10,
): Promise<{ apps: App[]; complete: boolean }> {
  const wanted = new Set(statuses.map((s) => s.toLowerCase()));
  const apps: App[] = [];
  for await (const page of appPages(client, maxPages)) {
    apps.push(...page.items.filter((a) => wanted.has(a.status.toLowerCase())));
    if (page.last) return { apps, complete: true };
  }
  return { apps, complete: false };
}

/** API pages of 1000 read at most to find an application by name (and to list them for a picker). */
export const MAX_PAGES_TO_FIND = 10;

/**
 * The application with this id, or the only one with this name (case-insensitive); a sentence listing
 * the candidates when a name is ambiguous, or saying how to find it when nothing matches.
 */
export async function findApp(client: EdgeClient, idOrName: string, example: string): Promise<App> {
  const wanted = idOrName.toLowerCase();
  const byName: App[] = [];
  const partial: App[] = [];
  for await (const page of appPages(client, MAX_PAGES_TO_FIND)) {
    const exact = page.items.find((a) => a.id === idOrName);
    if (exact) return exact;
    byName.push(...page.items.filter((a) => a.name.toLowerCase() === wanted));
    partial.push(...page.items.filter((a) => a.name.toLowerCase().includes(wanted)));
  }
  if (byName.length === 1 && byName[0]) return byName[0];
  if (byName.length > 1)
    throw usage(
      `${byName.length} applications are named ${idOrName}; use the id of the one you mean: ${byName
        .slice(0, 10)
        .map((a) => a.id)
        .join(", ")}.`,
    );
  // As zones do: a change never lands on an app picked by a partial match, so the candidates are listed.
  if (partial.length > 0) {
    const listed = partial.slice(0, 10).map((a) => `${a.name} (${a.id})`);
    const more = partial.length > listed.length ? ` and ${partial.length - listed.length} more` : "";
    throw usage(
      `No application is named exactly ${idOrName}; ${partial.length === 1 ? "one contains it" : `${partial.length} contain it`}: ${listed.join(", ")}${more}. Give the full name or the id: ${example}`,
    );
  }
  throw usage(
    `No application has the id or name ${idOrName}: /edge apps lists them. For example: ${example}`,
  );
}

/** The applications whose name contains `text` (any case), from the first MAX_PAGES_TO_FIND pages. */
export async function appsNamed(client: EdgeClient, text: string, limit: number): Promise<AppsPage> {
  const wanted = text.toLowerCase();
  const matches: App[] = [];
  let read = 0;
  let complete = false;
  for await (const page of appPages(client, MAX_PAGES_TO_FIND)) {
    read += page.items.length;
    matches.push(...page.items.filter((a) => a.name.toLowerCase().includes(wanted) || a.id === text));
    complete = page.last;
  }
  const totals: Partial<Record<string, number>> = {};
  for (const app of matches) totals[app.status] = (totals[app.status] ?? 0) + 1;
  return {
    apps: matches.slice(0, limit),
    totals,
    read,
    totalItems: complete ? read : null,
    nextCursor: null,
    matched: matches.length,
  };
}
