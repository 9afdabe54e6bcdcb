import type { AllMiddlewareArgs, SlackEventMiddlewareArgs } from "@slack/bolt";
import { withDeadline } from "../../../deadline.js";
import { toUserSentence, UserError } from "../../../errors.js";
import { listAgentTokens } from "../../../services/agent-tokens.js";
import { openAlertsIn } from "../../../services/alerts.js";
import { countAppsByStatus } from "../../../services/apps.js";
import { keyInUse } from "../../../services/edge-access.js";
import { rankZones } from "../../../services/unusual-zones.js";
import type { ChangeRequest } from "../../../store/index.js";
import { homeView } from "../../blocks/home.js";
import type { SlackEnv } from "../../edge-commands/types.js";
import { userChannelIds } from "../../user-channels.js";

/** How long the Home tab waits for application counts before showing what it has. */
const APPS_DEADLINE_MS = 4_000;

/** The newest pending approvals the Home tab lists (with their count). */
const HOME_PENDING_SHOWN = 20;

/**
 * How long the Home tab waits for the zones' check before showing what it has; the check goes on, so its
 * verdicts (kept for their slot) are there when the tab is opened again.
 */
const ZONES_DEADLINE_MS = 4_000;

/** How long the Home tab waits for the pending approvals' card links; those not in by then are not linked. */
const LINKS_DEADLINE_MS = 2_000;

/** How long the Home tab waits for the user's channels and their open alerts. */
const ALERTS_DEADLINE_MS = 4_000;

/**
 * App Home: key status, open alerts of the user's channels, the workspace's first zones that look unusual
 * without a watch, application counts by status, pending approvals and schedules.
 */
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
    /** Each listed request's approval card, linked where Slack gives its permalink in time. */
    const cardLinks = (requests: readonly ChangeRequest[]) =>
      withDeadline(
        env.deps.clock,
        Promise.all(
          requests.map(async (r): Promise<[string, string] | undefined> => {
            if (!r.messageChannel || !r.messageTs) return undefined;
            const found = await client.chat
              .getPermalink({ channel: r.messageChannel, message_ts: r.messageTs })
              .catch((err: unknown) => {
                logger.debug({ err, requestId: r.id }, "no permalink for an approval card");
                return undefined;
              });
            return found?.permalink ? [r.id, found.permalink] : undefined;
          }),
        ).then((pairs) => Object.fromEntries(pairs.filter((p) => p !== undefined))),
        LINKS_DEADLINE_MS,
        () => ({}),
      );
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
          return { requests, total, cardLinks: await cardLinks(requests) };
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
      let unusualZones: Parameters<typeof homeView>[0]["unusualZones"] = null;
      if (access.source === "unreadable") apps = { error: toUserSentence(access.err) };
      else if (access.source !== "none") {
        [apps, unusualZones] = await Promise.all([
          withDeadline(
            env.deps.clock,
            countAppsByStatus(env.deps.edge.forKey(access.apiKey)).catch((err: unknown) => ({
              error: toUserSentence(err),
            })),
            APPS_DEADLINE_MS,
            () => ({ error: "The Edge API is slow right now; reopen this tab to try again." }),
          ),
          withDeadline(
            env.deps.clock,
            rankZones(env.deps, teamId).catch((err: unknown) => ({ error: toUserSentence(err) })),
            ZONES_DEADLINE_MS,
            () => ({
              error:
                "The Edge API is slow to answer for the zones' traffic, so it is unknown which look unusual; reopen this tab in a minute.",
            }),
          ),
        ]);
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
          unusualZones,
        }),
      });
    } catch (err) {
      logger.warn({ err }, "could not publish the App Home");
    }
  };
}
