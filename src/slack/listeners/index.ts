import type { App, BlockAction, ExternalSelectAction } from "@slack/bolt";
import { subcommandTable } from "../commands/index.js";
import type { SlackEnv } from "../commands/types.js";
import { ACTION_PATTERNS, ACTIONS, VIEWS } from "../ids.js";
import { approvalDecision } from "./actions/approval-decision.js";
import { appsNextPage } from "./actions/apps-next-page.js";
import { botChange } from "./actions/bot-change.js";
import { changeCancel, changeConfirm } from "./actions/change-confirm.js";
import { dnsScanNow } from "./actions/dns-scan-now.js";
import { incidentList, incidentRefresh, incidentWafRecommendation } from "./actions/incident.js";
import { openKeyModalFromHome } from "./actions/open-key-modal.js";
import { pickerChosen } from "./actions/picker-chosen.js";
import { shareInChannel } from "./actions/share-in-channel.js";
import { zonesPage } from "./actions/zones-page.js";
import { edgeCommand } from "./commands/edge.js";
import { appHomeOpened } from "./events/app-home-opened.js";
import { pickerSuggestions } from "./options/picker-suggestions.js";
import { keySubmit } from "./views/key-submit.js";

/** The only place Slack ids meet code. */
export function registerListeners(app: App, env: SlackEnv): void {
  const subcommands = subcommandTable();
  app.command("/edge", edgeCommand(env, subcommands));
  app.action(ACTIONS.shareInChannel, shareInChannel(env, subcommands));
  app.action(ACTIONS.appsNextPage, appsNextPage(env));
  app.action(ACTIONS.zonesPreviousPage, zonesPage(env));
  app.action(ACTIONS.zonesNextPage, zonesPage(env));
  app.action(ACTIONS.dnsScanNow, dnsScanNow(env));
  app.action(ACTIONS.openKeyModal, openKeyModalFromHome(env));
  app.action(ACTIONS.botBlock, botChange(env));
  app.action(ACTIONS.botAllow, botChange(env));
  app.action(ACTIONS.botClear, botChange(env));
  app.action(ACTION_PATTERNS.changeConfirm, changeConfirm(env));
  app.action(ACTIONS.changeCancel, changeCancel(env));
  app.action(ACTIONS.approve, approvalDecision(env, "approve"));
  app.action(ACTIONS.reject, approvalDecision(env, "reject"));
  app.action(ACTIONS.retry, approvalDecision(env, "retry"));
  app.action(ACTIONS.undo, approvalDecision(env, "undo"));
  app.action(ACTIONS.incidentRefresh, incidentRefresh(env));
  app.action(ACTION_PATTERNS.incidentSeeAll, incidentList(env, "card"));
  app.action(ACTIONS.incidentPreviousPage, incidentList(env, "list"));
  app.action(ACTIONS.incidentNextPage, incidentList(env, "list"));
  app.action(ACTIONS.incidentWafRecommendation, incidentWafRecommendation(env, subcommands));
  app.options({ type: "block_suggestion", action_id: ACTION_PATTERNS.picker }, pickerSuggestions(env));
  app.action<BlockAction<ExternalSelectAction>>(ACTION_PATTERNS.picker, pickerChosen(env, subcommands));
  app.view(VIEWS.keyModal, keySubmit(env));
  app.event("app_home_opened", appHomeOpened(env));
}
