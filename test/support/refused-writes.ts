import { sql } from "kysely";
import { type Store, storeInternals } from "../../src/store/index.js";

let triggers = 0;

/**
 * Until the returned function is called, the store's database refuses every insert and update of `table`
 * (`ops`) whose row matches `when` (SQL over NEW's, and for updates OLD's, snake_case columns): a statement that fails inside the
 * real store, on SQLite and PostgreSQL alike, as a dropped connection or a crash between two writes would.
 */
export async function refuseWrites(
  store: Store,
  table: string,
  when = "true",
  ops: readonly ("INSERT" | "UPDATE")[] = ["INSERT", "UPDATE"],
): Promise<() => Promise<void>> {
  const db = storeInternals(store).rawDb;
  const name = `edgeops_refuse_${table}_${++triggers}`;
  if (store.engine === "sqlite") {
    const cond = when === "true" ? "1" : when;
    for (const op of ops)
      await sql
        .raw(
          `CREATE TRIGGER ${name}_${op} BEFORE ${op} ON ${table} WHEN ${cond} BEGIN SELECT RAISE(ABORT, 'refused by the test'); END`,
        )
        .execute(db);
    return async () => {
      for (const op of ops) await sql.raw(`DROP TRIGGER ${name}_${op}`).execute(db);
    };
  }
  await sql
    .raw(
      `CREATE OR REPLACE FUNCTION ${name}() RETURNS trigger AS $$ BEGIN RAISE EXCEPTION 'refused by the test'; END $$ LANGUAGE plpgsql`,
    )
    .execute(db);
  await sql
    .raw(
      `CREATE TRIGGER ${name} BEFORE ${ops.join(" OR ")} ON ${table} FOR EACH ROW WHEN (${when}) EXECUTE FUNCTION ${name}()`,
    )
    .execute(db);
  return async () => {
    await sql.raw(`DROP TRIGGER ${name} ON ${table}`).execute(db);
    await sql.raw(`DROP FUNCTION ${name}()`).execute(db);
  };
}
