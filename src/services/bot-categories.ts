import type { Deps } from "../deps.js";
import type { EdgeClient } from "../edge/client.js";
import { EdgeApiError } from "../edge/errors.js";
import { type BotCategoryAction, botCategoryActionLabel, botCategoryLabel } from "../edge/schemas/shield.js";
import { toUserSentence, UserError, usage } from "../errors.js";
import type {
  ApprovalError,
  ApprovalRequest,
  ApprovalState,
  Approvers,
  EffectivePolicy,
} from "../store/index.js";
import { StoreError } from "../store/index.js";
import { edgeClientFor } from "./edge-access.js";

/** Names users type for the seven settable categories (1..7); 0 None and 255 System are not choices. */
const CATEGORY_NAMES: Record<string, number> = {
  seo: 1,
  aiscraper: 2,
  aiscrapers: 2,
  aitool: 3,
  aitools: 3,
  tool: 4,
  tools: 4,
  ads: 5,
  ad: 5,
  preview: 6,
  previews: 6,
  social: 7,
};

const ACTION_WORDS: Record<string, BotCategoryAction> = { clear: 0, none: 0, block: 1, allow: 2 };

export const BOT_EXAMPLE = "/edge bot 1234 aiscraper block";

export function parseCategory(word: string | undefined): number {
  if (word === undefined)
    throw usage(`Which category? seo, aiscraper, aitool, tool, ads, preview or social: ${BOT_EXAMPLE}`);
  const w = word.toLowerCase().replace(/[\s_-]/g, "");
  if (w === "0" || w === "none")
    throw usage(
      "Category 0 (None) is not a category of bots, so it can't be blocked or allowed. Use 1..7 or a name: " +
        BOT_EXAMPLE,
    );
  if (w === "255" || w === "system")
    throw usage(
      "The System category (255) is managed by bunny.net and is read-only. Use 1..7 or a name: " +
        BOT_EXAMPLE,
    );
  if (/^[1-7]$/.test(w)) return Number(w);
  const n = CATEGORY_NAMES[w];
  if (n === undefined)
    throw usage(
      `"${word}" is not a bot category. Use seo, aiscraper, aitool, tool, ads, preview, social or 1..7: ${BOT_EXAMPLE}`,
    );
  return n;
}

export function parseAction(word: string | undefined): BotCategoryAction {
  const a = word === undefined ? undefined : ACTION_WORDS[word.toLowerCase()];
  if (a === undefined) throw usage(`Say what to do: block, allow or clear: ${BOT_EXAMPLE}`);
  return a;
}

/** "Block AI scraper on zone 1234" */
export function describeChange(r: {
  shieldZoneId: number;
  category: number;
  requestedAction: number;
}): string {
  const verb = r.requestedAction === 0 ? "Clear" : botCategoryActionLabel(r.requestedAction);
  return `${verb} ${botCategoryLabel(r.category)} on shield zone ${r.shieldZoneId}`;
}

/** How the Slack layer answers "may this person approve here?" (admins, listed users, user groups). */
export type ApproverCheck = (userId: string, approvers: Approvers) => Promise<boolean>;

export interface ChangeInput {
  teamId: string;
  channelId: string;
  userId: string;
  shieldZoneId: number;
  category: number;
  action: BotCategoryAction;
  /** Set by the button that carried the confirmation, so a double click or a retry creates one request. */
  requestId: string;
}

export type ChangeOutcome =
  | { kind: "unchanged"; current: number }
  | { kind: "duplicate"; request: ApprovalRequest }
  | { kind: "pending"; request: ApprovalRequest; policy: EffectivePolicy }
  | { kind: "applied"; request: ApprovalRequest }
  | { kind: "failed"; request: ApprovalRequest };

async function audit(
  deps: Deps,
  r: ApprovalRequest,
  userId: string,
  action: string,
  outcome: string,
  details: Record<string, unknown> = {},
) {
  await deps.store.audit.append({
    teamId: r.teamId,
    userId,
    action,
    target: `shield zone ${r.shieldZoneId} / ${botCategoryLabel(r.category)}`,
    outcome,
    details: {
      requestId: r.id,
      channelId: r.channelId,
      requestedAction: botCategoryActionLabel(r.requestedAction),
      ...details,
    },
  });
}

function countState(deps: Deps, state: ApprovalState) {
  deps.metrics.approvals.inc({ state });
}

/**
 * The compare-and-set that decides a request: the winner gets the updated request, a loser the
 * state it lost to (so two clicks, replicas or approvers can never both win).
 */
