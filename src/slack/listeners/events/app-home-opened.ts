import type { AllMiddlewareArgs, SlackEventMiddlewareArgs } from "@slack/bolt";
import { toUserSentence } from "../../../errors.js";
import { countAppsByStatus } from "../../../services/apps.js";
import { homeView } from "../../blocks/home.js";
import type { SlackEnv } from "../../commands/types.js";

/** How long the Home tab waits for application counts before showing what it has. */
const APPS_DEADLINE_MS = 4_000;

function withDeadline<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    p,
    new Promise<T>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what} took longer than ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

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
      const [key, isAdmin, pendingApprovals, schedules] = await Promise.all([
        store.keys.info(teamId),
        env.admins.isAdmin(client, teamId, userId).catch(() => false),
        store.approvals.listPending(teamId),
        store.schedules.list(teamId),
      ]);
      const apiKey =
        (await store.keys.get(teamId).catch(() => undefined))?.apiKey ?? config.edge.defaultApiKey;
      let apps: Parameters<typeof homeView>[0]["apps"] = null;
      if (apiKey) {
        apps = await withDeadline(
          countAppsByStatus(env.deps.edge.forKey(apiKey)),
          APPS_DEADLINE_MS,
          "Counting applications",
        ).catch((err: unknown) => ({
          error:
            err instanceof Error && err.message.includes("took longer")
              ? "The Edge API is slow right now; reopen this tab to try again."
              : toUserSentence(err),
        }));
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
