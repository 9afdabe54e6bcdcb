import type { EdgeClient } from "../edge/client.js";
import { isEdgeApiError } from "../edge/errors.js";
import { ACCESS_LIST_ACTIONS, ACCESS_LIST_TYPES, type AccessListDetails } from "../edge/schemas/shield.js";
import { UserError } from "../errors.js";
import {
  ACCESS_ENTRY_TYPES,
  type AccessEntry,
  type AccessEntryType,
  accessEntryOf,
  ENTRY_TYPE_WORDS,
} from "./access-entries.js";

/**
 * edgeops' entries in a shield zone's custom access lists. edgeops keeps them in lists it names, one
 * per entry type and action ("edgeops: blocked IPs", "edgeops: challenged countries" …), creates such
 * a list on first use, and never reads into or writes any other list.
 *
 * The API has no conditional write (no ETag, no If-Match; the `checksum` field only verifies the content
 * sent), so an entry is added or removed by read-modify-write of the whole list: read the list, compute
 * the new content, read it again just before writing and start over if it changed in between. A change
 * made by someone else in the moment between that second read and the write is still lost; edgeops
 * can't rule that out.
 */

export const ACCESS_ACTIONS = ["block", "challenge"] as const;
export type AccessAction = (typeof ACCESS_ACTIONS)[number];

/** Where an entry is listed: one of edgeops' actions, or `none` (in none of its lists). */
export type EntryState = AccessAction | "none";

const ACTION_CODES: Record<AccessAction, number> = {
  block: ACCESS_LIST_ACTIONS.block,
  challenge: ACCESS_LIST_ACTIONS.challenge,
};

const TYPE_CODES: Record<AccessEntryType, number> = {
  ip: ACCESS_LIST_TYPES.ip,
  cidr: ACCESS_LIST_TYPES.cidr,
  asn: ACCESS_LIST_TYPES.asn,
  country: ACCESS_LIST_TYPES.country,
  ja4: ACCESS_LIST_TYPES.ja4,
};

/** "edgeops: blocked IPs" */
export function edgeopsListName(type: AccessEntryType, action: AccessAction): string {
  return `edgeops: ${action === "block" ? "blocked" : "challenged"} ${ENTRY_TYPE_WORDS[type].many}`;
}

/** Read-modify-write attempts before giving up when the list keeps changing under us. */
const WRITE_ATTEMPTS = 3;

/**
 * Whether a list is edgeops' list for this type and action: its type, and its name whatever the case and the
 * whitespace around it (the documents do not say a name comes back as it was sent).
 */
const isOwnList = (
  l: Pick<AccessListDetails, "name" | "type">,
  type: AccessEntryType,
  action: AccessAction,
) =>
  l.type === TYPE_CODES[type] && l.name?.trim().toLowerCase() === edgeopsListName(type, action).toLowerCase();

/** Which of edgeops' lists this is (its entry type and action), or undefined for a list of someone else's. */
export function edgeopsListOf(
  l: Pick<AccessListDetails, "name" | "type">,
): { type: AccessEntryType; action: AccessAction } | undefined {
  for (const type of ACCESS_ENTRY_TYPES)
    for (const action of ACCESS_ACTIONS) if (isOwnList(l, type, action)) return { type, action };
  return undefined;
}

/**
 * edgeops' lists for this type and action (normally one; two if two replicas created it at once), oldest
 * (lowest id) first: the first is the one edgeops writes to, whatever order the API lists them in.
 */
function ownLists(
  lists: readonly AccessListDetails[],
  type: AccessEntryType,
  action: AccessAction,
): AccessListDetails[] {
  return lists.filter((l) => isOwnList(l, type, action)).sort((a, b) => a.listId - b.listId);
}

const linesOf = (content: string) =>
  content
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l !== "");

/** Whether a list line is this entry (lines typed by hand may be spelled differently). */
const isEntry = (line: string, entry: AccessEntry) =>
  line === entry.value || accessEntryOf(line, entry.type)?.value === entry.value;

/** Whether a list does what its name says: enabled, with its action (a person may have changed either). */
const inForce = (l: AccessListDetails, action: AccessAction) =>
  l.isEnabled && l.action === ACTION_CODES[action];

/**
 * Which of edgeops' lists in force holds the entry now: block wins over challenge; `none` when neither
 * (an entry in a list someone turned off is not in force).
 */
export async function readEntryState(
  client: EdgeClient,
  shieldZoneId: number,
  entry: AccessEntry,
): Promise<EntryState> {
  const lists = await client.listCustomAccessLists(shieldZoneId);
  for (const action of ACCESS_ACTIONS) {
    for (const l of ownLists(lists, entry.type, action).filter((x) => inForce(x, action))) {
      const list = await client.getCustomAccessList(shieldZoneId, l.listId);
      if (linesOf(list.content).some((line) => isEntry(line, entry))) return action;
    }
  }
  return "none";
}

