/**
 * Shield access lists: GET/POST …/access-lists, GET/PATCH …/access-lists/{id}, PATCH
 * …/access-lists/configurations/{id}. Custom lists keep state (a PATCH changes what the GETs return);
 * the managed (curated) lists are fixed. Bodies follow AccessListsDetailsResponse,
 * CustomAccessListResponse and UpdateAccessListConfigurationResponse.
 *
 * Where the documents are silent the adversary picks (docs/simulator.md): the order of the lists
 * ("access-lists.order"), how a list's name comes back ("access-lists.name-spelling") and how an unknown
 * zone, list or configuration is answered ("access-lists.unknown-id": none of these operations documents a 404).
 */
import { createHash } from "node:crypto";
import { isIP } from "node:net";
import { type HandlerContext, intParam, isPlainObject, json, problem, type SimResponse } from "./http.js";
import { ACCESS_CONFIGURATION_OFFSET, type ShieldGenericResponse, type SimAccessList } from "./seed.js";

/** Plan limits the GET reports and POST / PATCH enforce. */
const CUSTOM_LIST_LIMIT = 10;
const CUSTOM_ENTRY_LIMIT = 1_000;

const MANAGED_LISTS = [
  { listId: 1, name: "VPN providers", category: 1, type: 1 },
  { listId: 2, name: "Tor exit nodes", category: 8, type: 0 },
  { listId: 3, name: "AI crawlers", category: 1024, type: 1 },
] as const;

const err = (statusCode: number, message: string, errorKey: string): ShieldGenericResponse => ({
  statusCode,
  success: false,
  message,
  errorKey,
});

const refused = (status: number, message: string, errorKey: string): SimResponse =>
  json(status, { data: null, error: err(status, message, errorKey) });

const iso = (ms: number) => new Date(ms).toISOString();
const sha256 = (s: string) => createHash("sha256").update(s).digest("hex");
const entriesOf = (content: string) =>
  content
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l !== "");

/** Whether a line is a valid entry of a list of this AccessListType. */
function validEntry(type: number, line: string): boolean {
  switch (type) {
    case 0:
      return isIP(line) !== 0;
    case 1: {
      const [addr = "", prefix = ""] = line.split("/");
      const v = isIP(addr);
      return v !== 0 && /^\d{1,3}$/.test(prefix) && Number(prefix) <= (v === 4 ? 32 : 128);
    }
    case 2:
      return /^(AS)?\d{1,10}$/i.test(line);
    case 3:
      return /^[A-Z]{2}$/i.test(line);
    case 5:
      return /^[tqd][0-9a-z]{9}_[0-9a-f]{12}_[0-9a-f]{12}$/.test(line);
    default:
      return line.length <= 200;
  }
}

function zoneOf(ctx: HandlerContext): number | undefined {
  const id = intParam(ctx.params[0]);
  return id !== undefined && ctx.state.shieldZones.some((z) => z.shieldZoneId === id) ? id : undefined;
}

/**
 * Something the path names does not exist. The documents list no 404 for these operations: the friendly
 * simulator answers the framework's NotFound problem details; the adversary answers within what they list,
 * the operation's envelope carrying the error, in a 200 for a read and a 400 for a write.
 */
function notFound(ctx: HandlerContext, message: string, errorKey: string): SimResponse {
  if (ctx.adversary.choose("access-lists.unknown-id", ["problem-details", "envelope"]) === "problem-details")
    return problem(404, message, ctx.path);
  const error = err(404, message, errorKey);
  if (ctx.method !== "GET") return json(400, { data: null, error });
  if (ctx.params.length > 1) return json(200, { data: null, error });
  return json(200, {
    managedLists: null,
    customLists: null,
    customEntryCount: null,
    customEntryLimit: null,
    customListCount: null,
    customListLimit: null,
    error,
  });
}

const zoneNotFound = (ctx: HandlerContext) =>
  notFound(ctx, `Shield Zone ${ctx.params[0] ?? ""} not found.`, "shield_zone.not_found");

/**
 * A list's name as the API gives it back. The documents say only "the display name": not that it comes back
 * as sent, so the adversary may change its case or the whitespace around it (one spelling per list).
 */
const NAME_SPELLINGS = ["as-stored", "lower-case", "upper-case", "trimmed", "padded"] as const;
function spelled(ctx: HandlerContext, name: string, salt: string): string {
  switch (ctx.adversary.choose("access-lists.name-spelling", NAME_SPELLINGS, salt)) {
    case "as-stored":
      return name;
    case "lower-case":
      return name.toLowerCase();
    case "upper-case":
      return name.toUpperCase();
    case "trimmed":
      return name.trim();
    case "padded":
      return ` ${name} `;
  }
}

