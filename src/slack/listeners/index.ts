import type { App, BlockAction, ExternalSelectAction, StaticSelectAction } from "@slack/bolt";
import { subcommandTable } from "../edge-commands/index.js";
import type { SlackEnv } from "../edge-commands/types.js";
import { ACTION_PATTERNS, ACTIONS, FUNCTIONS, SHORTCUTS, VIEWS } from "../ids.js";
import { ackFirst } from "../transport/ack-first.js";
import { alertAcknowledge, alertIncident, alertMute, alertTimeline, alertUnmute } from "./actions/alerts.js";
import { approvalDecision, rejectReasonOpen } from "./actions/approval-decision.js";
import { appsNextPage } from "./actions/apps-next-page.js";
import { botChange } from "./actions/bot-change.js";
import { changeCancel, changeConfirm } from "./actions/change-confirm.js";
import { dnsPage } from "./actions/dns-page.js";
import { dnsScanNow } from "./actions/dns-scan-now.js";
import { driftKeep } from "./actions/drift-keep.js";
import { incidentList, incidentRefresh, incidentWafRecommendation } from "./actions/incident.js";
import { openKeyModalFromHome } from "./actions/open-key-modal.js";
import { pickerChosen } from "./actions/picker-chosen.js";
import { shareInChannel } from "./actions/share-in-channel.js";
import { timelineExport, timelinePage } from "./actions/timeline.js";
import { zonesPage } from "./actions/zones-page.js";
import { edgeCommand } from "./commands/edge.js";
import { appHomeOpened } from "./events/app-home-opened.js";
import { appUninstalled } from "./events/app-uninstalled.js";
import { linkShared } from "./events/link-shared.js";
import { dnsSummaryStep } from "./functions/dns-summary.js";
import { accessBlockStep, botCategoryStep, requestChangeStep } from "./functions/request-change.js";
import { zoneStatusStep } from "./functions/zone-status.js";
import { pickerSuggestions } from "./options/picker-suggestions.js";
import { listenerRouter } from "./router.js";
import { incidentOverview } from "./shortcuts/incident-overview.js";
import { changeModalKind, requestChangeShortcut } from "./shortcuts/request-change.js";
import { changeSubmit } from "./views/change-submit.js";
import { keySubmit } from "./views/key-submit.js";
import { rejectReasonSubmit } from "./views/reject-reason.js";

/** The one place a Slack id is tied to its listener (the Block Kit builders only put ids on elements). */
export function registerListeners(app: App, env: SlackEnv): void {
  const subcommands = subcommandTable();
  const on = listenerRouter(app);
  // Bolt's own listeners for commands and options; the router's acks first the same way.
  app.command("/edge", ackFirst(edgeCommand(env, subcommands)));
  on.action(ACTIONS.shareInChannel, shareInChannel(env, subcommands));
  on.action(ACTIONS.appsNextPage, appsNextPage(env));
  on.action(ACTIONS.appsPreviousPage, appsNextPage(env));
  on.action(ACTIONS.zonesPreviousPage, zonesPage(env));
  on.action(ACTIONS.zonesNextPage, zonesPage(env));
  on.action(ACTIONS.dnsScanNow, dnsScanNow(env));
  on.action(ACTION_PATTERNS.dnsPage, dnsPage(env));
  on.action(ACTIONS.openKeyModal, openKeyModalFromHome(env));
  on.action(ACTIONS.botBlock, botChange(env));
  on.action(ACTIONS.botAllow, botChange(env));
  on.action(ACTIONS.botClear, botChange(env));
  on.action(ACTION_PATTERNS.changeConfirm, changeConfirm(env));
  on.action(ACTIONS.changeCancel, changeCancel(env));
  on.action(ACTIONS.approve, approvalDecision(env, "approve"));
  on.action(ACTIONS.reject, approvalDecision(env, "reject"));
  on.action(ACTIONS.rejectReason, rejectReasonOpen(env));
  on.action(ACTIONS.retry, approvalDecision(env, "retry"));
  on.action(ACTIONS.undo, approvalDecision(env, "undo"));
  on.action(ACTIONS.cleanupUndo, approvalDecision(env, "cleanup_undo"));
  on.action(ACTIONS.makePermanent, approvalDecision(env, "permanent"));
  on.action(ACTIONS.extend30m, approvalDecision(env, "extend_30m"));
  on.action(ACTIONS.extend2h, approvalDecision(env, "extend_2h"));
  on.action(ACTIONS.incidentRefresh, incidentRefresh(env));
  on.action(ACTION_PATTERNS.incidentSeeAll, incidentList(env, "card"));
  on.action(ACTIONS.incidentPreviousPage, incidentList(env, "list"));
  on.action(ACTIONS.incidentNextPage, incidentList(env, "list"));
  on.action(ACTIONS.incidentWafRecommendation, incidentWafRecommendation(env, subcommands));
  on.action(ACTIONS.timelinePreviousPage, timelinePage(env));
  on.action(ACTIONS.timelineNextPage, timelinePage(env));
  on.action(ACTIONS.timelineExport, timelineExport(env));
  on.action(ACTIONS.alertAcknowledge, alertAcknowledge(env));
  on.action(ACTIONS.alertMute, alertMute(env));
  on.action(ACTIONS.alertUnmute, alertUnmute(env));
  on.action(ACTIONS.alertIncident, alertIncident(env));
  on.action(ACTIONS.alertTimeline, alertTimeline(env));
  on.action(ACTIONS.driftKeep, driftKeep(env));
  app.options(
    { type: "block_suggestion", action_id: ACTION_PATTERNS.picker },
    ackFirst(pickerSuggestions(env)),
  );
  on.action<BlockAction<ExternalSelectAction>>(ACTION_PATTERNS.picker, pickerChosen(env, subcommands));
  on.view(VIEWS.keyModal, keySubmit(env));
  on.shortcut(SHORTCUTS.requestChange, requestChangeShortcut(env));
  on.shortcut(SHORTCUTS.incidentOverview, incidentOverview(env, subcommands));
  on.action<BlockAction<StaticSelectAction>>(ACTIONS.changeModalKind, changeModalKind(env));
  on.view(VIEWS.changeModal, changeSubmit(env, subcommands));
  on.view(VIEWS.rejectReason, rejectReasonSubmit(env));
  on.event("app_home_opened", appHomeOpened(env));
  // Workflow Builder steps (manifest.yml `functions`); Bolt acknowledges function_executed at once.
  app.function(FUNCTIONS.zoneStatus, zoneStatusStep(env));
  app.function(FUNCTIONS.requestBotCategoryChange, requestChangeStep(env, botCategoryStep));
  app.function(FUNCTIONS.requestBlock, requestChangeStep(env, accessBlockStep));
  app.function(FUNCTIONS.dnsSummary, dnsSummaryStep(env));
  on.event("link_shared", linkShared(env));
  on.event("app_uninstalled", appUninstalled(env));
  on.event("tokens_revoked", appUninstalled(env));
  on.register();
}
