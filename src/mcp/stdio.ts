import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import pino from "pino";
import { buildBot } from "../app/bot.js";
import { loadConfigOrExit } from "../app/load-config.js";
import { toUserSentence } from "../errors.js";
import { createLogger } from "../log.js";
import { selectTransport } from "../slack/transport/transport.js";
import { AgentGate } from "./identity.js";
import { buildMcpServer } from "./server.js";

/**
 * `npm run mcp`: the MCP server over stdio for one agent token (EDGEOPS_AGENT_TOKEN), with the bot's own
 * configuration (its database, Edge API keys and Slack app, through which proposals' cards are posted).
 * It serves no Slack requests and runs no jobs: the bot does. Logs go to stderr; stdout is the protocol's.
 */
function stop(sentence: string): never {
  process.stderr.write(`edgeops mcp: ${sentence}\n`);
  process.exit(1);
}

const config = loadConfigOrExit("edgeops mcp");
if (!config.mcp.enabled) stop("the MCP server is off: set MCP_ENABLED=1 (docs/agents.md).");
const token = config.mcp.agentToken;
if (!token) stop("set EDGEOPS_AGENT_TOKEN to a token from `/edge agent token` in Slack (docs/agents.md).");
const transport = selectTransport(config);
if (transport.kind === "console")
  stop(
    "no Slack credentials are set: proposals' cards are posted in Slack, so run it with the bot's SLACK_* settings.",
  );
const logger = createLogger({
  level: config.logLevel,
  destination: pino.destination({ dest: 2, sync: false }),
});
const bot = await buildBot({ config, logger, transport, port: 0 });
const gate = new AgentGate(bot.deps);
try {
  await gate.check(token);
} catch (err) {
  await bot.close();
  stop(toUserSentence(err));
}
const server = buildMcpServer(bot.slack.env, token, gate);
let closing = false;
const close = async () => {
  if (closing) return;
  closing = true;
  await server.close().catch(() => undefined);
  await bot.close();
  process.exit(0);
};
process.stdin.on("close", () => void close());
process.on("SIGINT", () => void close());
process.on("SIGTERM", () => void close());
await server.connect(new StdioServerTransport());
logger.info({ agent: (await gate.check(token)).name }, "edgeops MCP server on stdio");
