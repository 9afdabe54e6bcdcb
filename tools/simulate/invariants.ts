import { resolveChange } from "../../src/changes/index.js";
import { restoreOf } from "../../src/changes/moves.js";
import type { AuditEntry, ChangeRequest } from "../../src/store/index.js";
import type { RunState } from "./run.js";
import { valueAtSim } from "./run.js";
import { runKey } from "./world.js";

/**
 * What must hold after a run (once quiet): the store's requests, the audit log, the cards (what each
 * replica's observers were last told) and the Edge API simulator's state agree. Each invariant has a
 * name; a run's violations name it and the request.
 */

export const INVARIANTS = {
  "applied-in-force": "an applied request that last wrote its target has its value in force at the Edge API",
  "undone-not-in-force":
    "an undone request (that last wrote its target) has the value its apply replaced back",
  "failed-not-in-force": "a failed or refused request's value is not in force (unless it says it can't tell)",
  "one-write-per-approval": "at most one apply's worth of writes per approval (or Retry)",
  "one-undo-write": "at most one undo's worth of writes per undo claim",
  "owner-is-last-writer": "the target's owner is the request that last moved to applied for it",
  "undo-only-what-it-owns": "no undo writes over a target another request set last",
  "temporary-not-silently-left":
    "a temporary change still in force after its end has a lastError and an undo audit row",
  "uninstall-undoes-or-says":
    "after an uninstall every temporary change is undone or the audit names it as left in force",
  "no-key-after-uninstall":
    "an uninstall deletes the workspace's key in the end, and no Edge call carries the key once it is deleted",
  "card-is-store":
    "what the card was last told is the request's state (runs without crashes or store faults)",
  "audit-agrees": "the audit names who asked, approved and rejected (runs without crashes or store faults)",
  "run-ends": "a run ends: no step waits forever (20 s of real time)",
} as const;

/** A request whose lastError says edgeops can't tell what the Edge API has. */
const CANNOT_TELL = ["unknown", "not_known", "undo_gave_up"];

export type InvariantName = keyof typeof INVARIANTS;

export interface Violation {
  invariant: InvariantName;
  detail: string;
}

