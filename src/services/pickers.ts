import type { Deps } from "../deps.js";
import type { EdgeClient } from "../edge/client.js";
import type { DnsZoneSummary } from "../edge/schemas/core.js";
import { APP_STATUS_LABELS, type App, type AppStatus } from "../edge/schemas/mc.js";
import { UserError, usage } from "../errors.js";
import { nearest } from "../suggest.js";
import { appPages, MAX_PAGES_TO_FIND } from "./apps.js";
import type { EdgeAccess } from "./edge-access.js";
import {
  allPages,
  cachedForKey,
  type Freshness,
  type KeyedList,
  loadedFor,
  warmForKey,
} from "./key-cache.js";
import {
  MAX_PAGES,
  type NamedZone,
  PAGE_SIZE,
  ZONE_DIRECTORY,
  ZONE_DIRECTORY_TTL_MS,
  zoneDirectory,
} from "./zone-lookup.js";

/**
 * What a picker searches as the user types: the workspace key's shield zones, DNS zones, applications
 * or pull zones, by name. Every list comes from the per-key cache (src/services/key-cache.ts), so a
 * suggestion never waits for the Edge API once the list is loaded, and never shows another key's data.
 */

export const PICKER_SOURCES = ["shield", "dns", "app", "pull"] as const;
export type PickerSource = (typeof PICKER_SOURCES)[number];

/** What each source is called in a sentence. */
export const PICKER_NOUNS: Readonly<Record<PickerSource, string>> = {
  shield: "shield zone",
  dns: "DNS zone",
  app: "application",
  pull: "pull zone",
};

export interface PickerChoice {
  /** What the command receives: the id. */
  readonly value: string;
  /** What the user reads: a name and the id. */
  readonly label: string;
  /** An option group, where the source has them (applications by status, pull zones by Shield). */
  readonly group?: string;
}

export interface PickerMatches {
  readonly choices: readonly PickerChoice[];
  /** Matches before any limit: more than `choices.length` means the user should type more. */
  readonly total: number;
}

const DNS_ZONES: KeyedList<readonly DnsZoneSummary[]> = {
  name: "dns-zones",
  ttlMs: ZONE_DIRECTORY_TTL_MS,
  load: async (client: EdgeClient) =>
    (await allPages((page) => client.listDnsZones({ page, perPage: PAGE_SIZE }), MAX_PAGES)).items,
};

const APPS: KeyedList<readonly App[]> = {
  name: "apps",
  ttlMs: ZONE_DIRECTORY_TTL_MS,
  async load(client: EdgeClient) {
    const apps: App[] = [];
    for await (const page of appPages(client, MAX_PAGES_TO_FIND)) apps.push(...page.items);
    return apps;
  },
};

/**
 * Whether the workspace's key sees DNS zone `id` (its list, at most a minute old); undefined when the
 * list is cut short and the zone may be beyond it.
 */
export async function dnsZoneKnown(deps: Deps, teamId: string, id: number): Promise<boolean | undefined> {
  const zones = await cachedForKey(deps, teamId, DNS_ZONES);
  if (zones.some((z) => z.id === id)) return true;
  return zones.length >= PAGE_SIZE * MAX_PAGES ? undefined : false;
}

/**
 * The DNS zone a domain names, from the workspace's list: an exact domain (any case, no trailing dot)
 * resolves; otherwise the zones whose domain contains it are listed, or the nearest domain is suggested
 * (a slip of a letter or two), or how to pick one is said.
 */
