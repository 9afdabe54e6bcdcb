import type { KnownBlock } from "@slack/types";
import { DNS_SCAN_STATUS, dnsScanStatusLabel } from "../../edge/schemas/core.js";
import type { DnsSummary, RecordChange, SnapRecord } from "../../services/dns-summary.js";
import { actions, context, fields, header, packLines, section } from "./block-kit.js";
import { scanNowButton, scanStatusText } from "./dns.js";
import { LIMITS } from "./limits.js";
import { code, dateToken, type Mrkdwn, mrkdwn, truncate } from "./mrkdwn.js";
import { type Reply, reply } from "./reply.js";

/** At most this many lines per kind of change (added, removed, changed); the rest are counted. */
export const DIFF_LINES_SHOWN = 15;

/** What the footer says about the schedule that posted the summary. */
export interface SummarySchedule {
  id: string;
  /** `daily at 09:00 (Europe/Amsterdam)`. */
  label: string;
}

function recordText(r: SnapRecord): Mrkdwn {
  return mrkdwn`${r.t} ${code(r.n, 60)} → ${truncate(r.v, 120)}`;
}

function attributes(r: SnapRecord): string {
  return [`TTL ${r.ttl ?? "?"}`, r.p ? "proxied" : "not proxied", r.x ?? ""].filter(Boolean).join(", ");
}

function changeText(c: RecordChange): Mrkdwn {
  const parts: string[] = [];
  if (c.before.v !== c.after.v) parts.push(`${truncate(c.before.v, 80)} → ${truncate(c.after.v, 80)}`);
  if (c.before.ttl !== c.after.ttl) parts.push(`TTL ${c.before.ttl ?? "?"} → ${c.after.ttl ?? "?"}`);
  if (c.before.p !== c.after.p) parts.push(c.after.p ? "now proxied" : "no longer proxied");
  if ((c.before.x ?? "") !== (c.after.x ?? ""))
    parts.push(`${c.before.x || "no prio/weight/port"} → ${c.after.x || "no prio/weight/port"}`);
  const value = c.before.v === c.after.v ? ` (${truncate(c.after.v, 60)})` : "";
  return mrkdwn`${c.after.t} ${code(c.after.n, 60)}${value}: ${parts.join("; ")}`;
}

function capped<T>(items: readonly T[], line: (x: T) => Mrkdwn, prefix: string): Mrkdwn[] {
  const lines = items.slice(0, DIFF_LINES_SHOWN).map((x) => mrkdwn`${prefix} ${line(x)}`);
  if (items.length > DIFF_LINES_SHOWN) lines.push(mrkdwn`_…and ${items.length - DIFF_LINES_SHOWN} more._`);
  return lines;
}

function diffBlocks(s: DnsSummary): KnownBlock[] {
  const d = s.diff;
  if (!d) return [];
  const since = s.previousScannedAt ? mrkdwn` (scanned ${dateToken(s.previousScannedAt)})` : "";
  if (d.added.length + d.removed.length + d.changed.length === 0)
    return [section(mrkdwn`*Since the previous summary${since}:* no records added, removed or changed.`)];
  const title = mrkdwn`*Since the previous summary${since}:* ${d.added.length} added · ${d.removed.length} removed · ${d.changed.length} changed`;
  const lines = [
    title,
    ...capped(d.added, (r) => mrkdwn`${recordText(r)} (${attributes(r)})`, ":heavy_plus_sign:"),
    ...capped(d.removed, recordText, ":heavy_minus_sign:"),
    ...capped(d.changed, changeText, ":pencil2:"),
  ];
  return packLines(lines, 6, "changes");
}

/**
 * Pure: the DNS summary message, posted by a schedule or (schedule null) by a Workflow Builder step.
 * Fits Slack's limits whatever the zone's size.
 */
export function dnsSummaryMessage(s: DnsSummary, schedule: SummarySchedule | null): Reply {
  const domain = s.domain ?? `zone ${s.zoneId}`;
  const scan = s.scan;
  const status = scan?.status ?? -1;
  const blocks: KnownBlock[] = [header(`DNS summary · ${truncate(domain, 120)}`)];

  if (!scan) {
    blocks.push(section(`:mag: DNS zone ${s.zoneId} has no scan yet, and none could be read.`));
  } else {
    blocks.push(
      fields([
        `*Zone*\n${truncate(domain, 200)} (${s.zoneId})`,
        `*Scan*\n${scanStatusText(scan.status)}`,
        mrkdwn`*Scanned*\n${dateToken(scan.completedAt ?? scan.createdAt)}${s.triggered ? " (fresh scan)" : ""}`,
        `*Records*\n${s.total} (${s.proxied} proxied)${s.countsFromPrevious ? " · from the previous summary" : ""}`,
      ]),
    );
  }
  if (s.incomplete)
    blocks.push(
      section(
        ":hourglass: The new scan had not finished when this summary was due, so this shows what exists" +
          (s.countsFromPrevious ? " (record counts from the previous summary)." : ".") +
          " Press *Scan now* for a fresh result.",
      ),
    );
  if (scan?.error) blocks.push(section(mrkdwn`:x: *The scan failed:* ${truncate(scan.error, 2000)}`));
  if (s.counts.length > 0) blocks.push(context(s.counts.map((c) => `${c.type} ${c.count}`).join(" · ")));
  else if (status === DNS_SCAN_STATUS.completed) blocks.push(context("The scan found no records."));

  if (s.diff) blocks.push(...diffBlocks(s));
  else if (schedule && status === DNS_SCAN_STATUS.completed && s.previousScannedAt === null)
    blocks.push(context("This is the schedule's first summary: changes show from the next one."));

  blocks.push(actions(scanNowButton(s.zoneId)));
  blocks.push(
    context(
      schedule
        ? `Scheduled ${schedule.label} · id \`${schedule.id}\` · stop with \`/edge schedule remove ${schedule.id}\``
        : "Posted by a workflow step · for a recurring summary with changes since the last one, use `/edge schedule`",
    ),
  );

  const changes = s.diff
    ? ` · ${s.diff.added.length} added, ${s.diff.removed.length} removed, ${s.diff.changed.length} changed`
    : "";
  return reply(
    truncate(
      `DNS summary of ${domain}: ${scan ? dnsScanStatusLabel(scan.status) : "no scan"}, ${s.total} records${changes}`,
      LIMITS.sectionText,
    ),
    blocks.slice(0, LIMITS.messageBlocks),
  );
}

/** Pure: posted instead of a summary when the Edge API could not be read. */
export function dnsSummaryFailedMessage(zoneId: number, sentence: string, schedule: SummarySchedule): Reply {
  return reply(`The scheduled DNS summary of zone ${zoneId} could not be made: ${sentence}`, [
    header(`DNS summary · zone ${zoneId}`),
    section(`:warning: I could not read DNS zone ${zoneId}: ${sentence}`),
    actions(scanNowButton(zoneId)),
    context(
      `Scheduled ${schedule.label} · id \`${schedule.id}\` · stop with \`/edge schedule remove ${schedule.id}\``,
    ),
  ]);
}