async function decide(
  deps: Deps,
  request: ApprovalRequest,
  from: ApprovalState,
  to: ApprovalState,
  userId: string,
): Promise<{ won: boolean; request: ApprovalRequest }> {
  const updated = await deps.store.approvals.transition(request.id, from, to, {
    decidedBy: userId,
    decidedAt: deps.now(),
  });
  if (updated) return { won: true, request: updated };
  return { won: false, request: (await deps.store.approvals.get(request.id)) ?? request };
}

/**
 * A confirmed request to set a category's action. With approvals off it is applied at once; with
 * approvals required it waits, pending, for a second person. The request id comes from the button,
 * so the same click delivered twice makes one request.
 */
export async function requestChange(deps: Deps, input: ChangeInput): Promise<ChangeOutcome> {
  const existing = await deps.store.approvals.get(input.requestId);
  if (existing) return { kind: "duplicate", request: existing };

  const client = await edgeClientFor(deps, input.teamId);
  const categories = await client.getBotCategories(input.shieldZoneId);
  const current = categories.find((c) => c.category === input.category)?.action ?? null;
  if (current === input.action) return { kind: "unchanged", current };

  const policy = await deps.store.policies.getEffective(input.teamId, input.channelId);
  let request: ApprovalRequest;
  try {
    request = await deps.store.approvals.create({
      id: input.requestId,
      teamId: input.teamId,
      channelId: input.channelId,
      requesterId: input.userId,
      shieldZoneId: input.shieldZoneId,
      category: input.category,
      requestedAction: input.action,
      previousAction: current,
      expiresAt: deps.now() + policy.expiryMinutes * 60_000,
    });
  } catch (err) {
    const raced = err instanceof StoreError ? await deps.store.approvals.get(input.requestId) : undefined;
    if (raced) return { kind: "duplicate", request: raced };
    throw err;
  }
  countState(deps, "pending");
  await audit(deps, request, input.userId, "bot_category.request", "pending", {
    approvals: policy.approvals,
    previousAction: current === null ? null : botCategoryActionLabel(current),
  });
  if (policy.approvals === "required") return { kind: "pending", request, policy };

  const approved = await decide(deps, request, "pending", "approved", input.userId);
  if (!approved.won) return { kind: "duplicate", request: approved.request };
  countState(deps, "approved");
  await audit(deps, approved.request, input.userId, "bot_category.approve", "approved", {
    policy: "approvals off",
  });
  return applyApproved(deps, approved.request, input.userId, client);
}

/** The single PUT for an approved request, then approved → applied | failed. Only a CAS winner calls it. */
async function applyApproved(
  deps: Deps,
  request: ApprovalRequest,
  actorId: string,
  edge?: EdgeClient,
): Promise<ChangeOutcome> {
  try {
    const client = edge ?? (await edgeClientFor(deps, request.teamId));
    await client.setBotCategoryAction(
      request.shieldZoneId,
      request.category,
      request.requestedAction as BotCategoryAction,
    );
  } catch (err) {
    const lastError: ApprovalError = {
      kind: err instanceof EdgeApiError || err instanceof UserError ? err.kind : "internal",
      message: toUserSentence(err),
      ...(err instanceof EdgeApiError && err.status !== undefined ? { status: err.status } : {}),
      ...(err instanceof EdgeApiError && err.errorKey ? { errorKey: err.errorKey } : {}),
    };
    deps.logger.warn({ err, requestId: request.id }, "bot category change failed");
    const failed = await deps.store.approvals.transition(request.id, "approved", "failed", {
      lastError,
      incrementAttempts: true,
    });
    countState(deps, "failed");
    await audit(deps, request, actorId, "bot_category.apply", "failed", {
      status: lastError.status ?? null,
      errorKey: lastError.errorKey ?? null,
      error: lastError.kind,
    });
    return { kind: "failed", request: failed ?? { ...request, state: "failed", lastError } };
  }
  const applied = await deps.store.approvals.transition(request.id, "approved", "applied", {
    lastError: null,
    incrementAttempts: true,
  });
  countState(deps, "applied");
  await audit(deps, request, actorId, "bot_category.apply", "applied", { status: 200 });
  return { kind: "applied", request: applied ?? { ...request, state: "applied" } };
}

export type DecisionOutcome =
  | { kind: "not_found" }
  | { kind: "self_approval"; request: ApprovalRequest }
  | { kind: "not_approver"; request: ApprovalRequest }
  | { kind: "already_decided"; request: ApprovalRequest }
  | { kind: "expired"; request: ApprovalRequest }
  | { kind: "rejected"; request: ApprovalRequest }
  | ChangeOutcome;

