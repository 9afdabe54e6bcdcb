import type { Clock } from "../clock.js";
import type { EdgeClient } from "../edge/client.js";
import { EdgeApiError } from "../edge/errors.js";
import {
  DNS_SCAN_STATUS,
  type DnsScan,
  type DnsScanRecord,
  dnsRecordTypeLabel,
} from "../edge/schemas/core.js";

/** The latest scan, or null when the zone has never been scanned (the API's 404). */
export async function latestScan(client: EdgeClient, zoneId: number): Promise<DnsScan | null> {
  try {
    return await client.getLatestDnsScan(zoneId);
  } catch (err) {
    if (err instanceof EdgeApiError && err.kind === "not_found") return null;
    throw err;
  }
}

export const isFinished = (scan: DnsScan | null) =>
  scan !== null && (scan.status === DNS_SCAN_STATUS.completed || scan.status === DNS_SCAN_STATUS.failed);

export interface ScanWaitOptions {
  /** Give up waiting after this long and return what exists. */
  maxWaitMs: number;
  firstDelayMs?: number;
  /** The scan runs on the Edge API's time: waits sleep on this clock and count its elapsed time. */
  clock: Pick<Clock, "sleep" | "elapsed">;
  /** Stop waiting at once (the replica stops): answer with the scan read last. */
  signal?: AbortSignal;
}

/**
 * Poll a just-triggered scan with backoff until it completes or fails, within maxWaitMs.
 * Returns the last scan read and whether it finished.
 */
export async function waitForScan(
  client: EdgeClient,
  zoneId: number,
  options: ScanWaitOptions,
): Promise<{ scan: DnsScan | null; finished: boolean }> {
  const { clock, signal } = options;
  const deadline = clock.elapsed() + options.maxWaitMs;
  let delay = options.firstDelayMs ?? 500;
  let scan: DnsScan | null = null;
  while (true) {
    const remaining = deadline - clock.elapsed();
    if (remaining <= 0 || signal?.aborted) return { scan, finished: false };
    const slept = await clock.sleep(Math.min(delay, remaining), signal).then(
      () => true,
      () => false,
    );
    if (!slept) return { scan, finished: false };
    scan = await latestScan(client, zoneId);
    if (isFinished(scan)) return { scan, finished: true };
    delay = Math.min(delay * 2, 5000);
  }
}

/** The records grouped by type label (A, AAAA, CNAME ...), types in alphabetical order. */
export function recordsByType(records: readonly DnsScanRecord[]): [string, DnsScanRecord[]][] {
  const groups = new Map<string, DnsScanRecord[]>();
  for (const r of records) {
    const type = dnsRecordTypeLabel(r.type);
    groups.set(type, [...(groups.get(type) ?? []), r]);
  }
  return [...groups].sort(([a], [b]) => a.localeCompare(b));
}
