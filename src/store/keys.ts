import type { RepoContext } from "./context.js";
import { fingerprintOf } from "./crypto.js";
import { guard, StoreError } from "./errors.js";

/** What may be shown about a workspace's Edge API key (no secret). */
export interface ApiKeyInfo {
  /** "…" and the last four characters. */
  fingerprint: string;
  setBy: string;
  setAt: number;
  /** When it was last re-encrypted under a new master key (keys:rotate), or null. */
  rotatedAt: number | null;
  /** The id of the master key it is sealed with (not secret). */
  masterKeyId: string | undefined;
}

export interface ApiKeyRecord extends ApiKeyInfo {
  apiKey: string;
}

export interface KeysRepo {
  /** Encrypt and store (replacing any previous key). Returns what may be shown. */
  set(teamId: string, apiKey: string, setBy: string): Promise<ApiKeyInfo>;
  /** Decrypts; StoreError("decrypt_failed", teamId) when the ciphertext or master key does not match. */
  get(teamId: string): Promise<ApiKeyRecord | undefined>;
  /** No decryption. */
  info(teamId: string): Promise<ApiKeyInfo | undefined>;
  /** True when a key was removed. */
  remove(teamId: string): Promise<boolean>;
}

const PURPOSE = "edge_api_key";

export function createKeysRepo(ctx: RepoContext): KeysRepo {
  const { db, vault, now } = ctx;

  function infoOf(row: {
    ciphertext: string;
    fingerprint: string;
    set_by: string;
    set_at: number;
    rotated_at: number | null;
  }): ApiKeyInfo {
    const masterKeyId = row.ciphertext.split(":")[1];
    return {
      fingerprint: row.fingerprint,
      setBy: row.set_by,
      setAt: Number(row.set_at),
      rotatedAt: row.rotated_at === null ? null : Number(row.rotated_at),
      masterKeyId,
    };
  }

  return guard("keys", {
    async set(teamId: string, apiKey: string, setBy: string): Promise<ApiKeyInfo> {
      const key = apiKey.trim();
      if (key.length < 8) {
        throw new StoreError("invalid", `Edge API key for workspace ${teamId} is too short`, {
          teamId,
          userMessage: "That doesn't look like an Edge API key (it is too short).",
        });
      }
      const row = {
        team_id: teamId,
        ciphertext: vault.seal(teamId, PURPOSE, key),
        fingerprint: fingerprintOf(key),
        set_by: setBy,
        set_at: now(),
        rotated_at: null,
      };
      await db
        .insertInto("api_keys")
        .values(row)
        .onConflict((oc) =>
          oc.column("team_id").doUpdateSet({
            ciphertext: row.ciphertext,
            fingerprint: row.fingerprint,
            set_by: row.set_by,
            set_at: row.set_at,
            rotated_at: null,
          }),
        )
        .execute();
      return infoOf(row);
    },

    async get(teamId: string): Promise<ApiKeyRecord | undefined> {
      const row = await db
        .selectFrom("api_keys")
        .selectAll()
        .where("team_id", "=", teamId)
        .executeTakeFirst();
      if (!row) return undefined;
      return { apiKey: vault.open(teamId, PURPOSE, row.ciphertext), ...infoOf(row) };
    },

    async info(teamId: string): Promise<ApiKeyInfo | undefined> {
      const row = await db
        .selectFrom("api_keys")
        .selectAll()
        .where("team_id", "=", teamId)
        .executeTakeFirst();
      return row ? infoOf(row) : undefined;
    },

    async remove(teamId: string): Promise<boolean> {
      const r = await db.deleteFrom("api_keys").where("team_id", "=", teamId).executeTakeFirst();
      return Number(r.numDeletedRows) > 0;
    },
  });
}
