import type { IncomingMessage, ServerResponse } from "node:http";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import type { CustomRoute } from "@slack/bolt";
import { UserError } from "../errors.js";
import type { SlackEnv } from "../slack/edge-commands/types.js";
import { type AgentGate, AgentGate as Gate } from "./identity.js";
import { registerTools } from "./tools.js";

export const MCP_PATH = "/mcp";
const VERSION = "0.1.0";

const INSTRUCTIONS =
  "edgeops: the bunny.net edge (shield zones, WAF, DDoS, bot detection, Magic Containers) as its Slack users see it. " +
  "You act as the person whose token you hold: you read what they may read and propose changes; people decide on the approval card in Slack. " +
  "Start with list_zones or get_incident, check preview_impact, then propose_change with a channel and a reason, and poll get_change for the outcome.";

/**
 * An MCP server for one token: every tool call checks the token again (src/mcp/identity.ts) and acts as
 * its owner. `env`: the Slack layer the proposals' cards are posted through.
 */
export function buildMcpServer(env: SlackEnv, token: string | undefined, gate: AgentGate): McpServer {
  const server = new McpServer({ name: "edgeops", version: VERSION }, { instructions: INSTRUCTIONS });
  registerTools(server, { env, token, gate, logger: env.deps.logger.child({ component: "mcp" }) });
  return server;
}

/** The Bearer token of a request, if it carries one. */
function bearerOf(req: IncomingMessage): string | undefined {
  const h = req.headers.authorization;
  const m = typeof h === "string" ? /^Bearer\s+(\S+)\s*$/i.exec(h) : null;
  return m?.[1];
}

function refuse(res: ServerResponse, status: number, message: string, headers: Record<string, string> = {}) {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32001, message }, id: null }));
}

/**
 * Streamable HTTP at /mcp on the bot's own HTTP server, stateless: each POST is one exchange with a
 * server built for the request's Bearer token (checked before anything is read, and again by every tool).
 * `envOf`: the Slack layer, known once the app is built.
 */
export function mcpRoute(envOf: () => SlackEnv): CustomRoute {
  let gate: AgentGate | undefined;
  return {
    path: MCP_PATH,
    method: ["POST", "GET", "DELETE"],
    handler: async (req, res) => {
      const env = envOf();
      const logger = env.deps.logger.child({ component: "mcp" });
      if (req.method !== "POST") {
        refuse(res, 405, "This MCP endpoint is stateless: POST only.", { allow: "POST" });
        return;
      }
      gate ??= new Gate(env.deps);
      const token = bearerOf(req);
      try {
        await gate.check(token);
      } catch (err) {
        const sentence = err instanceof UserError ? err.message : "edgeops could not check this token.";
        refuse(res, 401, sentence, { "www-authenticate": 'Bearer realm="edgeops"' });
        return;
      }
      const server = buildMcpServer(env, token, gate);
      // No session id generator: stateless, one exchange per POST.
      const transport = new StreamableHTTPServerTransport({ enableJsonResponse: true });
      res.on("close", () => {
        void transport.close();
        void server.close();
      });
      try {
        await server.connect(transport);
        await transport.handleRequest(req, res);
      } catch (err) {
        logger.warn({ err }, "an MCP request failed");
        if (!res.headersSent) refuse(res, 500, "edgeops could not answer this request.");
      }
    },
  };
}
