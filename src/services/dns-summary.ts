import { z } from "zod";
import type { EdgeClient } from "../edge/client.js";
import {
  DNS_SCAN_STATUS,
  type DnsScan,
  type DnsScanRecord,
  dnsRecordExtras,
  dnsRecordTypeLabel,
} from "../edge/schemas/core.js";
import { isFinished, latestScan, type ScanWaitOptions, waitForScan } from "./dns.js";

/**
 * The data of a scheduled DNS summary: the zone's latest scan (a fresh one when the latest is older
 * than the schedule's period), counts, and the record diff against the schedule's previous summary.
 *
 * Record identity (documented rule):
 * - A record is (type, name, value): type as its label (A, CNAME ...), name lower-cased with the apex
 *   as "@", value trimmed. TTL, proxying and priority/weight/port are attributes, not identity.
 * - Records with the same identity in both scans are unchanged, or *changed* when an attribute differs.
 * - What is left is paired by (type, name): a name whose value moved (a CNAME re-pointed, an A record's
 *   address swapped) is one *changed* record, not an add plus a remove. Pairs are made in value order.
 * - Whatever is still unpaired is *added* (only in the new scan) or *removed* (only in the old one).
 * Duplicates count: two identical records on one side are two records.
 */

/** One record as kept in a schedule's snapshot (short keys: hundreds of records per zone). */
export interface SnapRecord {
  /** Type label: A, AAAA, CNAME ... or "Unknown (11)". */
  t: string;
  /** Name, lower-case, "@" for the apex. */
  n: string;
  /** Value, trimmed. */
  v: string;
  ttl: number | null;
  /** Proxied through the edge. */
  p: boolean;
  /** "prio 10, weight 5, port 443" when present. */
  x?: string;
}

export interface SummarySnapshot {
  v: 1;
  jobId: string | null;
  /** ISO time the summarised scan ran (completed, else started). */
  scannedAt: string | null;
  records: SnapRecord[];
}

const snapRecordSchema = z.object({
  t: z.string(),
  n: z.string(),
  v: z.string(),
  ttl: z.number().nullable(),
  p: z.boolean(),
  x: z.string().optional(),
});
const snapshotSchema = z.object({
  v: z.literal(1),
  jobId: z.string().nullable(),
  scannedAt: z.string().nullable(),
  records: z.array(snapRecordSchema),
});

/** A stored snapshot, or null when there is none or it is not one this version understands. */
export function readSnapshot(stored: unknown): SummarySnapshot | null {
  const r = snapshotSchema.safeParse(stored);
  if (!r.success) return null;
  const records = r.data.records.map((x) => {
    const out: SnapRecord = { t: x.t, n: x.n, v: x.v, ttl: x.ttl, p: x.p };
    if (x.x !== undefined) out.x = x.x;
    return out;
  });
  return { v: 1, jobId: r.data.jobId, scannedAt: r.data.scannedAt, records };
}

export function toSnapRecord(r: DnsScanRecord): SnapRecord {
  const name = (r.name ?? "").trim().toLowerCase().replace(/\.$/, "");
  const extra = dnsRecordExtras(r);
  const out: SnapRecord = {
    t: dnsRecordTypeLabel(r.type),
    n: name === "" ? "@" : name,
    v: (r.value ?? "").trim(),
    ttl: r.ttl ?? null,
    p: r.isProxied,
  };
  if (extra) out.x = extra;
  return out;
}

export const scanTime = (scan: DnsScan): string | null => scan.completedAt ?? scan.createdAt ?? null;

export function toSnapshot(scan: DnsScan): SummarySnapshot {
  return {
    v: 1,
    jobId: scan.jobId ?? null,
    scannedAt: scanTime(scan),
    records: scan.records.map(toSnapRecord),
  };
}

// ---- the diff ---------------------------------------------------------------------------------------

export interface RecordChange {
  before: SnapRecord;
  after: SnapRecord;
}

export interface RecordDiff {
  added: SnapRecord[];
  removed: SnapRecord[];
  changed: RecordChange[];
}

const identity = (r: SnapRecord) => `${r.t}\u0000${r.n}\u0000${r.v}`;
const typeName = (r: SnapRecord) => `${r.t}\u0000${r.n}`;
const sameAttributes = (a: SnapRecord, b: SnapRecord) =>
  a.ttl === b.ttl && a.p === b.p && (a.x ?? "") === (b.x ?? "");
const byIdentity = (a: SnapRecord, b: SnapRecord) => identity(a).localeCompare(identity(b));

function groupBy(records: readonly SnapRecord[], key: (r: SnapRecord) => string): Map<string, SnapRecord[]> {
  const m = new Map<string, SnapRecord[]>();
  for (const r of records) {
    const list = m.get(key(r));
    if (list) list.push(r);
    else m.set(key(r), [r]);
  }
  return m;
}

