import type { Button, KnownBlock } from "@slack/types";
import { type AccessBlockParams, accessBlockKind } from "../../changes/kinds/access-block.js";
import type { App } from "../../edge/schemas/mc.js";
import {
  botDetectionExecutionModeLabel,
  ddosExecutionModeLabel,
  ddosSensitivityLabel,
  learningModeEnded,
  planTypeLabel,
  type TriggeredRule,
  wafExecutionModeLabel,
} from "../../edge/schemas/shield.js";
import { ENTRY_TYPE_WORDS } from "../../services/access-entries.js";
import type { EntryState } from "../../services/access-lists.js";
import {
  botDetectionOn,
  CARD_TOP,
  type Change,
  type IncidentListPage,
  type IncidentListSection,
  type IncidentPicture,
  type IncidentRange,
  type IncidentWindow,
  LIST_PAGE_SIZE,
  type Offender,
  type OffenderDimension,
  type OffenderTop,
  offenderEntry,
  type RateLimitInWindow,
  type Section,
  TRAFFIC_METRIC_LABELS,
  type TrafficSection,
  type ZoneSection,
} from "../../services/incident.js";
import { ACTIONS } from "../ids.js";
import { type ChangeButtonValue, durationWords } from "./approvals.js";
import { skippedText, statusLook } from "./apps.js";
import {
  actions,
  button,
  confirmDialog,
  context,
  divider,
  fields,
  header,
  packLines,
  section,
} from "./block-kit.js";
import {
  code as codeSpan,
  dateToken,
  joinMrkdwn,
  type Mrkdwn,
  type MrkdwnInput,
  mrkdwn,
  plainText,
  truncate,
} from "./mrkdwn.js";
import { sparkline } from "./ratelimit.js";
import { type Reply, reply, WITHOUT_PICTURE } from "./reply.js";
import { wafReviewButtons } from "./waf-review.js";

/** The incident card of one shield zone, and the paged "see all" lists of its sections. */

export interface RefreshValue {
  z: number;
  w: IncidentWindow;
  p?: boolean;
  /** The chart file the card shows, deleted once a refresh replaced it. */
  f?: string;
}

/** An uploaded chart the card shows instead of its text sparklines. */
export interface CardChart {
  fileId: string;
  altText: string;
}

export interface ListValue {
  z: number;
  w: IncidentWindow;
  /** The end of the card's window, Unix ms. */
  t: number;
  s: IncidentListSection;
  /** 1-based page. */
  pg: number;
}

export interface WafRecommendationValue {
  z: number;
  r: string;
}

const n = (v: number) => v.toLocaleString("en-US");

