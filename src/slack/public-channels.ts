import type { WebClient } from "@slack/web-api";

/**
 * Of these channels, the ones Slack says are public (conversations.info): what is said there anyone in the
 * workspace may read. Unknown counts as private (an error, a channel edgeops is not in): a channel's people are
 * named elsewhere only when Slack says it is public.
 */
export async function publicChannelsAmong(
  client: WebClient,
  channelIds: Iterable<string>,
): Promise<Set<string>> {
  const ids = [...new Set(channelIds)];
  const answers = await Promise.all(
    ids.map((id) =>
      client.conversations
        .info({ channel: id })
        .then((res) => res.channel?.is_private === false)
        .catch(() => false),
    ),
  );
  return new Set(ids.filter((_, i) => answers[i]));
}
