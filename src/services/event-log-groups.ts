import type { EdgeClient } from "../edge/client.js";
import { type EventGroup, type EventLogsSearch, isLastEventLogPage } from "../edge/schemas/shield.js";

/**
 * Event-log groups read page by page. The search document promises no order for its groups, so a "top" or a
 * sum is certain only once every group is read; past `maxPages` pages it is of the groups read, and says so.
 */

export const GROUPS_PAGE_SIZE = 500;
export const GROUPS_MAX_PAGES = 4;

export interface GroupsRead {
  groups: EventGroup[];
  /** Distinct groups in all, as the API counts them (or as read, when every group was); null when unknown. */
  total: number | null;
  /** Set when not every group was read: how many were (those without a count included). */
  readGroups?: number;
  /** Groups the API gave without a count, left out. */
  skippedGroups: number;
  /** Searches made. */
  calls: number;
}

export async function readEventLogGroups(
  client: EdgeClient,
  zoneId: number,
  search: Omit<EventLogsSearch, "page" | "pageSize">,
  { pageSize = GROUPS_PAGE_SIZE, maxPages = GROUPS_MAX_PAGES }: { pageSize?: number; maxPages?: number } = {},
): Promise<GroupsRead> {
  const groups: EventGroup[] = [];
  let skipped = 0;
  for (let page = 0; ; page++) {
    const r = await client.searchEventLogs(zoneId, { ...search, page, pageSize });
    groups.push(...r.groups);
    skipped += r.skippedGroups;
    const all = isLastEventLogPage(r, page, pageSize);
    if (all || page + 1 >= maxPages) {
      const read = groups.length + skipped;
      return {
        groups,
        total: r.total ?? (all ? read : null),
        ...(all ? {} : { readGroups: read }),
        skippedGroups: skipped,
        calls: page + 1,
      };
    }
  }
}

/** The group with the most events (the first read of those with as many), if any. */
export function busiestGroup(groups: readonly EventGroup[]): EventGroup | undefined {
  return groups.reduce<EventGroup | undefined>(
    (best, g) => (best && best.count >= g.count ? best : g),
    undefined,
  );
}
