import type { WebClient } from "@slack/web-api";
import { type ChangeInput, type ChangeOutcome, cancel, requestChange } from "../changes/engine.js";
import { type ChangeKind, resolveChange } from "../changes/index.js";
import { approversFor, restoreOf, UNKNOWN_OUTCOME_SENTENCE } from "../changes/moves.js";
import { toUserSentence } from "../errors.js";
import type { Logger } from "../log.js";
import type { ChangeRequest, EffectivePolicy } from "../store/index.js";
import {
  appliedLine,
  approvalCard,
  relatedLines,
  requesterOutcome,
  requestStateSentence,
} from "./blocks/approvals.js";
import { withImpactPreview } from "./blocks/impact-preview.js";
import { channel, dateToken, joinMrkdwn, type Mrkdwn, mention, mrkdwn } from "./blocks/mrkdwn.js";
import type { Reply } from "./blocks/reply.js";
import { isChannelMember } from "./channel-members.js";
import type { SlackEnv } from "./edge-commands/types.js";
import { cardWithPreview, fillCard, startCardPreview } from "./impact-fill.js";

/** Rounds of one redraw while the request keeps moving under it (another replica's moves). */
const MAX_DRAWS = 3;

/**
 * Bring the card in the channel up to date with its request as stored (buttons gone once decided). Redraws
 * of one card go one at a time in this process (env.cardRedraws), each drawing the request as read right
 * before it is sent. Another replica may still have an older drawing in flight that Slack answers after this
 * one: so once Slack took the card, the request is read again and the card drawn again if it no longer shows
 * what is stored. Whoever lands a stale card finds so afterwards, or the move it missed redraws it.
 * `draw`: the card for the request as stored (the impact preview fill names the approvers too).
 */
export function updateCard(
  env: SlackEnv,
  client: WebClient,
  request: Pick<ChangeRequest, "id">,
  logger: Logger,
  draw: (latest: ChangeRequest) => Reply | Promise<Reply> = (latest) => storedCard(env, client, latest),
): Promise<void> {
  return env.cardRedraws.redraw(request.id, async () => {
    try {
      let sent: string | undefined;
      let drawnFrom: string | undefined;
      for (let round = 0; round < MAX_DRAWS; round++) {
        const latest = await env.deps.store.changeRequests.get(request.id);
        if (!latest?.messageChannel || !latest.messageTs) return;
        // Mid-flow (applying, undoing): the flow draws the card at its end; drawn now it would flicker.
        if (inPassing(latest)) return;
        // Stored as it was when the card Slack just took was drawn: that card shows it, no need to draw it again.
        const stored = JSON.stringify(latest);
        if (stored === drawnFrom) return;
        drawnFrom = stored;
        const card = await draw(latest);
        const drawing = JSON.stringify([latest.messageChannel, latest.messageTs, card.text, card.blocks]);
        if (drawing === sent || (round === 0 && env.cardRedraws.alreadySent(request.id, drawing))) return;
        await client.chat.update({
          channel: latest.messageChannel,
          ts: latest.messageTs,
          text: card.text,
          blocks: card.blocks,
        });
        sent = drawing;
        env.cardRedraws.sentNow(request.id, drawing);
      }
    } catch (err) {
      logger.warn({ err, requestId: request.id }, "could not update the approval card");
    }
  });
}

/** Redraw a request's card from outside a Slack request (the alerts poller's effect refresh), with the workspace's client. */
export function cardRedrawer(env: SlackEnv): (request: ChangeRequest) => Promise<void> {
  return async (request) => updateCard(env, await env.clientFor(request.teamId), request, env.deps.logger);
}

/**
 * The card for a request as stored. One still waiting names its approvers as the policy now says (the same
 * policy an approval is checked against), so a redraw (a conflict noted on it) keeps its Approvers line.
 */
async function storedCard(env: SlackEnv, client: WebClient, request: ChangeRequest): Promise<Reply> {
  if (request.state !== "pending") return cardWithPreview(request);
  const policy = await approversFor(env.deps, request);
  const admins =
    policy.approvers.kind === "admins" ? await env.admins.listAdmins(client, request.teamId) : [];
  return cardWithPreview(request, policy, admins);
}

/**
 * A move the flow that made it carries on from at once (approved → apply, undoing → put back): the card
 * is drawn at the end of that flow (a move, or a note when the outcome is not known yet), not in between.
 */
const PASSING: ReadonlySet<ChangeRequest["state"]> = new Set(["approved", "undoing"]);

/** In such a move, and not noted as waiting for an outcome not known yet (that note is drawn). */
const inPassing = (r: ChangeRequest) => PASSING.has(r.state) && r.lastError?.kind !== "unknown";

/**
 * The one place approval cards are redrawn: told by the engine (src/changes/observers.ts) of every move
 * and every note on a request, whichever path made it (a click, the sweeps, reconcile, undo, a workflow
 * step). Registered once, where the Slack app is composed; returns the function that removes it.
 */
