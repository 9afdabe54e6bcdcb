import {
  type Expression,
  type ExpressionBuilder,
  type Kysely,
  type Selectable,
  type SqlBool,
  sql,
} from "kysely";
import { newId, readRow, updatedOne, type WorkScope } from "./context.js";
import type { ClockColumns, Database } from "./db.js";

/**
 * Work on the clock (schedules, watches): rows that fall due at a time column and are claimed by
 * whichever replica gets there first. Kysely cannot type a statement over a table chosen by a type
 * parameter, so the statements below run on the tables' common columns; each caller's columns and
 * conditions are checked against its own table T.
 */
export type ClockTable = "schedules" | "watches";

type Clock = Kysely<Pick<Database, ClockTable>>;
type CommonCondition = (eb: ExpressionBuilder<Database, ClockTable>) => Expression<SqlBool>;

/**
 * The rows `due` selects, round-robin across workspaces: every workspace's soonest by `time`, then
 * every workspace's second soonest, and so on (soonest first within a round), so one workspace's
 * backlog cannot fill the batch. Only the scope's workspaces when it names some.
 */
export async function listRoundRobin<T extends ClockTable>(
  db: Kysely<Database>,
  table: T,
  time: keyof Database[T] & string,
  due: (eb: ExpressionBuilder<Database, T>) => Expression<SqlBool>,
  limit: number,
  { teamIds }: WorkScope,
): Promise<Selectable<Database[T]>[]> {
  if (teamIds?.length === 0) return [];
  const clock = db as Clock;
  // sql.ref names go through the CamelCasePlugin like any other column reference.
  let ranked = clock
    .selectFrom(table as ClockTable)
    .selectAll()
    .select(
      sql<number>`row_number() over (partition by ${sql.ref("teamId")} order by ${sql.ref(time)}, ${sql.ref("id")})`.as(
        "round",
      ),
    )
    .where(due as unknown as CommonCondition);
  if (teamIds) ranked = ranked.where("teamId", "in", teamIds);
  const rows = await clock
    .selectFrom(ranked.as("due"))
    .selectAll()
    .orderBy("round")
    .orderBy(time as "createdAt")
    .orderBy("id")
    .limit(limit)
    .execute();
  return rows.map((row) => readRow(row, {}, ["round"]) as Selectable<Database[T]>);
}

/** Mark a row failing with its reason, or (null) clear the mark. True when the row exists. */
export async function setFailing(db: Kysely<Database>, table: ClockTable, id: string, reason: string | null) {
  const r = await (db as Clock)
    .updateTable(table)
    .set(reason === null ? { failing: 0 } : { failing: 1, lastError: reason })
    .where("id", "=", id)
    .executeTakeFirst();
  return updatedOne(r);
}

/** The columns every new schedule or watch starts with: its owner and target, not failing, made now. */
export function newClockRow(
  item: Pick<ClockColumns, "teamId" | "channelId" | "createdBy" | "kind" | "target"> & { id?: string },
  at: number,
): ClockColumns {
  return {
    id: item.id ?? newId(),
    teamId: item.teamId,
    channelId: item.channelId,
    createdBy: item.createdBy,
    kind: item.kind,
    target: item.target,
    lastError: null,
    failing: 0,
    createdAt: at,
  };
}
