import type { Kysely } from "kysely";
import { compiledPerShape } from "./compiled.js";
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

/** Per store (its root Kysely, or a transaction's): the lease updates by table and row columns. */
const compiledBy = new WeakMap<Kysely<Database>, ReturnType<typeof compiledPerShape<never>>>();

async function setLease<T extends LeasedTable>(
  db: Kysely<Database>,
  table: T,
  row: Partial<Database[T]>,
  to: number | null,
): Promise<boolean> {
  let update = compiledBy.get(db);
  if (!update) {
    update = compiledPerShape<never>(db);
    compiledBy.set(db, update);
  }
  const columns = Object.keys(row);
  const values = [to, ...Object.values(row)];
  const r = await update(db, `${table}|${columns.join(",")}`, values, (root, [until, ...matched]) =>
    // Kysely cannot type a statement over a table chosen by a type parameter: every LeasedTable has
    // leaseUntil, and `row`'s columns were checked against T itself.
    (root as Kysely<Pick<Database, LeasedTable>>)
      .updateTable(table as LeasedTable)
      .set({ leaseUntil: until as number | null })
      .where((eb) =>
        eb.and(Object.fromEntries(columns.map((c, i) => [c, matched[i]])) as Partial<Database[LeasedTable]>),
      ),
  );
  return Number(r.numAffectedRows) > 0;
}
