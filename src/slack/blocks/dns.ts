import type { KnownBlock } from "@slack/types";
import {
  DNS_SCAN_STATUS,
  type DnsScan,
  type DnsScanRecord,
  dnsRecordExtras,
  dnsRecordTypeLabel,
  dnsScanStatusLabel,
} from "../../edge/schemas/core.js";
import { recordsByType } from "../../services/dns.js";
import { ACTIONS } from "../ids.js";
import { actions, button, context, fields, header, section } from "./block-kit.js";
import { LIMITS } from "./limits.js";
import { code, dateToken, type Mrkdwn, mrkdwn, packMrkdwn, truncate } from "./mrkdwn.js";
import { type Reply, reply } from "./reply.js";

/** Records a page of one type shows at most, for reading (fewer where long records fill its sections). */
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

/** Which records a DNS answer shows: one record type, one page of it. */
export interface DnsView {
  type: string;
  page: number;
}

/** What a DNS type or page button carries: the zone, the type, the page, and whether the answer is public. */
export interface DnsPageValue {
  z: number;
  t: string;
  pg: number;
  p?: boolean;
}

/** Sections a page's records fill at most (each within Slack's 3000 characters): the message stays far under 50 blocks. */
const SECTIONS_PER_PAGE = 3;
const SECTION_ROOM = LIMITS.sectionText;

/**
 * The lines cut into pages of whole lines: at most DNS_RECORDS_SHOWN lines in at most SECTIONS_PER_PAGE
 * sections, packed as packMrkdwn packs them, so every record is on exactly one page and none is cut (a
 * record's line is far shorter than a section). The pages depend on the records only, so page N read
 * later (a button) starts where page N-1 ended.
 */
function recordPages(lines: readonly Mrkdwn[]): Mrkdwn[][] {
  const pages: Mrkdwn[][] = [];
  let page: Mrkdwn[] = [];
  let sections = 0;
  let used = 0;
  for (const line of lines) {
    const length = String(line).length;
    let fits = sections > 0 && used + 1 + length <= SECTION_ROOM;
    if (page.length === DNS_RECORDS_SHOWN || (!fits && sections === SECTIONS_PER_PAGE)) {
      pages.push(page);
      page = [];
      sections = 0;
      fits = false;
    }
    if (fits) used += 1 + length;
    else {
      sections++;
      used = length;
    }
    page.push(line);
  }
  pages.push(page);
  return pages;
}

/**
 * One record type's page, with a button for every type (so each type, TXT too, is reachable) and
 * Previous / Next within the type.
 */
function typePage(zoneId: number, records: readonly DnsScanRecord[], view: DnsView, isPublic: boolean) {
  const groups = recordsByType(records);
  const [type, group] = groups.find(([t]) => t === view.type) ?? groups[0]!;
  const pageList = recordPages(group.map(recordLine));
  const pages = pageList.length;
  const page = Math.min(Math.max(1, view.page), pages);
  const value = (t: string, pg: number) =>
    JSON.stringify({ z: zoneId, t, pg, ...(isPublic ? { p: true } : {}) } satisfies DnsPageValue);
  const first = pageList.slice(0, page - 1).reduce((n, p) => n + p.length, 0) + 1;
  const last = first + pageList[page - 1]!.length - 1;
  const blocks: KnownBlock[] = [
    section(mrkdwn`*${type}* (${group.length})`),
    ...packMrkdwn(pageList[page - 1]!, SECTION_ROOM).map((p) => section(p.text)),
    // Where this page is in the type's records, beside the buttons that move through them.
    context(
      mrkdwn`${type} records ${first === last ? `${first}` : `${first}–${last}`} of ${group.length} · page ${page} of ${pages}`,
    ),
  ];
  let n = 0;
  const id = () => `${ACTIONS.dnsPage}.${n++}`;
  const paging = [
    ...(page > 1 ? [button("Previous page", id(), value(type, page - 1))] : []),
    ...(page < pages ? [button("Next page", id(), value(type, page + 1))] : []),
  ];
  if (paging.length > 0) blocks.push(actions(...paging));
  if (groups.length > 1) {
    const others = groups.filter(([t]) => t !== type);
    // An actions block holds at most 25 elements.
    for (let i = 0; i < others.length; i += 25)
      blocks.push(
        actions(
          ...others
            .slice(i, i + 25)
            .map(([t, g]) => button(`${truncate(t, 40)} (${g.length})`, id(), value(t, 1))),
        ),
      );
  }
  return blocks;
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

export function dnsMessage(
  zoneId: number,
  scan: DnsScan,
  view: DnsView = { type: "", page: 1 },
  isPublic = false,
): Reply {
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
    blocks.push(...typePage(zoneId, scan.records, view, isPublic));
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
