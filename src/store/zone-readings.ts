import type { RepoContext } from "./context.js";
import { guard } from "./errors.js";

/** One zone's row for one minute: claimed by `reader`; `reading` (JSON) once its read was recorded. */
export interface ZoneReadingRow {
  zoneId: number;
  reader: string;
  claimedAt: number;
  readAt: number | null;
  reading: string | null;
}

/**
 * At most one read of a zone's detailed metrics per API key and minute, across replicas: the first to
 * insert the minute's row reads; everyone else finds the row and waits for its reading. A claim is never
 * taken over within its minute (a reader that died leaves that minute unread; the next minute is a new row).
 */
export interface ZoneReadingsRepo {
  /** Claim the read of `zoneId` for `minute` for `reader`; true when this reader won it. */
  claim(keyId: string, zoneId: number, minute: number, reader: string, now: number): Promise<boolean>;
  /** Record the claimed read's outcome (only the claim's own reader's). */
  record(
    keyId: string,
    zoneId: number,
    minute: number,
    reader: string,
    reading: string,
    now: number,
  ): Promise<void>;
  /** The rows of these zones for `minute`. */
  list(keyId: string, zoneIds: readonly number[], minute: number): Promise<ZoneReadingRow[]>;
  /** Forget the key's rows of minutes before `minute`. */
  prune(keyId: string, minute: number): Promise<void>;
}

export function createZoneReadingsRepo(ctx: RepoContext): ZoneReadingsRepo {
  const { db } = ctx;
  return guard("zoneReadings", {
    async claim(
      keyId: string,
      zoneId: number,
      minute: number,
      reader: string,
      now: number,
    ): Promise<boolean> {
      const result = await db
        .insertInto("zone_readings")
        .values({ keyId, zoneId, minute, reader, claimedAt: now, readAt: null, reading: null })
        .onConflict((oc) => oc.columns(["keyId", "zoneId", "minute"]).doNothing())
        .executeTakeFirst();
      return Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
    },
    async record(
      keyId: string,
      zoneId: number,
      minute: number,
      reader: string,
      reading: string,
      now: number,
    ): Promise<void> {
      await db
        .updateTable("zone_readings")
        .set({ reading, readAt: now })
        .where("keyId", "=", keyId)
        .where("zoneId", "=", zoneId)
        .where("minute", "=", minute)
        .where("reader", "=", reader)
        .execute();
    },
    async list(keyId: string, zoneIds: readonly number[], minute: number): Promise<ZoneReadingRow[]> {
      if (zoneIds.length === 0) return [];
      const rows = await db
        .selectFrom("zone_readings")
        .select(["zoneId", "reader", "claimedAt", "readAt", "reading"])
        .where("keyId", "=", keyId)
        .where("minute", "=", minute)
        .where("zoneId", "in", [...zoneIds])
        .execute();
      // PostgreSQL's bigint columns come back as strings.
      return rows.map((r) => ({
        zoneId: Number(r.zoneId),
        reader: r.reader,
        claimedAt: Number(r.claimedAt),
        readAt: r.readAt === null ? null : Number(r.readAt),
        reading: r.reading,
      }));
    },
    async prune(keyId: string, minute: number): Promise<void> {
      await db.deleteFrom("zone_readings").where("keyId", "=", keyId).where("minute", "<", minute).execute();
    },
  });
}
