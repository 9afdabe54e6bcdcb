import { z } from "zod";
import { type IntLabels, intLabel, nullish, optIntEnum, rowsOf } from "./common.js";

/**
 * Core (PascalCase JSON): DNS record scans. Shapes from core-api-v1.0.0.json
 * (DnsZoneRecordScanJobResponse, DnsZoneRecordScanTriggerResponse, DnsZoneDiscoveredRecordModel).
 */

export const DNS_SCAN_STATUS_LABELS: IntLabels = {
  0: "Pending",
  1: "In progress",
  2: "Completed",
  3: "Failed",
};
export const DNS_SCAN_STATUS = { pending: 0, inProgress: 1, completed: 2, failed: 3 } as const;

/** DnsZoneDiscoveredRecordType (gaps at 5..7 and 11 are deliberate). */
export const DNS_RECORD_TYPE_LABELS: IntLabels = {
  0: "A",
  1: "AAAA",
  2: "CNAME",
  3: "TXT",
  4: "MX",
  8: "SRV",
  9: "CAA",
  10: "PTR",
  12: "NS",
  13: "SVCB",
  14: "HTTPS",
  15: "TLSA",
  16: "SOA",
};

export const dnsScanStatusLabel = (n: number | null | undefined) => intLabel(DNS_SCAN_STATUS_LABELS, n);
export const dnsRecordTypeLabel = (n: number | null | undefined) => intLabel(DNS_RECORD_TYPE_LABELS, n);

export const dnsScanRecordSchema = z
  .looseObject({
    Name: nullish(z.string()),
    Type: optIntEnum(),
    Ttl: nullish(z.number().int()),
    Value: nullish(z.string()),
    Priority: nullish(z.number().int()),
    Weight: nullish(z.number().int()),
    Port: nullish(z.number().int()),
    IsProxied: nullish(z.boolean()),
  })
  .transform((r) => ({
    name: r.Name,
    type: r.Type,
    ttl: r.Ttl,
    value: r.Value,
    priority: r.Priority,
    weight: r.Weight,
    port: r.Port,
    isProxied: r.IsProxied ?? false,
  }));

export const dnsScanSchema = z
  .looseObject({
    JobId: nullish(z.string()),
    ZoneId: nullish(z.number().int()),
    Domain: nullish(z.string()),
    AccountId: nullish(z.string()),
    Status: optIntEnum(),
    CreatedAt: nullish(z.string()),
    CompletedAt: nullish(z.string()),
    Records: nullish(z.array(dnsScanRecordSchema)),
    Error: nullish(z.string()),
  })
  .transform((s) => ({
    jobId: s.JobId,
    zoneId: s.ZoneId,
    domain: s.Domain,
    status: s.Status,
    createdAt: s.CreatedAt,
    completedAt: s.CompletedAt,
    records: s.Records ?? [],
    error: s.Error,
  }));

export const dnsScanTriggerSchema = z
  .looseObject({ JobId: nullish(z.string()), Status: optIntEnum() })
  .transform((t) => ({ jobId: t.JobId, status: t.Status }));

export type DnsScanRecord = z.output<typeof dnsScanRecordSchema>;
export type DnsScan = z.output<typeof dnsScanSchema>;
export type DnsScanTrigger = z.output<typeof dnsScanTriggerSchema>;

/** "prio 10, weight 5, port 443": the parts of an MX/SRV-like record besides its value. */
export function dnsRecordExtras(r: Pick<DnsScanRecord, "priority" | "weight" | "port">): string {
  return [
    r.priority != null ? `prio ${r.priority}` : "",
    r.weight != null ? `weight ${r.weight}` : "",
    r.port != null ? `port ${r.port}` : "",
  ]
    .filter(Boolean)
    .join(", ");
}

/**
 * Pull zones (GET /pullzone, PullZoneModel and HostnameModel): only the id, the name and the hostnames
 * are read; the model's other 160-odd fields are tolerated and dropped.
 */
export const pullZoneSchema = z
  // A plain object, not a loose one: the output is the same (the transform keeps three fields), but a
  // loose object copies the model's 160-odd other fields of every pull zone first.
  .object({
    Id: z.number().int(),
    Name: nullish(z.string()),
    Hostnames: nullish(
      z.array(z.object({ Value: nullish(z.string()), IsSystemHostname: nullish(z.boolean()) })),
    ),
  })
  .transform((p) => {
    const named = (p.Hostnames ?? []).filter((h) => h.Value !== null && h.Value !== "");
    const values = (system: boolean) =>
      named.filter((h) => (h.IsSystemHostname ?? false) === system).map((h) => h.Value as string);
    // The site's own domains first; bunny.net's *.b-cdn.net system hostname last.
    return { id: p.Id, name: p.Name, hostnames: [...values(false), ...values(true)] };
  });

/**
 * A Core list page (PaginationListModelOf…): `{Items, CurrentPage, TotalItems, HasMoreItems}`. Rows
 * without an Id (optional in the document) are left out and counted in `skipped`.
 */
function corePageSchema<S extends z.ZodType>(row: S) {
  return z
    .looseObject({
      Items: nullish(rowsOf(row, ["Id"])),
      CurrentPage: nullish(z.number().int()),
      TotalItems: nullish(z.number().int()),
      HasMoreItems: nullish(z.boolean()),
    })
    .transform((r) => ({
      items: r.Items?.rows ?? [],
      skipped: r.Items?.skipped ?? 0,
      currentPage: r.CurrentPage,
      totalItems: r.TotalItems,
      hasMoreItems: r.HasMoreItems ?? false,
    }));
}

/** GET /pullzone: `page` 0 answers a plain array of every pull zone, `page` >= 1 a Core list page. */
export const pullZoneListSchema = z.union([
  rowsOf(pullZoneSchema, ["Id"]).transform((r) => ({
    items: r.rows,
    skipped: r.skipped,
    currentPage: null as number | null,
    totalItems: r.rows.length as number | null,
    hasMoreItems: false,
  })),
  corePageSchema(pullZoneSchema),
]);

export type PullZone = z.output<typeof pullZoneSchema>;

/** Core DnsZoneModel, only what a picker shows: its id and domain. */
export const dnsZoneSchema = z
  .looseObject({ Id: z.number().int(), Domain: nullish(z.string()) })
  .transform((z) => ({ id: z.Id, domain: z.Domain }));

/** GET /dnszone: PaginationListModelOfDnsZoneModel. */
export const dnsZoneListSchema = corePageSchema(dnsZoneSchema);

export type DnsZoneSummary = z.output<typeof dnsZoneSchema>;