export function redrawCardsOnChange(env: SlackEnv): () => void {
  const logger = env.deps.logger;
  const redraw = async (request: ChangeRequest) => {
    if (!request.messageChannel || !request.messageTs) return;
    await updateCard(env, await env.clientFor(request.teamId), request, logger);
  };
  const unwatchMoves = env.deps.changeObservers.add(async (request) => {
    if (!PASSING.has(request.state)) await redraw(request);
  });
  const unwatchNotes = env.deps.changeObservers.addNoted(redraw);
  return () => {
    unwatchMoves();
    unwatchNotes();
  };
}

/**
 * Tell the requester, in the card's thread (a mention notifies them), how others decided their request
 * (and, again, once a rejecter adds the reason). `client`: the request's own, when there is one.
 */
export async function tellRequester(
  env: SlackEnv,
  request: ChangeRequest,
  client?: WebClient,
): Promise<void> {
  if (!request.messageChannel || !request.messageTs) return;
  const line = requesterOutcome(request);
  if (!line) return;
  client ??= await env.clientFor(request.teamId);
  await client.chat
    .postMessage({
      channel: request.messageChannel,
      thread_ts: request.messageTs,
      text: line.text,
      blocks: line.blocks,
    })
    .catch((err: unknown) =>
      env.deps.logger.warn({ err, requestId: request.id }, "could not tell the requester the outcome"),
    );
}

/** Post the approval card in the channel; on failure the request is cancelled and the reason returned. */
export async function postApprovalCard(
  env: SlackEnv,
  client: WebClient,
  request: ChangeRequest,
  policy: Pick<EffectivePolicy, "approvers">,
  logger: Logger,
  /** Show the change's impact preview: "estimating…" at once, filled in place once read. */
  impactPreview = false,
): Promise<string | undefined> {
  const c = resolveChange(request);
  const byAdmins = c?.kind.approvers === "admins" || policy.approvers.kind === "admins";
  const admins =
    request.state === "pending" && byAdmins ? await env.admins.listAdmins(client, request.teamId) : [];
  const preview = impactPreview ? startCardPreview(env.deps, request) : undefined;
  const plain = approvalCard(request, policy, admins);
  const card = preview ? withImpactPreview(plain, { state: "estimating" }) : plain;
  try {
    const res = await client.chat.postMessage({
      channel: request.channelId,
      text: card.text,
      blocks: card.blocks,
    });
    if (res.ts) {
      await env.deps.store.changeRequests.setMessage(request.id, res.channel ?? request.channelId, res.ts);
      // Decided (or expired) between posting and recording where: bring the card up to date now.
      const latest = await env.deps.store.changeRequests.get(request.id);
      if (latest && latest.state !== "pending") await updateCard(env, client, latest, logger);
      else if (preview)
        // Not awaited: the person who confirmed is answered now; the card is filled when the preview is read.
        void fillCard(request, preview, () =>
          updateCard(env, client, request, logger, (latest) => cardWithPreview(latest, policy, admins)),
        ).catch((err: unknown) => logger.warn({ err, requestId: request.id }, "impact preview fill failed"));
    }
    return undefined;
  } catch (err) {
    logger.warn({ err, requestId: request.id }, "could not post the approval card");
    // Only a waiting request can be cancelled: an applied (or sent) change stands without its card.
    if (request.state !== "pending") return withoutCard(request, toUserSentence(err));
    const sentence = `${toUserSentence(err)} The request was cancelled, nothing changed.`;
    await cancel(env.deps, request, "approval card could not be posted", sentence);
    return sentence;
  }
}

/** What is true of a change made (or sent) whose card could not be posted, and how to undo it by hand. */
function withoutCard(request: ChangeRequest, why: string): string {
  const c = resolveChange(request);
  const change = c ? c.kind.describe(c.params) : "The change";
  // What its undo puts back (the value its apply replaced), so the command undoes rather than re-applies.
  const back = c?.kind.undo?.(c.params, restoreOf(request));
  const undoBy =
    back && c ? ` To undo it sooner: ${c.kind.describe(back)}, with ${c.kind.askAgain(back)}.` : "";
  if (request.state === "applied" && request.undoAt !== null)
    return `${why} The change was made all the same: ${change} is in effect until ${new Date(request.undoAt).toISOString().slice(0, 16).replace("T", " ")} UTC, then edgeops undoes it (there is no card with Undo now).${undoBy}`;
  if (request.state === "applied") return `${why} The change was made all the same: ${change} is in effect.`;
  return `${why} ${change} was sent to the Edge API, but no answer came yet: edgeops checks whether it took effect (there is no card to show the outcome; /edge audit will).`;
}

/**
 * Ask for a change (src/changes/engine.ts requestChange) and post its card in the channel where one
 * is needed: pending (for the approvers), an unknown outcome (for the reconciler's answer), a temporary
 * change (for Undo now and its undo). `failure`: the card could not be posted and the request was
 * cancelled, with the sentence saying why. The one flow behind Confirm buttons and workflow steps.
 */
