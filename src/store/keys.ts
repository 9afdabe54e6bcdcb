import type { Selectable } from "kysely";
import { LruCache } from "../lru.js";
import { compiledOnce } from "./compiled.js";
import type { RepoContext } from "./context.js";
import { fingerprintOf } from "./crypto.js";
import type { ApiKeysTable } from "./db.js";
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
  /** True when a key was removed; `setNoLaterThan`: only a key set at or before that instant (not one set since). */
  remove(teamId: string, setNoLaterThan?: number): Promise<boolean>;
}

const PURPOSE = "edge_api_key";

/** Workspaces whose opened key is kept beside the envelope it came from (see `get`). */
const OPENED_MAX = 1_000;

export function createKeysRepo(ctx: RepoContext): KeysRepo {
  const { db, vault, now } = ctx;

  /** What may be shown: everything but the team and the sealed key (whose envelope names its master key). */
  const infoOf = ({ teamId: _teamId, ciphertext, ...shown }: Selectable<ApiKeysTable>): ApiKeyInfo => ({
    ...shown,
    masterKeyId: ciphertext.split(":")[1],
  });

  const selectRow = compiledOnce(db, (root, teamId: string) =>
    root.selectFrom("api_keys").selectAll().where("teamId", "=", teamId),
  );
  const findRow = async (teamId: string) => (await selectRow(db, teamId)).rows[0];
  // Every read still reads the row (another replica may have set or removed the key); only an envelope
  // already opened here is not decrypted again. GCM is deterministic for one envelope, workspace and ring.
  const opened = new LruCache<string, { ciphertext: string; apiKey: string }>(OPENED_MAX);

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
        teamId,
        ciphertext: vault.seal(teamId, PURPOSE, key),
        fingerprint: fingerprintOf(key),
        setBy,
        setAt: now(),
        rotatedAt: null,
      };
      await db
        .insertInto("api_keys")
        .values(row)
        .onConflict((oc) =>
          oc.column("teamId").doUpdateSet({
            ciphertext: row.ciphertext,
            fingerprint: row.fingerprint,
            setBy: row.setBy,
            setAt: row.setAt,
            rotatedAt: null,
          }),
        )
        .execute();
      opened.delete(teamId);
      return infoOf(row);
    },

    async get(teamId: string): Promise<ApiKeyRecord | undefined> {
      const row = await findRow(teamId);
      if (!row) return undefined;
      const kept = opened.get(teamId);
      if (kept?.ciphertext === row.ciphertext) return { apiKey: kept.apiKey, ...infoOf(row) };
      const apiKey = vault.open(teamId, PURPOSE, row.ciphertext);
      opened.set(teamId, { ciphertext: row.ciphertext, apiKey });
      return { apiKey, ...infoOf(row) };
    },

    async info(teamId: string): Promise<ApiKeyInfo | undefined> {
      const row = await findRow(teamId);
      return row && infoOf(row);
    },

    async remove(teamId: string, setNoLaterThan?: number): Promise<boolean> {
      let q = db.deleteFrom("api_keys").where("teamId", "=", teamId);
      if (setNoLaterThan !== undefined) q = q.where("setAt", "<=", setNoLaterThan);
      const r = await q.executeTakeFirst();
      opened.delete(teamId);
      return Number(r.numDeletedRows) > 0;
    },
  });
}
