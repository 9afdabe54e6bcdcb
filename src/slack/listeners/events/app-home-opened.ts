import type { AllMiddlewareArgs, SlackEventMiddlewareArgs } from "@slack/bolt";
import { withDeadline } from "../../../deadline.js";
import { toUserSentence, UserError } from "../../../errors.js";
import { openAlertsIn } from "../../../services/alerts.js";
import { countAppsByStatus } from "../../../services/apps.js";
import { keyInUse } from "../../../services/edge-access.js";
import { homeView } from "../../blocks/home.js";
import type { SlackEnv } from "../../commands/types.js";
import { userChannelIds } from "../../user-channels.js";

/** How long the Home tab waits for application counts before showing what it has. */
const APPS_DEADLINE_MS = 4_000;

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
      const openAlerts = withDeadline(
        userChannelIds(client, userId)
          .then((channels) => openAlertsIn(env.deps, teamId, channels))
          .catch((err: unknown) => {
            if (!(err instanceof UserError)) logger.warn({ err }, "could not list the user's open alerts");
            return { error: toUserSentence(err) };
          }),
        ALERTS_DEADLINE_MS,
        () => ({ error: "Slack is slow to say which channels you are in; reopen this tab to try again." }),
      );
      const [access, isAdmin, pendingApprovals, schedules] = await Promise.all([
        keyInUse(env.deps, teamId).catch((err: unknown) => ({ source: "unreadable" as const, err })),
        env.admins.isAdmin(client, teamId, userId).catch(() => false),
        store.approvals.listPending(teamId),
        store.schedules.list(teamId),
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
        }),
      });
    } catch (err) {
      logger.warn({ err }, "could not publish the App Home");
    }
  };
}