export async function requestWithCard<P>(
  env: SlackEnv,
  client: WebClient,
  logger: Logger,
  // biome-ignore lint/suspicious/noExplicitAny: any kind's value type
  kind: ChangeKind<P, any>,
  input: ChangeInput<P>,
  /** Show the impact preview on the card (a person confirmed in Slack; not a workflow step). */
  impactPreview = false,
): Promise<{ outcome: ChangeOutcome; failure?: string }> {
  const outcome = await requestChange(env.deps, kind, input);
  const temporaryApplied = outcome.kind === "applied" && outcome.request.undoAt !== null;
  if (outcome.kind === "pending" || outcome.kind === "unknown" || temporaryApplied) {
    const policy = outcome.kind === "pending" ? outcome.policy : { approvers: { kind: "admins" as const } };
    const failure = await postApprovalCard(env, client, outcome.request, policy, logger, impactPreview);
    if (failure) return { outcome, failure };
  } else if (outcome.kind === "applied" && outcome.request.reason?.kind === "no_approval") {
    // No card: the channel still sees who changed what, not only the actor's private "Done".
    const line = appliedLine(outcome.request);
    await client.chat
      .postMessage({ channel: outcome.request.channelId, text: line.text, blocks: line.blocks })
      .catch((err: unknown) =>
        logger.warn({ err, requestId: outcome.request.id }, "could not post the applied line"),
      );
  }
  return { outcome };
}

/** Applied without a write: the value was in force when asked (a temporary change held it), so it took it over. */
function tookOver(r: ChangeRequest): boolean {
  const c = resolveChange(r);
  return c !== undefined && c.kind.targetKey !== undefined && c.kind.inForce(c.params, r.observed);
}

/** Who asked for a waiting request, as its reader sees it: "You", or a mention. */
export function askerOf(request: ChangeRequest, viewerId: string): Mrkdwn {
  return request.requesterId === viewerId ? mrkdwn`You` : mention(request.requesterId);
}

/**
 * Whether the viewer may be told where a waiting request is and who asked: its channel's members (and its
 * requester) only, so a private channel's request is not revealed to someone asking from elsewhere.
 */
export async function seesWhereItWaits(
  env: SlackEnv,
  client: WebClient,
  request: ChangeRequest,
  viewer: { userId: string; channelId: string },
): Promise<boolean> {
  if (request.requesterId === viewer.userId || request.channelId === viewer.channelId) return true;
  return isChannelMember(env.deps, client, request.teamId, request.channelId, viewer.userId);
}

/**
 * What the requester reads after confirming a change, once any card is posted. `who` says who
 * must approve ("a second person", "another admin"). Undefined for a duplicate: the caller says so.
 * `seesWhere`: false when the viewer is not in the channel where a joined request waits.
 */
export function outcomeBanner(
  outcome: ChangeOutcome,
  change: string,
  viewerId: string,
  who = "a second person",
  seesWhere = true,
): Mrkdwn | undefined {
  const c = change;
  switch (outcome.kind) {
    case "unchanged":
      return mrkdwn`:information_source: *${c}* is already in force; nothing changed.`;
    case "duplicate":
      return undefined;
    case "already_pending": {
      const r = outcome.request;
      if (!seesWhere)
        return mrkdwn`:hourglass_flowing_sand: Someone already asked for *${c}*; it waits for approval elsewhere. No second request was made.`;
      return mrkdwn`:hourglass_flowing_sand: ${askerOf(r, viewerId)} already asked for *${c}*: it is waiting for approval in ${channel(r.channelId)} until ${dateToken(r.expiresAt)}. No second request was made; approve that one there if you may.`;
    }
    case "pending": {
      const related = relatedLines(outcome.request);
      const line = mrkdwn`:hourglass_flowing_sand: *${c}* needs ${who}'s approval: the request is posted in this channel.`;
      return related.length > 0 ? joinMrkdwn([line, ...related], "\n") : line;
    }
    case "applied":
      if (tookOver(outcome.request))
        return outcome.request.undoAt === null
          ? mrkdwn`:white_check_mark: *${c}* was already in force and now stays: the temporary change that set it will not undo it (its card says so).`
          : mrkdwn`:white_check_mark: *${c}* was already in force and now stays until ${dateToken(outcome.request.undoAt)}; then edgeops undoes it (the card in this channel has Undo now).`;
      return outcome.request.undoAt === null
        ? mrkdwn`:white_check_mark: Done: *${c}*.`
        : mrkdwn`:white_check_mark: Done: *${c}*, until ${dateToken(outcome.request.undoAt)}; then edgeops undoes it (the card in this channel has Undo now).`;
    case "already_set":
      return mrkdwn`:information_source: ${requestStateSentence(outcome.request)}`;
    case "failed":
      return mrkdwn`:x: *${c}* failed: ${outcome.request.lastError?.message ?? "unknown error"}`;
    case "unknown":
      // Why it is not known, where the engine said more than "no answer in time".
      return outcome.request.lastError?.message &&
        outcome.request.lastError.message !== UNKNOWN_OUTCOME_SENTENCE
        ? mrkdwn`:mag: *${c}*: ${outcome.request.lastError.message}`
        : mrkdwn`:mag: *${c}* was sent, but the Edge API did not answer in time. Not known yet: edgeops is checking and will update the request.`;
  }
}
