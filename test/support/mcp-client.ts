import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { AgentGate, type AgentLimits } from "../../src/mcp/identity.js";
import { buildMcpServer, MCP_PATH } from "../../src/mcp/server.js";
import { answerTo, type Harness } from "./harness.js";

const TOKEN = /edgeops_at_[A-Za-z0-9_-]{43}/;

/** `userId` runs `/edge agent token <name>` in Slack: the token shown to them. */
export async function mintToken(h: Harness, userId: string, name: string): Promise<string> {
  const minted = await answerTo(h, `agent token ${name}`, userId);
  const token = TOKEN.exec(minted.text)?.[0];
  if (!token) throw new Error(`no token in the answer: ${minted.text}`);
  return token;
}

/** An agent connected in-process (the SDK's InMemoryTransport) to the bot's MCP server for `token`. */
export async function inProcessAgent(h: Harness, token: string, limits?: AgentLimits): Promise<Client> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const server = buildMcpServer(h.app.env, token, new AgentGate(h.deps, limits));
  await server.connect(serverSide);
  const client = new Client({ name: "test-agent", version: "1.0.0" });
  await client.connect(clientSide);
  return client;
}

/** An agent connected over Streamable HTTP to /mcp on the bot's own HTTP server, with `token` as Bearer. */
export async function httpAgent(h: Harness, token: string | undefined): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(new URL(MCP_PATH, h.baseUrl), {
    requestInit: { headers: token === undefined ? {} : { authorization: `Bearer ${token}` } },
  });
  const client = new Client({ name: "test-agent", version: "1.0.0" });
  await client.connect(transport);
  return client;
}

export interface ToolAnswer {
  isError: boolean;
  text: string;
  // biome-ignore lint/suspicious/noExplicitAny: each tool's own output
  data: any;
}

/** Call a tool: its error flag, its text and its structured content. A protocol error reads as an error too. */
export async function callTool(
  client: Client,
  name: string,
  args: Record<string, unknown> = {},
): Promise<ToolAnswer> {
  try {
    const r = await client.callTool({ name, arguments: args });
    const content = (r.content ?? []) as { type: string; text?: string }[];
    return {
      isError: r.isError === true,
      text: content.map((c) => c.text ?? "").join("\n"),
      data: r.structuredContent,
    };
  } catch (err) {
    return { isError: true, text: err instanceof Error ? err.message : String(err), data: undefined };
  }
}
