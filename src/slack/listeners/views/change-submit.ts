import type { AllMiddlewareArgs, SlackViewMiddlewareArgs, ViewSubmitAction } from "@slack/bolt";
import { withDeadline } from "../../../deadline.js";
import { toUserSentence } from "../../../errors.js";
import { PICKER_NOTICE_VALUE } from "../../blocks/pickers.js";
import { sentenceReply } from "../../blocks/reply.js";
import { formFor } from "../../change-forms.js";
import { channelMembers } from "../../channel-members.js";
import { parseTemporary } from "../../edge-commands/parse.js";
import type { SlackEnv, Subcommand } from "../../edge-commands/types.js";
import { CHANGE_MODAL } from "../../ids.js";
import { withPreviewRead } from "../../impact-fill.js";
import { quoted } from "../../picker-template.js";
import { rerunCommand, sendReply } from "../commands/edge.js";

type Args = SlackViewMiddlewareArgs<ViewSubmitAction> & AllMiddlewareArgs;
type StateValue = {
  selected_option?: { value?: string } | null;
  value?: string | null;
  selected_conversation?: string | null;
};

/**
 * The change modal submitted: its fields become the words of the kind's command, which runs as if typed
 * in the chosen channel; its answer (the Confirm / Cancel of every change, or a sentence) is posted
 * there, privately. Nothing is requested until Confirm is pressed, as for a typed command.
 */
export function changeSubmit(env: SlackEnv, subcommands: ReadonlyMap<string, Subcommand>) {
  return async ({ ack, body, view, client, respond }: Args) => {
    const teamId = body.team?.id ?? body.user.team_id ?? "";
    const userId = body.user.id;
    const logger = env.deps.logger.child({ teamId, userId, view: view.callback_id });
    const values = view.state.values as Record<string, Record<string, StateValue>>;
    const read = (block: string): string | undefined => {
      const v = values[block]?.[CHANGE_MODAL.value];
      const s = v?.selected_option?.value ?? v?.value ?? v?.selected_conversation ?? undefined;
      return s === null || s === undefined || s.trim() === "" ? undefined : s.trim();
    };
    const kindBlock = Object.values(values[CHANGE_MODAL.kind] ?? {})[0];
    const form = formFor(kindBlock?.selected_option?.value ?? undefined);
    const target = read(CHANGE_MODAL.target);
    const channelId = read(CHANGE_MODAL.channel);
    const errors: Record<string, string> = {};
    if (!form) errors[CHANGE_MODAL.target] = "Choose what to change first.";
    if (!target || target === PICKER_NOTICE_VALUE)
      errors[CHANGE_MODAL.target] = "Type part of a name and pick one of the results.";
    if (!channelId)
      errors[CHANGE_MODAL.channel] = "Choose the channel where the change is confirmed and approved.";
    const duration = read(CHANGE_MODAL.duration);
    if (duration !== undefined) {
      try {
        parseTemporary(["for", duration], "for 30m");
      } catch {
        errors[CHANGE_MODAL.duration] =
          "A duration from 1m to 24h, like 30m, 2h or 1h30m (or leave it empty).";
      }
    }
    if (!form || !target || !channelId || Object.keys(errors).length > 0) {
      await ack({ response_action: "errors", errors });
      return;
    }
    // The channel's policy and its card are only for its members, as a typed command can only come from one.
    const notMember = await whyNotMember(env, client, { teamId, userId, channelId });
    if (notMember) {
      logger.info({ channelId }, "change modal: the user is not a member of the chosen channel");
      await ack({ response_action: "errors", errors: { [CHANGE_MODAL.channel]: notMember } });
      return;
    }
    await ack();
    const words = [
      form.command,
      target,
      ...form.fields.flatMap((f) => read(`${CHANGE_MODAL.fieldPrefix}${f.id}`) ?? []),
      ...(duration !== undefined ? ["for", duration] : []),
    ];
    const text = words.map(quoted).join(" ");
    const origin = { client, logger, teamId, userId, channelId, triggerId: undefined };
    const result = await rerunCommand(env, subcommands, origin, text);
    logger.info({ subcommand: result.subcommand, outcome: result.outcome }, "change modal submitted");
    // Posted once, not edited after: the impact preview is read (within its deadline) before it goes out.
    const reply = result.reply
      ? await withPreviewRead(env.deps, teamId, result.reply)
      : sentenceReply("Nothing to confirm.");
    if ((body.response_urls ?? []).length > 0) {
      await sendReply(respond, reply, false, undefined, logger);
      return;
    }
    await client.chat
      .postEphemeral({ channel: channelId, user: userId, text: reply.text, blocks: reply.blocks })
      .catch((err: unknown) => logger.warn({ err }, "could not post the change to confirm"));
  };
}

const NOT_A_MEMBER =
  "You are not a member of that channel: pick one you are in (the change is confirmed and approved there).";
const MEMBERS_LATE = "Slack did not say in time who is in that channel: try again.";
/** The membership check answers before Slack's 3-second deadline for the modal's answer. */
const MEMBERS_WAIT_MS = 2_000;

/** Why the user may not confirm a change in the channel (not a member, unreadable), or undefined. */
async function whyNotMember(
  env: SlackEnv,
  client: Args["client"],
  where: { teamId: string; userId: string; channelId: string },
): Promise<string | undefined> {
  try {
    const members = await withDeadline(
      env.deps.clock,
      channelMembers(env.deps, client, where.teamId, where.channelId, where.userId),
      MEMBERS_WAIT_MS,
      () => undefined,
    );
    if (!members) return MEMBERS_LATE;
    return members.has(where.userId) ? undefined : NOT_A_MEMBER;
  } catch (err) {
    return toUserSentence(err);
  }
}