export async function resolveDnsZoneByDomain(
  deps: Deps,
  teamId: string,
  domain: string,
  example: string,
): Promise<number> {
  const wanted = domain.toLowerCase().replace(/\.+$/, "");
  const zones = await cachedForKey(deps, teamId, DNS_ZONES);
  const exact = zones.filter((z) => z.domain?.toLowerCase().replace(/\.+$/, "") === wanted);
  if (exact.length === 1 && exact[0]) return exact[0].id;
  const candidates = exact.length > 1 ? exact : zones.filter((z) => z.domain?.toLowerCase().includes(wanted));
  const listed = candidates.slice(0, 10).map((z) => `${z.domain} (${z.id})`);
  const more = candidates.length > listed.length ? ` and ${candidates.length - listed.length} more` : "";
  if (exact.length > 1)
    throw usage(
      `"${domain}" names ${exact.length} DNS zones: ${listed.join(", ")}. Give the zone id: ${example}`,
    );
  if (candidates.length > 0)
    throw usage(
      `No DNS zone's domain is exactly "${domain}"; ${candidates.length === 1 ? "one contains it" : `${candidates.length} contain it`}: ${listed.join(", ")}${more}. Give the full domain or the zone id: ${example}`,
    );
  const domains = zones.flatMap((z) => (z.domain ? [z.domain.toLowerCase()] : []));
  const near = nearest(wanted, domains);
  const nearZone = near === undefined ? undefined : zones.find((z) => z.domain?.toLowerCase() === near);
  throw new UserError(
    "not_found",
    `No DNS zone has the domain "${domain}" in this account.${nearZone ? ` Did you mean ${nearZone.domain} (${nearZone.id})?` : ""} Type /edge dns alone to pick one of your DNS zones, or give its id: ${example}`,
  );
}

/**
 * Pull zone `id` as the workspace's key sees it (its name and hostnames), false when the key sees no
 * such pull zone, undefined when the list is cut short and it may be beyond it.
 */
export async function pullZoneKnown(
  deps: Deps,
  teamId: string,
  id: number,
): Promise<{ name: string | null; hostnames: readonly string[] } | false | undefined> {
  const directory = await zoneDirectory(deps, teamId);
  const shielded = directory.zones.find((z) => z.zone.pullZoneId === id);
  if (shielded) return { name: shielded.pullZoneName, hostnames: shielded.hostnames };
  const plain = directory.unshielded.find((p) => p.pullZoneId === id);
  if (plain) return { name: plain.pullZoneName, hostnames: plain.hostnames };
  return directory.complete ? false : undefined;
}

/** The applications' list if the per-key cache holds a fresh one for the key (no Edge call), else undefined. */
export function appListIfLoaded(deps: Deps, keyId: EdgeAccess["keyId"]): readonly App[] | undefined {
  return loadedFor(deps, keyId, APPS);
}

/** Every application the workspace's key sees (the first 10,000), from the per-key cache. */
export function appList(deps: Deps, teamId: string, freshness: Freshness = "fresh"): Promise<readonly App[]> {
  return cachedForKey(deps, teamId, APPS, freshness);
}

function shieldChoice(z: NamedZone): PickerChoice & { names: string[] } {
  const names = [...z.hostnames, ...(z.pullZoneName ? [z.pullZoneName] : [])];
  const id = z.zone.shieldZoneId;
  return { value: String(id), label: `${names[0] ?? "(no domain)"} · zone ${id}`, names };
}

/** Failing and deploying first: those are the ones people restart. */
const APP_GROUP_ORDER: readonly AppStatus[] = [
  "failing",
  "progressing",
  "active",
  "inactive",
  "suspended",
  "unknown",
];

type Choice = PickerChoice & { names: string[] };

/**
 * A loaded list's choices, built once per list and source: the cached list is the same object until it
 * is reloaded, and every keystroke in a picker searches it again. `keys`: the names and id, lower case.
 */
const builtChoices = new WeakMap<object, Partial<Record<PickerSource, (Choice & { keys: string[] })[]>>>();

function memoChoices(
  list: object,
  source: PickerSource,
  build: () => Choice[],
): (Choice & { keys: string[] })[] {
  let bySource = builtChoices.get(list);
  if (!bySource) {
    bySource = {};
    builtChoices.set(list, bySource);
  }
  bySource[source] ??= build().map((c) => ({
    ...c,
    keys: [...c.names.map((n) => n.toLowerCase()), c.value.toLowerCase()],
  }));
  return bySource[source];
}

