import type { RepoContext } from "./context.js";
import { guard } from "./errors.js";

/**
 * The five-minute heads-up before a temporary change's undo, claimed once per (request, undo time, alert)
 * across replicas: the insert is the claim (a second insert of the same key changes nothing), so whichever
 * replica inserts it posts it. An Extend moves the undo time, which is a new key: a later heads-up.
 */
export interface UndoHeadsUpsRepo {
  /** True for the one caller whose insert made the row (it posts the heads-up). */
  claim(key: HeadsUpKey, teamId: string, at: number): Promise<boolean>;
  /** Give a claim back (its post failed before Slack took it), so a later tick tries again. */
  release(key: HeadsUpKey): Promise<void>;
  /** Forget heads-ups for undo times before `before` (they can never be due again); how many. */
  pruneBefore(before: number): Promise<number>;
}

export interface HeadsUpKey {
  requestId: string;
  undoAt: number;
  episodeId: string;
}

export function createUndoHeadsUpsRepo(ctx: RepoContext): UndoHeadsUpsRepo {
  const { db } = ctx;
  return guard("undoHeadsUps", {
    async claim(key: HeadsUpKey, teamId: string, at: number): Promise<boolean> {
      const result = await db
        .insertInto("undo_heads_ups")
        .values({ ...key, teamId, claimedAt: at })
        .onConflict((oc) => oc.columns(["requestId", "undoAt", "episodeId"]).doNothing())
        .executeTakeFirst();
      return Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
    },
    async release(key: HeadsUpKey): Promise<void> {
      await db
        .deleteFrom("undo_heads_ups")
        .where("requestId", "=", key.requestId)
        .where("undoAt", "=", key.undoAt)
        .where("episodeId", "=", key.episodeId)
        .execute();
    },
    async pruneBefore(before: number): Promise<number> {
      const result = await db.deleteFrom("undo_heads_ups").where("undoAt", "<", before).executeTakeFirst();
      return Number(result.numDeletedRows ?? 0);
    },
  });
}