/**
 * Every entry in edgeops' lists in force on the zone, keyed `type:value`, with the action its list takes: the
 * same reading as readEntryState, so what the card calls blocked is what Unblock finds (an entry in a list a
 * person turned off or gave another action is in force as neither).
 */
export async function edgeopsEntries(
  client: EdgeClient,
  shieldZoneId: number,
): Promise<Map<string, AccessAction>> {
  const lists = await client.listCustomAccessLists(shieldZoneId);
  const entries = new Map<string, AccessAction>();
  // Challenge first, so an entry in both reads as blocked (block wins, as in readEntryState).
  for (const action of [...ACCESS_ACTIONS].reverse())
    for (const type of ACCESS_ENTRY_TYPES)
      for (const l of ownLists(lists, type, action).filter((x) => inForce(x, action))) {
        const list = await client.getCustomAccessList(shieldZoneId, l.listId);
        for (const line of linesOf(list.content)) {
          const entry = accessEntryOf(line, type);
          if (entry) entries.set(`${type}:${entry.value}`, action);
        }
      }
  return entries;
}

/**
 * edgeops' list an entry would go into, when it is not in force (a person turned it off in the dashboard
 * or changed its action): adding the entry turns it back on, with every entry in it.
 */
export async function listTurnedOff(
  client: EdgeClient,
  shieldZoneId: number,
  type: AccessEntryType,
  action: AccessAction,
): Promise<AccessListDetails | undefined> {
  const list = ownLists(await client.listCustomAccessLists(shieldZoneId), type, action)[0];
  return list && !inForce(list, action) ? list : undefined;
}

/** edgeops' list for this type and action, created (empty, enabled, with the action) when missing. */
async function ensureList(
  client: EdgeClient,
  shieldZoneId: number,
  type: AccessEntryType,
  action: AccessAction,
  lists: readonly AccessListDetails[],
): Promise<AccessListDetails> {
  let list = ownLists(lists, type, action)[0];
  if (!list) {
    const created = await client.createCustomAccessList(shieldZoneId, {
      name: edgeopsListName(type, action),
      type: TYPE_CODES[type],
      content: "",
    });
    // The list's configuration (its id, action, enabled) is only in the listing: found by the id the
    // answer gave, by name when it gave none.
    const listed = await client.listCustomAccessLists(shieldZoneId);
    list =
      (created === null ? undefined : listed.find((l) => l.listId === created)) ??
      ownLists(listed, type, action)[0];
    if (!list)
      throw new UserError(
        "unavailable",
        `The Edge API accepted the new list "${edgeopsListName(type, action)}" but does not show it yet; try again in a minute.`,
      );
  }
  // The list is edgeops' by its name: it must do what its name says, or adding to it does nothing.
  if (!inForce(list, action))
    await client.configureAccessList(shieldZoneId, list.configurationId, {
      isEnabled: true,
      action: ACTION_CODES[action],
    });
  return list;
}

/** Add the entry to (or remove it from) one list, by guarded read-modify-write; false when nothing to do. */
async function writeEntry(
  client: EdgeClient,
  shieldZoneId: number,
  listId: number,
  entry: AccessEntry,
  present: boolean,
): Promise<boolean> {
  for (let attempt = 1; attempt <= WRITE_ATTEMPTS; attempt++) {
    const before = await client.getCustomAccessList(shieldZoneId, listId);
    const lines = linesOf(before.content);
    const has = lines.some((line) => isEntry(line, entry));
    if (has === present) return false;
    const next = present ? [...lines, entry.value] : lines.filter((line) => !isEntry(line, entry));
    const again = await client.getCustomAccessList(shieldZoneId, listId);
    if (again.content !== before.content) continue;
    try {
      await client.setCustomAccessListContent(shieldZoneId, listId, next.join("\n"));
    } catch (err) {
      // A write the API failed (5xx) is tried again from a fresh read: the content sent must come from
      // what the list is now. A timeout leaves the outcome unknown, and says so.
      if (isEdgeApiError(err) && err.kind === "server" && attempt < WRITE_ATTEMPTS) continue;
      throw err;
    }
    return true;
  }
  throw new UserError(
    "unavailable",
    "edgeops' access list kept changing while edgeops was updating it (someone else is editing it); try again in a minute.",
  );
}

/**
 * Put the entry under `state`: in edgeops' list for that action (added there first, so a move from
 * challenge to block never leaves a gap) and in none of its other lists of the type.
 */
export async function setEntryState(
  client: EdgeClient,
  shieldZoneId: number,
  entry: AccessEntry,
  state: EntryState,
): Promise<void> {
  let lists = await client.listCustomAccessLists(shieldZoneId);
  if (state !== "none") {
    const list = await ensureList(client, shieldZoneId, entry.type, state, lists);
    await writeEntry(client, shieldZoneId, list.listId, entry, true);
    lists = lists.some((l) => l.listId === list.listId) ? lists : [...lists, list];
  }
  for (const action of ACCESS_ACTIONS) {
    if (action === state) continue;
    for (const l of ownLists(lists, entry.type, action))
      await writeEntry(client, shieldZoneId, l.listId, entry, false);
  }
}
