import type { Deps } from "../deps.js";
import type { EdgeClient } from "../edge/client.js";
import { describeEdgeError, EdgeApiError } from "../edge/errors.js";
import type { PullZone } from "../edge/schemas/core.js";
import type { ShieldZone, ShieldZonePage } from "../edge/schemas/shield.js";
import { UserError } from "../errors.js";
import { nearest } from "../suggest.js";
import { edgeAccessFor } from "./edge-access.js";
import { allPages, cachedFor, cachedForKey, type Freshness, type KeyedList } from "./key-cache.js";

/**
 * Shield zones by name. The Shield API knows zones only by id and pull zone id; the names people use
 * (a domain, a pull zone name) live on Core's pull zones. The directory joins the two lists on
 * pullZoneId, is kept per API key for a minute, and answers both `/edge zones <text>` and every
 * command that takes a shield zone.
 */

export const ZONE_DIRECTORY_TTL_MS = 60_000;
/** Candidates named in an ambiguous-name sentence. */
export const MAX_CANDIDATES_LISTED = 10;
export const PAGE_SIZE = 1000;
/** Pages read of each list; beyond 20,000 zones the rest is not searched (and the answer says so). */
export const MAX_PAGES = 20;

/** A shield zone as a user named it: its id, or a domain / pull zone name still to resolve. */
export type ZoneRef =
  | { readonly kind: "id"; readonly id: number }
  | { readonly kind: "name"; readonly name: string };

export interface NamedZone {
  readonly zone: ShieldZone;
  /** Null when the zone has no pull zone, or its pull zone is not in the pull zone list. */
  readonly pullZoneName: string | null;
  /** The site's own hostnames first, bunny.net's system hostname last. */
  readonly hostnames: readonly string[];
}

/** A pull zone without a shield zone: found by name, but nothing to act on. */
export interface UnshieldedPullZone {
  readonly pullZoneId: number;
  readonly pullZoneName: string | null;
  readonly hostnames: readonly string[];
}

export interface ZoneDirectory {
  readonly zones: readonly NamedZone[];
  readonly unshielded: readonly UnshieldedPullZone[];
  /** False when a list had more pages than are read. */
  readonly complete: boolean;
}

export interface ZoneSearchResult {
  readonly text: string;
  readonly matches: readonly NamedZone[];
  readonly unshieldedMatches: readonly UnshieldedPullZone[];
  readonly totalZones: number;
  readonly complete: boolean;
}

// ---- the per-key cache ------------------------------------------------------------------------------

export const ZONE_DIRECTORY: KeyedList<ZoneDirectory> = {
  name: "zones",
  ttlMs: ZONE_DIRECTORY_TTL_MS,
  load: loadDirectory,
};

/**
 * The directory of the workspace's key: cached for a minute, one load at a time per key. A picker
 * (`suggest`) also takes an older one while a fresh one loads.
 */
export function zoneDirectory(
  deps: Deps,
  teamId: string,
  freshness: Freshness = "fresh",
): Promise<ZoneDirectory> {
  return cachedForKey(deps, teamId, ZONE_DIRECTORY, freshness);
}

async function loadDirectory(client: EdgeClient): Promise<ZoneDirectory> {
  const [shield, pull] = await Promise.all([
    allPages((page) => client.listShieldZones({ page, perPage: PAGE_SIZE }), MAX_PAGES),
    allPages((page) => client.listPullZones({ page, perPage: PAGE_SIZE }), MAX_PAGES),
  ]);
  const pullZones = new Map<number, PullZone>(pull.items.map((p) => [p.id, p]));
  const shielded = new Set<number>();
  const zones = shield.items.map((zone): NamedZone => {
    const pullZone = zone.pullZoneId === null ? undefined : pullZones.get(zone.pullZoneId);
    if (pullZone) shielded.add(pullZone.id);
    return { zone, pullZoneName: pullZone?.name ?? null, hostnames: pullZone?.hostnames ?? [] };
  });
  const unshielded = pull.items
    .filter((p) => !shielded.has(p.id))
    .map((p) => ({ pullZoneId: p.id, pullZoneName: p.name, hostnames: p.hostnames }));
  return { zones, unshielded, complete: shield.complete && pull.complete };
}

// ---- matching -----------------------------------------------------------------------------------

/** What users type for a domain: any case, maybe a trailing dot. */
function normalise(text: string): string {
  return text.trim().toLowerCase().replace(/\.+$/, "");
}

type Named = Pick<NamedZone, "pullZoneName" | "hostnames">;

const namesOf = (z: Named) =>
  [...(z.pullZoneName ? [z.pullZoneName] : []), ...z.hostnames].map((n) => n.toLowerCase());
const isExactly = (needle: string) => (z: Named) => namesOf(z).includes(needle);
const contains = (needle: string) => (z: Named) => namesOf(z).some((n) => n.includes(needle));

/** A page of shield zones as read now, each named (domain, pull zone name) when its pull zone is known. */
export interface NamedZonesPage {
  readonly page: ShieldZonePage;
  /** The page's zones in order, named; null when the names were not at hand in time. */
  readonly named: readonly NamedZone[] | null;
}

