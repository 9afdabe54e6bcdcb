/**
 * The worked example of docs/agents.md, in the local console against the simulator: alice mints a token
 * with /edge agent token, an agent (the SDK's Client over HTTP) reads the incident and proposes a block,
 * the card is drawn in the console, carol approves it there, and the agent reads the outcome back.
 */

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterEach, describe, expect, it } from "vitest";
import { SIM_IDS } from "../../../tools/simulator/index.js";
import { callTool } from "../../support/mcp-client.js";
import { buttonNumber, type ConsoleDriver, startConsole } from "./support.js";

let c: ConsoleDriver | undefined;
afterEach(async () => {
  await c?.close();
  c = undefined;
});

describe("local console with MCP_ENABLED=1", () => {
  it("mints a token and serves the worked example: read, propose, approve in the console, read back", async () => {
    c = await startConsole({ env: { MCP_ENABLED: "1", PORT: "0" } });
    const url = /AI agents \(MCP\): (http:\/\/127\.0\.0\.1:\d+\/mcp)/.exec(c.output)?.[1];
    expect(url, c.output).toBeDefined();

    const minted = await c.send("/edge agent token demo");
    expect(minted).toContain("only visible to alice");
    const token = /edgeops_at_[A-Za-z0-9_-]{43}/.exec(minted)?.[0];
    expect(token, minted).toBeDefined();

    const agent = new Client({ name: "worked-example", version: "1.0.0" });
    await agent.connect(
      new StreamableHTTPClientTransport(new URL(url!), {
        requestInit: { headers: { authorization: `Bearer ${token}` } },
      }),
    );
    try {
      const zone = SIM_IDS.zoneUnderAttack;
      const incident = await callTool(agent, "get_incident", { zone });
      expect(incident.isError, incident.text).toBe(false);
      const top = await callTool(agent, "get_top_offenders", { zone, dimension: "ip" });
      const ip: string = top.data.offenders[0].value;
      expect(ip).toMatch(/^\d+\.\d+\.\d+\.\d+$/);

      const proposed = await callTool(agent, "propose_change", {
        change: { action: "block", zone, target: ip },
        channel: "C0GENERAL",
        reason: `${ip} is the busiest source in the event log right now`,
      });
      expect(proposed.data?.outcome, proposed.text).toBe("pending");
      await c.until(() => c!.output.includes("Proposed by agent *demo*"), "the card");
      expect(c.output).toMatch(/== Approval needed: Block IP .+ ==/);

      await c.send("/as carol");
      await c.send(String(buttonNumber(c.output, "Approve")));
      await c.until(() => /Applied/.test(c!.output), "the applied card");
      const read = await callTool(agent, "get_change", { request_id: proposed.data.request_id });
      expect(read.data).toMatchObject({ state: "applied", read_back: { in_force: true } });
    } finally {
      await agent.close();
    }
  });
});
