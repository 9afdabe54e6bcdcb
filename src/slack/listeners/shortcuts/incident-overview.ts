import type { AllMiddlewareArgs, MessageShortcut, SlackShortcutMiddlewareArgs } from "@slack/bolt";
import { toUserSentence } from "../../../errors.js";
import { zoneCandidates, zoneMentionedIn } from "../../../services/zone-lookup.js";
import type { MrkdwnInput } from "../../blocks/mrkdwn.js";
import { sentenceReply } from "../../blocks/reply.js";
import type { SlackEnv, Subcommand } from "../../edge-commands/types.js";
import { rerunCommand, sendReply } from "../commands/edge.js";

type Args = SlackShortcutMiddlewareArgs<MessageShortcut> & AllMiddlewareArgs;

/**
 * "Open incident overview" on a message: the incident card of the one shield zone whose domain the
 * message mentions (resolved in the workspace key's zone list), privately to the person who asked.
 */
export function incidentOverview(env: SlackEnv, subcommands: ReadonlyMap<string, Subcommand>) {
  return async ({ shortcut, ack, respond, client }: Args) => {
    await ack();
    const teamId = shortcut.team?.id ?? shortcut.user.team_id ?? "";
    const userId = shortcut.user.id;
    const logger = env.deps.logger.child({ teamId, userId, shortcut: shortcut.callback_id });
    const tell = (sentence: MrkdwnInput) =>
      sendReply(respond, sentenceReply(sentence), false, undefined, logger);
    let found: Awaited<ReturnType<typeof zoneMentionedIn>>;
    try {
      found = await zoneMentionedIn(env.deps, teamId, String(shortcut.message.text ?? ""));
    } catch (err) {
      await tell(toUserSentence(err));
      return;
    }
    if (found.kind === "none_mentioned")
      return tell(
        "That message mentions no domain. Use the shortcut on a message naming a site, like shop.example.com, or run /edge incident with a zone.",
      );
    if (found.kind === "no_zone")
      return tell(
        `No shield zone of this workspace has the domain ${found.domains.slice(0, 5).join(", ")}${found.domains.length > 5 ? " …" : ""}. Find it with /edge zones and part of its name.`,
      );
    if (found.kind === "several")
      return tell(
        `That message mentions several shield zones: ${zoneCandidates(found.zones)}. Run /edge incident with the one you mean.`,
      );
    const origin = {
      client,
      logger,
      teamId,
      userId,
      channelId: shortcut.channel.id,
      triggerId: shortcut.trigger_id,
    };
    const result = await rerunCommand(env, subcommands, origin, `incident ${found.shieldZoneId}`);
    logger.info(
      { outcome: result.outcome, shieldZoneId: found.shieldZoneId },
      "incident overview from a message",
    );
    // Private: the shortcut's response_url cannot replace the message it was used on.
    if (result.reply) await sendReply(respond, result.reply, false, `incident ${found.shieldZoneId}`, logger);
  };
}
