/** Core family (PascalCase): `{ErrorKey, Field, Message}` on 400, empty bodies on 401/404. */
import { randomUUID } from "node:crypto";
import { empty, type HandlerContext, intParam, isPlainObject, json, type SimResponse } from "./http.js";
import { createRng, type DnsScanEntry, type DnsScanJob, recordsForDomain } from "./seed.js";

const STATUS_IN_PROGRESS = 1;
const STATUS_COMPLETED = 2;
const STATUS_FAILED = 3;

const badRequest = (Field: string | null, Message: string): SimResponse =>
  json(400, { ErrorKey: "dnszone.scan.invalid_request", Field, Message });

/** Applies a due completion (scans finish lazily, on read). */
function settle(entry: DnsScanEntry, now: number): DnsScanJob {
  if (entry.finishesAt !== undefined && entry.outcome !== undefined && now >= entry.finishesAt) {
    entry.job.Status = entry.outcome.status;
    entry.job.Records = entry.outcome.records;
    entry.job.Error = entry.outcome.error;
    entry.job.CompletedAt = new Date(entry.finishesAt).toISOString();
    delete entry.finishesAt;
    delete entry.outcome;
  }
  return entry.job;
}

/** GET /dnszone/{zoneId}/records/scan -> DnsZoneRecordScanJobResponse, 404 (empty) when none. */
export function getLatestScan(ctx: HandlerContext): SimResponse {
  const zoneId = intParam(ctx.params[0]);
  const entry = zoneId === undefined ? undefined : ctx.state.dnsScans.get(zoneId);
  if (entry === undefined) return empty(404);
  return json(200, structuredClone(settle(entry, ctx.now)));
}

/** POST /dnszone/records/scan body {"ZoneId": n} or {"Domain": "..."} -> { JobId, Status }. */
export function triggerScan(ctx: HandlerContext): SimResponse {
  const body = ctx.body;
  if (!isPlainObject(body)) return badRequest(null, "The request body must be a JSON object.");
  const unknown = Object.keys(body).filter((k) => k !== "ZoneId" && k !== "Domain");
  if (unknown.length > 0) return badRequest(unknown[0] ?? null, `Unknown field ${unknown.join(", ")}.`);
  const zoneIdRaw = body.ZoneId ?? undefined;
  const domainRaw = body.Domain ?? undefined;
  if (zoneIdRaw !== undefined && domainRaw !== undefined) {
    return badRequest("ZoneId", "Either ZoneId or Domain must be provided, but not both.");
  }
  if (zoneIdRaw === undefined && domainRaw === undefined) {
    return badRequest("ZoneId", "Either ZoneId or Domain must be provided.");
  }
  if (zoneIdRaw !== undefined && (typeof zoneIdRaw !== "number" || !Number.isSafeInteger(zoneIdRaw))) {
    return badRequest("ZoneId", "ZoneId must be an integer.");
  }
  if (
    domainRaw !== undefined &&
    (typeof domainRaw !== "string" || !/^[a-z0-9.-]+\.[a-z]{2,}$/i.test(domainRaw))
  ) {
    return badRequest("Domain", "Domain must be a valid domain name.");
  }

  const state = ctx.state;
  const zone =
    typeof zoneIdRaw === "number"
      ? state.dnsZones.get(zoneIdRaw)
      : [...state.dnsZones.values()].find((z) => z.domain === String(domainRaw).toLowerCase());
  if (typeof zoneIdRaw === "number" && zone === undefined) return empty(404);

  const domain = zone?.domain ?? String(domainRaw).toLowerCase();
  const job: DnsScanJob = {
    JobId: randomUUID(),
    ZoneId: zone?.id ?? null,
    Domain: domain,
    AccountId: state.accountId,
    Status: STATUS_IN_PROGRESS,
    CreatedAt: new Date(ctx.now).toISOString(),
    CompletedAt: null,
    Records: null,
    Error: null,
  };
  const records = zone?.records ?? recordsForDomain(createRng(domain.length * 7919), domain);
  const failed = zone?.scanError;
  const entry: DnsScanEntry = {
    job,
    finishesAt: ctx.now + ctx.scanDurationMs,
    outcome:
      failed === undefined
        ? { status: STATUS_COMPLETED, records: records.map((r) => ({ ...r })), error: null }
        : { status: STATUS_FAILED, records: null, error: failed },
  };
  if (zone !== undefined) state.dnsScans.set(zone.id, entry);
  else state.domainScans.set(domain, entry);
  return json(200, { JobId: job.JobId, Status: job.Status });
}

/**
 * GET /pullzone?page&perPage&search -> PullZoneModel[] (page 0, the default: every match as a plain array) or, for
 * page >= 1, `{ Items, CurrentPage, TotalItems, HasMoreItems }`. `search` matches the name or a hostname.
 */
export function listPullZones(ctx: HandlerContext): SimResponse {
  const { page: rawPage, perPage: rawPerPage, search } = ctx.query;
  const page = rawPage === undefined || rawPage === "" ? 0 : /^\d{1,9}$/.test(rawPage) ? Number(rawPage) : -1;
  if (page < 0) {
    return json(400, {
      ErrorKey: "pullzone.invalid_page",
      Field: "page",
      Message: "page must be 0 or more.",
    });
  }
  const perPage =
    rawPerPage === undefined || rawPerPage === ""
      ? 1000
      : /^\d{1,9}$/.test(rawPerPage)
        ? Number(rawPerPage)
        : 0;
  if (perPage < 5 || perPage > 1000) {
    return json(400, {
      ErrorKey: "pullzone.invalid_per_page",
      Field: "perPage",
      Message: "perPage must be between 5 and 1000.",
    });
  }
  const needle = (search ?? "").trim().toLowerCase();
  const matches = ctx.state.pullZones.filter(
    (pz) =>
      needle === "" ||
      (pz.Name ?? "").toLowerCase().includes(needle) ||
      (pz.Hostnames ?? []).some((h) => (h.Value ?? "").toLowerCase().includes(needle)),
  );
  if (page === 0) return json(200, structuredClone(matches));
  const items = matches.slice((page - 1) * perPage, page * perPage);
  return json(200, {
    Items: structuredClone(items),
    CurrentPage: page,
    TotalItems: matches.length,
    HasMoreItems: page * perPage < matches.length,
  });
}
