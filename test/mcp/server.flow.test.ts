/**
 * edgeops as an MCP server: an agent, driven by the SDK's own Client in-process and over HTTP against the
 * bot's real HTTP server, reads an incident and proposes a block; the approval card appears in the fake
 * Slack, another person approves it with a signed click, and the agent reads the outcome back. The gate is
 * the server's: no tool approves, the token's owner can't approve their own proposal, approvals-off channels
 * still need a press, and bad tokens, other people's channels and malformed proposals are refused.
 */
import { describe, expect, it } from "vitest";
import { mintAgentToken } from "../../src/services/agent-tokens.js";
import { ACTIONS } from "../../src/slack/ids.js";
import { SIM_IDS } from "../../tools/simulator/index.js";
import { blocksText, cardUpdate, findButtons, type Harness } from "../support/harness.js";
import { callTool, httpAgent, inProcessAgent, mintToken } from "../support/mcp-client.js";
import { useHarness } from "../support/use-harness.js";
import { ALICE, BOB, CAROL } from "../support/users.js";

const ZONE = SIM_IDS.zoneUnderAttack;
const CHANNEL = "C0001";
const FAST = "C0FAST";
const PRIVATE = "G0PRIV";
const REASON = "203.0.113.0/24 tops the blocked list; blocking the range stops the login flood";

/** The approval card posted for the change named `label`, its text and buttons. */
async function cardFor(h: Harness, label: string) {
  const post = await h.slack.waitForCall(
    "chat.postMessage",
    (c) => blocksText(c.args.blocks).includes(label) && findButtons(c.args.blocks).length > 0,
  );
  return { post, text: blocksText(post.args.blocks), buttons: findButtons(post.args.blocks) };
}

const requestsIn = async (h: Harness, channelId: string) =>
  (await h.store.changeRequests.listPending("T0001", { channelIds: [channelId] })).length;

function members(h: Harness) {
  h.slack.memberships.set(BOB, [CHANNEL, FAST]);
  h.slack.memberships.set(CAROL, [CHANNEL, FAST, PRIVATE]);
  h.slack.memberships.set(ALICE, [CHANNEL]);
}

