/**
 * A change request's life, in one place: its states, the moves between them, who makes each move, and the
 * points where a move can be cut short. The store refuses any other move (store/change-requests.ts
 * `transition`); the engine makes them (engine.ts: ask, approve, apply; undo-and-reconcile.ts: the sweeps,
 * undo, reconcile; services/uninstall.ts), each a compare-and-set that exactly one caller wins.
 */

export const CHANGE_STATES = [
  "pending",
  "approved",
  "applied",
  "undoing",
  "undone",
  "failed",
  "rejected",
  "expired",
  "cancelled",
] as const;
export type ChangeState = (typeof CHANGE_STATES)[number];

/**
 * Who makes a move: a person on the card (requester, approver), the engine acting for the click that
 * won the move before, or edgeops' background work on any replica (sweeper: expiry and due undos;
 * reconciler: requests whose apply or undo never finished; uninstall: a workspace removing edgeops).
 */
export type Mover = "requester" | "approver" | "engine" | "sweeper" | "reconciler" | "uninstall";

export interface Move {
  readonly from: ChangeState;
  readonly to: ChangeState;
  readonly by: readonly Mover[];
  /** When and why, as a card or the audit log would say it. */
  readonly when: string;
}

export const MOVES: readonly Move[] = [
  {
    from: "pending",
    to: "approved",
    by: ["approver", "engine"],
    when: "the last approval needed, before expiry (or at once where the policy asks none)",
  },
  { from: "pending", to: "rejected", by: ["approver"], when: "an approver rejects it" },
  {
    from: "pending",
    to: "cancelled",
    by: ["requester", "engine", "uninstall"],
    when: "withdrawn; its card could not be posted; the workspace removed edgeops",
  },
  { from: "pending", to: "expired", by: ["sweeper", "approver"], when: "its time is up" },
  {
    from: "approved",
    to: "applied",
    by: ["engine", "reconciler"],
    when: "written and read back (or already in force), in one transaction with the target's owner record",
  },
  {
    from: "approved",
    to: "cancelled",
    by: ["engine"],
    when: "a temporary change whose value is already set for good: nothing to set, nothing to undo",
  },
  {
    from: "approved",
    to: "failed",
    by: ["engine", "reconciler"],
    when: "refused, or not in force when the reconciler reads it",
  },
  {
    from: "applied",
    to: "undoing",
    by: ["requester", "approver", "sweeper", "uninstall"],
    when: "a temporary change's undo is claimed: Undo now, its end, or an uninstall",
  },
  {
    from: "undoing",
    to: "undone",
    by: ["engine", "reconciler"],
    when: "put back; or left, because someone changed it since",
  },
  {
    from: "undoing",
    to: "applied",
    by: ["engine", "reconciler"],
    when: "the undo failed or was not in force: due again",
  },
  { from: "failed", to: "approved", by: ["approver"], when: "Retry" },
  { from: "failed", to: "expired", by: ["approver"], when: "Retry after its window closed" },
  { from: "failed", to: "cancelled", by: ["approver"], when: "Retry after the setting changed since" },
  {
    from: "failed",
    to: "applied",
    by: ["engine"],
    when: "a slow call the reconciler gave up on turns out to have succeeded",
  },
];

/** The allowed moves by state: what the store's transition() accepts. */
export const CHANGE_TRANSITIONS: Readonly<Record<ChangeState, readonly ChangeState[]>> = Object.freeze(
  Object.fromEntries(
    CHANGE_STATES.map((s) => [s, MOVES.filter((m) => m.from === s).map((m) => m.to)] as const),
  ) as unknown as Record<ChangeState, readonly ChangeState[]>,
);

/**
 * Where a move can be cut short, in the order a change meets them: what the engine must survive at each
 * (the simulation injects exactly these, tools/simulate). A crash loses the replica's memory; what the store
 * holds decides what happens next.
 */
export const FAULT_POINTS = {
  /** A statement that moves or notes a request, records an owner, or takes or renews a lease or lock. */
  storeWrite: "fails before it runs, or runs and its answer is lost",
  /** A read of the target (before a write, its read-back, a sweep's read). */
  edgeRead: "times out, 5xx, 429 with Retry-After, or answers slowly",
  /** A write to the target: its outcome unknown on a timeout; refused inside a 2xx. */
  edgeWrite: "times out (sent, no answer), 5xx, 429, a refusal inside a 2xx, or answers slowly",
  /** A card's post or update. */
  slackPost: "refused or lost: the request's state stands, the card catches up on the next move",
  /** The replica itself, at any of the points above. */
  crash: "the replica's memory and timers are lost; its leases lapse; another replica takes over",
  /** The replica's clock. */
  clockSkew:
    "up to ±45 s from the others (a lock's lease is taken over only MAX_CLOCK_SKEW_MS after it lapsed)",
} as const;
export type FaultPoint = keyof typeof FAULT_POINTS;
