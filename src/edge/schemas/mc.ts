import { z } from "zod";
import { looseStringEnum, nullish, rowsOf, stringLabel } from "./common.js";

/**
 * Magic Containers (served under /mc). Shapes from magic-containers-api-v1.0.0.json:
 * ListApplicationsResponse {items: AppListItem[], meta: {totalItems}, cursor: string|null}.
 * None of AppListItem's fields is marked required; we insist on `id` only, because an app without an
 * id cannot be addressed. Enums changed case between releases (`Active` → `active`): compared
 * case-insensitively and given the spec's spelling.
 */

export const APP_STATUSES = ["unknown", "active", "progressing", "inactive", "failing", "suspended"] as const;
export type AppStatus = (typeof APP_STATUSES)[number];

export const ENDPOINT_TYPES = ["cdn", "anycast", "publicIp"] as const;
export type EndpointType = (typeof ENDPOINT_TYPES)[number];

export const APP_STATUS_LABELS: Readonly<Record<AppStatus, string>> = {
  unknown: "Unknown",
  active: "Active",
  progressing: "Progressing",
  inactive: "Inactive",
  failing: "Failing",
  suspended: "Suspended",
};

export const ENDPOINT_TYPE_LABELS: Readonly<Record<EndpointType, string>> = {
  cdn: "CDN",
  anycast: "Anycast",
  publicIp: "Public IP",
};

export const appStatusLabel = (s: string | null | undefined): string => stringLabel(APP_STATUS_LABELS, s);
export const endpointTypeLabel = (t: string | null | undefined): string =>
  stringLabel(ENDPOINT_TYPE_LABELS, t);

export const displayEndpointSchema = z.looseObject({
  id: z.string(),
  address: z.string(),
  type: looseStringEnum(ENDPOINT_TYPES),
});

export const appListItemSchema = z
  .looseObject({
    id: z.string().min(1),
    name: nullish(z.string()),
    description: nullish(z.string()),
    displayEndpoint: nullish(displayEndpointSchema),
    status: nullish(looseStringEnum(APP_STATUSES)),
  })
  .transform((a) => ({
    id: a.id,
    name: a.name ?? a.id,
    description: a.description,
    displayEndpoint: a.displayEndpoint
      ? { id: a.displayEndpoint.id, address: a.displayEndpoint.address, type: a.displayEndpoint.type }
      : null,
    /** Spec spelling (`active`) for known values; an unlisted status is kept as sent. */
    status: a.status ?? "unknown",
  }));

export const listApplicationsResponseSchema = z
  .looseObject({
    items: nullish(rowsOf(appListItemSchema, ["id"])),
    meta: nullish(z.looseObject({ totalItems: nullish(z.number().int()) })),
    cursor: nullish(z.string()),
  })
  .transform((r) => ({
    items: r.items?.rows ?? [],
    /** Apps without an id (optional in the document), left out. */
    skipped: r.items?.skipped ?? 0,
    nextCursor: r.cursor && r.cursor !== "" ? r.cursor : null,
    totalItems: r.meta?.totalItems ?? null,
  }));

export type App = z.output<typeof appListItemSchema>;
/** A page of apps; pass `nextCursor` back as `cursor` for the next page (null on the last page). */
export type AppPage = z.output<typeof listApplicationsResponseSchema>;