describe("the MCP server", () => {
  const h = useHarness({ env: { MCP_ENABLED: "1" } });

  it("in-process: lists its tools, reads an incident, proposes a block that another person approves, and reads it back", async () => {
    members(h);
    const agent = await inProcessAgent(h, await mintToken(h, BOB, "claude"));
    const tools = (await agent.listTools()).tools.map((t) => t.name);
    expect(tools).toEqual(
      expect.arrayContaining([
        "get_incident",
        "get_top_offenders",
        "preview_impact",
        "propose_change",
        "get_change",
        "withdraw_change",
      ]),
    );
    // Nothing that decides: the gate is the server's.
    expect(tools.filter((t) => /approve|reject|apply|confirm/.test(t))).toEqual([]);
    for (const t of (await agent.listTools()).tools) expect(t.outputSchema, t.name).toBeDefined();

    const incident = await callTool(agent, "get_incident", { zone: ZONE });
    expect(incident.isError, incident.text).toBe(false);
    expect(incident.data.zone_id).toBe(ZONE);
    expect(incident.data.offenders).toHaveProperty("ok");
    expect(JSON.stringify(incident.data.offenders)).toMatch(/"count":\d+/);

    const target = "203.0.113.0/24";
    const label = `Block IP range ${target} on shield zone ${ZONE}`;
    const proposed = await callTool(agent, "propose_change", {
      change: { action: "block", zone: ZONE, target },
      channel: CHANNEL,
      reason: REASON,
    });
    expect(proposed.isError, proposed.text).toBe(false);
    expect(proposed.data.outcome).toBe("pending");
    const id: string = proposed.data.request_id;

    const card = await cardFor(h, label);
    expect(card.post.args.channel).toBe(CHANNEL);
    expect(card.text).toContain("Proposed by agent *claude* for <@U0002>");
    expect(card.text).toContain(REASON);
    expect(card.text).toContain("Impact in the last hour");
    const approve = card.buttons.find((b) => b.action_id === ACTIONS.approve)!;
    expect(approve.text).toBe("Approve");

    // The token's owner is the requester: their own press does not approve it.
    await h.click(approve, { userId: BOB, channelId: CHANNEL });
    await h.settled();
    expect((await callTool(agent, "get_change", { request_id: id })).data.state).toBe("pending");

    await h.click(approve, { userId: CAROL, channelId: CHANNEL });
    const done = await cardUpdate(h, (t) => t.includes(label) && t.includes("is in effect"));
    expect(blocksText(done.args.blocks)).toContain("Proposed by agent *claude*");

    const read = await callTool(agent, "get_change", { request_id: id });
    expect(read.isError, read.text).toBe(false);
    expect(read.data).toMatchObject({
      state: "applied",
      requester_id: BOB,
      approved_by: [CAROL],
      proposed_by_agent: "claude",
      read_back: { in_force: true, value: "blocked" },
    });
    await agent.close();
  });

  it("over HTTP at /mcp: the same flow, with the token as a Bearer header", async () => {
    members(h);
    const token = await mintToken(h, BOB, "cursor");
    const agent = await httpAgent(h, token);
    expect((await agent.listTools()).tools.length).toBeGreaterThan(5);
    const offenders = await callTool(agent, "get_top_offenders", { zone: ZONE, dimension: "country" });
    expect(offenders.isError, offenders.text).toBe(false);
    expect(offenders.data.offenders.length).toBeGreaterThan(0);

    const target = "198.51.100.77";
    const label = `Block IP ${target} on shield zone ${ZONE}`;
    const proposed = await callTool(agent, "propose_change", {
      change: { action: "block", zone: ZONE, target },
      channel: CHANNEL,
      reason: "one address hammering /login",
    });
    expect(proposed.data?.outcome, proposed.text).toBe("pending");
    const card = await cardFor(h, label);
    await h.click(card.buttons.find((b) => b.action_id === ACTIONS.approve)!, { userId: CAROL });
    await cardUpdate(h, (t) => t.includes(label) && t.includes("is in effect"));
    const read = await callTool(agent, "get_change", { request_id: proposed.data.request_id });
    expect(read.data).toMatchObject({ state: "applied", read_back: { in_force: true } });
    await agent.close();

    // Without a token, or with one that is not, /mcp answers 401 before anything is read.
    for (const bad of [undefined, "edgeops_at_not-a-real-token-000000000000000000000000"]) {
      const res = await fetch(new URL("/mcp", h.baseUrl), {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          ...(bad ? { authorization: `Bearer ${bad}` } : {}),
        },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
      });
      expect(res.status).toBe(401);
      expect(await res.text()).toContain("not valid");
    }
    await h.settled();
    expect(h.logs.text).not.toContain(token.slice(11));
  });

  it("in an approvals-off channel a proposal still waits for one person's Confirm", async () => {
    members(h);
    await h.store.policies.setChannel("T0001", FAST, { approvals: "off" });
    const agent = await inProcessAgent(h, await mintToken(h, BOB, "fast-agent"));
    const target = "AS64500";
    const label = `Block ASN ${target}`;
    const proposed = await callTool(agent, "propose_change", {
      change: { action: "block", zone: ZONE, target },
      channel: FAST,
      reason: "the ASN behind most challenged requests",
    });
    expect(proposed.data?.outcome, proposed.text).toBe("pending");
    const card = await cardFor(h, label);
    expect(card.text).toContain("Approvals are off here, but an agent proposed this");
    const confirm = card.buttons.find((b) => b.action_id === ACTIONS.approve)!;
    expect(confirm.text).toBe("Confirm");
    await h.settled();
    expect((await callTool(agent, "get_change", { request_id: proposed.data.request_id })).data.state).toBe(
      "pending",
    );
    // One press, by the person the agent acts for.
    await h.click(confirm, { userId: BOB, channelId: FAST });
    await cardUpdate(h, (t) => t.includes(label) && t.includes("is in effect"));
    const read = await callTool(agent, "get_change", { request_id: proposed.data.request_id });
    expect(read.data).toMatchObject({ state: "applied", approved_by: [BOB], read_back: { in_force: true } });
    await agent.close();
  });

  it("refuses: a private channel the owner is not in, a malformed proposal, and nothing is posted", async () => {
    members(h);
    const agent = await inProcessAgent(h, await mintToken(h, BOB, "careful"));
    const before = h.slack.callsTo("chat.postMessage").length;
    const privateOne = await callTool(agent, "propose_change", {
      change: { action: "block", zone: ZONE, target: "192.0.2.1" },
      channel: PRIVATE,
      reason: "from a channel I am not in",
    });
    expect(privateOne.isError).toBe(true);
    expect(privateOne.text).toContain("not a member of that channel");

    const notAnEntry = await callTool(agent, "propose_change", {
      change: { action: "block", zone: ZONE, target: "not-an-address" },
      channel: CHANNEL,
      reason: "malformed target",
    });
    expect(notAnEntry.isError).toBe(true);
    expect(notAnEntry.text).toMatch(/IP|ASN|country|JA4/);

    const noReason = await callTool(agent, "propose_change", {
      change: { action: "block", zone: ZONE, target: "192.0.2.1" },
      channel: CHANNEL,
    });
    expect(noReason.isError).toBe(true);
    expect(noReason.text).toContain("reason");

    const unknownAction = await callTool(agent, "propose_change", {
      change: { action: "delete_zone", zone: ZONE },
      channel: CHANNEL,
      reason: "not a change edgeops makes",
    });
    expect(unknownAction.isError).toBe(true);

    // An agent trying to decide finds no tool for it.
    const approve = await callTool(agent, "approve_change", { request_id: "x".repeat(22) });
    expect(approve.isError).toBe(true);
    expect(approve.text).toMatch(/not found|approve_change/i);

    await h.settled();
    expect(h.slack.callsTo("chat.postMessage").length).toBe(before);
    expect(await requestsIn(h, PRIVATE)).toBe(0);
    await agent.close();
  });

  it("refuses a revoked token at its next call, and a token of another workspace", async () => {
    members(h);
    const token = await mintToken(h, BOB, "short-lived");
    const agent = await inProcessAgent(h, token);
    expect((await callTool(agent, "list_requests")).isError).toBe(false);
    const proposed = await callTool(agent, "propose_change", {
      change: { action: "challenge", zone: ZONE, target: "CN" },
      channel: CHANNEL,
      reason: "challenge the country with the most events",
    });
    expect(proposed.data?.outcome, proposed.text).toBe("pending");

    // The same session, right after the revoke: refused.
    await h.command("agent revoke short-lived", { userId: BOB });
    await h.settled();
    const after = await callTool(agent, "get_change", { request_id: proposed.data.request_id });
    expect(after.isError).toBe(true);
    expect(after.text).toContain("not valid");
    await agent.close();

    // A token made in another workspace sees none of this one's requests.
    const { token: other } = await mintAgentToken(
      h.deps,
      { teamId: "T0002", userId: BOB },
      "elsewhere",
      86_400_000,
    );
    const stranger = await inProcessAgent(h, other);
    const read = await callTool(stranger, "get_change", { request_id: proposed.data.request_id });
    expect(read.isError).toBe(true);
    expect(read.text).toContain("that you can see");
    const withdraw = await callTool(stranger, "withdraw_change", { request_id: proposed.data.request_id });
    expect(withdraw.isError).toBe(true);
    await stranger.close();
    expect((await h.store.changeRequests.get(proposed.data.request_id))?.state).toBe("pending");
  });

  it("withdraws its owner's proposal, and only that; the card says so", async () => {
    members(h);
    const agent = await inProcessAgent(h, await mintToken(h, BOB, "undecided"));
    const proposed = await callTool(agent, "propose_change", {
      change: { action: "ddos_sensitivity", zone: ZONE, level: "high" },
      channel: CHANNEL,
      reason: "DDoS events doubled in the last 15 minutes <!here> <https://evil.example|click>",
    });
    expect(proposed.data?.outcome, proposed.text).toBe("pending");
    // The agent's words are text on the card: no ping, no link.
    const card = await cardFor(h, "DDoS sensitivity");
    expect(card.text).toContain("&lt;!here&gt;");
    expect(card.text).not.toContain("<!here>");
    expect(card.text).not.toContain("<https://evil.example");
    const withdrawn = await callTool(agent, "withdraw_change", { request_id: proposed.data.request_id });
    expect(withdrawn.data?.state, withdrawn.text).toBe("cancelled");
    await cardUpdate(h, (t) => t.includes("Withdrawn"));

    // Carol's own request can't be withdrawn by Bob's agent.
    const carols = await inProcessAgent(h, await mintToken(h, CAROL, "carols"));
    const hers = await callTool(carols, "propose_change", {
      change: { action: "waf_mode", zone: ZONE, mode: "log" },
      channel: CHANNEL,
      reason: "the WAF only logs during an attack",
    });
    expect(hers.data?.outcome, hers.text).toBe("pending");
    const notMine = await callTool(agent, "withdraw_change", { request_id: hers.data.request_id });
    expect(notMine.isError).toBe(true);
    expect(notMine.text).toContain("Only the person who asked");
    await agent.close();
    await carols.close();
  });

  it("limits calls per token", async () => {
    members(h);
    const agent = await inProcessAgent(h, await mintToken(h, BOB, "chatty"), {
      callsPerMinute: 2,
      proposalsPerHour: 1,
    });
    expect((await callTool(agent, "list_requests")).isError).toBe(false);
    expect((await callTool(agent, "list_requests")).isError).toBe(false);
    const third = await callTool(agent, "list_requests");
    expect(third.isError).toBe(true);
    expect(third.text).toContain("more than its 2 calls a minute");
    await agent.close();
  });
  it("lets a proposal expire like any request: too late to approve, and get_change says so", async () => {
    members(h);
    const agent = await inProcessAgent(h, await mintToken(h, BOB, "patient"));
    const target = "192.0.2.200";
    const label = `Block IP ${target} on shield zone ${ZONE}`;
    const proposed = await callTool(agent, "propose_change", {
      change: { action: "block", zone: ZONE, target },
      channel: CHANNEL,
      reason: "nobody will answer this one in time",
    });
    expect(proposed.data?.outcome, proposed.text).toBe("pending");
    const card = await cardFor(h, label);
    h.advanceClock(31 * 60_000);
    await h.click(card.buttons.find((b) => b.action_id === ACTIONS.approve)!, { userId: CAROL });
    await cardUpdate(h, (t) => t.includes(label) && t.includes("Expired"));
    const read = await callTool(agent, "get_change", { request_id: proposed.data.request_id });
    expect(read.data).toMatchObject({ state: "expired", approved_by: [], read_back: null });
    await agent.close();
  });
});

