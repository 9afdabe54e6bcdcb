import type { z } from "zod";
import type { Deps } from "../deps.js";
import type { MrkdwnInput } from "../slack/blocks/common.js";
import type { EffectivePolicy } from "../store/index.js";

/** Where a change is asked for: the workspace, the channel the card goes to, the person asking. */
export interface ChangeScope {
  teamId: string;
  channelId: string;
  userId: string;
}

/** Who decides a request of this kind: the channel's approvers, or workspace admins only. */
export type ApproverRule = "policy" | "admins";

/**
 * One kind of change (a bot category's action, the approval policy, …). The state machine in
 * engine.ts is the same for every kind; a kind says only what its change is and how to read and make it.
 * `describe` and `target` are plain text (the Block Kit boundary escapes them); `details` values are
 * plain text too, or Mrkdwn (`mrkdwn\`…\``, `mention(id)` …) where they need formatting.
 */
export interface ChangeKind<P = unknown, V = unknown> {
  /** Stored with the request. */
  readonly name: string;
  /** The stored parameters, checked whenever a request is read back. */
  readonly params: z.ZodType<P>;
  readonly approvers: ApproverRule;
  /** "Block AI scraper on shield zone 1234" */
  describe(p: P): string;
  /** The audit log's target. */
  target(p: P): string;
  /** Label/value pairs for the card, with the value seen when the request was made. */
  details(p: P, observed: V | null): [label: string, value: MrkdwnInput][];
  /** How to ask again, e.g. "/edge bots 1234". */
  askAgain(p: P): string;
  /** The value in force now (null when there is none). */
  readCurrent(deps: Deps, scope: ChangeScope, p: P): Promise<V | null>;
  /** Whether the requested change is what `current` already is. */
  inForce(p: P, current: V | null): boolean;
  /** Make the change. Throws an EdgeApiError, StoreError or UserError. */
  apply(deps: Deps, scope: ChangeScope, p: P): Promise<void>;
  /**
   * Whether this request needs a second person. Default: the channel's policy says approvals are
   * required. The policy kind asks only when the change loosens a policy that requires approvals.
   */
  needsApproval?(
    p: P,
    current: V | null,
    policy: EffectivePolicy,
    deps: Deps,
    scope: ChangeScope,
  ): Promise<boolean>;
}

/** Values compared as JSON, as they were stored. */
export function sameValue(a: unknown, b: unknown): boolean {
  return JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
}
