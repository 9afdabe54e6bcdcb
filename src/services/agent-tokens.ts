import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import type { Deps } from "../deps.js";
import { UserError } from "../errors.js";
import type { AgentToken } from "../store/index.js";

/**
 * People's tokens for AI agents (the MCP server, src/mcp): a token acts as the person who made it, in
 * the workspace where they made it, until it expires or is revoked. Only its SHA-256 is stored; the token
 * itself is shown once, to its owner, and never logged, posted or audited.
 */

/** Every token starts with this, so a leaked one is recognisable (and src/log.ts censors it). */
export const AGENT_TOKEN_PREFIX = "edgeops_at_";
export const AGENT_TOKEN_DEFAULT_MS = 30 * 24 * 3_600_000;
export const AGENT_TOKEN_MAX_MS = 90 * 24 * 3_600_000;
export const AGENT_TOKEN_MIN_MS = 3_600_000;
export const AGENT_NAME_DEFAULT = "agent";
const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,39}$/;
/** Active tokens one person may hold at once. */
export const AGENT_TOKENS_PER_PERSON = 10;

/** Who an agent acts as: the token's owner, in the token's workspace. */
export interface AgentIdentity {
  readonly tokenId: string;
  readonly teamId: string;
  readonly userId: string;
  /** The agent's name, as its owner gave it. */
  readonly name: string;
  readonly expiresAt: number;
}

const hashOf = (token: string) => createHash("sha256").update(token, "utf8").digest("hex");

export function parseAgentName(word: string | undefined): string {
  if (word === undefined) return AGENT_NAME_DEFAULT;
  if (!NAME.test(word))
    throw new UserError(
      "usage",
      `An agent's name is 1 to 40 letters, digits, dots, dashes or underscores (not "${word.slice(0, 60)}"). For example: /edge agent token claude for 30d`,
    );
  return word;
}

/** Make a token for the person; the token is in the answer only. */
export async function mintAgentToken(
  deps: Deps,
  who: { teamId: string; userId: string },
  name: string,
  lifetimeMs: number,
): Promise<{ token: string; record: AgentToken }> {
  if (!(lifetimeMs >= AGENT_TOKEN_MIN_MS && lifetimeMs <= AGENT_TOKEN_MAX_MS))
    throw new UserError(
      "usage",
      "An agent token lasts from 1 hour to 90 days (30 days when not said), e.g. `/edge agent token claude for 7d`.",
    );
  const now = deps.clock.now();
  const active = await deps.store.agentTokens.listActive(who.teamId, who.userId, now);
  if (active.some((t) => t.name === name))
    throw new UserError(
      "usage",
      `You already have an agent token named "${name}": revoke it first (/edge agent revoke ${name}) or choose another name.`,
    );
  if (active.length >= AGENT_TOKENS_PER_PERSON)
    throw new UserError(
      "usage",
      `You have ${active.length} agent tokens already, the most one person may hold: revoke one (/edge agent list shows them).`,
    );
  const token = `${AGENT_TOKEN_PREFIX}${randomBytes(32).toString("base64url")}`;
  const record = await deps.store.agentTokens.create({
    teamId: who.teamId,
    userId: who.userId,
    name,
    tokenHash: hashOf(token),
    createdAt: now,
    expiresAt: now + lifetimeMs,
  });
  await deps.store.audit.append({
    teamId: who.teamId,
    userId: who.userId,
    action: "agent.mint",
    target: name,
    outcome: "minted",
    details: { agentId: record.id, name, expiresAt: record.expiresAt },
  });
  return { token, record };
}

export function listAgentTokens(deps: Deps, who: { teamId: string; userId: string }): Promise<AgentToken[]> {
  return deps.store.agentTokens.listActive(who.teamId, who.userId, deps.clock.now());
}

/** Revoke one of the person's own tokens, by name or id. */
export async function revokeAgentToken(
  deps: Deps,
  who: { teamId: string; userId: string },
  nameOrId: string,
): Promise<AgentToken> {
  const active = await listAgentTokens(deps, who);
  const found = active.find((t) => t.id === nameOrId) ?? active.find((t) => t.name === nameOrId);
  if (!found)
    throw new UserError(
      "not_found",
      `You have no active agent token named "${nameOrId.slice(0, 60)}": /edge agent list shows yours.`,
    );
  const revoked = await deps.store.agentTokens.revoke(
    who.teamId,
    who.userId,
    found.id,
    who.userId,
    deps.clock.now(),
  );
  if (!revoked) throw new UserError("not_found", `The agent token "${found.name}" was revoked already.`);
  await deps.store.audit.append({
    teamId: who.teamId,
    userId: who.userId,
    action: "agent.revoke",
    target: revoked.name,
    outcome: "revoked",
    details: { agentId: revoked.id, name: revoked.name },
  });
  return revoked;
}

export const AGENT_TOKEN_REFUSED =
  "This agent token is not valid: it is unknown, expired or revoked. Ask its owner to run /edge agent token in Slack for a new one.";

/**
 * The identity a token acts as, checked now (every call, not once per session): unknown, expired or
 * revoked tokens, and tokens of a workspace that removed edgeops, are refused with one sentence.
 */
export async function authenticateAgent(deps: Deps, token: string | undefined): Promise<AgentIdentity> {
  const refused = () => new UserError("unauthorized", AGENT_TOKEN_REFUSED);
  if (!token?.startsWith(AGENT_TOKEN_PREFIX) || token.length > 200) throw refused();
  const hash = hashOf(token);
  const record = await deps.store.agentTokens.byHash(hash);
  if (!record || !timingSafeEqual(Buffer.from(record.tokenHash, "hex"), Buffer.from(hash, "hex")))
    throw refused();
  const now = deps.clock.now();
  if (record.revokedAt !== null || record.expiresAt <= now) throw refused();
  // A workspace that removed edgeops after the token was made took its tokens with it.
  const removal = await deps.store.removals.get(record.teamId);
  if (removal && removal.since >= record.createdAt) throw refused();
  await deps.store.agentTokens.touch(record.id, now).catch(() => undefined);
  return {
    tokenId: record.id,
    teamId: record.teamId,
    userId: record.userId,
    name: record.name,
    expiresAt: record.expiresAt,
  };
}
