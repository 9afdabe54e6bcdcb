import type { Kysely } from "kysely";
import type { Database } from "./db.js";

/** Tables whose rows are held for a while by one replica: a lease time (epoch ms) in `leaseUntil`. */
export type LeasedTable = "approval_requests" | "schedules" | "target_locks" | "workspace_removals";

/**
 * Take the lease of the row matching `row` (column = value each) until `until`, whatever lease it
 * held before. True when the row matched.
 */
export function takeLease<T extends LeasedTable>(
  db: Kysely<Database>,
  table: T,
  row: Partial<Database[T]>,
  until: number,
): Promise<boolean> {
  return setLease(db, table, row, until);
}

/**
 * Move the lease of the row matching `row` from `from` to `to` (null: release it) while it is still
 * the one `from` names: a compare-and-set, so a holder that lost its lease can neither extend nor end
 * someone else's. True when this holder's lease was moved.
 */
export function moveLease<T extends LeasedTable>(
  db: Kysely<Database>,
  table: T,
  row: Partial<Database[T]>,
  from: number,
  to: number | null,
): Promise<boolean> {
  return setLease(db, table, { ...row, leaseUntil: from }, to);
}

async function setLease<T extends LeasedTable>(
  db: Kysely<Database>,
  table: T,
  row: Partial<Database[T]>,
  to: number | null,
): Promise<boolean> {
  // Kysely cannot type a statement over a table chosen by a type parameter: every LeasedTable has
  // leaseUntil, and `row`'s columns were checked against T itself.
  const r = await (db as Kysely<Pick<Database, LeasedTable>>)
    .updateTable(table as LeasedTable)
    .set({ leaseUntil: to })
    .where((eb) => eb.and(row as Partial<Database[LeasedTable]>))
    .executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
}
