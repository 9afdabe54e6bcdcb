import type { EdgeClient } from "../../src/edge/client.js";
import type { OperationName } from "../../src/edge/operations.js";
import { SIM_IDS } from "../../tools/simulator/index.js";

const ZONE = SIM_IDS.zoneQuiet;

/**
 * Every operation of the client (typed over the operation table: a new row does not compile until it is
 * here), each with arguments it accepts, for the tests that ask the same of every operation.
 */
export const EVERY_OPERATION: { [K in OperationName]: (c: EdgeClient) => Promise<unknown> } = {
  listApps: (c) => c.listApps(),
  listShieldZones: (c) => c.listShieldZones(),
  listPullZones: (c) => c.listPullZones(),
  listDnsZones: (c) => c.listDnsZones(),
  getShieldZone: (c) => c.getShieldZone(ZONE),
  getMetricsOverview: (c) => c.getMetricsOverview(ZONE),
  getMetricsOverviewDetailed: (c) => c.getMetricsOverviewDetailed(ZONE, { from: 0, to: 60_000 }),
  searchEventLogs: (c) => c.searchEventLogs(ZONE, { from: 0, to: 60_000 }),
  getTriggeredWafRules: (c) => c.getTriggeredWafRules(ZONE),
  getRateLimits: (c) => c.getRateLimits(ZONE),
  listRateLimitRules: (c) => c.listRateLimitRules(ZONE),
  getBotDetection: (c) => c.getBotDetection(ZONE),
  getBotCategories: (c) => c.getBotCategories(ZONE),
  setBotCategoryAction: (c) => c.setBotCategoryAction(ZONE, 1, 1),
  getRateLimitMetrics: (c) => c.getRateLimitMetrics(7001),
  getRateLimitRule: (c) => c.getRateLimitRule(7010),
  getWafAiRecommendation: (c) => c.getWafAiRecommendation(ZONE, "942100"),
  getLatestDnsScan: (c) => c.getLatestDnsScan(1),
  triggerDnsScan: (c) => c.triggerDnsScan(1),
  restartApp: (c) => c.restartApp("mc-1"),
  purgePullZone: (c) => c.purgePullZone(1),
  purgeUrl: (c) => c.purgeUrl("https://example.com/a"),
  updateShieldZone: (c) => c.updateShieldZone(ZONE, { learningMode: true }),
  reviewTriggeredWafRule: (c) => c.reviewTriggeredWafRule(ZONE, "942100", 0),
  listCustomAccessLists: (c) => c.listCustomAccessLists(ZONE),
  getCustomAccessList: (c) => c.getCustomAccessList(ZONE, 1),
  createCustomAccessList: (c) => c.createCustomAccessList(ZONE, { name: "x", type: 0, content: "" }),
  setCustomAccessListContent: (c) => c.setCustomAccessListContent(ZONE, 1, ""),
  configureAccessList: (c) => c.configureAccessList(ZONE, 1, { isEnabled: true, action: 2 }),
};
