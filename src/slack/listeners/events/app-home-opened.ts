import type { AllMiddlewareArgs, SlackEventMiddlewareArgs } from "@slack/bolt";
import { withDeadline } from "../../../deadline.js";
import { toUserSentence, UserError } from "../../../errors.js";
import { listAgentTokens } from "../../../services/agent-tokens.js";
import { openAlertsIn } from "../../../services/alerts.js";
import { countAppsByStatus } from "../../../services/apps.js";
import { keyInUse } from "../../../services/edge-access.js";
import { homeView } from "../../blocks/home.js";
import type { SlackEnv } from "../../edge-commands/types.js";
import { userChannelIds } from "../../user-channels.js";

/** How long the Home tab waits for application counts before showing what it has. */
const APPS_DEADLINE_MS = 4_000;

/** The newest pending approvals the Home tab lists (with their count). */
const HOME_PENDING_SHOWN = 20;

/** How long the Home tab waits for the user's channels and their open alerts. */
const ALERTS_DEADLINE_MS = 4_000;

/** App Home: key status, open alerts of the user's channels, application counts by status, pending approvals and schedules. */
export function appHomeOpened(env: SlackEnv) {
  return async ({
    event,
    client,
    context,
  }: SlackEventMiddlewareArgs<"app_home_opened"> & AllMiddlewareArgs) => {
    if (event.tab !== "home") return;
    const teamId = context.teamId ?? "";
    const userId = event.user;
    const logger = env.deps.logger.child({ teamId, userId, event: "app_home_opened" });
    const { store } = env.deps;
    try {
      // Everything listed per channel (alerts, approvals, schedules) is of the user's channels only.
      const channels: Promise<ReadonlySet<string> | { error: string }> = withDeadline(
        env.deps.clock,
        userChannelIds(client, userId).catch((err: unknown) => {
          if (!(err instanceof UserError)) logger.warn({ err }, "could not list the user's channels");
          return { error: toUserSentence(err) };
        }),
        ALERTS_DEADLINE_MS,
        () => ({ error: "Slack is slow to say which channels you are in; reopen this tab to try again." }),
      );
      const inChannels = <T>(read: (c: ReadonlySet<string>) => Promise<T>): Promise<T | { error: string }> =>
        channels.then((c): Promise<T | { error: string }> | { error: string } =>
          "error" in c ? c : read(c),
        );
      const openAlerts = withDeadline(
        env.deps.clock,
        inChannels((c) => openAlertsIn(env.deps, teamId, c)).catch((err: unknown) => {
          logger.warn({ err }, "could not list the user's open alerts");
          return { error: toUserSentence(err) };
        }),
        ALERTS_DEADLINE_MS,
        () => ({ error: "Slack is slow to say which channels you are in; reopen this tab to try again." }),
      );
      const [access, isAdmin, pendingApprovals, schedules, agentTokens] = await Promise.all([
        keyInUse(env.deps, teamId).catch((err: unknown) => ({ source: "unreadable" as const, err })),
        env.admins.isAdmin(client, teamId, userId).catch(() => false),
        inChannels(async (c) => {
          const query = { channelIds: [...c] };
          const [requests, total] = await Promise.all([
            store.changeRequests.listPending(teamId, {
              ...query,
              limit: HOME_PENDING_SHOWN,
              newestFirst: true,
            }),
            store.changeRequests.countPending(teamId, query),
          ]);
          return { requests, total };
        }),
        inChannels(async (c) => (await store.schedules.list(teamId)).filter((s) => c.has(s.channelId))),
        listAgentTokens(env.deps, { teamId, userId }).catch(() => []),
      ]);
      // One read decrypts the key and describes it; a stored key that cannot be decrypted is still
      // described, and answers nothing.
      const key =
        access.source === "own"
          ? access.record
          : access.source === "unreadable"
            ? await store.keys.info(teamId).catch(() => undefined)
            : undefined;
      let apps: Parameters<typeof homeView>[0]["apps"] = null;
      if (access.source === "unreadable") apps = { error: toUserSentence(access.err) };
      else if (access.source !== "none") {
        apps = await withDeadline(
          env.deps.clock,
          countAppsByStatus(env.deps.edge.forKey(access.apiKey)).catch((err: unknown) => ({
            error: toUserSentence(err),
          })),
          APPS_DEADLINE_MS,
          () => ({ error: "The Edge API is slow right now; reopen this tab to try again." }),
        );
      }
      await client.views.publish({
        user_id: userId,
        view: homeView({
          key,
          usingDeploymentKey: access.source === "deployment",
          isAdmin,
          apps,
          pendingApprovals,
          schedules,
          openAlerts: await openAlerts,
          agentTokens,
        }),
      });
    } catch (err) {
      logger.warn({ err }, "could not publish the App Home");
    }
  };
}
