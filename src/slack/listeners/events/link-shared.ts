import type { AllMiddlewareArgs, SlackEventMiddlewareArgs } from "@slack/bolt";
import type { KnownBlock } from "@slack/types";
import { parseDashboardLink, resolveDashboardLink } from "../../../services/dashboard-links.js";
import { keyInUse } from "../../../services/edge-access.js";
import { appStatusCard } from "../../blocks/apps.js";
import { zoneStatusCard } from "../../blocks/zones.js";
import type { SlackEnv } from "../../edge-commands/types.js";

/** Links unfurled from one message at most (Slack sends up to 5 a message anyway). */
const MAX_LINKS = 5;

/**
 * link_shared for dash.bunny.net: a compact status card for each link to a zone or an application,
 * only for a workspace with a key, and only for what that key sees. Anything else is left alone
 * (Slack shows the plain link) and logged.
 */
export function linkShared(env: SlackEnv) {
  return async ({ event, client, context }: SlackEventMiddlewareArgs<"link_shared"> & AllMiddlewareArgs) => {
    const teamId = context.teamId ?? "";
    const logger = env.deps.logger.child({ teamId, userId: event.user, event: "link_shared" });
    const links = event.links.slice(0, MAX_LINKS);
    let key: Awaited<ReturnType<typeof keyInUse>>;
    try {
      key = await keyInUse(env.deps, teamId);
    } catch (err) {
      logger.warn({ err }, "unfurl skipped: the workspace's key could not be read");
      return;
    }
    if (key.source === "none") {
      logger.info({ links: links.length }, "unfurl skipped: no Edge API key for this workspace");
      return;
    }
    const unfurls: Record<string, { blocks: KnownBlock[] }> = {};
    for (const { url } of links) {
      const link = parseDashboardLink(url);
      if (!link) {
        logger.debug({ url }, "unfurl skipped: not a zone or application page");
        continue;
      }
      try {
        const target = await resolveDashboardLink(env.deps, teamId, link);
        if (!target) {
          logger.warn({ link }, "unfurl refused: not visible to this workspace's Edge API key");
          continue;
        }
        unfurls[url] =
          target.kind === "zone"
            ? zoneStatusCard(target.zone, env.deps.clock.now())
            : appStatusCard(target.app);
      } catch (err) {
        logger.warn({ err, link }, "unfurl skipped: the lookup failed");
      }
    }
    if (Object.keys(unfurls).length === 0) return;
    const where =
      event.unfurl_id && event.source
        ? { unfurl_id: event.unfurl_id, source: event.source }
        : { channel: event.channel, ts: event.message_ts };
    await client.chat
      .unfurl({ ...where, unfurls } as Parameters<typeof client.chat.unfurl>[0])
      .catch((err: unknown) => logger.warn({ err }, "chat.unfurl failed"));
    logger.info({ unfurled: Object.keys(unfurls).length }, "links unfurled");
  };
}