interface DecisionInput {
  requestId: string;
  teamId: string;
  userId: string;
  isApprover: ApproverCheck;
}

async function loadForDecision(deps: Deps, input: DecisionInput) {
  const request = await deps.store.approvals.get(input.requestId);
  if (!request || request.teamId !== input.teamId) return undefined;
  return request;
}

/** Expire a pending request whose time is up; true for the one caller that did it. */
export async function expireIfDue(
  deps: Deps,
  request: ApprovalRequest,
): Promise<ApprovalRequest | undefined> {
  if (request.state !== "pending" || request.expiresAt > deps.now()) return undefined;
  const expired = await deps.store.approvals.transition(request.id, "pending", "expired", {
    decidedAt: deps.now(),
  });
  if (expired) {
    countState(deps, "expired");
    await audit(deps, expired, "system", "bot_category.expire", "expired");
  }
  return expired;
}

async function policyFor(deps: Deps, r: ApprovalRequest) {
  return deps.store.policies.getEffective(r.teamId, r.channelId);
}

/** Approve: the requester and non-approvers are refused; exactly one approver wins the CAS and applies. */
export async function approve(deps: Deps, input: DecisionInput): Promise<DecisionOutcome> {
  const request = await loadForDecision(deps, input);
  if (!request) return { kind: "not_found" };
  if (request.state !== "pending") return { kind: "already_decided", request };
  const expired = await expireIfDue(deps, request);
  if (expired) return { kind: "expired", request: expired };
  if (request.requesterId === input.userId) return { kind: "self_approval", request };
  if (!(await input.isApprover(input.userId, (await policyFor(deps, request)).approvers)))
    return { kind: "not_approver", request };
  const approved = await decide(deps, request, "pending", "approved", input.userId);
  if (!approved.won) return { kind: "already_decided", request: approved.request };
  countState(deps, "approved");
  await audit(deps, approved.request, input.userId, "bot_category.approve", "approved");
  return applyApproved(deps, approved.request, input.userId);
}

/** Reject: approvers only; the CAS decides between a reject and an approve that race. */
export async function reject(deps: Deps, input: DecisionInput): Promise<DecisionOutcome> {
  const request = await loadForDecision(deps, input);
  if (!request) return { kind: "not_found" };
  if (request.state !== "pending") return { kind: "already_decided", request };
  const expired = await expireIfDue(deps, request);
  if (expired) return { kind: "expired", request: expired };
  if (!(await input.isApprover(input.userId, (await policyFor(deps, request)).approvers)))
    return { kind: "not_approver", request };
  const rejected = await decide(deps, request, "pending", "rejected", input.userId);
  if (!rejected.won) return { kind: "already_decided", request: rejected.request };
  countState(deps, "rejected");
  await audit(deps, rejected.request, input.userId, "bot_category.reject", "rejected");
  return { kind: "rejected", request: rejected.request };
}

/** Retry a failed request: approvers only; each press that wins failed → approved makes one attempt. */
export async function retry(deps: Deps, input: DecisionInput): Promise<DecisionOutcome> {
  const request = await loadForDecision(deps, input);
  if (!request) return { kind: "not_found" };
  if (request.state !== "failed") return { kind: "already_decided", request };
  const policy = await policyFor(deps, request);
  const requesterMayRetry = policy.approvals === "off" && request.requesterId === input.userId;
  if (!requesterMayRetry && !(await input.isApprover(input.userId, policy.approvers)))
    return { kind: "not_approver", request };
  const approved = await decide(deps, request, "failed", "approved", input.userId);
  if (!approved.won) return { kind: "already_decided", request: approved.request };
  await audit(deps, approved.request, input.userId, "bot_category.retry", "approved");
  return applyApproved(deps, approved.request, input.userId);
}

/** Cancel a pending request whose card could not be posted. */
export async function cancel(deps: Deps, request: ApprovalRequest, reason: string): Promise<void> {
  const cancelled = await deps.store.approvals.transition(request.id, "pending", "cancelled", {
    decidedAt: deps.now(),
  });
  if (cancelled) {
    countState(deps, "cancelled");
    await audit(deps, cancelled, request.requesterId, "bot_category.cancel", "cancelled", { reason });
  }
}

/** Pending requests whose time is up, expired by whichever replica wins each CAS. */
export async function expireDue(deps: Deps, limit = 100): Promise<ApprovalRequest[]> {
  const due = await deps.store.approvals.listExpiredPending(deps.now(), limit);
  const expired: ApprovalRequest[] = [];
  for (const r of due) {
    const won = await expireIfDue(deps, r);
    if (won) expired.push(won);
  }
  return expired;
}