const listsOf = (ctx: HandlerContext, zoneId: number): SimAccessList[] => {
  let lists = ctx.state.accessLists.get(zoneId);
  if (!lists) {
    lists = [];
    ctx.state.accessLists.set(zoneId, lists);
  }
  return lists;
};

const entryCount = (lists: readonly SimAccessList[]) =>
  lists.reduce((n, l) => n + entriesOf(l.content).length, 0);

function customList(ctx: HandlerContext, l: SimAccessList) {
  return {
    id: l.id,
    name: spelled(ctx, l.name, `custom:${l.id}`),
    description: l.description,
    type: l.type,
    content: l.content,
    checksum: sha256(l.content),
    entryCount: entriesOf(l.content).length,
    lastModified: iso(l.lastModified),
  };
}

/** The problem in a list's content (an entry its type does not accept, or too many entries), if any. */
function contentProblem(type: number, content: string, otherEntries: number): SimResponse | undefined {
  const bad = entriesOf(content).find((line) => !validEntry(type, line));
  if (bad !== undefined)
    return refused(400, `"${bad}" is not a valid entry for this list type.`, "access_list.invalid_entry");
  if (otherEntries + entriesOf(content).length > CUSTOM_ENTRY_LIMIT)
    return refused(
      400,
      `The plan allows ${CUSTOM_ENTRY_LIMIT} custom entries per Shield Zone.`,
      "access_list.entry_limit_reached",
    );
  return undefined;
}

/** GET /shield/shield-zone/{id}/access-lists -> AccessListsDetailsResponse */
export function getAccessLists(ctx: HandlerContext): SimResponse {
  const zoneId = zoneOf(ctx);
  if (zoneId === undefined) return zoneNotFound(ctx);
  const lists = listsOf(ctx, zoneId);
  const zone = ctx.state.shieldZones.find((z) => z.shieldZoneId === zoneId);
  // The documents give no order for either array.
  const order = <T>(items: T[], which: string) =>
    ctx.adversary.order("access-lists.order", items, `${which}:${zoneId}`);
  return json(200, {
    managedLists: order(
      MANAGED_LISTS.map((m) => ({
        listId: m.listId,
        configurationId: zoneId * 10 + m.listId,
        name: spelled(ctx, m.name, `managed:${m.listId}`),
        description: null,
        isEnabled: false,
        type: m.type,
        category: m.category,
        action: 0,
        requiredPlan: 1,
        entryCount: 1000 * m.listId,
        updateFrequency: "1.00:00:00",
        lastUpdated: iso(ctx.now - 3_600_000),
      })),
      "managed",
    ),
    customLists: order(
      lists.map((l) => ({
        listId: l.id,
        configurationId: l.configurationId,
        name: spelled(ctx, l.name, `custom:${l.id}`),
        description: l.description,
        isEnabled: l.isEnabled,
        type: l.type,
        category: 0,
        action: l.action,
        requiredPlan: zone?.planType ?? 0,
        entryCount: entriesOf(l.content).length,
        updateFrequency: null,
        lastUpdated: iso(l.lastModified),
      })),
      "custom",
    ),
    customEntryCount: entryCount(lists),
    customEntryLimit: CUSTOM_ENTRY_LIMIT,
    customListCount: lists.length,
    customListLimit: CUSTOM_LIST_LIMIT,
    error: null,
  });
}

/** POST /shield/shield-zone/{id}/access-lists body CreateCustomAccessListRequest -> CustomAccessListResponse */
export function createAccessList(ctx: HandlerContext): SimResponse {
  const zoneId = zoneOf(ctx);
  if (zoneId === undefined) return zoneNotFound(ctx);
  const body = ctx.body;
  if (!isPlainObject(body))
    return refused(400, "The request body must be a JSON object.", "validation.invalid_body");
  const extra = Object.keys(body).filter(
    (k) => !["name", "description", "type", "content", "checksum"].includes(k),
  );
  if (extra.length > 0)
    return refused(400, `Unknown field(s): ${extra.join(", ")}.`, "validation.unknown_field");
  const { name, description, type, content, checksum } = body;
  if (typeof name !== "string" || name.trim() === "")
    return refused(400, "name is required.", "validation.invalid_name");
  if (typeof type !== "number" || !Number.isInteger(type) || type < 0 || type > 5)
    return refused(400, "type must be 0..5.", "validation.invalid_type");
  if (content !== null && typeof content !== "string")
    return refused(400, "content must be a string.", "validation.invalid_content");
  if (description !== undefined && description !== null && typeof description !== "string")
    return refused(400, "description must be a string.", "validation.invalid_description");
  const text = content ?? "";
  if (checksum !== undefined && checksum !== null && checksum !== sha256(text))
    return refused(400, "checksum does not match the content.", "access_list.checksum_mismatch");
  const lists = listsOf(ctx, zoneId);
  if (lists.length >= CUSTOM_LIST_LIMIT)
    return refused(
      400,
      `The plan allows ${CUSTOM_LIST_LIMIT} custom lists.`,
      "access_list.list_limit_reached",
    );
  const wrong = contentProblem(type, text, entryCount(lists));
  if (wrong) return wrong;
  const id = ctx.state.nextAccessListId++;
  const list: SimAccessList = {
    id,
    configurationId: id + ACCESS_CONFIGURATION_OFFSET,
    name,
    description: typeof description === "string" ? description : null,
    type,
    content: text,
    // A new list does nothing until its configuration gets an action.
    isEnabled: false,
    action: 0,
    lastModified: ctx.now,
  };
  lists.push(list);
  return json(200, { data: customList(ctx, list), error: null });
}

