import type { z } from "zod";
import type { Deps } from "../deps.js";
import type { EffectivePolicy } from "../store/index.js";
import type { DetailRow } from "./details.js";

/** Where a change is asked for: the workspace, the channel the card goes to, the person asking. */
export interface ChangeScope {
  teamId: string;
  channelId: string;
  userId: string;
}

export const RISK_LEVELS = ["low", "medium", "high"] as const;
export type RiskLevel = (typeof RISK_LEVELS)[number];

/** Who decides a request of this kind: the channel's approvers, or workspace admins only. */
export type ApproverRule = "policy" | "admins";

/**
 * One kind of change (a bot category's action, the approval policy, …). The state machine in
 * engine.ts is the same for every kind; a kind says only what its change is and how to read and make it.
 * `describe` and `target` are plain text and `details` is data (details.ts): the Slack side renders and
 * escapes them.
 */
export interface ChangeKind<P = unknown, V = unknown, R = unknown> {
  /** Stored with the request. */
  readonly name: string;
  /** The stored parameters, checked whenever a request is read back. */
  readonly params: z.ZodType<P>;
  readonly approvers: ApproverRule;
  /** The word a policy names it by (`/edge policy approvals required for purge,restart`). */
  readonly policyName: string;
  /** How much harm a mistaken change does; a policy can name a level (`… for high`). */
  readonly risk: RiskLevel;
  /**
   * A one-off action (restart, purge, ignoring a WAF rule): nothing to read back, never "already in
   * force", and a call that was sent but not answered can't be checked afterwards. A function where it
   * depends on the parameters.
   */
  readonly oneOff?: boolean | ((p: P) => boolean);
  /**
   * The read right after a write may not show it yet though it was made (the documents do not promise
   * that the read shows it): a read-back that does not show the change leaves it not known yet, and the
   * reconciler reads again, instead of calling it not in effect.
   */
  readonly notShownMeansUnknown?: boolean;
  /** "Block AI scraper on shield zone 1234" */
  describe(p: P): string;
  /** The audit log's target. */
  target(p: P): string;
  /** The card's rows, with the value seen when the request was made. */
  details(p: P, observed: V | null): DetailRow[];
  /** How to ask again, e.g. "/edge bots 1234". */
  askAgain(p: P): string;
  /** The value in force now (null when there is none). */
  readCurrent(deps: Deps, scope: ChangeScope, p: P): Promise<V | null>;
  /**
   * The value in force now with the record it is part of, where apply needs more than the value (a
   * shield zone's other settings, to tell what else moved): the engine reads the target once before a
   * change and hands the read to apply. Absent: readCurrent.
   */
  readTarget?(deps: Deps, scope: ChangeScope, p: P): Promise<TargetRead<V, R>>;
  /**
   * The one thing this change sets (a zone's setting, a bot category, an access entry), so that each
   * target remembers the request that set it last and an undo touches only what its request still owns.
   * Absent for changes with no lasting target (one-off actions, the policy).
   */
  targetKey?(p: P, scope: ChangeScope): string;
  /** A value as the card names it ("Allow", "High", "blocked"), for sentences about a value that moved or was read back. */
  valueLabel?(v: V | null): string;
  /** Whether the requested change is what `current` already is. */
  inForce(p: P, current: V | null): boolean;
  /**
   * The Edge target this change writes (within the workspace's API key), e.g. "shield-zone:1234"; changes
   * of one target are made one at a time across replicas (target-lock.ts). Absent: no shared target.
   */
  lockKey?(p: P, scope: ChangeScope): string;
  /**
   * Make the change. Throws an EdgeApiError, StoreError or UserError. May report what else moved on
   * the target with it (a shield zone's other settings), which the card and the audit log then show.
   */
  apply(deps: Deps, scope: ChangeScope, p: P, before?: TargetRead<V, R>): Promise<ApplyReport<V> | undefined>;
  /**
   * The parameters that put back the value seen when the request was made, for temporary changes
   * (`for 30m`). Absent, or undefined for this value: the change has no undo and can't be temporary.
   */
  undo?(p: P, observed: V | null): P | undefined;
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

/** Whether this change is a one-off action (ChangeKind.oneOff). */
export function isOneOff<P>(kind: ChangeKind<P, unknown>, p: P): boolean {
  return typeof kind.oneOff === "function" ? kind.oneOff(p) : kind.oneOff === true;
}

/** The target as read right before a change (ChangeKind.readTarget). */
export interface TargetRead<V, R = unknown> {
  value: V | null;
  record?: R;
}

/** What an apply saw besides its own change. */
export interface ApplyReport<V = unknown> {
  /** Other settings of the target that moved with the write: "learning mode: on → off". */
  alsoChanged?: string[];
  /** The same settings as the target names them (a shield zone's field names), kept on the request's note. */
  alsoChangedFields?: string[];
  /** The value apply read right after its write: the engine's read-back takes it instead of reading again. */
  after?: { value: V | null };
  /** Set, but with no effect as the target is now (a WAF mode while the WAF is off): the card says so. */
  caveat?: string;
}

/** Values compared as JSON, as they were stored. */
export function sameValue(a: unknown, b: unknown): boolean {
  return JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
}
