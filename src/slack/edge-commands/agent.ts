import { durationMs } from "../../duration.js";
import { usage } from "../../errors.js";
import {
  AGENT_TOKEN_DEFAULT_MS,
  AGENT_TOKEN_MAX_MS,
  listAgentTokens,
  mintAgentToken,
  parseAgentName,
  revokeAgentToken,
} from "../../services/agent-tokens.js";
import { agentTokenList, agentTokenMinted, agentTokenRevoked } from "../blocks/agents.js";
import type { Subcommand } from "./types.js";

const EXAMPLE = "/edge agent token claude for 30d";
const DAY_MS = 24 * 3_600_000;

/** `[name] [for 30d]`: the agent's name and the token's lifetime. */
function parseMint(args: readonly string[]): { name: string; lifetimeMs: number } {
  const at = args.findIndex((a) => a.toLowerCase() === "for");
  const words = at === -1 ? args : args.slice(0, at);
  if (words.length > 1 || (at !== -1 && args.length !== at + 2))
    throw usage(`Give the agent a name and, if you like, how long the token lasts. For example: ${EXAMPLE}`);
  const lifetimeMs = at === -1 ? AGENT_TOKEN_DEFAULT_MS : durationMs(args[at + 1], { days: true });
  if (Number.isNaN(lifetimeMs))
    throw usage(
      `How long the token lasts is a duration like 7d, 30d or 12h (90d at most). For example: ${EXAMPLE}`,
    );
  return { name: parseAgentName(words[0]), lifetimeMs };
}

export const agentCommand: Subcommand = {
  name: "agent",
  usage: "agent token [name] [for 30d] | agent revoke <name|id> | agent list",
  summary:
    "A personal token for an AI agent (edgeops' MCP server), shown only to you: the agent reads what you may and proposes changes others approve here.",
  examples: [EXAMPLE, "/edge agent list", "/edge agent revoke claude"],
  // A token is shown once, to its owner: never re-run in public.
  shareable: () => false,
  async run(ctx) {
    const [verb, ...rest] = ctx.args;
    const who = { teamId: ctx.teamId, userId: ctx.userId };
    const { deps } = ctx.env;
    switch (verb?.toLowerCase()) {
      case "token": {
        if (ctx.isPublic)
          throw usage("An agent token is shown only to you: run /edge agent token without `public`.");
        const { name, lifetimeMs } = parseMint(rest);
        const { token, record } = await mintAgentToken(deps, who, name, lifetimeMs);
        return agentTokenMinted(record, token, AGENT_TOKEN_DEFAULT_MS / DAY_MS, AGENT_TOKEN_MAX_MS / DAY_MS);
      }
      case "revoke": {
        if (rest.length !== 1)
          throw usage("Say which of your agent tokens to revoke, by name or id: /edge agent revoke claude");
        return agentTokenRevoked(await revokeAgentToken(deps, who, rest[0]!));
      }
      case "list":
        if (rest.length > 0) throw usage("/edge agent list takes nothing more.");
        return agentTokenList(await listAgentTokens(deps, who));
      default:
        throw usage(`Try ${EXAMPLE}, /edge agent list or /edge agent revoke <name>.`);
    }
  },
};
