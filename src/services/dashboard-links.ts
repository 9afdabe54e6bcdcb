import type { Deps } from "../deps.js";
import type { App } from "../edge/schemas/mc.js";
import { appList } from "./pickers.js";
import { type NamedZone, zoneDirectory } from "./zone-lookup.js";

/**
 * Links into the bunny.net dashboard that edgeops unfurls. The shapes recognised (host dash.bunny.net,
 * any trailing path, query or fragment):
 *   /cdn/<pullZoneId>/…                     a pull zone: shown as its shield zone
 *   /shield/<shieldZoneId>/…                a shield zone
 *   /shield/zones/<shieldZoneId>/…          a shield zone
 *   /magic-containers/<appId>/…             a Magic Containers application
 *   /magic-containers/apps/<appId>/…        a Magic Containers application
 *   /containers/<appId>/…                   a Magic Containers application
 */
export type DashboardLink =
  | { readonly kind: "pull_zone"; readonly id: number }
  | { readonly kind: "shield_zone"; readonly id: number }
  | { readonly kind: "app"; readonly id: string };

export const DASHBOARD_HOST = "dash.bunny.net";

const SHAPES: readonly { re: RegExp; kind: DashboardLink["kind"] }[] = [
  { re: /^\/cdn\/(\d{1,15})(?:\/|$)/, kind: "pull_zone" },
  { re: /^\/shield\/(?:zones\/)?(\d{1,15})(?:\/|$)/, kind: "shield_zone" },
  { re: /^\/(?:magic-containers(?:\/apps)?|containers)\/([A-Za-z0-9_-]{1,100})(?:\/|$)/, kind: "app" },
];

/** What a dashboard URL points at, or undefined for any other URL (another host, an unknown page). */
export function parseDashboardLink(url: string): DashboardLink | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return undefined;
  }
  if (parsed.protocol !== "https:" && parsed.protocol !== "http:") return undefined;
  if (parsed.hostname.toLowerCase() !== DASHBOARD_HOST) return undefined;
  for (const { re, kind } of SHAPES) {
    const id = re.exec(parsed.pathname)?.[1];
    if (id === undefined) continue;
    if (kind === "app") return { kind, id };
    const n = Number(id);
    if (n >= 1 && Number.isSafeInteger(n)) return { kind, id: n };
  }
  return undefined;
}

export type LinkTarget = { kind: "zone"; zone: NamedZone } | { kind: "app"; app: App };

/**
 * The zone or application a link points at, looked up only in the lists of the workspace's own key:
 * undefined when that key does not see it (another account's zone, a deleted app).
 */
export async function resolveDashboardLink(
  deps: Deps,
  teamId: string,
  link: DashboardLink,
): Promise<LinkTarget | undefined> {
  if (link.kind === "app") {
    const app = (await appList(deps, teamId)).find((a) => a.id === link.id);
    return app ? { kind: "app", app } : undefined;
  }
  const { zones } = await zoneDirectory(deps, teamId);
  const zone =
    link.kind === "shield_zone"
      ? zones.find((z) => z.zone.shieldZoneId === link.id)
      : zones.find((z) => z.zone.pullZoneId === link.id);
  return zone ? { kind: "zone", zone } : undefined;
}