async function choicesOf(
  deps: Deps,
  teamId: string,
  source: PickerSource,
  freshness: Freshness,
): Promise<(Choice & { keys: string[] })[]> {
  switch (source) {
    case "shield": {
      const directory = await zoneDirectory(deps, teamId, freshness);
      return memoChoices(directory, source, () => directory.zones.map(shieldChoice));
    }
    case "pull": {
      const directory = await zoneDirectory(deps, teamId, freshness);
      return memoChoices(directory, source, () => pullChoices(directory));
    }
    case "dns": {
      const zones = await cachedForKey(deps, teamId, DNS_ZONES, freshness);
      return memoChoices(zones, source, () =>
        zones.map((z) => ({
          value: String(z.id),
          label: `${z.domain ?? "(no domain)"} · DNS zone ${z.id}`,
          names: z.domain ? [z.domain] : [],
        })),
      );
    }
    case "app": {
      const apps = await cachedForKey(deps, teamId, APPS, freshness);
      return memoChoices(apps, source, () => appChoices(apps));
    }
  }
}

function pullChoices(directory: Awaited<ReturnType<typeof zoneDirectory>>): Choice[] {
  const shielded = directory.zones.flatMap((z) =>
    z.zone.pullZoneId === null
      ? []
      : [{ id: z.zone.pullZoneId, name: z.pullZoneName, hostnames: z.hostnames }],
  );
  const plain = directory.unshielded.map((p) => ({
    id: p.pullZoneId,
    name: p.pullZoneName,
    hostnames: p.hostnames,
  }));
  const choice =
    (group: string) => (p: { id: number; name: string | null; hostnames: readonly string[] }) => {
      const names = [...(p.name ? [p.name] : []), ...p.hostnames];
      return {
        value: String(p.id),
        label: `${names[0] ?? "(no name)"} · pull zone ${p.id}`,
        group,
        names,
      };
    };
  return [...shielded.map(choice("With Shield")), ...plain.map(choice("Without Shield"))];
}

function appChoices(apps: readonly App[]): Choice[] {
  return [...apps]
    .sort(
      (a, b) =>
        rank(APP_GROUP_ORDER, a.status) - rank(APP_GROUP_ORDER, b.status) || a.name.localeCompare(b.name),
    )
    .map((a) => ({
      value: a.id,
      label: a.name === a.id ? a.id : `${a.name} · ${a.id}`,
      group: APP_STATUS_LABELS[a.status as AppStatus] ?? a.status,
      names: [a.name],
    }));
}

const rank = (order: readonly string[], s: string) => {
  const i = order.indexOf(s);
  return i === -1 ? order.length : i;
};

/**
 * The workspace's `source` entries whose name or id contains `text` (any case), those starting with it
 * first, at most `limit`.
 */
export async function searchPicker(
  deps: Deps,
  teamId: string,
  source: PickerSource,
  text: string,
  limit: number,
  freshness: Freshness = "suggest",
): Promise<PickerMatches> {
  const needle = text.trim().toLowerCase();
  const all = await choicesOf(deps, teamId, source, freshness);
  const scored = all.flatMap((c) => {
    if (needle === "") return [{ c, score: 1 }];
    if (c.keys.some((n) => n.startsWith(needle))) return [{ c, score: 0 }];
    if (c.keys.some((n) => n.includes(needle))) return [{ c, score: 1 }];
    return [];
  });
  scored.sort((a, b) => a.score - b.score);
  const choices = scored.slice(0, limit).map(({ c }) => ({
    value: c.value,
    label: c.label,
    ...(c.group !== undefined ? { group: c.group } : {}),
  }));
  return { choices, total: scored.length };
}

/** Start loading a source's list for the workspace's key (a picker is about to be shown). */
export function warmPicker(deps: Deps, teamId: string, source: PickerSource): void {
  warmForKey<unknown>(
    deps,
    teamId,
    source === "shield" || source === "pull" ? ZONE_DIRECTORY : source === "dns" ? DNS_ZONES : APPS,
  );
}