/** Pure: what changed from `before` to `after` under the identity rule above. Sorted for display. */
export function diffRecords(before: readonly SnapRecord[], after: readonly SnapRecord[]): RecordDiff {
  const changed: RecordChange[] = [];
  const oldLeft: SnapRecord[] = [];
  const newLeft: SnapRecord[] = [];

  // 1. Same identity: unchanged, or changed attributes.
  const oldById = groupBy(before, identity);
  const newById = groupBy(after, identity);
  for (const [id, olds] of oldById) {
    const news = newById.get(id) ?? [];
    const n = Math.min(olds.length, news.length);
    for (let i = 0; i < n; i++)
      if (!sameAttributes(olds[i]!, news[i]!)) changed.push({ before: olds[i]!, after: news[i]! });
    oldLeft.push(...olds.slice(n));
    newLeft.push(...news.slice(n));
  }
  for (const [id, news] of newById) if (!oldById.has(id)) newLeft.push(...news);

  // 2. Same (type, name), different value: a changed value.
  const added: SnapRecord[] = [];
  const removed: SnapRecord[] = [];
  const oldByName = groupBy(oldLeft.sort(byIdentity), typeName);
  const newByName = groupBy(newLeft.sort(byIdentity), typeName);
  for (const [key, olds] of oldByName) {
    const news = newByName.get(key) ?? [];
    const n = Math.min(olds.length, news.length);
    for (let i = 0; i < n; i++) changed.push({ before: olds[i]!, after: news[i]! });
    removed.push(...olds.slice(n));
    added.push(...news.slice(n));
  }
  for (const [key, news] of newByName) if (!oldByName.has(key)) added.push(...news);

  return {
    added: added.sort(byIdentity),
    removed: removed.sort(byIdentity),
    changed: changed.sort((a, b) => byIdentity(a.after, b.after)),
  };
}

// ---- collecting a summary ----------------------------------------------------------------------------

export interface TypeCount {
  type: string;
  count: number;
}

export interface DnsSummary {
  zoneId: number;
  domain: string | null;
  /** The scan summarised, or null when the zone has never been scanned and no scan could be read. */
  scan: DnsScan | null;
  /** A scan was started for this summary because the latest was older than the schedule's period. */
  triggered: boolean;
  /** We waited for a scan that had not finished by the deadline: what is shown is what existed. */
  incomplete: boolean;
  counts: TypeCount[];
  total: number;
  proxied: number;
  /** Null on a schedule's first summary, or when this scan has no records to compare (it failed or runs). */
  diff: RecordDiff | null;
  /** When the summary the diff compares against was scanned. */
  previousScannedAt: string | null;
  /** Counts come from the previous summary because the new scan has no records yet. */
  countsFromPrevious: boolean;
}

export function countRecords(records: readonly SnapRecord[]): { counts: TypeCount[]; proxied: number } {
  const m = new Map<string, number>();
  for (const r of records) m.set(r.t, (m.get(r.t) ?? 0) + 1);
  return {
    counts: [...m].map(([type, count]) => ({ type, count })).sort((a, b) => a.type.localeCompare(b.type)),
    proxied: records.filter((r) => r.p).length,
  };
}

/** Pure: the summary of `scan` against the schedule's previous snapshot. */
export function summarise(
  zoneId: number,
  scan: DnsScan | null,
  previous: SummarySnapshot | null,
  flags: { triggered: boolean; incomplete: boolean },
): { summary: DnsSummary; snapshot: SummarySnapshot | null } {
  const completed = scan?.status === DNS_SCAN_STATUS.completed;
  const current = scan && completed ? toSnapshot(scan) : null;
  const countsFromPrevious = current === null && previous !== null && scan?.status !== DNS_SCAN_STATUS.failed;
  const shown = current?.records ?? (countsFromPrevious ? previous!.records : []);
  const { counts, proxied } = countRecords(shown);
  return {
    summary: {
      zoneId,
      domain: scan?.domain ?? null,
      scan,
      triggered: flags.triggered,
      incomplete: flags.incomplete,
      counts,
      total: shown.length,
      proxied,
      diff: current && previous ? diffRecords(previous.records, current.records) : null,
      previousScannedAt: previous?.scannedAt ?? null,
      countsFromPrevious,
    },
    // Only a completed scan replaces the snapshot: the next diff compares with the last good summary.
    snapshot: current,
  };
}

export interface CollectOptions {
  client: EdgeClient;
  zoneId: number;
  /** The scheduler's clock. */
  now: number;
  /** A latest scan older than this (by when it ran) is replaced by a fresh one first. */
  periodMs: number;
  /** The schedule's stored snapshot (anything; unreadable counts as none). */
  previous: unknown;
  wait: ScanWaitOptions;
  /** Start a scan; lets callers share one trigger between schedules of the same zone. */
  trigger?: (zoneId: number) => Promise<unknown>;
  /** When aborted (shutting down), read the scan once instead of waiting for it. */
  signal?: AbortSignal;
}

function scanAgeMs(scan: DnsScan, now: number): number {
  const t = scan.createdAt ?? scan.completedAt;
  if (!t) return Number.POSITIVE_INFINITY;
  const ms = Date.parse(/[zZ]|[+-]\d\d:?\d\d$/.test(t) ? t : `${t}Z`);
  return Number.isNaN(ms) ? Number.POSITIVE_INFINITY : now - ms;
}

/**
 * Read the latest scan; when it is older than the period (or there is none) start a new one, and wait
 * (poll with backoff, bounded) for it or for one already running. Edge API errors propagate.
 */
export async function collectDnsSummary(
  options: CollectOptions,
): Promise<{ summary: DnsSummary; snapshot: SummarySnapshot | null }> {
  const { client, zoneId } = options;
  const previous = readSnapshot(options.previous);
  let scan = await latestScan(client, zoneId);
  let triggered = false;
  let incomplete = false;
  if (scan === null || scanAgeMs(scan, options.now) > options.periodMs) {
    await (options.trigger ?? ((id: number) => client.triggerDnsScan(id)))(zoneId);
    triggered = true;
  }
  if (triggered || !isFinished(scan)) {
    if (options.signal?.aborted) {
      scan = (await latestScan(client, zoneId)) ?? scan;
      incomplete = !isFinished(scan);
    } else {
      const waited = await waitForScan(client, zoneId, options.wait);
      scan = waited.scan ?? scan;
      incomplete = !waited.finished;
    }
  }
  return summarise(zoneId, scan, previous, { triggered, incomplete });
}
