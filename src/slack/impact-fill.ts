import type { Deps } from "../deps.js";
import { LruCache } from "../lru.js";
import { estimateImpact, type ImpactPreview, impactTargetOf } from "../services/impact-preview.js";
import type { ChangeRequest, EffectivePolicy } from "../store/index.js";
import { approvalCard } from "./blocks/approvals.js";
import { withImpactPreview } from "./blocks/impact-preview.js";
import { CONFIRMING, type Reply } from "./blocks/reply.js";
import { cardWithEffect } from "./effects.js";

/**
 * The impact preview (services/impact-preview.ts) goes out beside a confirmation or an approval card,
 * never before it: the message is sent at once with "estimating…", the event log is read meanwhile
 * through the key's queue within a short deadline, and the message is then filled in place.
 */

/** Confirmations answered here (Confirm or Cancel pressed): a late fill must not bring their buttons back. */
const answered = new LruCache<string, true>(2_000);
/** The preview each approval card was filled with, so a redraw while it waits keeps it (this replica). */
const cardPreviews = new LruCache<string, ImpactPreview>(1_000);

export function confirmationAnswered(requestId: string): void {
  answered.set(requestId, true);
}

/**
 * Start reading the preview of `reply`'s change now; the returned function waits for it and replaces
 * the reply in place with it filled in. Undefined when the reply confirms no change the event log speaks to.
 */
export function fillLater(
  deps: Deps,
  teamId: string,
  reply: Reply,
  replace: (filled: Reply) => Promise<void>,
): (() => Promise<void>) | undefined {
  const c = reply[CONFIRMING];
  const target = c && impactTargetOf(c);
  if (!c || !target) return undefined;
  const preview = estimateImpact(deps, teamId, target);
  return async () => {
    const view = await preview;
    if (answered.has(c.requestId)) return;
    await replace(withImpactPreview(reply, view));
  };
}

/** `reply` with its preview read (for a message that can't be edited once posted, e.g. an ephemeral post). */
export async function withPreviewRead(deps: Deps, teamId: string, reply: Reply): Promise<Reply> {
  let filled = reply;
  await fillLater(deps, teamId, reply, async (r) => {
    filled = r;
  })?.();
  return filled;
}

/** Start reading the preview of a waiting request's card; undefined when the event log can't speak to it. */
export function startCardPreview(deps: Deps, request: ChangeRequest): Promise<ImpactPreview> | undefined {
  const target = request.state === "pending" ? impactTargetOf(request) : undefined;
  return target && estimateImpact(deps, request.teamId, target);
}

/** The approval card, with the preview it was filled with while the request waits, or its effect once applied. */
export function cardWithPreview(
  request: ChangeRequest,
  policy?: Pick<EffectivePolicy, "approvers">,
  admins: readonly string[] = [],
): Reply {
  const card = approvalCard(request, policy, admins);
  const known = cardPreviews.get(request.id);
  return request.state === "pending" && known
    ? withImpactPreview(card, known)
    : cardWithEffect(request, card);
}

/**
 * Read the preview of a posted (waiting) card, then redraw the card as its request is stored by then: filled
 * while it waits; a decision that landed meanwhile wins (the preview is shown only while the request waits).
 */
export async function fillCard(
  request: ChangeRequest,
  preview: Promise<ImpactPreview>,
  redraw: () => Promise<void>,
): Promise<void> {
  cardPreviews.set(request.id, await preview);
  await redraw();
}
