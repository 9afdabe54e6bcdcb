import { describeRequest } from "../changes/index.js";
import type { Deps } from "../deps.js";
import { LruCache } from "../lru.js";
import { incidentWindowFor } from "../services/alerts.js";
import { incidentRange } from "../services/incident.js";
import {
  EFFECT_REFRESH_MS,
  effectTargetOf,
  type MitigationEffect,
  measureEffect,
} from "../services/mitigation-effect.js";
import type { ChangeRequest } from "../store/index.js";
import type { EntryState, WorkedItem } from "./blocks/effect.js";
import { withEffect } from "./blocks/effect.js";
import type { Reply } from "./blocks/reply.js";

/**
 * Each applied change's measured effect (services/mitigation-effect.ts), kept per process: measured at most once
 * a minute per change (EFFECT_REFRESH_MS), whoever asks (the card's refresh while the zone's alert is open, the
 * alert's resolution reply, the postmortem export), and drawn on the change's card by every redraw of it.
 */
const effects = new LruCache<string, MitigationEffect>(2_000);

/** The change's effect as last measured here, if it was. */
export function lastEffect(requestId: string): MitigationEffect | undefined {
  return effects.get(requestId);
}

/** An entry change's wanted state ("since the block…"), from its parameters. */
export function entryStateOf(request: Pick<ChangeRequest, "kind" | "params">): EntryState | undefined {
  const state = (request.params as { state?: unknown } | null)?.state;
  return request.kind === "access_block" && (state === "block" || state === "challenge" || state === "none")
    ? state
    : undefined;
}

/**
 * The change's effect: the one measured less than a minute ago, or measured now (background work in the key's
 * queue). Undefined for a change whose effect edgeops does not measure. `calls`: the Edge calls made now.
 */
export async function currentEffect(
  deps: Deps,
  request: ChangeRequest,
): Promise<{ effect: MitigationEffect; calls: number; fresh: boolean } | undefined> {
  const known = effects.get(request.id);
  if (known && deps.clock.now() - known.asOf < EFFECT_REFRESH_MS)
    return { effect: known, calls: 0, fresh: false };
  const measured = await measureEffect(deps, request);
  if (!measured) return undefined;
  effects.set(request.id, measured.effect);
  return { ...measured, fresh: true };
}

/** The card with its change's Effect section, once applied and measured (any redraw keeps it). */
export function cardWithEffect(request: ChangeRequest, card: Reply): Reply {
  const known = request.state === "pending" ? undefined : effects.get(request.id);
  return known ? withEffect(card, known, entryStateOf(request)) : card;
}

/** Changes on a zone applied and still applied (or undone) in the alert's window: the ones whose effect is told. */
export async function appliedOnZone(
  deps: Pick<Deps, "store">,
  teamId: string,
  zoneId: number,
  window: { from: number; to: number },
): Promise<ChangeRequest[]> {
  const requests = await deps.store.timeline.changesOfZone(teamId, zoneId, window.from, window.to, 200);
  return requests.filter(
    (r) =>
      (r.state === "applied" || r.state === "undoing" || r.state === "undone") &&
      effectTargetOf(r) !== undefined &&
      (r.decidedAt ?? r.updatedAt) >= window.from,
  );
}

/** The alert's window (since it opened, and a little before), as the timeline reads it. */
export function alertWindow(openedAt: number, now: number): { from: number; to: number } {
  const range = incidentRange(incidentWindowFor(openedAt, now), now);
  return { from: range.from, to: range.to };
}

/**
 * Refresh the Effect section of the cards of the changes applied on the zone since the alert opened: each
 * measured at most once a minute, the card redrawn in place (`redraw`: src/slack/change-requests.ts updateCard)
 * when a new measurement was made. Never throws. Resolves with the Edge calls made (the watches' budget).
 */
export async function refreshEffectCards(
  deps: Deps,
  input: { teamId: string; zoneId: number; openedAt: number },
  redraw: (request: ChangeRequest) => Promise<void>,
): Promise<number> {
  let calls = 0;
  try {
    const now = deps.clock.now();
    const applied = await appliedOnZone(deps, input.teamId, input.zoneId, alertWindow(input.openedAt, now));
    for (const r of applied) {
      if (r.state !== "applied" || !r.messageTs) continue;
      const measured = await currentEffect(deps, r);
      calls += measured?.calls ?? 0;
      if (measured?.fresh) await redraw(r);
    }
  } catch (err) {
    deps.logger.warn({ err, shieldZoneId: input.zoneId }, "refreshing the changes' effects failed");
  }
  return calls;
}

/** What each change applied on the zone during the alert did, for its resolution reply (at most `max`). */
export async function whatWorked(
  deps: Deps,
  input: { teamId: string; zoneId: number; openedAt: number },
  max: number,
): Promise<{ items: WorkedItem[]; more: number }> {
  const applied = await appliedOnZone(
    deps,
    input.teamId,
    input.zoneId,
    alertWindow(input.openedAt, deps.clock.now()),
  );
  const items: WorkedItem[] = [];
  for (const r of applied.slice(0, max)) {
    const measured = await currentEffect(deps, r);
    if (!measured) continue;
    const state = entryStateOf(r);
    items.push({ change: describeRequest(r), effect: measured.effect, ...(state ? { state } : {}) });
  }
  return { items, more: Math.max(0, applied.length - max) };
}
