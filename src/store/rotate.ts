import { updatedOne } from "./context.js";
import { StoreError } from "./errors.js";
import type { Store } from "./index.js";
import { storeInternals } from "./index.js";
import type { SecretPurpose } from "./vault.js";

export interface RotateResult {
  /** Secrets now sealed under the newest master key that were not before. */
  reEncrypted: number;
  /** Secrets already under the newest master key. */
  alreadyCurrent: number;
  /** Workspaces whose secrets could not be decrypted with any configured key (left untouched). */
  failed: { table: "api_keys" | "installations" | "function_executions"; teamId: string; message: string }[];
}

/** One stored envelope: the row it is in, and the id (workspace or installation) it is sealed to. */
interface Sealed {
  rowId: string;
  boundTo: string;
  envelope: string;
}

/** Where one kind of secret is stored, and how one of its envelopes is replaced (compare-and-set). */
interface SecretColumn {
  table: RotateResult["failed"][number]["table"];
  purpose: SecretPurpose;
  /** The log line when one cannot be decrypted. */
  failure: string;
  list(): Promise<Sealed[]>;
  replace(row: Sealed, sealed: string): Promise<boolean>;
}

/**
 * Re-encrypt every stored secret that is not under the newest master key. Each row is replaced with a
 * compare-and-set on its old ciphertext, so a key set by the running bot meanwhile is never overwritten
 * and the bot keeps working throughout (every configured key still decrypts).
 */
export async function rotateAll(store: Store): Promise<RotateResult> {
  const { db, vault, now, logger } = storeInternals(store).context;
  const result: RotateResult = { reEncrypted: 0, alreadyCurrent: 0, failed: [] };

  const columns: SecretColumn[] = [
    {
      table: "api_keys",
      purpose: "edge_api_key",
      failure: "cannot re-encrypt Edge API key",
      list: async () =>
        (await db.selectFrom("api_keys").select(["teamId", "ciphertext"]).execute()).map((r) => ({
          rowId: r.teamId,
          boundTo: r.teamId,
          envelope: r.ciphertext,
        })),
      replace: async (row, sealed) =>
        updatedOne(
          await db
            .updateTable("api_keys")
            .set({ ciphertext: sealed, rotatedAt: now() })
            .where("teamId", "=", row.rowId)
            .where("ciphertext", "=", row.envelope)
            .executeTakeFirst(),
        ),
    },
    {
      table: "installations",
      purpose: "installation",
      failure: "cannot re-encrypt Slack installation",
      list: async () =>
        (await db.selectFrom("installations").select(["id", "ciphertext"]).execute()).map((r) => ({
          rowId: r.id,
          boundTo: r.id,
          envelope: r.ciphertext,
        })),
      replace: async (row, sealed) =>
        updatedOne(
          await db
            .updateTable("installations")
            .set({ ciphertext: sealed })
            .where("id", "=", row.rowId)
            .where("ciphertext", "=", row.envelope)
            .executeTakeFirst(),
        ),
    },
    // Tokens of workflow steps still waiting on a request (short-lived, but sealed like the rest).
    {
      table: "function_executions",
      purpose: "function_token",
      failure: "cannot re-encrypt a workflow step token",
      list: async () =>
        (
          await db
            .selectFrom("function_executions")
            .select(["id", "teamId", "tokenCiphertext"])
            .where("tokenCiphertext", "is not", null)
            .where("state", "!=", "completed")
            .execute()
        ).map((r) => ({ rowId: r.id, boundTo: r.teamId, envelope: r.tokenCiphertext as string })),
      replace: async (row, sealed) =>
        updatedOne(
          await db
            .updateTable("function_executions")
            .set({ tokenCiphertext: sealed })
            .where("id", "=", row.rowId)
            .where("tokenCiphertext", "=", row.envelope)
            .executeTakeFirst(),
        ),
    },
  ];

  for (const column of columns) {
    for (const row of await column.list()) {
      if (vault.isCurrent(row.envelope)) {
        result.alreadyCurrent++;
        continue;
      }
      try {
        const sealed = vault.seal(
          row.boundTo,
          column.purpose,
          vault.open(row.boundTo, column.purpose, row.envelope),
        );
        if (await column.replace(row, sealed)) result.reEncrypted++;
      } catch (e) {
        if (!(e instanceof StoreError) || e.kind !== "decrypt_failed") throw e;
        result.failed.push({ table: column.table, teamId: row.boundTo, message: e.message });
        logger.error({ teamId: row.boundTo, err: { message: e.message } }, column.failure);
      }
    }
  }
  logger.info(
    { reEncrypted: result.reEncrypted, alreadyCurrent: result.alreadyCurrent, failed: result.failed.length },
    "master key rotation finished",
  );
  return result;
}
