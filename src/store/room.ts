import { type Kysely, type Selectable, sql } from "kysely";
import type { RepoContext } from "./context.js";
import type { Database } from "./db.js";

/**
 * The critical section behind every "create unless it exists or the channel/workspace is full"
 * (schedules, watches): the look, the counts and the insert run with no other such section of the same
 * workspace and table in between, on any connection or replica. PostgreSQL: a transaction holding an
 * advisory lock on (table, team); SQLite: BEGIN IMMEDIATE.
 */

export interface RoomLimits {
  /** Rows allowed in one channel. */
  perChannel: number;
  /** Rows allowed in one workspace. */
  perWorkspace: number;
}

export type RoomResult<T> =
  | { kind: "created"; item: T }
  /** The same row already exists; nothing was stored. */
  | { kind: "exists"; item: T }
  /** The channel or the workspace already holds its limit; nothing was stored. */
  | { kind: "full"; scope: "channel" | "workspace"; limit: number };

/** Tables with team_id and channel_id whose rows are capped per channel and workspace. */
export type RoomTable = "schedules" | "watches";

export async function exclusiveForTeam<T>(
  ctx: Pick<RepoContext, "db" | "engine">,
  table: RoomTable,
  teamId: string,
  work: (tx: Kysely<Database>) => Promise<T>,
): Promise<T> {
  const { db, engine } = ctx;
  if (engine === "postgres") {
    return db.transaction().execute(async (trx) => {
      await sql`select pg_advisory_xact_lock(hashtext(${`edgeops:${table}:${teamId}`}))`.execute(trx);
      return work(trx);
    });
  }
  // A deferred BEGIN would read, then fail to upgrade to a write if another connection wrote meanwhile.
  return db.connection().execute(async (conn) => {
    await sql`begin immediate`.execute(conn);
    try {
      const result = await work(conn);
      await sql`commit`.execute(conn);
      return result;
    } catch (e) {
      await sql`rollback`.execute(conn).catch(() => {});
      throw e;
    }
  });
}

/**
 * Insert `row` unless a row with the same values in `sameColumns` exists (the oldest such is
 * returned) or the channel or workspace is at its limit; one critical section.
 */
export function insertIfRoom<T extends RoomTable, Item>(
  ctx: Pick<RepoContext, "db" | "engine">,
  spec: {
    table: T;
    row: Selectable<Database[T]>;
    sameColumns: readonly (keyof Database[T] & string)[];
    limits: RoomLimits;
    read: (row: Selectable<Database[T]>) => Item;
  },
): Promise<RoomResult<Item>> {
  const { table, row, limits, read } = spec;
  // As in lease.ts: Kysely cannot type a statement over a table chosen by a type parameter; `row` and
  // `sameColumns` were checked against T itself, and every RoomTable has these columns.
  const stored = row as Selectable<Database[RoomTable]>;
  const { teamId, channelId } = stored;
  const same = Object.fromEntries(
    spec.sameColumns.map((column) => [column, (stored as Record<string, unknown>)[column]]),
  );
  return exclusiveForTeam(ctx, table, teamId, async (tx) => {
    const rooms = tx as Kysely<Pick<Database, RoomTable>>;
    const found = await rooms
      .selectFrom(table as RoomTable)
      .selectAll()
      .where((eb) => eb.and(same as Partial<Database[RoomTable]>))
      .orderBy("createdAt")
      .orderBy("id")
      .executeTakeFirst();
    if (found !== undefined) return { kind: "exists", item: read(found as Selectable<Database[T]>) };
    const { rows } = await sql<{ workspace: string | number; channel: string | number | null }>`
      select count(*) as workspace, sum(case when channel_id = ${channelId} then 1 else 0 end) as channel
      from ${sql.table(table)} where team_id = ${teamId}`.execute(tx);
    const counts = rows[0];
    if (Number(counts?.channel ?? 0) >= limits.perChannel)
      return { kind: "full", scope: "channel", limit: limits.perChannel };
    if (Number(counts?.workspace ?? 0) >= limits.perWorkspace)
      return { kind: "full", scope: "workspace", limit: limits.perWorkspace };
    await rooms
      .insertInto(table as RoomTable)
      .values(row as Selectable<Database[RoomTable]>)
      .execute();
    return { kind: "created", item: read(row) };
  });
}
