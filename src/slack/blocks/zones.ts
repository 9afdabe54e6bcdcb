import type { KnownBlock } from "@slack/types";
import type { SignalReading, ZoneSignal } from "../../alerts/detect.js";
import {
  bodyLimitActionLabel,
  ddosExecutionModeLabel,
  ddosSensitivityLabel,
  learningModeEnded,
  planTypeLabel,
  type ShieldZone,
  type ShieldZonePage,
  wafExecutionModeLabel,
} from "../../edge/schemas/shield.js";
import type { ZoneCheck } from "../../services/unusual-zones.js";
import type { NamedZone, UnshieldedPullZone, ZoneSearchResult } from "../../services/zone-lookup.js";
import { ACTIONS } from "../ids.js";
import { skippedText } from "./apps.js";
import { actions, button, context, header, packLines, section } from "./block-kit.js";
import { code, dateToken, type Mrkdwn, type MrkdwnInput, mrkdwn } from "./mrkdwn.js";
import { sparkline } from "./ratelimit.js";
import { type Reply, reply } from "./reply.js";

export interface ZonesPageValue {
  page: number;
  perPage: number;
  p?: boolean;
}

/** Plan, WAF, DDoS and learning mode: "Business · WAF on (Block) · DDoS Medium (Block)". */
function zoneFacts(z: ShieldZone, asOf: number): Mrkdwn {
  const waf = z.wafEnabled ? `WAF on (${wafExecutionModeLabel(z.wafExecutionMode)})` : "WAF off";
  const ddos = `DDoS ${ddosSensitivityLabel(z.ddosShieldSensitivity)} (${ddosExecutionModeLabel(z.ddosExecutionMode)})`;
  const ended = learningModeEnded(z, asOf);
  const learning = ended
    ? mrkdwn` · learning ended ${dateToken(ended)}`
    : z.learningMode
      ? mrkdwn` · learning${z.learningModeUntil ? mrkdwn` until ${dateToken(z.learningModeUntil)}` : ""}`
      : "";
  return mrkdwn`${planTypeLabel(z.planType)} · ${waf} · ${ddos}${learning}`;
}

function limitsText(z: ShieldZone): string {
  return `limits: ${z.rateLimitRulesLimit ?? "?"} rate-limit rules, ${z.customWafRulesLimit ?? "?"} custom rules, body ${bodyLimitActionLabel(z.wafRequestBodyLimitAction)}/${bodyLimitActionLabel(z.wafResponseBodyLimitAction)}`;
}

function zoneLine(z: ShieldZone, asOf: number): Mrkdwn {
  return mrkdwn`*Zone ${z.shieldZoneId}* · pull zone ${z.pullZoneId ?? "–"} · ${zoneFacts(z, asOf)}\n      ${limitsText(z)}`;
}

/**
 * A page of `/edge zones`; `named` (the same zones with their domains and pull zone names) when the
 * names were at hand, else the zones by id.
 */
export function zonesMessage(
  page: ShieldZonePage,
  isPublic: boolean,
  named: readonly NamedZone[] | null,
  asOf: number,
  /** What the watches' detector said of this page's zones now (services/unusual-zones.ts). */
  checks?: readonly ZoneCheck[],
  /** `reading`: zones of this page whose metrics are being read for this answer (not among `checks`). */
  { reading = 0 }: { reading?: number } = {},
): Reply {
  const blocks: KnownBlock[] = [header("Shield zones")];
  const pages = page.totalPages ? ` of ${page.totalPages}` : "";
  const total = page.totalCount !== undefined ? ` · ${page.totalCount} zones` : "";
  blocks.push(context(`Page ${page.page}${pages}${total}`));
  if (page.skipped) blocks.push(context(skippedText(page.skipped, "shield zone", "a shieldZoneId")));
  // First: what looks on fire matters more than the list.
  if (checks) blocks.push(...checkBlocks(checks, page, reading));
  const lines = named
    ? named.map((z) => mrkdwn`${namedZoneLine(z, asOf)}\n      ${limitsText(z.zone)}`)
    : page.items.map((z) => zoneLine(z, asOf));
  if (page.items.length === 0) blocks.push(context("No shield zones on this page."));
  else blocks.push(...packLines(lines, 40, "zones"));
  const buttons = [];
  const base = { perPage: page.perPage, ...(isPublic ? { p: true } : {}) };
  if (page.page > 1) {
    buttons.push(
      button("Previous page", ACTIONS.zonesPreviousPage, JSON.stringify({ ...base, page: page.page - 1 })),
    );
  }
  if (page.nextPage !== null) {
    buttons.push(
      button("Next page", ACTIONS.zonesNextPage, JSON.stringify({ ...base, page: page.nextPage })),
    );
  }
  if (buttons.length > 0) blocks.push(actions(...buttons));
  return reply(`Shield zones, page ${page.page}`, blocks);
}

const SIGNAL_WORDS: Record<ZoneSignal, string> = {
  ddos: "DDoS",
  waf: "WAF",
  rateLimit: "rate-limit",
  bot: "bot-detection",
};

const count = (v: number) => Math.round(v).toLocaleString("en-US");

/** One zone that looks under attack now: what it counts against its usual, where to look, how to be alerted. */
export function unusualZoneLine(c: Extract<ZoneCheck, { state: "unusual" }>): Mrkdwn {
  return mrkdwn`:rotating_light: *Zone ${c.zoneId} looks unusual now:* ${slotWords(c.reading)} ${seriesText(c.series)}. Look closer with ${code(`/edge incident ${c.zoneId}`)}; ${c.watched ? "a zone watch already alerts on it" : mrkdwn`be alerted with ${code(`/edge watch zone ${c.zoneId}`)}`}.`;
}

