/**
 * What edgeops keeps in force on a shield zone, for the cleanup checklist an alert's resolution posts in its
 * thread and for the heads-up five minutes before a temporary change's undo: read from the store alone (no
 * Edge call). Every channel's changes are listed (each in force on the zone all the same); who asked and where
 * only for the channels the audience may see (services/timeline.ts's TimelineAudience), else what alone.
 */
import { describeRequest } from "../changes/index.js";
import { undoCommand } from "../changes/moves.js";
import type { Deps } from "../deps.js";
import type { AlertEpisode, ChangeRequest, WorkScope } from "../store/index.js";
import type { TimelineAudience } from "./timeline.js";

/** A permanent change is to be reviewed this long after it was applied (the checklist's "review on"). */
export const REVIEW_AFTER_MS = 30 * 24 * 60 * 60_000;
/** The heads-up comes this long before a temporary change's undo. */
export const HEADS_UP_BEFORE_MS = 5 * 60_000;
/** Changes in force read at most for one checklist (beyond: it says how many more). */
export const MAX_IN_FORCE = 200;

export interface InForceItem {
  requestId: string;
  /** The change in plain words ("Block IP 192.0.2.1 on shield zone 1234"). */
  change: string;
  /** applied, or being undone right now (no buttons then). */
  state: "applied" | "undoing";
  /** Who asked and where; null when asked in a channel the audience may not see (what, not who). */
  asked: { by: string; channelId: string } | null;
  /** When it was decided (approved, or applied at once); its creation when the row does not say. */
  appliedAt: number;
  /** When a temporary change is undone; null: permanent. */
  until: number | null;
  /** A permanent change's review date: REVIEW_AFTER_MS after appliedAt. Null for a temporary one. */
  reviewOn: number | null;
  /** A permanent change: the command that puts back what it replaced, where the kind can say. */
  undoCommand: string | null;
}

export interface InForce {
  zoneId: number;
  items: InForceItem[];
  /** More were in force than read (MAX_IN_FORCE). */
  cut: boolean;
}

/** The shield zone a request is about, where its parameters name one. */
export function zoneOfRequest(r: Pick<ChangeRequest, "params">): number | undefined {
  const id = (r.params as { shieldZoneId?: unknown } | null)?.shieldZoneId;
  return typeof id === "number" && Number.isInteger(id) ? id : undefined;
}

const visibleTo = (audience: TimelineAudience, channelId: string) =>
  audience.kind === "all" || audience.channelIds.has(channelId);

/**
 * Every edgeops change in force on the zone, whichever channel asked for it: applied (or being undone) and
 * still the last writer of its target (one a later request replaced is not in force any more).
 */
export async function changesInForce(
  deps: Pick<Deps, "store">,
  input: { teamId: string; zoneId: number; audience: TimelineAudience },
): Promise<InForce> {
  const { teamId, zoneId, audience } = input;
  const read = await deps.store.timeline.inForceOnZone(teamId, zoneId, MAX_IN_FORCE + 1);
  const cut = read.length > MAX_IN_FORCE;
  const requests = cut ? read.slice(0, MAX_IN_FORCE) : read;
  const owners = await deps.store.timeline.ownersAmong(
    teamId,
    requests.map((r) => r.id),
  );
  const items = requests
    .filter((r) => owners.has(r.id))
    .map((r): InForceItem => {
      const appliedAt = r.decidedAt ?? r.createdAt;
      const permanent = r.undoAt === null;
      return {
        requestId: r.id,
        change: describeRequest(r),
        state: r.state === "undoing" ? "undoing" : "applied",
        asked: visibleTo(audience, r.channelId) ? { by: r.requesterId, channelId: r.channelId } : null,
        appliedAt,
        until: r.undoAt,
        reviewOn: permanent ? appliedAt + REVIEW_AFTER_MS : null,
        undoCommand: permanent ? (undoCommand(r) ?? null) : null,
      };
    });
  return { zoneId, items, cut };
}

/** A heads-up to post: a temporary change ends soon while an alert on its zone is still firing. */
export interface UndoHeadsUp {
  request: ChangeRequest;
  change: string;
  undoAt: number;
  zoneId: number;
  /** The firing alert whose thread is told (its parent is posted). */
  episode: AlertEpisode & { messageTs: string };
}

/**
 * The heads-ups due at `now`: applied temporary changes whose undo comes within HEADS_UP_BEFORE_MS, still the
 * last writer of their target, on a zone with a firing alert whose parent is posted; one per change and alert.
 */
export async function undoHeadsUpsDue(
  deps: Pick<Deps, "store">,
  now: number,
  scope: WorkScope = {},
  limit = 50,
): Promise<UndoHeadsUp[]> {
  const soon = await deps.store.changeRequests.listUndoSoon(now, now + HEADS_UP_BEFORE_MS, limit, scope);
  const out: UndoHeadsUp[] = [];
  const firing = new Map<string, AlertEpisode[]>();
  for (const r of soon) {
    const zoneId = zoneOfRequest(r);
    if (zoneId === undefined || r.undoAt === null) continue;
    const key = `${r.teamId}/${zoneId}`;
    let episodes = firing.get(key);
    if (!episodes) {
      episodes = (await deps.store.timeline.zoneEpisodes(r.teamId, zoneId, now, now)).filter(
        (e) => e.status === "firing" && e.messageTs !== null,
      );
      firing.set(key, episodes);
    }
    if (episodes.length === 0) continue;
    if (!(await deps.store.timeline.ownersAmong(r.teamId, [r.id])).has(r.id)) continue;
    for (const e of episodes)
      out.push({
        request: r,
        change: describeRequest(r),
        undoAt: r.undoAt,
        zoneId,
        episode: e as AlertEpisode & { messageTs: string },
      });
  }
  return out;
}