type ZoneNames = Pick<NamedZone, "pullZoneName" | "hostnames">;

/**
 * One pull zone's names as kept for a zones page: one fresh string, "-" for no name or "+" and the name,
 * then each hostname, each string as its length, ":" and itself. Kept like this because the strings
 * JSON.parse returns are slices of the whole answer (about 17 KB a key), so keeping them kept every answer
 * whole for 800 keys; the joined string is a copy, and one string a zone instead of an object, an array and
 * a string a name (an A/B of 3,000 loads, 800 kept: 10.4 KB of heap a kept key before, 3.2 KB after).
 */
type CompactNames = string;

function compactNames(pullZoneName: string | null, hostnames: readonly string[]): CompactNames {
  const strings = pullZoneName === null ? hostnames : [pullZoneName, ...hostnames];
  // At least two parts, so join builds a new string rather than handing one back.
  return [pullZoneName === null ? "-" : "+", ...strings.map((s) => `${s.length}:${s}`)].join("");
}

function expandNames(names: CompactNames): ZoneNames {
  const strings: string[] = [];
  for (let at = 1; at < names.length; ) {
    const colon = names.indexOf(":", at);
    const length = Number(names.slice(at, colon));
    strings.push(names.slice(colon + 1, colon + 1 + length));
    at = colon + 1 + length;
  }
  return names.startsWith("+")
    ? { pullZoneName: strings[0] ?? "", hostnames: strings.slice(1) }
    : { pullZoneName: null, hostnames: strings };
}

/** Only the pull zones' names, by pull zone id, compact: what a zones page needs (a few KB a key). */
export const PULL_ZONE_NAMES: KeyedList<ReadonlyMap<number, CompactNames>> = {
  name: "pull-zone-names",
  ttlMs: ZONE_DIRECTORY_TTL_MS,
  load: async (client) => {
    const pull = await allPages((page) => client.listPullZones({ page, perPage: PAGE_SIZE }), MAX_PAGES);
    return new Map(pull.items.map((p) => [p.id, compactNames(p.name, p.hostnames)]));
  },
};

/**
 * `/edge zones [page]`: the page is read from the Edge API as asked; names come from the pull zone
 * list only if it is at hand by the time the page is (cached, or loaded alongside), so naming never
 * makes the answer wait. A list not yet loaded starts loading, and the next page shows the names.
 */
export async function namedShieldZonesPage(
  deps: Deps,
  teamId: string,
  page: number,
  perPage: number,
): Promise<NamedZonesPage> {
  const access = await edgeAccessFor(deps, teamId);
  let names: ReadonlyMap<number, CompactNames> | undefined;
  cachedFor(deps, access, PULL_ZONE_NAMES, "suggest").then(
    (loaded) => {
      names = loaded;
    },
    (err: unknown) => deps.logger.debug({ err, teamId }, "the names for a zones page could not be read"),
  );
  const read = await access.client.listShieldZones({ page, perPage });
  const known = names;
  const named = known
    ? read.items.map((zone): NamedZone => {
        const kept = zone.pullZoneId === null ? undefined : known.get(zone.pullZoneId);
        const found = kept === undefined ? undefined : expandNames(kept);
        return { zone, pullZoneName: found?.pullZoneName ?? null, hostnames: found?.hostnames ?? [] };
      })
    : null;
  return { page: read, named };
}

/** Zones whose domain or pull zone name contains `text` (any case), exact matches first. */
export async function findShieldZones(deps: Deps, teamId: string, text: string): Promise<ZoneSearchResult> {
  const directory = await zoneDirectory(deps, teamId);
  const needle = normalise(text);
  const exact = isExactly(needle);
  const matches = directory.zones
    .filter(contains(needle))
    .sort((a, b) => Number(exact(b)) - Number(exact(a)) || a.zone.shieldZoneId - b.zone.shieldZoneId);
  return {
    text: needle,
    matches,
    unshieldedMatches: directory.unshielded.filter(contains(needle)),
    totalZones: directory.zones.length,
    complete: directory.complete,
  };
}

/** "shop.acme-example.com (zone 18401)": the name that matched, else the zone's first name. */
function candidateLabel(z: NamedZone, needle: string): string {
  const all = [...z.hostnames, ...(z.pullZoneName ? [z.pullZoneName] : [])];
  const name = all.find((n) => n.toLowerCase().includes(needle)) ?? all[0];
  return name ? `${name} (zone ${z.zone.shieldZoneId})` : `zone ${z.zone.shieldZoneId}`;
}

function candidateList(zones: readonly NamedZone[], needle: string): string {
  const listed = zones.slice(0, MAX_CANDIDATES_LISTED).map((z) => candidateLabel(z, needle));
  const more = zones.length - listed.length;
  return `${listed.join(", ")}${more > 0 ? ` and ${more} more` : ""}`;
}

/**
 * The shield zone id a command acts on. An id is used as given (no Edge call); a name resolves only
 * when it is exactly one zone's domain or pull zone name, so a change never lands on a zone picked
 * by a partial match. Anything else is a UserError naming the candidates or saying how to find one.
 */
