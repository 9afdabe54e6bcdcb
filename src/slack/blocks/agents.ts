import type { KnownBlock } from "@slack/types";
import type { AgentToken } from "../../store/index.js";
import { context, section } from "./block-kit.js";
import { code, dateToken, joinMrkdwn, mrkdwn } from "./mrkdwn.js";
import { type Reply, reply } from "./reply.js";

/** One line per active token: its name, id and when it ends (never the token). */
export function agentTokenLine(t: AgentToken) {
  const used = t.lastUsedAt === null ? "not used yet" : mrkdwn`last used ${dateToken(t.lastUsedAt)}`;
  return mrkdwn`• *${t.name}* ${code(t.id)}, expires ${dateToken(t.expiresAt)}, ${used}`;
}

/** The new token, shown once to its owner only. */
export function agentTokenMinted(t: AgentToken, token: string, defaultDays: number, maxDays: number): Reply {
  return reply(mrkdwn`Your agent token "${t.name}" (shown once, only to you)`, [
    section(
      mrkdwn`:key: Your token for the agent *${t.name}*, for this workspace. It is shown only this once and edgeops keeps only its hash: copy it now into your agent's configuration (\`EDGEOPS_AGENT_TOKEN\`, or \`Authorization: Bearer …\`).`,
    ),
    section(code(token)),
    context(
      mrkdwn`It acts as you (your channels, your requests; another person approves), until ${dateToken(t.expiresAt)}: tokens last ${defaultDays} days unless you say \`for 7d\`, ${maxDays} days at most. Revoke it any time: \`/edge agent revoke ${t.name}\`.`,
    ),
  ]);
}

export function agentTokenRevoked(t: AgentToken): Reply {
  return reply(mrkdwn`Agent token "${t.name}" revoked`, [
    section(
      mrkdwn`:no_entry: The agent token *${t.name}* ${code(t.id)} is revoked: every call it makes from now on is refused.`,
    ),
  ]);
}

export function agentTokenList(tokens: readonly AgentToken[]): Reply {
  const blocks: KnownBlock[] = [section(`*Your agent tokens* (${tokens.length})`)];
  if (tokens.length === 0)
    blocks.push(context("None active. `/edge agent token claude` makes one for an AI agent (MCP)."));
  else blocks.push(section(joinMrkdwn(tokens.map(agentTokenLine), "\n")));
  return reply(`Your agent tokens (${tokens.length})`, blocks);
}
