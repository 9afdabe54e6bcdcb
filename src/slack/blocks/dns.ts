import type { KnownBlock } from "@slack/types";
import {
  DNS_SCAN_STATUS,
  type DnsScan,
  type DnsScanRecord,
  dnsRecordExtras,
  dnsRecordTypeLabel,
  dnsScanStatusLabel,
} from "../../edge/schemas/core.js";
import { ACTIONS } from "../ids.js";
import {
  actions,
  button,
  code,
  context,
  dateToken,
  fields,
  header,
  joinMrkdwn,
  type Mrkdwn,
  mrkdwn,
  packLines,
  type Reply,
  reply,
  section,
  truncate,
} from "./common.js";

export const DNS_RECORDS_SHOWN = 40;

const STATUS_EMOJI: Record<number, string> = {
  [DNS_SCAN_STATUS.pending]: ":hourglass:",
  [DNS_SCAN_STATUS.inProgress]: ":hourglass_flowing_sand:",
  [DNS_SCAN_STATUS.completed]: ":white_check_mark:",
  [DNS_SCAN_STATUS.failed]: ":x:",
};

/** A scan's status as an emoji and its label, e.g. ":white_check_mark: Completed". */
export function scanStatusText(status: number | null | undefined): string {
  return `${STATUS_EMOJI[status ?? -1] ?? ":grey_question:"} ${dnsScanStatusLabel(status)}`;
}

export const scanNowButton = (zoneId: number) =>
  button("Scan now", ACTIONS.dnsScanNow, String(zoneId), "primary");

function recordLine(r: DnsScanRecord): Mrkdwn {
  const extra = dnsRecordExtras(r);
  const proxied = r.isProxied ? " · :cloud: proxied" : "";
  return mrkdwn`${code(r.name || "@", 80)} → ${truncate(r.value ?? "", 200)}${extra ? ` (${extra})` : ""} · TTL ${r.ttl ?? "?"}${proxied}`;
}

/** Records grouped by type (A, AAAA, CNAME ...), the first DNS_RECORDS_SHOWN shown, then "N more". */
export function recordLines(records: readonly DnsScanRecord[]): Mrkdwn[] {
  const groups = new Map<string, DnsScanRecord[]>();
  for (const r of records) {
    const type = dnsRecordTypeLabel(r.type);
    groups.set(type, [...(groups.get(type) ?? []), r]);
  }
  const lines: Mrkdwn[] = [];
  let shown = 0;
  for (const [type, group] of [...groups].sort(([a], [b]) => a.localeCompare(b))) {
    if (shown >= DNS_RECORDS_SHOWN) break;
    const take = group.slice(0, DNS_RECORDS_SHOWN - shown);
    shown += take.length;
    lines.push(mrkdwn`*${type}* (${group.length})\n${joinMrkdwn(take.map(recordLine), "\n")}`);
  }
  if (records.length > shown) lines.push(mrkdwn`_…and ${records.length - shown} more records._`);
  return lines;
}

export function countsByType(records: readonly DnsScanRecord[]): string {
  const counts = new Map<string, number>();
  for (const r of records)
    counts.set(dnsRecordTypeLabel(r.type), (counts.get(dnsRecordTypeLabel(r.type)) ?? 0) + 1);
  return [...counts]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([t, c]) => `${t} ${c}`)
    .join(" · ");
}

export function dnsMessage(zoneId: number, scan: DnsScan): Reply {
  const status = scan.status ?? -1;
  const blocks: KnownBlock[] = [
    header(`DNS scan · ${truncate(scan.domain ?? `zone ${zoneId}`, 120)}`),
    fields([
      `*Status*\n${scanStatusText(scan.status)}`,
      `*Records*\n${scan.records.length} (${scan.records.filter((r) => r.isProxied).length} proxied)`,
      mrkdwn`*Started*\n${dateToken(scan.createdAt)}`,
      mrkdwn`*Completed*\n${dateToken(scan.completedAt)}`,
    ]),
  ];
  if (scan.error) blocks.push(section(mrkdwn`:x: *The scan failed:* ${scan.error}`));
  if (scan.records.length > 0) {
    blocks.push(context(countsByType(scan.records)));
    blocks.push(...packLines(recordLines(scan.records), 40, "groups"));
  } else if (status === DNS_SCAN_STATUS.completed) {
    blocks.push(context("The scan found no records."));
  }
  blocks.push(actions(scanNowButton(zoneId)));
  return reply(`DNS scan of ${scan.domain ?? `zone ${zoneId}`}: ${dnsScanStatusLabel(scan.status)}`, blocks);
}

export function noScanMessage(zoneId: number): Reply {
  return reply(`DNS zone ${zoneId} has not been scanned yet`, [
    section(`:mag: DNS zone ${zoneId} has not been scanned yet. Start one now:`),
    actions(scanNowButton(zoneId)),
  ]);
}

export function scanStartedMessage(zoneId: number): Reply {
  return reply(`Scanning DNS zone ${zoneId}…`, [
    section(
      `:hourglass_flowing_sand: Scanning DNS zone ${zoneId}… this message updates when the scan finishes.`,
    ),
  ]);
}