// Its own harness: the flows above approve blocks on the zone whose verdict it reads (203.0.113.0/24 is one of
// the ranges the staged attack's sources come from, and the simulator applies a block from its minute on), so
// what it reads never depends on how long they took.
describe("the MCP server's read tools", () => {
  const h = useHarness({ env: { MCP_ENABLED: "1" } });

  it("answers every read tool with data its output schema accepts (the SDK's client checks it)", async () => {
    members(h);
    const agent = await inProcessAgent(h, await mintToken(h, BOB, "reader"));
    const ok = async (name: string, args: Record<string, unknown>) => {
      const r = await callTool(agent, name, args);
      expect(r.isError, `${name}: ${r.text}`).toBe(false);
      return r.data;
    };
    const zones = await ok("list_zones", { search: "shop.acme" });
    expect(zones.zones.map((z: { shield_zone_id: number }) => z.shield_zone_id)).toContain(ZONE);
    expect(zones.zones.find((z: { shield_zone_id: number }) => z.shield_zone_id === ZONE).traffic).toBe(
      "unusual",
    );
    const apps = await ok("list_apps", { status: "failing" });
    expect(apps.apps.length).toBeGreaterThan(0);
    expect(apps.apps.every((a: { status: string }) => a.status === "failing")).toBe(true);
    const limits = await ok("get_rate_limits", { zone: ZONE });
    expect(limits.rules.map((r: { id: number }) => r.id)).toContain(SIM_IDS.rateLimitRulesUnderAttack[0]);
    const bots = await ok("get_bot_detection", { zone: ZONE });
    expect(bots.categories.length).toBeGreaterThan(0);
    const timeline = await ok("get_timeline", { zone: ZONE, window: "24h" });
    expect(timeline.zone_id).toBe(ZONE);
    const preview = await ok("preview_impact", { change: { action: "block", zone: ZONE, target: "CN" } });
    expect(preview.change).toContain("CN");
    expect(preview.preview.state).toBeDefined();
    const bad = await callTool(agent, "list_apps", { status: "sleepy" });
    expect(bad.isError).toBe(true);
    expect(bad.text).toContain("is not a status");

    // Privacy: a request waiting in a private channel Bob is not in is neither listed nor readable for him.
    const carols = await inProcessAgent(h, await mintToken(h, CAROL, "private-eye"));
    const hers = await callTool(carols, "propose_change", {
      change: { action: "block", zone: ZONE, target: "192.0.2.77" },
      channel: PRIVATE,
      reason: "seen in the private incident channel",
    });
    expect(hers.data?.outcome, hers.text).toBe("pending");
    const listed = await ok("list_requests", {});
    expect(listed.pending.map((r: { request_id: string }) => r.request_id)).not.toContain(
      hers.data.request_id,
    );
    expect(JSON.stringify(listed)).not.toContain(PRIVATE);
    const read = await callTool(agent, "get_change", { request_id: hers.data.request_id });
    expect(read.isError).toBe(true);
    expect(
      (await callTool(carols, "list_requests")).data.pending.map((r: { request_id: string }) => r.request_id),
    ).toContain(hers.data.request_id);
    await agent.close();
    await carols.close();
  });
});

describe("the MCP server, when not configured", () => {
  const h = useHarness();

  it("is not served at /mcp", async () => {
    const res = await fetch(new URL("/mcp", h.baseUrl), { method: "POST", body: "{}" });
    expect(res.status).toBe(404);
  });
});
