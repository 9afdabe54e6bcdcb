import type { KnownBlock } from "@slack/types";
import {
  bodyLimitActionLabel,
  ddosExecutionModeLabel,
  ddosSensitivityLabel,
  planTypeLabel,
  type ShieldZone,
  type ShieldZonePage,
  wafExecutionModeLabel,
} from "../../edge/schemas/shield.js";
import { ACTIONS } from "../ids.js";
import {
  actions,
  button,
  context,
  dateToken,
  header,
  type Mrkdwn,
  mrkdwn,
  packLines,
  type Reply,
  reply,
} from "./common.js";

export interface ZonesPageValue {
  page: number;
  perPage: number;
  p?: boolean;
}

function zoneLine(z: ShieldZone): Mrkdwn {
  const waf = z.wafEnabled ? `WAF on (${wafExecutionModeLabel(z.wafExecutionMode)})` : "WAF off";
  const ddos = `DDoS ${ddosSensitivityLabel(z.ddosShieldSensitivity)} (${ddosExecutionModeLabel(z.ddosExecutionMode)})`;
  const learning = z.learningMode
    ? mrkdwn` · learning${z.learningModeUntil ? mrkdwn` until ${dateToken(z.learningModeUntil)}` : ""}`
    : "";
  const limits = `limits: ${z.rateLimitRulesLimit ?? "?"} rate-limit rules, ${z.customWafRulesLimit ?? "?"} custom rules, body ${bodyLimitActionLabel(z.wafRequestBodyLimitAction)}/${bodyLimitActionLabel(z.wafResponseBodyLimitAction)}`;
  return mrkdwn`*Zone ${z.shieldZoneId}* · pull zone ${z.pullZoneId ?? "–"} · ${planTypeLabel(z.planType)} · ${waf} · ${ddos}${learning}\n      ${limits}`;
}

export function zonesMessage(page: ShieldZonePage, isPublic: boolean): Reply {
  const blocks: KnownBlock[] = [header("Shield zones")];
  const pages = page.totalPages ? ` of ${page.totalPages}` : "";
  const total = page.totalCount !== undefined ? ` · ${page.totalCount} zones` : "";
  blocks.push(context(`Page ${page.page}${pages}${total}`));
  if (page.items.length === 0) blocks.push(context("No shield zones on this page."));
  else blocks.push(...packLines(page.items.map(zoneLine), 45, "zones"));
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
