import type { WebClient } from "@slack/web-api";
import { slackErrorCode } from "../errors.js";
import type { Logger } from "../log.js";
import type { Metrics } from "../ops/metrics.js";
import type { Reply } from "./blocks/reply.js";

/**
 * The one way the clock's jobs post to a channel (a schedule's DNS summary, an alert's parent and its thread):
 * post, update, thread reply, and the "channel refuses posts" rule. A channel that refuses posts
 * (not_in_channel, channel_not_found, is_archived) marks its owner (the schedule, the watch) failing and tells
 * its creator once, in one direct message; the next post that arrives clears the mark. Any other failure is
 * counted and handed back for the job to log and try again.
 */

/** Slack errors that mean "this channel does not take our posts": mark failing, tell the creator once. */
export const CHANNEL_ERRORS = new Set(["not_in_channel", "channel_not_found", "is_archived"]);

/** What the posts belong to: a schedule or a watch, with its channel and its creator. */
export interface PostingOwner {
  what: "schedule" | "watch";
  channelId: string;
  createdBy: string;
  /** Marked failing already: its creator has been told. */
  failing: boolean;
  /** Record that its channel refuses posts (`slackError`: Slack's code). */
  markFailing(slackError: string, err: unknown): Promise<unknown>;
  /** Its channel took a post again. */
  clearFailing(): Promise<unknown>;
  /** The one direct message its creator gets when its channel starts refusing posts. */
  failingDm(slackError: string): Reply;
}

/** Sending to the owner's channel; what throws here is handled by the rule above. */
export interface ChannelSender {
  /** Post in the channel, or in a thread of it; Slack's ts of the new message. */
  post(message: Reply, threadTs?: string): Promise<string | undefined>;
  update(ts: string, message: Reply): Promise<void>;
}

export type Delivered<T> =
  | { outcome: "sent"; value: T }
  /** No Web API client for the workspace (e.g. the app was uninstalled). */
  | { outcome: "no_client"; error: unknown }
  /** The job's claim ended before anything was sent (the fence): another replica does it. */
  | { outcome: "superseded" }
  | { outcome: "channel_failing"; slackError: string; error: unknown }
  | { outcome: "slack_error"; slackError: string; error: unknown };

export interface DeliverOptions {
  /** The workspace's Web API client (may throw). */
  client: () => Promise<WebClient>;
  metrics: Pick<Metrics, "slackApiErrors">;
  logger: Logger;
  /** Asked just before sending (a lease's renewal); false: nothing is sent. */
  fence?: (() => Promise<boolean>) | undefined;
}

/** Post in a channel (or a thread of it) as the jobs do: links and media not unfurled. */
export async function postIn(
  client: WebClient,
  channel: string,
  message: Reply,
  threadTs?: string,
): Promise<string | undefined> {
  const posted = await client.chat.postMessage({
    channel,
    ...(threadTs ? { thread_ts: threadTs } : {}),
    text: message.text,
    blocks: message.blocks,
    unfurl_links: false,
    unfurl_media: false,
  });
  return posted.ts;
}

/** Send to the owner's channel with `send`. Never throws: every failure is an outcome. */
export async function deliverTo<T>(
  o: DeliverOptions,
  owner: PostingOwner,
  send: (to: ChannelSender) => Promise<T>,
): Promise<Delivered<T>> {
  let client: WebClient;
  try {
    client = await o.client();
  } catch (error) {
    o.logger.warn({ err: error }, `no Slack client for the ${owner.what}'s workspace`);
    return { outcome: "no_client", error };
  }
  if (o.fence && !(await o.fence())) return { outcome: "superseded" };
  let method = "chat.postMessage";
  const sender: ChannelSender = {
    post(message, threadTs) {
      method = "chat.postMessage";
      return postIn(client, owner.channelId, message, threadTs);
    },
    async update(ts, message) {
      method = "chat.update";
      await client.chat.update({ channel: owner.channelId, ts, text: message.text, blocks: message.blocks });
    },
  };
  let value: T;
  try {
    value = await send(sender);
  } catch (error) {
    const slackError = slackErrorCode(error) ?? "unknown";
    o.metrics.slackApiErrors.inc({ method, error: slackError });
    if (!CHANNEL_ERRORS.has(slackError)) return { outcome: "slack_error", slackError, error };
    o.logger.warn({ slackError, alreadyFailing: owner.failing }, `${owner.what}'s channel refuses posts`);
    await owner.markFailing(slackError, error);
    // One direct message when it starts failing; none while it stays failing.
    if (!owner.failing) await tellCreator(client, owner, owner.failingDm(slackError), o.logger);
    return { outcome: "channel_failing", slackError, error };
  }
  if (owner.failing) await owner.clearFailing();
  return { outcome: "sent", value };
}

async function tellCreator(client: WebClient, owner: PostingOwner, message: Reply, logger: Logger) {
  try {
    const dm = await client.conversations.open({ users: owner.createdBy });
    const channel = dm.channel?.id;
    if (!channel) throw new Error("conversations.open returned no channel");
    await client.chat.postMessage({ channel, text: message.text, blocks: message.blocks });
  } catch (err) {
    logger.warn(
      { err, userId: owner.createdBy },
      `could not tell the ${owner.what}'s creator that it is failing`,
    );
  }
}
