import type { Selectable } from "kysely";
import { newId, type RepoContext } from "./context.js";
import type { AgentTokensTable } from "./db.js";
import { guard } from "./errors.js";

/** An agent token as stored: never the token, only its hash. */
export type AgentToken = Selectable<AgentTokensTable>;

export interface NewAgentToken {
  teamId: string;
  userId: string;
  name: string;
  tokenHash: string;
  createdAt: number;
  expiresAt: number;
}

/** A touch of `lastUsedAt` is written at most this often per token. */
const LAST_USED_EVERY_MS = 60_000;

export interface AgentTokensRepo {
  create(token: NewAgentToken): Promise<AgentToken>;
  /** The token with this hash, whatever its state (the caller checks expiry and revocation). */
  byHash(tokenHash: string): Promise<AgentToken | undefined>;
  /** A person's tokens not revoked and not expired at `now`, newest first. */
  listActive(teamId: string, userId: string, now: number): Promise<AgentToken[]>;
  /** Revoke one of the person's tokens (by id); the token as revoked, or undefined when none was active. */
  revoke(teamId: string, userId: string, id: string, by: string, at: number): Promise<AgentToken | undefined>;
  /** Note a use at `at` (skipped when noted less than a minute before). */
  touch(id: string, at: number): Promise<void>;
}

export function createAgentTokensRepo(ctx: RepoContext): AgentTokensRepo {
  const { db } = ctx;
  return guard("agentTokens", {
    async create(token: NewAgentToken): Promise<AgentToken> {
      const row = { id: newId(), ...token, revokedAt: null, revokedBy: null, lastUsedAt: null };
      await db.insertInto("agent_tokens").values(row).execute();
      return row;
    },
    async byHash(tokenHash: string) {
      const row = await db
        .selectFrom("agent_tokens")
        .selectAll()
        .where("tokenHash", "=", tokenHash)
        .executeTakeFirst();
      return row;
    },
    async listActive(teamId: string, userId: string, now: number) {
      const rows = await db
        .selectFrom("agent_tokens")
        .selectAll()
        .where("teamId", "=", teamId)
        .where("userId", "=", userId)
        .where("revokedAt", "is", null)
        .where("expiresAt", ">", now)
        .orderBy("createdAt", "desc")
        .execute();
      return rows;
    },
    async revoke(teamId: string, userId: string, id: string, by: string, at: number) {
      const row = await db
        .updateTable("agent_tokens")
        .set({ revokedAt: at, revokedBy: by })
        .where("id", "=", id)
        .where("teamId", "=", teamId)
        .where("userId", "=", userId)
        .where("revokedAt", "is", null)
        .returningAll()
        .executeTakeFirst();
      return row;
    },
    async touch(id: string, at: number) {
      await db
        .updateTable("agent_tokens")
        .set({ lastUsedAt: at })
        .where("id", "=", id)
        .where((eb) => eb.or([eb("lastUsedAt", "is", null), eb("lastUsedAt", "<=", at - LAST_USED_EVERY_MS)]))
        .execute();
    },
  });
}