/** External text as inline code: escaped, on one line. */
function code(s: string, max = 80): Mrkdwn {
  const flat = s.replace(/[`\r\n\t]+/g, " ").trim();
  return codeSpan(flat === "" ? "(empty)" : flat, max);
}

const warn = (sentence: string) => mrkdwn`:warning: ${sentence}`;

/** A section's title line with, when it failed, its reason on the next line. */
function failed(title: Mrkdwn, s: { error: string }): KnownBlock {
  return section(mrkdwn`${title}\n${warn(s.error)}`);
}

/** A WAF rule id `/edge waf` accepts as one word. */
const COMMAND_RULE_ID = /^[\w.:-]{1,100}$/;

// ---- the card -------------------------------------------------------------------------------------

function zoneBlock(zoneId: number, s: Section<ZoneSection>, asOf: number): KnownBlock {
  const title = mrkdwn`*Zone* · shield zone ${zoneId}`;
  if ("error" in s) return failed(title, s);
  const z = s.ok.zone;
  const site =
    s.ok.hostnames.length > 0
      ? ` · ${s.ok.hostnames
          .slice(0, 2)
          .map((h) => truncate(h, 80))
          .join(", ")}`
      : "";
  const pull =
    z.pullZoneId === null
      ? ""
      : ` · pull zone ${s.ok.pullZoneName ? `${truncate(s.ok.pullZoneName, 80)} (${z.pullZoneId})` : z.pullZoneId}`;
  const waf = z.wafEnabled ? `WAF on (${wafExecutionModeLabel(z.wafExecutionMode)})` : "WAF off";
  const ddos = `DDoS ${ddosSensitivityLabel(z.ddosShieldSensitivity)} (${ddosExecutionModeLabel(z.ddosExecutionMode)})`;
  const ended = learningModeEnded(z, asOf);
  const learning = ended
    ? mrkdwn`learning mode off (ended ${dateToken(ended)})`
    : z.learningMode
      ? mrkdwn`learning mode on${z.learningModeUntil ? mrkdwn` until ${dateToken(z.learningModeUntil)}` : ""}`
      : "learning mode off";
  const bd = s.ok.botDetection;
  const bots =
    "error" in bd
      ? `Bot detection: ${bd.error}`
      : botDetectionOn(bd.ok)
        ? `Bot detection on (${botDetectionExecutionModeLabel(bd.ok.executionMode)})`
        : "Bot detection off";
  return section(
    mrkdwn`${title}${site}${pull} · ${planTypeLabel(z.planType)} plan\n${waf} · ${ddos} · ${learning}\n${bots}`,
  );
}

export function changeText(c: Change): string {
  switch (c.kind) {
    case "unknown":
      return "–";
    case "same":
      return "= same";
    case "new":
      return "▲ new";
    case "up":
      // Past ten times as many, a percentage is a number nobody reads ("▲ 268,350%"): say how many times.
      return c.percent >= 1000 ? `▲ ×${n(Math.floor(1 + c.percent / 100))}` : `▲ ${n(c.percent)}%`;
    case "down":
      return `▼ ${n(c.percent)}%`;
  }
}

function trafficBlock(range: IncidentRange, s: Section<TrafficSection>, charted: boolean): KnownBlock {
  const span = durationWords(range.metricsTo - range.metricsFrom);
  const title = mrkdwn`*Traffic and threats* · ${span} in whole ${durationWords(range.bucketMs)} slots to ${dateToken(range.metricsTo)} (the slot in progress is left out), against the ${span} before`;
  if ("error" in s) return failed(title, s);
  const rows = s.ok.rows.map((r) => {
    const label = TRAFFIC_METRIC_LABELS[r.metric].padEnd(14);
    // With the chart above, the sparkline would say the same thing again, less well.
    const line = charted ? "" : `  ${sparkline(r.series)}`;
    return `${label}${n(r.count).padStart(12)}${line}  ${changeText(r.change)}`;
  });
  const lines: (string | Mrkdwn)[] = [title, mrkdwn`\`\`\`${rows.join("\n")}\`\`\``];
  const req = s.ok.requests;
  if ("error" in req) lines.push(`Requests: ${req.error}`);
  else {
    const limit = req.ok.cleanLimit ? ` (clean-request limit ${n(req.ok.cleanLimit)})` : "";
    const billable =
      req.ok.billableThisMonth === null
        ? "billable this month unknown (the Edge API did not say)"
        : `${n(req.ok.billableThisMonth)} billable this month`;
    lines.push(`Requests: ${billable}${limit}`);
  }
  if (s.ok.previousError) lines.push(mrkdwn`_Change unknown: ${s.ok.previousError}_`);
  if (s.ok.unreadable) lines.push(mrkdwn`:warning: ${s.ok.unreadable}`);
  return section(joinMrkdwn(lines, "\n"));
}

const DIMENSION_TITLES: Record<OffenderDimension, { title: string; all: string }> = {
  ip: { title: "IPs", all: "All IPs" },
  asn: { title: "ASNs", all: "All ASNs" },
  country: { title: "Countries", all: "All countries" },
  ja4: { title: "JA4 fingerprints", all: "All JA4s" },
};

/** The action edgeops' own lists already take on this offender, if any. */
function mitigatedAs(p: Pick<IncidentPicture, "mitigated"> | undefined, o: Offender, dim: OffenderDimension) {
  const entry = offenderEntry(o.value, dim);
  return entry ? p?.mitigated.get(`${entry.type}:${entry.value}`) : undefined;
}

const PENDING_WORDS: Record<EntryState, string> = {
  block: "block",
  challenge: "challenge",
  none: "unblock",
};

/** The change to this offender already waiting for approval, if any. */
function pendingAs(
  p: Pick<IncidentPicture, "pendingAccess"> | undefined,
  o: Offender,
  dim: OffenderDimension,
) {
  const entry = offenderEntry(o.value, dim);
  return entry ? p?.pendingAccess.get(`${entry.type}:${entry.value}`) : undefined;
}

function offenderLine(
  o: Offender,
  dimension: OffenderDimension,
  p?: Pick<IncidentPicture, "mitigated" | "pendingAccess">,
): Mrkdwn {
  const mitigated = mitigatedAs(p, o, dimension);
  const pending = pendingAs(p, o, dimension);
  const action = `${o.action ? ` · ${o.action}` : ""}${mitigated ? ` · ${mitigated === "block" ? "blocked" : "challenged"} by edgeops` : ""}${pending ? ` · :hourglass_flowing_sand: ${PENDING_WORDS[pending]} awaiting approval` : ""}`;
  const where =
    dimension === "ip"
      ? [o.asn, o.country].filter((x): x is string => x !== null).map((x) => truncate(x, 40))
      : [];
  return mrkdwn`${code(o.value, 60)} ${n(o.count)}${action}${where.length > 0 ? ` · ${where.join(" ")}` : ""}`;
}

function offenderField(
  dimension: OffenderDimension,
  s: Section<OffenderTop>,
  p: Pick<IncidentPicture, "mitigated" | "pendingAccess">,
): Mrkdwn {
  const title = mrkdwn`*${DIMENSION_TITLES[dimension].title}*`;
  if ("error" in s) return mrkdwn`${title}\n${warn(s.error)}`;
  if (s.ok.offenders.length === 0) return mrkdwn`${title}\nNone in the window.`;
  const lines = s.ok.offenders.slice(0, CARD_TOP).map((o) => offenderLine(o, dimension, p));
  const of = s.ok.readGroups === undefined ? "" : ` · top of the first ${n(s.ok.readGroups)} groups`;
  const skipped = s.ok.skippedGroups ? ` · ${n(s.ok.skippedGroups)} without a count left out` : "";
  const all = s.ok.total === null ? "" : ` · ${n(s.ok.total)} in all`;
  return mrkdwn`${title}${all}${of}${skipped}\n${joinMrkdwn(lines, "\n")}`;
}

function listValue(p: IncidentPicture, s: IncidentListSection): string {
  const v: ListValue = { z: p.zoneId, w: p.range.window, t: p.range.to, s, pg: 1 };
  return JSON.stringify(v);
}

const seeAllId = (s: IncidentListSection) => `${ACTIONS.incidentSeeAll}.${s}`;

/**
 * A Block button for each top offender edgeops can block: a generic change (ChangeButtonValue, the
 * Confirm flow and the channel's policy), behind a confirmation dialog. A value that is not a valid IP,
 * ASN, country code or JA4 (as the API may send) gets no button.
 */
function blockButtons(
  picture: Pick<IncidentPicture, "zoneId" | "mitigated">,
  dim: OffenderDimension,
  offenders: readonly Offender[],
  newId: () => string,
): Button[] {
  return offenders.flatMap((o, i) => {
    const entry = offenderEntry(o.value, dim);
    if (!entry) return [];
    // Already in edgeops' block list: the button lifts it instead (the same kind, state none).
    const lift = picture.mitigated.get(`${entry.type}:${entry.value}`) === "block";
    const p: AccessBlockParams = {
      shieldZoneId: picture.zoneId,
      ...entry,
      state: lift ? "none" : "block",
    };
    const value: ChangeButtonValue = { r: newId(), k: accessBlockKind.name, p };
    const verb = lift ? "Unblock" : "Block";
    const b = button(
      `${verb} ${entry.value}`,
      `${ACTIONS.changeConfirm}.${i}`,
      JSON.stringify(value),
      lift ? "primary" : "danger",
    );
    b.confirm = confirmDialog(
      `${verb} this ${ENTRY_TYPE_WORDS[entry.type].one}?`,
      lift
        ? mrkdwn`*${accessBlockKind.describe(p)}*: it is taken out of edgeops' block list. This channel's approval policy applies.`
        : mrkdwn`*${accessBlockKind.describe(p)}*: its requests are refused, through edgeops' own access list. This channel's approval policy applies.`,
      verb,
      lift ? "primary" : "danger",
    );
    return [b];
  });
}

function offenderBlocks(p: IncidentPicture, newId: () => string): KnownBlock[] {
  const title = mrkdwn`*Top offenders* · event log over the same whole slots, ${dateToken(p.range.eventLogFrom)} to ${dateToken(p.range.eventLogTo)}`;
  const s = p.offenders;
  if ("error" in s) return [failed(title, s)];
  const dims = Object.entries(s.ok.byDimension) as [OffenderDimension, Section<OffenderTop>][];
  const more: Button[] = dims
    .filter(
      ([, d]) => "ok" in d && (d.ok.total === null || d.ok.total > Math.min(CARD_TOP, d.ok.offenders.length)),
    )
    .map(([dim]) => button(DIMENSION_TITLES[dim].all, seeAllId(dim), listValue(p, dim)));
  // One row of Block buttons per dimension (at most CARD_TOP each, well within an actions block's 25).
  const blockRows = dims
    .map(([dim, d]) => ("ok" in d ? blockButtons(p, dim, d.ok.offenders.slice(0, CARD_TOP), newId) : []))
    .filter((row) => row.length > 0)
    .map((row) => actions(...row));
  return [
    section(title),
    fields(dims.map(([dim, d]) => offenderField(dim, d, p))),
    ...blockRows,
    ...(more.length > 0 ? [actions(...more)] : []),
  ];
}

function ruleText(r: TriggeredRule, withUrl: boolean): Mrkdwn {
  const id = code(r.ruleId ?? "(no id)", 60);
  const description = r.description ? ` · ${truncate(r.description.replace(/\s+/g, " "), 200)}` : "";
  const top = r.topUrls[0];
  const url = withUrl && top ? mrkdwn`\nMost targeted: ${code(top.url, 120)} (${n(top.hits)})` : "";
  return mrkdwn`${id} · ${n(r.triggeredRequests)} requests${description}${url}`;
}

function wafBlocks(p: IncidentPicture, newRequestId: () => string): KnownBlock[] {
  // The review endpoint takes no dates and answers none (shield API, GET /shield/waf/rules/review-triggered):
  // its counts are its own, which can be larger than the window's WAF count.
  const title = mrkdwn`*Triggered WAF rules* · the WAF review's own counts, not this window's (the Edge API gives no period for them)`;
  const s = p.waf;
  if ("error" in s) return [failed(title, s)];
  const { rules, total } = s.ok;
  const seeAll =
    rules.length > CARD_TOP
      ? button(`All ${n(rules.length)} rules`, seeAllId("waf"), listValue(p, "waf"))
      : undefined;
  const blocks: KnownBlock[] = [section(mrkdwn`${title} · ${n(total)} triggered`, seeAll)];
  if (rules.length === 0) blocks.push(context("No WAF rule was triggered."));
  for (const r of rules.slice(0, CARD_TOP)) {
    const value: WafRecommendationValue | undefined =
      r.ruleId && COMMAND_RULE_ID.test(r.ruleId) ? { z: p.zoneId, r: r.ruleId } : undefined;
    blocks.push(
      section(
        ruleText(r, true),
        value
          ? button("AI recommendation", ACTIONS.incidentWafRecommendation, JSON.stringify(value))
          : undefined,
      ),
    );
    // Ignore / Log only / Disable rule: changes through the approval flow, each behind a confirm dialog.
    if (value) blocks.push(actions(...wafReviewButtons(p.zoneId, value.r, newRequestId)));
  }
  return blocks;
}

function rateLimitLine(r: RateLimitInWindow): Mrkdwn {
  const b = r.breaches;
  const basis = r.basis === "overview" ? mrkdwn` _(overall counters)_` : "";
  const name = r.name === undefined ? "" : mrkdwn` · ${r.name}`;
  return mrkdwn`Rate limit ${r.rateLimitId}${name} · ${n(b.total)} breaches (${n(b.blocked)} blocked · ${n(b.challenged)} challenged · ${n(b.logged)} logged)${basis}`;
}

function rateLimitBlock(p: IncidentPicture): KnownBlock {
  const title = mrkdwn`*Rate limits* · most breaches, by the daily counters of the days the window touches`;
  const s = p.rateLimits;
  if ("error" in s) return failed(title, s);
  const { rules, skipped } = s.ok;
  const seeAll =
    rules.length > CARD_TOP
      ? button(`All ${n(rules.length)} rate limits`, seeAllId("ratelimits"), listValue(p, "ratelimits"))
      : undefined;
  const lines: MrkdwnInput[] =
    rules.length === 0 ? ["No rate limit was breached."] : rules.slice(0, CARD_TOP).map(rateLimitLine);
  if (skipped > 0) lines.push(`_${skippedText(skipped, "rate limit", "a ratelimitId")}_`);
  return section(joinMrkdwn([title, ...lines], "\n"), seeAll);
}

function appLine(app: App): Mrkdwn {
  const look = statusLook(app.status);
  const endpoint = app.displayEndpoint ? mrkdwn` · ${code(app.displayEndpoint.address, 100)}` : "";
  return mrkdwn`${look.emoji} *${truncate(app.name, 100)}* ${look.label}${endpoint}`;
}

function appsBlock(p: IncidentPicture): KnownBlock {
  const title = mrkdwn`*Apps* · Magic Containers apps failing or deploying`;
  const s = p.apps;
  if ("error" in s) return failed(title, s);
  const { apps, read, complete } = s.ok;
  const scope = complete ? `${n(read)} apps read` : `the first ${n(read)} apps read`;
  const seeAll =
    apps.length > CARD_TOP
      ? button(`All ${n(apps.length)} apps`, seeAllId("apps"), listValue(p, "apps"))
      : undefined;
  const lines =
    apps.length === 0
      ? [`None (${scope}).`]
      : [
          ...apps.slice(0, CARD_TOP).map(appLine),
          mrkdwn`_${n(apps.length)} failing or deploying among ${scope}_`,
        ];
  return section(joinMrkdwn([title, ...lines], "\n"), seeAll);
}

/**
 * The whole card. Every section is bounded (top 5 each), so any data size fits Slack's limits.
 * `newRequestId` gives each change button (Block, rule review) its own change-request id.
 */
export function incidentCard(
  p: IncidentPicture,
  opts: { isPublic: boolean; newRequestId: () => string; chart?: CardChart | null },
): Reply {
  const chart = opts.chart ?? null;
  const refresh: RefreshValue = {
    z: p.zoneId,
    w: p.range.window,
    ...(opts.isPublic ? { p: true } : {}),
    ...(chart ? { f: chart.fileId } : {}),
  };
  const blocks: KnownBlock[] = [
    header(`Incident picture · shield zone ${p.zoneId}`),
    context(
      mrkdwn`Last ${p.range.words}: ${dateToken(p.range.from)} → ${dateToken(p.range.to)} · ${codeSpan(`/edge incident ${p.zoneId} ${p.range.window}`)}`,
    ),
    zoneBlock(p.zoneId, p.zone, p.range.to),
    divider(),
    ...(chart ? [chartBlock(chart)] : []),
    trafficBlock(p.range, p.traffic, chart !== null),
    divider(),
    ...offenderBlocks(p, opts.newRequestId),
    divider(),
    ...wafBlocks(p, opts.newRequestId),
    divider(),
    rateLimitBlock(p),
    divider(),
    appsBlock(p),
    actions(button("Refresh", ACTIONS.incidentRefresh, JSON.stringify(refresh))),
  ];
  const card = reply(`Incident picture of shield zone ${p.zoneId}, last ${p.range.words}`, blocks);
  return chart ? { ...card, [WITHOUT_PICTURE]: incidentCard(p, { ...opts, chart: null }) } : card;
}

/** The chart as Slack shows an uploaded image; its alt text says in words what it shows. */
export function chartBlock(chart: CardChart): KnownBlock {
  return {
    type: "image",
    slack_file: { id: chart.fileId },
    // Escaped like every text shown (zone and approver names are in it); Slack's limit is 2,000 characters.
    alt_text: plainText(chart.altText, 2000).text,
  } as KnownBlock;
}

/** What the command posts at once, while the card is gathered. */
export function gatheringMessage(zone: number | string, range: Pick<IncidentRange, "words">): Reply {
  const text = `Gathering the picture of zone ${zone} over the last ${range.words}…`;
  return reply(text, [section(`:hourglass_flowing_sand: ${text}`)]);
}

// ---- "see all" lists ------------------------------------------------------------------------------

const LIST_TITLES: Record<IncidentListSection, string> = {
  ip: "Offending IPs",
  asn: "Offending ASNs",
  country: "Offending countries",
  ja4: "Offending JA4 fingerprints",
  waf: "Triggered WAF rules",
  ratelimits: "Rate limits by breaches",
  apps: "Apps failing or deploying",
};

function listLines(page: IncidentListPage): Mrkdwn[] {
  switch (page.kind) {
    case "offenders":
      return page.offenders.map((o) => offenderLine(o, page.dimension, page));
    case "waf":
      return page.rules.map((r) => ruleText(r, false));
    case "ratelimits":
      return page.rules.map(rateLimitLine);
    case "apps":
      return page.apps.map(appLine);
  }
}

/** One page of a section's whole list, with Previous / Next. */
export function incidentListMessage(
  zoneId: number,
  page: IncidentListPage & { range: IncidentRange },
  section: IncidentListSection,
  isPublic: boolean,
  newRequestId: () => string,
): Reply {
  // Apps are the account's, not the zone's: the card only lists them beside the zone.
  const of = section === "apps" ? "the whole account" : `shield zone ${zoneId}`;
  const title = `${LIST_TITLES[section]} · ${of}`;
  const lines = listLines(page);
  // The search document promises no order: past one page, a page is not the next busiest.
  const order =
    page.kind === "offenders" && page.totalPages > 1
      ? " · in the order the Edge API gives (it promises none): busiest first within this page"
      : "";
  const where =
    page.kind === "offenders"
      ? mrkdwn`Event log, ${dateToken(page.range.eventLogFrom)} to ${dateToken(page.range.eventLogTo)} (whole slots, as the card's traffic)${order}`
      : page.kind === "ratelimits"
        ? "Daily counters of the days the window touches"
        : page.kind === "apps"
          ? page.complete
            ? "Every app read"
            : "The first apps read"
          : mrkdwn`The WAF review's own counts, not the window's (the Edge API gives no period for them); ${codeSpan("/edge waf <zoneId> <ruleId>")} shows a rule's AI recommendation`;
  const blocks: KnownBlock[] = [
    header(title),
    context(
      page.total === null
        ? mrkdwn`${where} · page ${n(page.page)}`
        : mrkdwn`${where} · page ${n(page.page)} of ${n(page.totalPages)} · ${n(page.total)} in all`,
    ),
  ];
  // As on the card: Block (or Unblock) for each offender edgeops can list, for a page's worth of lines (an
  // answer ignoring the page size gets no more), in actions blocks of 25 at most, room kept for them.
  const blockRows: KnownBlock[] = [];
  if (page.kind === "offenders") {
    const offered = page.offenders.slice(0, LIST_PAGE_SIZE);
    const buttons = blockButtons(
      { zoneId, mitigated: page.mitigated },
      page.dimension,
      offered,
      newRequestId,
    );
    for (let i = 0; i < buttons.length; i += 25) blockRows.push(actions(...buttons.slice(i, i + 25)));
  }
  if (lines.length === 0) blocks.push(context("Nothing on this page."));
  else blocks.push(...packLines(lines, 45 - blockRows.length, "lines"));
  blocks.push(...blockRows);
  const base = {
    z: zoneId,
    w: page.range.window,
    t: page.range.to,
    s: section,
    ...(isPublic ? { p: true } : {}),
  };
  const paging: Button[] = [];
  if (page.page > 1)
    paging.push(
      button("Previous page", ACTIONS.incidentPreviousPage, JSON.stringify({ ...base, pg: page.page - 1 })),
    );
  if (page.page < page.totalPages)
    paging.push(
      button("Next page", ACTIONS.incidentNextPage, JSON.stringify({ ...base, pg: page.page + 1 })),
    );
  if (paging.length > 0) blocks.push(actions(...paging));
  return reply(`${LIST_TITLES[section]} of ${of}, page ${page.page}`, blocks);
}
