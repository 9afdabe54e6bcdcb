import type { Installation } from "@slack/bolt";
import { WebClient } from "@slack/web-api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SlackWebClient, slackClientFactory } from "../../../src/slack/transport/clients.js";
import { type Harness, startHarness } from "../../support/harness.js";
import { useHarness } from "../../support/use-harness.js";

function installation(teamId: string): Installation<"v2", false> {
  return {
    team: { id: teamId, name: teamId },
    enterprise: undefined,
    bot: { token: `xoxb-${teamId}-token-0000`, scopes: ["chat:write"], id: "B0BOT", userId: "U0BOT" },
    user: { token: undefined, scopes: undefined, id: "U0INSTALLER" },
    appId: "A0001",
    tokenType: "bot",
    isEnterpriseInstall: false,
    authVersion: "v2",
  };
}

describe("the background Slack clients (approval expiry, schedules) with OAuth installs", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ oauth: true, seedKey: false });
    for (const team of ["T0A", "T0B", "T0C", "T0D"]) {
      await h.store.installations.storeInstallation(installation(team));
    }
  });
  afterAll(async () => {
    await h?.close();
  });

  it("keep only the most recently used workspaces' clients, and a dropped one is rebuilt with its token", async () => {
    const clientFor = slackClientFactory(
      { kind: "oauth", clientId: "111.222", clientSecret: "secret-x", stateSecret: "state-x" },
      { slackApiUrl: `${h.slack.apiUrl.replace(/\/$/, "")}/` },
      h.store.installations,
      3,
    );
    const first = await clientFor("T0A");
    expect(await clientFor("T0A")).toBe(first);
    await clientFor("T0B");
    await clientFor("T0C");
    const d = await clientFor("T0D"); // T0A, the least recently used, is dropped
    expect(await clientFor("T0D")).toBe(d);
    const again = await clientFor("T0A");
    expect(again).not.toBe(first);

    await again.chat.postMessage({ channel: "C0001", text: "hello" });
    const call = h.slack.callsTo("chat.postMessage").at(-1);
    expect(call?.token).toBe("xoxb-T0A-token-0000");
  });
});

describe("the background Slack client of a single-token install", () => {
  const h = useHarness({}, { resetEach: false });

  it("a 429 on one channel's chat.update holds back no card, update or call elsewhere", async () => {
    h.slack.addFault({ method: "chat.update", channel: "C0BUSY", retryAfterSec: 3, times: 1 });
    const background = await h.app.env.clientFor("T0001");
    const started = Date.now();
    const busy = background.chat.update({ channel: "C0BUSY", ts: "1700000000.000100", text: "Firing" });
    await h.slack.waitForCall("chat.update", (c) => c.args.channel === "C0BUSY");

    const before = Date.now();
    await background.chat.postMessage({ channel: "C0002", text: "approval card" });
    await background.chat.update({ channel: "C0003", ts: "1700000000.000200", text: "undone" });
    await background.users.info({ user: "U0001" });
    expect(Date.now() - before).toBeLessThan(1000);

    // The busy channel's own update waits out its Retry-After, then goes through.
    await busy;
    expect(Date.now() - started).toBeGreaterThanOrEqual(2900);
    expect(h.slack.callsTo("chat.update").filter((c) => c.args.channel === "C0BUSY")).toHaveLength(2);
  }, 15_000);
});

describe("SlackWebClient", () => {
  it("sends a message's blocks exactly as WebClient does, and gets the same answer", async () => {
    const { createServer } = await import("node:http");
    const bodies: string[] = [];
    const server = createServer((req, res) => {
      let body = "";
      req.on("data", (c) => {
        body += c;
      });
      req.on("end", () => {
        bodies.push(body);
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ ok: true, ts: "1.000100" }));
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const { port } = server.address() as { port: number };
    const options = { slackApiUrl: `http://127.0.0.1:${port}/api/`, retryConfig: { retries: 0 } };
    const message = {
      channel: "C1",
      text: "Approval needed",
      blocks: [
        { type: "section", text: { type: "mrkdwn", text: "*Block* `AI scraper` & <@U1>" } },
        {
          type: "actions",
          elements: [
            {
              type: "button",
              action_id: "a",
              text: { type: "plain_text", text: "Approve" },
              value: '{"r":"x"}',
            },
          ],
        },
      ],
    };
    try {
      const plain = await new WebClient("xoxb-1", options).chat.postMessage(message);
      const ours = await new SlackWebClient("xoxb-1", options).chat.postMessage(message);
      expect(ours).toEqual(plain);
      expect(bodies).toHaveLength(2);
      expect(bodies[1]).toBe(bodies[0]);
      expect(JSON.parse(new URLSearchParams(bodies[0]).get("blocks")!)).toEqual(message.blocks);
    } finally {
      server.close();
    }
  });
});