export async function resolveShieldZoneId(
  deps: Deps,
  teamId: string,
  ref: ZoneRef,
  example: string,
): Promise<number> {
  if (ref.kind === "id") return ref.id;
  const needle = normalise(ref.name);
  let directory: ZoneDirectory;
  try {
    directory = await zoneDirectory(deps, teamId);
  } catch (err) {
    if (!(err instanceof EdgeApiError)) throw err;
    throw new UserError(
      "unavailable",
      `I could not look up "${ref.name}" in the zone list. ${describeEdgeError(err)} Or give the zone id: ${example}`,
      { cause: err },
    );
  }
  const exact = directory.zones.filter(isExactly(needle));
  const [only] = exact;
  if (only && exact.length === 1) return only.zone.shieldZoneId;
  if (exact.length > 1) {
    throw new UserError(
      "not_found",
      `"${ref.name}" names ${exact.length} shield zones: ${candidateList(exact, needle)}. Give the zone id: ${example}`,
    );
  }
  const partial = directory.zones.filter(contains(needle));
  if (partial.length > 0) {
    throw new UserError(
      "not_found",
      `No shield zone's domain or pull zone name is exactly "${ref.name}"; ${partial.length === 1 ? "one contains it" : `${partial.length} contain it`}: ${candidateList(partial, needle)}. Give the full domain or the zone id: ${example}`,
    );
  }
  const unshielded = directory.unshielded.find(isExactly(needle));
  if (unshielded) {
    throw new UserError(
      "not_found",
      `"${ref.name}" belongs to pull zone ${unshielded.pullZoneName ?? unshielded.pullZoneId}, which has no shield zone: turn on Shield for it in the bunny.net dashboard first.`,
    );
  }
  const partly = directory.complete ? "" : " (only the first 20,000 zones were searched)";
  const near = nearest(needle, directory.zones.flatMap(namesOf));
  const nearZone = near === undefined ? undefined : directory.zones.find((z) => namesOf(z).includes(near));
  const meant = nearZone ? ` Did you mean ${near} (zone ${nearZone.zone.shieldZoneId})?` : "";
  throw new UserError(
    "not_found",
    `No shield zone has the domain or pull zone name "${ref.name}"${partly}.${meant} Search for it with /edge zones and part of its name, or give the zone id: ${example}`,
  );
}

// ---- domains mentioned in a message ------------------------------------------------------------------

/** Hostnames in a message as Slack sends it: `<https://shop.example.com/x|label>` links and bare domains. */
export function domainsIn(text: string): string[] {
  const found = new Set<string>();
  const add = (host: string) => {
    const h = host.toLowerCase().replace(/\.+$/, "");
    if (/^(?=.{1,253}$)([a-z0-9-]{1,63}\.)+[a-z][a-z0-9-]{0,62}$/.test(h)) found.add(h);
  };
  for (const m of text.matchAll(/<(?:https?:\/\/)?([^/|>:?#\s]+)[^|>]*(?:\|[^>]*)?>/gi)) add(m[1] ?? "");
  const bare = text.replace(/<[^>]*>/g, " ");
  for (const m of bare.matchAll(/(?:https?:\/\/)?((?:[a-z0-9-]+\.)+[a-z][a-z0-9-]+)/gi)) add(m[1] ?? "");
  return [...found].slice(0, 20);
}

export type MentionedZone =
  | { readonly kind: "none_mentioned" }
  | { readonly kind: "no_zone"; readonly domains: readonly string[] }
  | { readonly kind: "one"; readonly domain: string; readonly shieldZoneId: number }
  | { readonly kind: "several"; readonly domains: readonly string[]; readonly zones: readonly NamedZone[] };

/**
 * The shield zone a message is about: the zones whose domain or pull zone name is exactly one of the
 * domains the text mentions (never a partial match, as for typed names).
 */
export async function zoneMentionedIn(deps: Deps, teamId: string, text: string): Promise<MentionedZone> {
  const domains = domainsIn(text);
  if (domains.length === 0) return { kind: "none_mentioned" };
  const { zones } = await zoneDirectory(deps, teamId);
  const hits = new Map<number, { zone: NamedZone; domain: string }>();
  for (const domain of domains)
    for (const zone of zones.filter(isExactly(domain)))
      if (!hits.has(zone.zone.shieldZoneId)) hits.set(zone.zone.shieldZoneId, { zone, domain });
  const [only] = hits.values();
  if (!only) return { kind: "no_zone", domains };
  if (hits.size === 1) return { kind: "one", domain: only.domain, shieldZoneId: only.zone.zone.shieldZoneId };
  return {
    kind: "several",
    domains: [...hits.values()].map((h) => h.domain),
    zones: [...hits.values()].map((h) => h.zone),
  };
}

/** Zones named in a sentence: "shop.example.com (zone 18401), …" */
export function zoneCandidates(zones: readonly NamedZone[]): string {
  return candidateList(zones, "");
}