function findList(ctx: HandlerContext): { zoneId: number; list: SimAccessList } | SimResponse {
  const zoneId = zoneOf(ctx);
  if (zoneId === undefined) return zoneNotFound(ctx);
  const id = intParam(ctx.params[1]);
  const list = listsOf(ctx, zoneId).find((l) => l.id === id);
  if (!list) return notFound(ctx, `Access list ${ctx.params[1] ?? ""} not found.`, "access_list.not_found");
  return { zoneId, list };
}

/** GET /shield/shield-zone/{id}/access-lists/{listId} -> CustomAccessListResponse */
export function getAccessList(ctx: HandlerContext): SimResponse {
  const found = findList(ctx);
  if ("status" in found) return found;
  return json(200, { data: customList(ctx, found.list), error: null });
}

/** PATCH /shield/shield-zone/{id}/access-lists/{listId} body UpdateCustomAccessListRequest (null keeps a field). */
export function updateAccessList(ctx: HandlerContext): SimResponse {
  const found = findList(ctx);
  if ("status" in found) return found;
  const { zoneId, list } = found;
  const body = ctx.body;
  if (!isPlainObject(body))
    return refused(400, "The request body must be a JSON object.", "validation.invalid_body");
  const extra = Object.keys(body).filter((k) => !["name", "content", "checksum"].includes(k));
  if (extra.length > 0)
    return refused(400, `Unknown field(s): ${extra.join(", ")}.`, "validation.unknown_field");
  const { name, content, checksum } = body;
  if (name !== undefined && name !== null && (typeof name !== "string" || name.trim() === ""))
    return refused(400, "name must be a non-empty string.", "validation.invalid_name");
  if (content !== undefined && content !== null && typeof content !== "string")
    return refused(400, "content must be a string.", "validation.invalid_content");
  const text = typeof content === "string" ? content : list.content;
  if (checksum !== undefined && checksum !== null && checksum !== sha256(text))
    return refused(400, "checksum does not match the content.", "access_list.checksum_mismatch");
  const others = entryCount(listsOf(ctx, zoneId).filter((l) => l !== list));
  const wrong = contentProblem(list.type, text, others);
  if (wrong) return wrong;
  if (typeof name === "string") list.name = name;
  list.content = text;
  list.lastModified = ctx.now;
  return json(200, { data: customList(ctx, list), error: null });
}

/** PATCH /shield/shield-zone/{id}/access-lists/configurations/{configurationId} body UpdateAccessListConfigurationRequest */
export function updateAccessListConfiguration(ctx: HandlerContext): SimResponse {
  const zoneId = zoneOf(ctx);
  if (zoneId === undefined) return zoneNotFound(ctx);
  const id = intParam(ctx.params[1]);
  const list = listsOf(ctx, zoneId).find((l) => l.configurationId === id);
  if (!list)
    return notFound(
      ctx,
      `Access list configuration ${ctx.params[1] ?? ""} not found.`,
      "access_list_configuration.not_found",
    );
  const body = ctx.body;
  if (!isPlainObject(body))
    return refused(400, "The request body must be a JSON object.", "validation.invalid_body");
  const extra = Object.keys(body).filter((k) => !["isEnabled", "action"].includes(k));
  if (extra.length > 0)
    return refused(400, `Unknown field(s): ${extra.join(", ")}.`, "validation.unknown_field");
  const { isEnabled, action } = body;
  if (isEnabled !== undefined && isEnabled !== null && typeof isEnabled !== "boolean")
    return refused(400, "isEnabled must be true or false.", "validation.invalid_is_enabled");
  if (
    action !== undefined &&
    action !== null &&
    (typeof action !== "number" || !Number.isInteger(action) || action < 0 || action > 5)
  )
    return refused(400, "action must be 0..5.", "validation.invalid_action");
  if (typeof isEnabled === "boolean") list.isEnabled = isEnabled;
  if (typeof action === "number") list.action = action;
  list.lastModified = ctx.now;
  return json(200, { data: { isEnabled: list.isEnabled, action: list.action }, error: null });
}
