import type { Expression, ExpressionBuilder, Kysely, SqlBool } from "kysely";
import type { Database } from "./db.js";

/** Tables whose rows are held for a while by one replica: a lease time (epoch ms) in `leaseUntil`. */
export type LeasedTable = "approval_requests" | "schedules" | "target_locks";

/**
 * Move a row's lease from `from` to `to` (null: release it) while it is still the one `from` names
 * and `holds` matches: a compare-and-set, so a holder that lost its lease can neither extend nor end
 * someone else's. True when this holder's lease was moved.
 */
export async function moveLease<T extends LeasedTable>(
  db: Kysely<Database>,
  table: T,
  holds: (eb: ExpressionBuilder<Database, T>) => Expression<SqlBool>,
  from: number,
  to: number | null,
): Promise<boolean> {
  // Kysely cannot type a statement over a table chosen by a type parameter; every LeasedTable has
  // leaseUntil, and `holds` was checked against T itself.
  const r = await (db as Kysely<Pick<Database, LeasedTable>>)
    .updateTable(table as LeasedTable)
    .set({ leaseUntil: to })
    .where(holds as unknown as (eb: ExpressionBuilder<Database, LeasedTable>) => Expression<SqlBool>)
    .where("leaseUntil", "=", from)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
}
