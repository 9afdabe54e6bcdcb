/**
 * `npm run mcp` as a real process: the SDK's stdio client spawns it with the bot's configuration and an
 * agent token; its proposal's card reaches the same (fake) Slack, a person approves it on the running bot,
 * and the stdio agent reads the outcome back. Without a usable token it stops with a sentence.
 */
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { describe, expect, it } from "vitest";
import { ACTIONS } from "../../src/slack/ids.js";
import { SIM_IDS } from "../../tools/simulator/index.js";
import {
  answerTo,
  BOT_TOKEN,
  blocksText,
  cardUpdate,
  findButtons,
  type Harness,
  testBotEnv,
} from "../support/harness.js";
import { callTool, mintToken } from "../support/mcp-client.js";
import { useHarness } from "../support/use-harness.js";
import { BOB, CAROL } from "../support/users.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const ZONE = SIM_IDS.zoneUnderAttack;

/** The environment `npm run mcp` gets: the bot's own configuration, pointing at the harness's fakes. */
function mcpEnv(h: Harness, extra: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env))
    if (v !== undefined && !/^(SLACK_|EDGE_|DATABASE_URL|ENCRYPTION_KEY|MCP_|VITEST|TEST)/.test(k))
      env[k] = v;
  return {
    ...env,
    ...testBotEnv(h.sim, h.slack, h.dataDir),
    SLACK_BOT_TOKEN: BOT_TOKEN,
    EDGE_API_RATE_PER_SEC: "1000",
    LOG_LEVEL: "warn",
    ...extra,
  };
}

function stdioTransport(h: Harness, extra: Record<string, string>) {
  return new StdioClientTransport({
    command: process.execPath,
    args: ["--import", "tsx", "src/mcp/stdio.ts"],
    cwd: ROOT,
    env: mcpEnv(h, extra),
    stderr: "pipe",
  });
}

describe("npm run mcp (stdio)", () => {
  const h = useHarness({ env: { MCP_ENABLED: "1" } });

  it("proposes over stdio; the card is approved on the bot; the agent reads the applied change", async () => {
    h.slack.memberships.set(BOB, ["C0001"]);
    const token = await mintToken(h, BOB, "stdio-agent");
    const agent = new Client({ name: "stdio-test", version: "1.0.0" });
    await agent.connect(stdioTransport(h, { MCP_ENABLED: "1", EDGEOPS_AGENT_TOKEN: token }));
    try {
      expect((await agent.listTools()).tools.map((t) => t.name)).toContain("propose_change");
      const target = "192.0.2.99";
      const label = `Block IP ${target} on shield zone ${ZONE}`;
      const proposed = await callTool(agent, "propose_change", {
        change: { action: "block", zone: ZONE, target },
        channel: "C0001",
        reason: "the busiest address on /login in the last 15 minutes",
      });
      expect(proposed.data?.outcome, proposed.text).toBe("pending");
      const post = await h.slack.waitForCall("chat.postMessage", (c) =>
        blocksText(c.args.blocks).includes(label),
      );
      expect(blocksText(post.args.blocks)).toContain("Proposed by agent *stdio-agent*");
      const approve = findButtons(post.args.blocks).find((b) => b.action_id === ACTIONS.approve)!;
      await h.click(approve, { userId: CAROL });
      await cardUpdate(h, (t) => t.includes(label) && t.includes("is in effect"));
      const read = await callTool(agent, "get_change", { request_id: proposed.data.request_id });
      expect(read.data).toMatchObject({
        state: "applied",
        approved_by: [CAROL],
        read_back: { in_force: true },
      });

      // Revoked in Slack: the running stdio server refuses its next call.
      // Its answer comes once the revoke is written: a call raced the bare command's write and was served.
      const revoked = await answerTo(h, "agent revoke stdio-agent", BOB);
      expect(revoked.text).toContain("is revoked");
      const after = await callTool(agent, "list_requests");
      expect(after.isError).toBe(true);
      expect(after.text).toContain("not valid");
    } finally {
      await agent.close();
    }
  }, 60_000);

  it("stops with a sentence when the token is not valid or MCP is off", async () => {
    for (const [extra, sentence] of [
      [
        { MCP_ENABLED: "1", EDGEOPS_AGENT_TOKEN: "edgeops_at_nope-000000000000000000000000000000000000000" },
        "not valid",
      ],
      [{ MCP_ENABLED: "1" }, "set EDGEOPS_AGENT_TOKEN"],
      [{ EDGEOPS_AGENT_TOKEN: "edgeops_at_x" }, "MCP_ENABLED=1"],
    ] as const) {
      const transport = stdioTransport(h, extra);
      let stderr = "";
      transport.stderr?.on("data", (d: Buffer) => {
        stderr += d.toString("utf8");
      });
      const agent = new Client({ name: "stdio-test", version: "1.0.0" });
      await expect(agent.connect(transport)).rejects.toThrow();
      await agent.close().catch(() => undefined);
      expect(stderr).toContain(sentence);
    }
  }, 60_000);
});
