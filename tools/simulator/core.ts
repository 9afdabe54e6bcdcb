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

/** Pull zones the simulator knows: those of its shield zones. */
const knownPullZone = (ctx: HandlerContext, id: number) =>
  ctx.state.shieldZones.some((z) => z.pullZoneId === id);

/** POST /pullzone/{id}/purgeCache body null | {"CacheTag": "..."} -> 204; 404 (empty) for an unknown pull zone. */
export function purgePullZone(ctx: HandlerContext): SimResponse {
  const id = intParam(ctx.params[0]);
  if (id === undefined || !knownPullZone(ctx, id)) return empty(404);
  const body = ctx.body ?? null;
  if (body !== null && !isPlainObject(body))
    return badRequest(null, "The request body must be a JSON object.");
  const unknown = body === null ? [] : Object.keys(body).filter((k) => k !== "CacheTag");
  if (unknown.length > 0) return badRequest(unknown[0] ?? null, `Unknown field ${unknown.join(", ")}.`);
  const tag = body === null ? null : (body.CacheTag ?? null);
  if (tag !== null && typeof tag !== "string") return badRequest("CacheTag", "CacheTag must be a string.");
  ctx.state.purges.push({ kind: "pullZone", pullZoneId: id, cacheTag: tag, at: ctx.now });
  return empty(204);
}

/** POST /purge?url=... -> 200 (no body). */
export function purgeUrl(ctx: HandlerContext): SimResponse {
  const url = ctx.query.url;
  if (!url || !/^https?:\/\/[^/\s]+/i.test(url))
    return badRequest("url", "The url parameter must be a full URL.");
  ctx.state.purges.push({ kind: "url", url, at: ctx.now });
  return { status: 200 };
}

const invalidQuery = (Field: string, Message: string): SimResponse =>
  json(400, { ErrorKey: "validation.invalid_query", Field, Message });

/**
 * GET /pullzone?page&perPage&search&includeCertificate -> PullZoneModel[] when `page` is 0 or absent,
 * else `{Items, CurrentPage, TotalItems, HasMoreItems}`. `search` keeps pull zones whose name or a
 * hostname contains it; certificates are filled only when asked for.
 */
export function listPullZones(ctx: HandlerContext): SimResponse {
  const whole = (name: string, raw: string | undefined, def: number, min: number, max: number) => {
    if (raw === undefined || raw === "") return def;
    const n = /^-?\d{1,10}$/.test(raw) ? Number(raw) : Number.NaN;
    return Number.isInteger(n) && n >= min && n <= max
      ? n
      : invalidQuery(name, `${name} must be a whole number from ${min} to ${max}.`);
  };
  const page = whole("page", ctx.query.page, 0, 0, 2_147_483_647);
  if (typeof page !== "number") return page;
  const perPage = whole("perPage", ctx.query.perPage, 1000, 5, 1000);
  if (typeof perPage !== "number") return perPage;
  const certificates = (ctx.query.includeCertificate ?? "").toLowerCase() === "true";
  const search = (ctx.query.search ?? "").toLowerCase();
  const zones = ctx.state.pullZones
    .filter(
      (z) =>
        search === "" ||
        z.Name.toLowerCase().includes(search) ||
        z.Hostnames.some((h) => h.Value.toLowerCase().includes(search)),
    )
    .map((z) => {
      const copy = structuredClone(z);
      if (certificates)
        for (const h of copy.Hostnames.filter((x) => x.HasCertificate)) {
          h.Certificate = Buffer.from(`certificate of ${h.Value}`).toString("base64url");
          h.CertificateKey = Buffer.from(`private key of ${h.Value}`).toString("base64url");
        }
      return copy;
    });
  if (page === 0) return json(200, zones);
  return json(200, {
    Items: zones.slice((page - 1) * perPage, page * perPage),
    CurrentPage: page,
    TotalItems: zones.length,
    HasMoreItems: page * perPage < zones.length,
  });
}

/** GET /dnszone -> PaginationListModelOfDnsZoneModel (page from 1, perPage 5..1000, optional `search`). */
export function listDnsZones(ctx: HandlerContext): SimResponse {
  const page = intParam(ctx.query.page ?? "1");
  const perPage = intParam(ctx.query.perPage ?? "1000");
  if (page === undefined || page < 1) return invalidQuery("page", "page must be a whole number from 1.");
  if (perPage === undefined || perPage < 5 || perPage > 1000)
    return invalidQuery("perPage", "perPage must be a whole number from 5 to 1000.");
  const search = (ctx.query.search ?? "").toLowerCase();
  const zones = [...ctx.state.dnsZones.values()]
    .filter((z) => search === "" || z.domain.includes(search))
    .sort((a, b) => a.id - b.id);
  const now = new Date(ctx.now).toISOString();
  return json(200, {
    Items: zones.slice((page - 1) * perPage, page * perPage).map((z) => ({
      Id: z.id,
      Domain: z.domain,
      Records: [],
      DateModified: now,
      DateCreated: now,
      NameserversDetected: true,
      CustomNameserversEnabled: false,
      Nameserver1: "kiki.bunny.net",
      Nameserver2: "coco.bunny.net",
      SoaEmail: "hostmaster@bunny.net",
      NameserversNextCheck: now,
      LoggingEnabled: false,
      LoggingIPAnonymizationEnabled: true,
      LogAnonymizationType: 0,
      DnsSecEnabled: false,
      CertificateKeyType: 0,
    })),
    CurrentPage: page,
    TotalItems: zones.length,
    HasMoreItems: page * perPage < zones.length,
  });
}
