import type { WebClient } from "@slack/web-api";
import { type ChangeOutcome, cancel } from "../changes/engine.js";
import { toUserSentence } from "../errors.js";
import type { Logger } from "../log.js";
import type { ApprovalRequest, EffectivePolicy } from "../store/index.js";
import { approvalCard } from "./blocks/approvals.js";
import { dateToken, type Mrkdwn, mrkdwn } from "./blocks/common.js";
import type { SlackEnv } from "./commands/types.js";

/** Bring the card in the channel up to date with the request's state (buttons gone once decided). */
export async function updateCard(client: WebClient, request: ApprovalRequest, logger: Logger): Promise<void> {
  if (!request.messageChannel || !request.messageTs) return;
  const card = approvalCard(request);
  await client.chat
    .update({ channel: request.messageChannel, ts: request.messageTs, text: card.text, blocks: card.blocks })
    .catch((err: unknown) =>
      logger.warn({ err, requestId: request.id }, "could not update the approval card"),
    );
}

/** Post the approval card in the channel; on failure the request is cancelled and the reason returned. */
export async function postApprovalCard(
  env: SlackEnv,
  client: WebClient,
  request: ApprovalRequest,
  policy: Pick<EffectivePolicy, "approvers">,
  logger: Logger,
): Promise<string | undefined> {
  const card = approvalCard(request, policy);
  try {
    const res = await client.chat.postMessage({
      channel: request.channelId,
      text: card.text,
      blocks: card.blocks,
    });
    if (res.ts) {
      await env.deps.store.approvals.setMessage(request.id, res.channel ?? request.channelId, res.ts);
      // Decided (or expired) between posting and recording where: bring the card up to date now.
      const latest = await env.deps.store.approvals.get(request.id);
      if (latest && latest.state !== "pending") await updateCard(client, latest, logger);
    }
    return undefined;
  } catch (err) {
    logger.warn({ err, requestId: request.id }, "could not post the approval card");
    await cancel(env.deps, request, "approval card could not be posted");
    return `${toUserSentence(err)} The request was cancelled, nothing changed.`;
  }
}

/**
 * What the requester reads after confirming a change, once any card is posted. `who` says who
 * must approve ("a second person", "another admin"). Undefined for a duplicate: the caller says so.
 */
export function outcomeBanner(
  outcome: ChangeOutcome,
  change: string,
  who = "a second person",
): Mrkdwn | undefined {
  const c = change;
  switch (outcome.kind) {
    case "unchanged":
      return mrkdwn`:information_source: *${c}* is already in force; nothing changed.`;
    case "duplicate":
      return undefined;
    case "pending":
      return mrkdwn`:hourglass_flowing_sand: *${c}* needs ${who}'s approval: the request is posted in this channel.`;
    case "applied":
      return outcome.request.undoAt === null
        ? mrkdwn`:white_check_mark: Done: *${c}*.`
        : mrkdwn`:white_check_mark: Done: *${c}*, until ${dateToken(outcome.request.undoAt)}; then edgeops undoes it (the card in this channel has Undo now).`;
    case "failed":
      return mrkdwn`:x: *${c}* failed: ${outcome.request.lastError?.message ?? "unknown error"}`;
    case "unknown":
      return mrkdwn`:mag: *${c}* was sent, but the Edge API did not answer in time. Not known yet: edgeops is checking and will update the request.`;
  }
}
