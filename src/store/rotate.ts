import { StoreError } from "./errors.js";
import type { Store } from "./index.js";
import { storeInternals } from "./index.js";

export interface RotateResult {
  /** Secrets now sealed under the newest master key that were not before. */
  reEncrypted: number;
  /** Secrets already under the newest master key. */
  alreadyCurrent: number;
  /** Workspaces whose secrets could not be decrypted with any configured key (left untouched). */
  failed: { table: "api_keys" | "installations" | "function_executions"; teamId: string; message: string }[];
}

/**
 * Re-encrypt every stored secret that is not under the newest master key. Each row is replaced with a
 * compare-and-set on its old ciphertext, so a key set by the running bot meanwhile is never overwritten
 * and the bot keeps working throughout (every configured key still decrypts).
 */
export async function rotateAll(store: Store): Promise<RotateResult> {
  const { db, vault, now, logger } = storeInternals(store).context;
  const result: RotateResult = { reEncrypted: 0, alreadyCurrent: 0, failed: [] };

  const keys = await db.selectFrom("api_keys").select(["teamId", "ciphertext"]).execute();
  for (const row of keys) {
    if (vault.isCurrent(row.ciphertext)) {
      result.alreadyCurrent++;
      continue;
    }
    try {
      const sealed = vault.seal(
        row.teamId,
        "edge_api_key",
        vault.open(row.teamId, "edge_api_key", row.ciphertext),
      );
      const r = await db
        .updateTable("api_keys")
        .set({ ciphertext: sealed, rotatedAt: now() })
        .where("teamId", "=", row.teamId)
        .where("ciphertext", "=", row.ciphertext)
        .executeTakeFirst();
      if (Number(r.numUpdatedRows) === 1) result.reEncrypted++;
    } catch (e) {
      if (!(e instanceof StoreError) || e.kind !== "decrypt_failed") throw e;
      result.failed.push({ table: "api_keys", teamId: row.teamId, message: e.message });
      logger.error({ teamId: row.teamId, err: { message: e.message } }, "cannot re-encrypt Edge API key");
    }
  }

  const installs = await db.selectFrom("installations").select(["id", "ciphertext"]).execute();
  for (const row of installs) {
    if (vault.isCurrent(row.ciphertext)) {
      result.alreadyCurrent++;
      continue;
    }
    try {
      const sealed = vault.seal(row.id, "installation", vault.open(row.id, "installation", row.ciphertext));
      const r = await db
        .updateTable("installations")
        .set({ ciphertext: sealed })
        .where("id", "=", row.id)
        .where("ciphertext", "=", row.ciphertext)
        .executeTakeFirst();
      if (Number(r.numUpdatedRows) === 1) result.reEncrypted++;
    } catch (e) {
      if (!(e instanceof StoreError) || e.kind !== "decrypt_failed") throw e;
      result.failed.push({ table: "installations", teamId: row.id, message: e.message });
      logger.error({ teamId: row.id, err: { message: e.message } }, "cannot re-encrypt Slack installation");
    }
  }
  // Tokens of workflow steps still waiting on a request (short-lived, but sealed like the rest).
  const steps = await db
    .selectFrom("function_executions")
    .select(["id", "teamId", "tokenCiphertext"])
    .where("tokenCiphertext", "is not", null)
    .where("state", "!=", "completed")
    .execute();
  for (const row of steps) {
    const envelope = row.tokenCiphertext as string;
    if (vault.isCurrent(envelope)) {
      result.alreadyCurrent++;
      continue;
    }
    try {
      const sealed = vault.seal(
        row.teamId,
        "function_token",
        vault.open(row.teamId, "function_token", envelope),
      );
      const r = await db
        .updateTable("function_executions")
        .set({ tokenCiphertext: sealed })
        .where("id", "=", row.id)
        .where("tokenCiphertext", "=", envelope)
        .executeTakeFirst();
      if (Number(r.numUpdatedRows) === 1) result.reEncrypted++;
    } catch (e) {
      if (!(e instanceof StoreError) || e.kind !== "decrypt_failed") throw e;
      result.failed.push({ table: "function_executions", teamId: row.teamId, message: e.message });
      logger.error(
        { teamId: row.teamId, err: { message: e.message } },
        "cannot re-encrypt a workflow step token",
      );
    }
  }
  logger.info(
    { reEncrypted: result.reEncrypted, alreadyCurrent: result.alreadyCurrent, failed: result.failed.length },
    "master key rotation finished",
  );
  return result;
}