export async function checkInvariants(state: RunState): Promise<Violation[]> {
  const { world, team, targetKeys } = state;
  const { batch, trace } = world;
  const store = batch.slots[0]?.deps.store;
  if (!store) throw new Error("no store");
  const out: Violation[] = [];
  const fail = (invariant: InvariantName, r: { id: string } | undefined, detail: string) =>
    out.push({ invariant, detail: `${r ? `${r.id}: ` : ""}${detail}` });

  const stored: ChangeRequest[] = [];
  for (const r of state.requests) {
    const x = await store.changeRequests.get(r.id);
    if (x) stored.push(x);
  }
  const audit: AuditEntry[] = await store.audit.list(team, 1000);
  const auditOf = (id: string) => audit.filter((a) => a.details?.requestId === id);
  const lastApplied = (target: string) =>
    [...trace.applied].reverse().find((a) => targetKeys.get(a.id) === target)?.id;
  const everApplied = new Set(trace.applied.map((a) => a.id));
  const quiet = trace.crashes.length === 0 && !trace.storeFaultHit;

  for (const r of stored) {
    const target = targetKeys.get(r.id);
    const c = resolveChange(r);
    if (!target || !c) continue;
    const value = valueAtSim(batch, r);
    const inForce = c.kind.inForce(c.params, value);
    const last = lastApplied(target);
    const info = state.requests.find((x) => x.id === r.id);
    const what = `${c.kind.describe(c.params)} (${r.state}${r.lastError ? `, ${r.lastError.kind}` : ""}; Edge API has ${JSON.stringify(value)})`;

    // It can't tell, or another request on the target can't tell what its write did.
    const cannotTell = [r, ...stored.filter((o) => o.id !== r.id && targetKeys.get(o.id) === target)].some(
      (o) => CANNOT_TELL.includes(o.lastError?.kind ?? ""),
    );
    if (r.state === "applied" && last === r.id && !inForce && !cannotTell) fail("applied-in-force", r, what);
    // Undone: the value its apply replaced is back (unless it says it left the target as it was).
    const back = c.kind.undo?.(c.params, restoreOf(r));
    if (r.state === "undone" && last === r.id && back !== undefined && !c.kind.inForce(back, value))
      if (r.lastError?.kind !== "changed_since")
        fail("undone-not-in-force", r, `${what}, not ${JSON.stringify(restoreOf(r))}`);
    if (r.state === "failed" && inForce && !cannotTell) {
      const owned = stored.some(
        (o) => o.id !== r.id && targetKeys.get(o.id) === target && everApplied.has(o.id),
      );
      if (!owned) fail("failed-not-in-force", r, what);
    }

    // Writes: an apply's (or an undo's) writes come from at most as many in-flight leases as claims won.
    const writes = trace.edgeWrites.filter((w) => w.requestId === r.id && w.reached);
    const holdsOf = (phase: string) =>
      new Set(writes.filter((w) => w.phase === phase).map((w) => w.holdId)).size;
    const claims = (to: string) => trace.transitions.filter((t) => t.id === r.id && t.to === to).length;
    if (holdsOf("approved") > claims("approved"))
      fail(
        "one-write-per-approval",
        r,
        `${holdsOf("approved")} applies wrote, ${claims("approved")} approvals`,
      );
    if (holdsOf("undoing") > claims("undoing"))
      fail("one-undo-write", r, `${holdsOf("undoing")} undos wrote, ${claims("undoing")} undo claims`);
    for (const w of writes)
      if (w.phase === "undoing" && w.lastApplied && w.lastApplied !== r.id)
        fail("undo-only-what-it-owns", r, `its undo wrote (${w.operation}) over ${w.lastApplied}'s value`);

    if (
      info?.temporaryMs !== undefined &&
      everApplied.has(r.id) &&
      r.state === "applied" &&
      inForce &&
      last === r.id
    ) {
      const undoRows = auditOf(r.id).filter((a) => a.action.endsWith(".undo"));
      const due =
        r.undoAt === null
          ? "no undo scheduled"
          : `undo due ${Math.round((r.undoAt - world.clock.now()) / 1000)} s from now`;
      if (!r.lastError || undoRows.length === 0)
        fail("temporary-not-silently-left", r, `${what}; undo audit rows: ${undoRows.length}; ${due}`);
    }

    if (state.uninstall && info?.temporaryMs !== undefined && everApplied.has(r.id)) {
      const left = auditOf(r.id).some((a) => a.outcome === "left");
      const named = audit.some(
        (a) => a.action === "app.uninstalled" && JSON.stringify(a.details ?? {}).includes(r.id),
      );
      if (r.state !== "undone" && inForce && last === r.id && !left && !named)
        fail("uninstall-undoes-or-says", r, `${what}, left in force after the uninstall`);
    }

    if (quiet) {
      const card = trace.card.get(r.id);
      if (card && card.state !== r.state)
        fail("card-is-store", r, `card says ${card.state}, store ${r.state}`);
      const rows = auditOf(r.id);
      if (!rows.some((a) => a.action.endsWith(".request") && a.userId === r.requesterId))
        fail("audit-agrees", r, `no request row by ${r.requesterId}`);
      if (
        r.state === "rejected" &&
        !rows.some((a) => a.action.endsWith(".reject") && a.userId === r.decidedBy)
      )
        fail("audit-agrees", r, `rejected by ${r.decidedBy}, no reject row by them`);
      if (r.approvedBy.length > 0 && r.decidedBy && ["applied", "failed", "undone"].includes(r.state))
        if (!rows.some((a) => /\.(approve|retry)$/.test(a.action) && a.userId === r.decidedBy))
          // The last decision: an approval, or a Retry (which approves the request again).
          fail("audit-agrees", r, `approved by ${r.decidedBy}, no approve or retry row by them`);
    }
  }

  // Owners: per target, the request that last moved to applied.
  for (const target of new Set(
    trace.applied.map((a) => targetKeys.get(a.id)).filter((t) => t !== undefined),
  )) {
    const owner = await store.changeRequests.targetOwner(team, target);
    const last = lastApplied(target);
    if (last && owner?.requestId !== last)
      fail(
        "owner-is-last-writer",
        { id: last },
        `applied last on ${target}, but the owner is ${owner?.requestId ?? "nobody"}`,
      );
  }

  // The removal deletes the key once nothing of the workspace is due or in flight (services/uninstall.ts).
  const u = state.uninstall;
  if (u?.settledAtRequest !== undefined && trace.keyRemovedAtRequest === undefined)
    fail(
      "no-key-after-uninstall",
      undefined,
      "the workspace's uninstall ended, but its Edge API key was never deleted",
    );
  if (u?.settledAtRequest !== undefined && trace.keyRemovedAtRequest !== undefined) {
    const after = batch.sim.requests
      .slice(trace.keyRemovedAtRequest)
      .filter((q) => q.headers.accesskey === runKey(team) && q.method !== "GET");
    if (after.length > 0)
      fail(
        "no-key-after-uninstall",
        undefined,
        `${after.length} Edge calls with the workspace's key after its uninstall ended: ${after
          .slice(0, 3)
          .map((q) => `${q.method} ${q.path}`)
          .join(", ")}`,
      );
  }
  return out;
}