/** "1,234 DDoS events in its last whole 2-minute slot, usually about 40". */
export function slotWords(r: SignalReading): string {
  return `${count(r.count)} ${SIGNAL_WORDS[r.signal]} events in its last whole 2-minute slot, usually about ${count(r.mean)}`;
}

/** The signal's last hour as a sparkline, per 2-minute slot (nothing for fewer than two slots). */
export function seriesText(series: readonly number[]): Mrkdwn | string {
  return series.length < 2 ? "" : mrkdwn`${code(sparkline(series))}`;
}

/**
 * The zones on this page that look under attack now, with where to look closer and how to be alerted; what
 * could not be checked, and that other pages were not.
 */
function checkBlocks(checks: readonly ZoneCheck[], page: ShieldZonePage, reading: number): KnownBlock[] {
  const lines = checks.flatMap((c) => (c.state === "unusual" ? [unusualZoneLine(c)] : []));
  const unknown = checks.filter((c) => c.state === "unknown");
  const notes: string[] = [
    reading > 0
      ? `:hourglass_flowing_sand: Checking ${reading} zone${reading === 1 ? "'s" : "s'"} traffic against ${reading === 1 ? "its" : "their"} last hour…; this message is replaced when ${reading === 1 ? "it is" : "they are"} in.`
      : lines.length === 0
        ? `No zone on this page looks unusual in its last whole 2-minute slot, judged against its last hour as a zone watch would.`
        : "Judged against each zone's last hour, as a zone watch would (normal sensitivity).",
  ];
  if (unknown.length > 0)
    notes.push(
      `Not known for ${unknown
        .slice(0, 5)
        .map((c) => `zone ${c.zoneId} (${c.why.replace(/\.$/, "")})`)
        .join("; ")}${unknown.length > 5 ? ` and ${unknown.length - 5} more` : ""}.`,
    );
  const checked = checks.length + reading;
  if (checked < page.items.length) notes.push(`Only the first ${checked} zones of this page were checked.`);
  if (page.nextPage !== null || page.page > 1) notes.push("Zones on other pages were not checked.");
  return [...(lines.length > 0 ? packLines(lines, 3, "unusual zones") : []), context(notes.join(" "))];
}

/** The site's own hostnames (up to three), else the system hostname. */
function hostnamesText(hostnames: readonly string[]): string {
  if (hostnames.length === 0) return "no hostname";
  const shown = hostnames.slice(0, 3).join(", ");
  return hostnames.length > 3 ? `${shown} +${hostnames.length - 3} more` : shown;
}

function pullZoneText(id: number | null, name: string | null): string {
  if (id === null) return "no pull zone";
  return name === null ? `pull zone ${id}` : `pull zone ${name} (${id})`;
}

function namedZoneLine({ zone, pullZoneName, hostnames }: NamedZone, asOf: number): Mrkdwn {
  return mrkdwn`*Zone ${zone.shieldZoneId}* · ${hostnamesText(hostnames)}\n      ${pullZoneText(zone.pullZoneId, pullZoneName)} · ${zoneFacts(zone, asOf)}`;
}

function unshieldedText(zones: readonly UnshieldedPullZone[]): MrkdwnInput {
  const listed = zones
    .slice(0, 10)
    .map((p) => `${pullZoneText(p.pullZoneId, p.pullZoneName)}: ${hostnamesText(p.hostnames)}`);
  const more = zones.length > listed.length ? `; and ${zones.length - listed.length} more` : "";
  return `Pull zones that match but have no shield zone: ${listed.join("; ")}${more}.`;
}

/** `/edge zones <text>`: the shield zones whose domain or pull zone name contains the text. */
export function zoneSearchMessage(result: ZoneSearchResult, asOf: number): Reply {
  const query = code(result.text);
  const blocks: KnownBlock[] = [header(`Shield zones matching "${result.text}"`)];
  const count = (v: number) => v.toLocaleString("en-US");
  const searched = `${count(result.totalZones)} zone${result.totalZones === 1 ? "" : "s"} searched${result.complete ? "" : " (only the first 20,000)"}`;
  if (result.matches.length === 0) {
    blocks.push(
      context(
        mrkdwn`No shield zone's domain or pull zone name contains ${query} (${searched}). Try part of the name, or page through them all with ${code("/edge zones")}.`,
      ),
    );
  } else {
    blocks.push(context(mrkdwn`${count(result.matches.length)} of ${searched} match ${query}`));
    // Two blocks are left for the unshielded note and Share in channel.
    blocks.push(
      ...packLines(
        result.matches.map((z) => namedZoneLine(z, asOf)),
        45,
        "zones (narrow the search to see them)",
      ),
    );
  }
  if (result.unshieldedMatches.length > 0) blocks.push(context(unshieldedText(result.unshieldedMatches)));
  const n = result.matches.length;
  return reply(`${n} shield zone${n === 1 ? "" : "s"} matching "${result.text}"`, blocks);
}

/** A dashboard link's unfurl: the zone's names and its Shield settings, and the commands that go further. */
export function zoneStatusCard(
  { zone, pullZoneName, hostnames }: NamedZone,
  asOf: number,
): { blocks: KnownBlock[] } {
  return {
    blocks: [
      section(
        mrkdwn`:shield: *${hostnames[0] ?? pullZoneName ?? `Zone ${zone.shieldZoneId}`}* · shield zone ${zone.shieldZoneId} · ${pullZoneText(zone.pullZoneId, pullZoneName)}\n${zoneFacts(zone, asOf)}`,
      ),
      context(
        mrkdwn`${code(`/edge incident ${zone.shieldZoneId}`)} for the attack picture · ${code(`/edge bots ${zone.shieldZoneId}`)} for bot detection`,
      ),
    ],
  };
}
