import type { AllMiddlewareArgs, SlackEventMiddlewareArgs } from "@slack/bolt";
import { withDeadline } from "../../../deadline.js";
import { toUserSentence } from "../../../errors.js";
import { countAppsByStatus } from "../../../services/apps.js";
import { homeView } from "../../blocks/home.js";
import type { SlackEnv } from "../../commands/types.js";

/** How long the Home tab waits for application counts before showing what it has. */
const APPS_DEADLINE_MS = 4_000;

/** App Home: key status, application counts by status, pending approvals and schedules. */
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
    const { store, config } = env.deps;
    try {
      const [record, isAdmin, pendingApprovals, schedules] = await Promise.all([
        store.keys.get(teamId).catch(() => undefined),
        env.admins.isAdmin(client, teamId, userId).catch(() => false),
        store.approvals.listPending(teamId),
        store.schedules.list(teamId),
      ]);
      // One read decrypts the key and describes it; the description alone is read only when that failed.
      const key = record ?? (await store.keys.info(teamId));
      const apiKey = record?.apiKey ?? config.edge.defaultApiKey;
      let apps: Parameters<typeof homeView>[0]["apps"] = null;
      if (apiKey) {
        apps = await withDeadline(
          countAppsByStatus(env.deps.edge.forKey(apiKey)).catch((err: unknown) => ({
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
          usingDeploymentKey: !key && config.edge.defaultApiKey !== undefined,
          isAdmin,
          apps,
          pendingApprovals,
          schedules,
        }),
      });
    } catch (err) {
      logger.warn({ err }, "could not publish the App Home");
    }
  };
}
