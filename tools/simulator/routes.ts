import {
  createAccessList,
  getAccessList,
  getAccessLists,
  updateAccessList,
  updateAccessListConfiguration,
} from "./access-lists.js";
import { getLatestScan, listDnsZones, listPullZones, purgePullZone, purgeUrl, triggerScan } from "./core.js";
import { searchEventLogs } from "./event-logs.js";
import type { Route } from "./http.js";
import { listApps, restartApp } from "./mc.js";
import {
  getAiRecommendation,
  getBotCategories,
  getBotDetection,
  getRateLimitMetrics,
  getShieldZone,
  getTriggeredRules,
  listShieldZones,
  putBotCategory,
} from "./shield.js";
import {
  getDetailedMetrics,
  getMetricsOverview,
  getRateLimitRule,
  getZoneRateLimitMetrics,
  getZoneRateLimitRules,
} from "./shield-metrics.js";
import { patchShieldZone, reviewTriggeredRule } from "./shield-settings.js";

/** The router table: first match of method + full-path pattern wins; groups become `ctx.params`. */
export const ROUTES: readonly Route[] = [
  { method: "GET", pattern: /^\/mc\/apps\/?$/, unauthorized: "problem", handler: listApps },
  { method: "GET", pattern: /^\/shield\/shield-zones\/?$/, unauthorized: "bare", handler: listShieldZones },
  {
    method: "GET",
    pattern: /^\/shield\/shield-zone\/([^/]+)\/?$/,
    unauthorized: "problem",
    handler: getShieldZone,
  },
  {
    method: "GET",
    pattern: /^\/shield\/shield-zone\/([^/]+)\/bot-detection\/?$/,
    unauthorized: "problem",
    handler: getBotDetection,
  },
  {
    method: "GET",
    pattern: /^\/shield\/shield-zone\/([^/]+)\/bot-categorization\/?$/,
    unauthorized: "problem",
    handler: getBotCategories,
  },
  {
    method: "PUT",
    pattern: /^\/shield\/shield-zone\/([^/]+)\/bot-categorization\/categories\/([^/]+)\/?$/,
    unauthorized: "problem",
    handler: putBotCategory,
  },
  {
    method: "GET",
    pattern: /^\/shield\/metrics\/rate-limit\/([^/]+)\/?$/,
    unauthorized: "bare",
    handler: getRateLimitMetrics,
  },
  {
    method: "GET",
    pattern: /^\/shield\/metrics\/rate-limits\/([^/]+)\/?$/,
    unauthorized: "bare",
    handler: getZoneRateLimitMetrics,
  },
  {
    method: "GET",
    pattern: /^\/shield\/rate-limit\/([^/]+)\/?$/,
    unauthorized: "bare",
    handler: getRateLimitRule,
  },
  {
    method: "GET",
    pattern: /^\/shield\/rate-limits\/([^/]+)\/?$/,
    unauthorized: "bare",
    handler: getZoneRateLimitRules,
  },
  {
    method: "GET",
    pattern: /^\/shield\/metrics\/overview\/([^/]+)\/?$/,
    unauthorized: "bare",
    handler: getMetricsOverview,
  },
  {
    method: "GET",
    pattern: /^\/shield\/metrics\/overview\/([^/]+)\/detailed\/?$/,
    unauthorized: "bare",
    handler: getDetailedMetrics,
  },
  {
    method: "POST",
    pattern: /^\/shield\/event-logs\/([^/]+)\/search\/?$/,
    unauthorized: "problem",
    handler: searchEventLogs,
  },
  {
    method: "GET",
    pattern: /^\/shield\/waf\/rules\/review-triggered\/([^/]+)\/?$/,
    unauthorized: "bare",
    handler: getTriggeredRules,
  },
  {
    method: "GET",
    pattern: /^\/shield\/waf\/rules\/review-triggered\/ai-recommendation\/([^/]+)\/([^/]+)\/?$/,
    unauthorized: "bare",
    handler: getAiRecommendation,
  },
  { method: "GET", pattern: /^\/pullzone\/?$/, unauthorized: "empty", handler: listPullZones },
  { method: "GET", pattern: /^\/dnszone\/?$/, unauthorized: "empty", handler: listDnsZones },
  {
    method: "GET",
    pattern: /^\/dnszone\/([^/]+)\/records\/scan\/?$/,
    unauthorized: "empty",
    handler: getLatestScan,
  },
  { method: "POST", pattern: /^\/dnszone\/records\/scan\/?$/, unauthorized: "empty", handler: triggerScan },
  {
    method: "POST",
    pattern: /^\/mc\/apps\/([^/]+)\/restart\/?$/,
    unauthorized: "problem",
    handler: restartApp,
  },
  {
    method: "POST",
    pattern: /^\/pullzone\/([^/]+)\/purgeCache\/?$/,
    unauthorized: "empty",
    handler: purgePullZone,
  },
  { method: "POST", pattern: /^\/purge\/?$/, unauthorized: "empty", handler: purgeUrl },
  // Shield zone settings and WAF rule reviews (issue 14)
  { method: "PATCH", pattern: /^\/shield\/shield-zone\/?$/, unauthorized: "bare", handler: patchShieldZone },
  {
    method: "POST",
    pattern: /^\/shield\/waf\/rules\/review-triggered\/([^/]+)\/?$/,
    unauthorized: "bare",
    handler: reviewTriggeredRule,
  },
  // Access lists (/edge block). The configuration route comes first: "configurations" is not a list id.
  {
    method: "PATCH",
    pattern: /^\/shield\/shield-zone\/([^/]+)\/access-lists\/configurations\/([^/]+)\/?$/,
    unauthorized: "problem",
    handler: updateAccessListConfiguration,
  },
  {
    method: "GET",
    pattern: /^\/shield\/shield-zone\/([^/]+)\/access-lists\/?$/,
    unauthorized: "problem",
    handler: getAccessLists,
  },
  {
    method: "POST",
    pattern: /^\/shield\/shield-zone\/([^/]+)\/access-lists\/?$/,
    unauthorized: "problem",
    handler: createAccessList,
  },
  {
    method: "GET",
    pattern: /^\/shield\/shield-zone\/([^/]+)\/access-lists\/(\d+)\/?$/,
    unauthorized: "problem",
    handler: getAccessList,
  },
  {
    method: "PATCH",
    pattern: /^\/shield\/shield-zone\/([^/]+)\/access-lists\/(\d+)\/?$/,
    unauthorized: "problem",
    handler: updateAccessList,
  },
];

/** 401 style for paths no route knows, by family. */
export function familyUnauthorizedStyle(path: string): Route["unauthorized"] {
  if (path.startsWith("/mc/")) return "problem";
  if (path.startsWith("/shield/")) return "bare";
  return "empty";
}
