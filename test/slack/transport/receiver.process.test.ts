import { execFile } from "node:child_process";
import { WebClient, type WebClientOptions } from "@slack/web-api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../../src/config.js";
import { TransportError } from "../../../src/errors.js";
import { ACTIONS, VIEWS } from "../../../src/slack/ids.js";
import { boundTeamClientCache } from "../../../src/slack/transport/clients.js";
import { acknowledgedEmpty } from "../../../src/slack/transport/front-thread.js";
import { selectTransport } from "../../../src/slack/transport/transport.js";
import { watchTransport } from "../../../src/slack/transport/transport-state.js";
import {
  BOT_TOKEN,
  commandAnswer,
  type Harness,
  SIGNING_SECRET,
  startHarness,
  TEST_EDGE_KEY,
} from "../../support/harness.js";
import { postSigned, slackSignatureHeaders, slashCommandBody } from "../../support/slack-signer.js";
import { useHarness } from "../../support/use-harness.js";

describe("the HTTP receiver checks Slack's signature", () => {
  const h = useHarness({}, { resetEach: false });

  it("a wrong signature gets 401 and nothing runs", async () => {
    const body = slashCommandBody({ text: "apps", responseUrl: h.slack.responseUrl("forged") });
    h.sim.clearRequests();
    const res = await postSigned(h.eventsUrl, body, "not-the-signing-secret");
    expect(res.status).toBe(401);
    await new Promise((r) => setTimeout(r, 300));
    expect(h.slack.responsesTo("forged")).toHaveLength(0);
    expect(h.sim.requests).toHaveLength(0);
  });

  it("a timestamp older than five minutes gets 401 and nothing runs", async () => {
    const body = slashCommandBody({ text: "apps", responseUrl: h.slack.responseUrl("replayed") });
    h.sim.clearRequests();
    const res = await postSigned(h.eventsUrl, body, SIGNING_SECRET, {
      timestampSec: Math.floor(Date.now() / 1000) - 6 * 60,
    });
    expect(res.status).toBe(401);
    await new Promise((r) => setTimeout(r, 300));
    expect(h.slack.responsesTo("replayed")).toHaveLength(0);
    expect(h.sim.requests).toHaveLength(0);
  });

  it("Bolt's per-team Web API clients are built on first use only, and bounded (least recently used)", async () => {
    boundTeamClientCache(h.app.app, 3);
    const teams = ["T0A", "T0B", "T0C", "T0D", "T0E", "T0F"];
    for (const teamId of teams) {
      const res = await h.command("help", { teamId });
      expect(res.status).toBe(200);
      await h.slack.waitForResponse(res.responseId);
    }
    type Pool = { getOrCreate(token: string, options: WebClientOptions): WebClient };
    const clients = (h.app.app as unknown as { clients: Record<string, Pool> }).clients;
    // /edge help answers through response_url: no team's client was built.
    expect(Object.keys(clients)).toEqual([]);

    // What Bolt does for a request, then a listener calling the Web API.
    for (const teamId of teams) {
      const client = clients[teamId]?.getOrCreate(BOT_TOKEN, { slackApiUrl: h.slack.apiUrl, teamId });
      expect(client).toBeInstanceOf(WebClient);
      expect((await client?.auth.test())?.ok).toBe(true);
    }
    expect(Object.keys(clients).sort()).toEqual(["T0D", "T0E", "T0F"]);
    const again = clients.T0F?.getOrCreate(BOT_TOKEN, {});
    expect(again).toBe(clients.T0F?.getOrCreate(BOT_TOKEN, {}));
  });

  it("a correctly signed request is acknowledged", async () => {
    const res = await h.command("help");
    expect(res.status).toBe(200);
    await h.slack.waitForResponse(res.responseId);
  });

  it("acknowledges before the Edge API answers, then answers through response_url", async () => {
    h.sim.addFault({ path: "/mc/apps", latencyMs: 1500, times: 1 });
    const res = await h.command("apps");
    expect(res.status).toBe(200);
    // The acknowledgement came back while the Edge API was still working on the request.
    expect(h.slack.responsesTo(res.responseId)).toHaveLength(0);
    const answer = await h.slack.waitForResponse(res.responseId);
    expect(JSON.stringify(answer.body.blocks)).toContain("Magic Containers applications");
    h.sim.clearFaults();
  });
});

describe("OAuth multi-workspace install", () => {
  const h = useHarness({ oauth: true, seedKey: false }, { resetEach: false });

  it("/slack/install redirects to Slack, /slack/oauth_redirect stores the installation encrypted, and the new workspace can use /edge", async () => {
    const install = await fetch(`${h.baseUrl}/slack/install`, { redirect: "manual" });
    expect(install.status).toBe(302);
    const location = new URL(install.headers.get("location")!);
    expect(location.hostname).toBe("slack.com");
    expect(location.searchParams.get("scope")).toBe(
      "commands,chat:write,users:read,usergroups:read,im:write,channels:read,groups:read",
    );
    const state = location.searchParams.get("state")!;
    const cookie = install.headers.get("set-cookie")!.split(";")[0]!;

    const callback = await fetch(
      `${h.baseUrl}/slack/oauth_redirect?code=abc&state=${encodeURIComponent(state)}`,
      {
        headers: { cookie },
        redirect: "manual",
      },
    );
    expect([200, 302]).toContain(callback.status);
    expect(h.slack.callsTo("oauth.v2.access")).toHaveLength(1);

    const installation = await h.store.installations.fetchInstallation({
      teamId: "T0OAUTH",
      enterpriseId: undefined,
      isEnterpriseInstall: false,
    });
    expect(installation.bot?.token).toBe("xoxb-oauth-installed-token");

    // The token is encrypted at rest: the SQLite file does not hold it in plaintext.
    const { readdirSync, readFileSync } = await import("node:fs");
    const files = readdirSync(h.dataDir).filter((f) => f.startsWith("edgeops.sqlite"));
    for (const f of files)
      expect(readFileSync(`${h.dataDir}/${f}`).includes("xoxb-oauth-installed-token")).toBe(false);

    // Neither the OAuth client secret nor the installed token reaches the logs (captured at debug level).
    expect(h.logs.text).not.toContain("oauth-client-secret-x");
    expect(h.logs.text).not.toContain("xoxb-oauth-installed-token");

    // The installed workspace's commands are authorised with its own token.
    await h.store.keys.set("T0OAUTH", TEST_EDGE_KEY, "U0INSTALLER");
    // The answer, not only the page sent first: its zone checks are done before the next test counts requests.
    const answer = await commandAnswer(h, "zones", { teamId: "T0OAUTH" });
    expect(answer.text).toContain("Shield zones");
  });

  it("a workspace with no stored installation is told so (a command, a click), not left in silence", async () => {
    h.sim.clearRequests();
    const res = await h.command("zones", { teamId: "T0GONE" });
    expect(res.status).toBe(200);
    const answer = await h.slack.waitForResponse(res.responseId);
    expect(answer.body.response_type).toBe("ephemeral");
    expect(answer.body.text).toBe(
      "edgeops has no installation for this workspace (it was removed, or installed on another deployment). A workspace admin can install it again from this deployment's /slack/install page.",
    );
    const click = await h.click({ action_id: "edge_anything", value: "x" }, { teamId: "T0GONE" });
    expect(click.status).toBe(200);
    const clicked = await h.slack.waitForResponse(click.responseId);
    expect(clicked.body.text).toContain("edgeops has no installation for this workspace");
    expect(h.sim.requests).toHaveLength(0);
    expect(h.logs.text).toContain("Authorization of incoming event did not succeed");
  });
});

describe("acknowledgements that carry nothing are given before Bolt authorizes and runs middleware", () => {
  let h: Harness;
  // Holds every request in Bolt's middleware (after authorize, before the listeners) until opened.
  let open: () => void = () => {};
  let gate: Promise<void> = Promise.resolve();
  const closeGate = () => {
    gate = new Promise((resolve) => {
      open = resolve;
    });
  };
  beforeAll(async () => {
    h = await startHarness({
      middleware: [
        async ({ next }) => {
          await gate;
          await next();
        },
      ],
    });
  });
  afterAll(async () => {
    open();
    await h?.close();
  });

  it("a command and a click are acknowledged while Bolt's middleware still holds them, then run; a modal submission waits for its listener's ack", async () => {
    closeGate();
    const command = await h.command("help");
    expect(command.status).toBe(200);
    const click = await h.click({ action_id: ACTIONS.approve, value: "no-such-request" });
    expect(click.status).toBe(200);
    expect(h.slack.responsesTo(command.responseId)).toHaveLength(0);

    let submitted = false;
    const submission = h
      .interact({
        type: "view_submission",
        team: { id: "T0001", domain: "acme" },
        user: { id: "U0001", team_id: "T0001" },
        api_app_id: "A0001",
        is_enterprise_install: false,
        view: { id: "V1", callback_id: VIEWS.keyModal, state: { values: {} }, private_metadata: "" },
      })
      .then((res) => {
        submitted = true;
        return res;
      });
    await new Promise((r) => setTimeout(r, 300));
    expect(submitted).toBe(false);

    open();
    const answer = await h.slack.waitForResponse(command.responseId);
    expect(JSON.stringify(answer.body)).toContain("/edge");
    expect((await submission).status).toBe(200);
  });
});

describe("acknowledgedEmpty", () => {
  it("commands, clicks, shortcuts, closed modals and events: yes; submissions, options and the unknown: no", () => {
    expect(acknowledgedEmpty({ command: "/edge", text: "apps" })).toBe(true);
    for (const type of ["block_actions", "shortcut", "message_action", "view_closed", "event_callback"])
      expect(acknowledgedEmpty({ type })).toBe(true);
    for (const type of [
      "view_submission",
      "block_suggestion",
      "url_verification",
      "interactive_message",
      undefined,
    ])
      expect(acknowledgedEmpty({ type })).toBe(false);
    expect(acknowledgedEmpty(null)).toBe(false);
    expect(acknowledgedEmpty("payload")).toBe(false);
  });
});

describe("selectTransport", () => {
  const base = { ENCRYPTION_KEY: "x" };
  it("no Slack variables: the local console, except in production", () => {
    expect(selectTransport(loadConfig(base)).kind).toBe("console");
    expect(() => selectTransport(loadConfig({ ...base, NODE_ENV: "production" }))).toThrow(
      /NODE_ENV=production has no local console.*SLACK_APP_TOKEN/,
    );
  });
  it("Socket Mode with an app token, HTTP with a signing secret", () => {
    expect(selectTransport(loadConfig({ SLACK_APP_TOKEN: "xapp-1", SLACK_BOT_TOKEN: "xoxb-1" })).kind).toBe(
      "socket",
    );
    expect(selectTransport(loadConfig({ SLACK_SIGNING_SECRET: "s", SLACK_BOT_TOKEN: "xoxb-1" })).kind).toBe(
      "http",
    );
  });
  it("names what is missing", () => {
    expect(() => selectTransport(loadConfig({ SLACK_SIGNING_SECRET: "s" }))).toThrow(
      /SLACK_BOT_TOKEN is missing/,
    );
    expect(() => selectTransport(loadConfig({ SLACK_BOT_TOKEN: "xoxb-1" }))).toThrow(
      /SLACK_SIGNING_SECRET \(HTTP\) or SLACK_APP_TOKEN/,
    );
    expect(() => selectTransport(loadConfig({ SLACK_SIGNING_SECRET: "s", SLACK_CLIENT_ID: "1" }))).toThrow(
      TransportError,
    );
    expect(() => selectTransport(loadConfig({ SLACK_SIGNING_SECRET: "s", SLACK_CLIENT_ID: "1" }))).toThrow(
      /SLACK_CLIENT_SECRET, SLACK_STATE_SECRET/,
    );
    expect(() =>
      selectTransport(loadConfig({ SLACK_APP_TOKEN: "xoxb-wrong", SLACK_BOT_TOKEN: "xoxb-1" })),
    ).toThrow(/xapp-/);
  });
});

describe("acknowledgements come from the HTTP front thread, whatever the main thread is doing", () => {
  let h: Harness;
  let blockFor = 0;
  let blocked: { from: number; to: number } | undefined;
  beforeAll(async () => {
    h = await startHarness({
      middleware: [
        async ({ next }) => {
          if (blockFor > 0) {
            // Synchronous work on the main thread (as a long SQLite statement or a full GC would be).
            const from = Date.now();
            while (Date.now() - from < blockFor) {}
            blocked = { from, to: Date.now() };
            blockFor = 0;
          }
          await next();
        },
      ],
    });
  });
  afterAll(async () => {
    await h?.close();
  });

  it("a command sent while the main thread is blocked is acknowledged before the block ends, and both commands are answered", async () => {
    const curlArgs = (id: string) => {
      const body = slashCommandBody({ text: "help", responseUrl: h.slack.responseUrl(id) });
      const headers = Object.entries(slackSignatureHeaders(body, SIGNING_SECRET)).flatMap(([k, v]) => [
        "-H",
        `${k}: ${v}`,
      ]);
      return [
        "-s",
        "-o",
        "/dev/null",
        "-w",
        "%{http_code} %{time_total}\\n",
        ...headers,
        "--data-raw",
        body,
        h.eventsUrl,
      ];
    };
    blockFor = 2_000;
    // A separate process sends both: the first request's processing blocks this process's main thread,
    // the second is sent 300 ms after the first was answered, and the shell stamps when it was sent.
    const script = [
      `curl ${curlArgs("first").map(shellQuote).join(" ")}`,
      "sleep 0.3",
      "date +%s%3N",
      `curl ${curlArgs("second").map(shellQuote).join(" ")}`,
    ].join("; ");
    const out = await new Promise<string>((resolve, reject) => {
      execFile("sh", ["-c", script], (err, stdout) => (err ? reject(err) : resolve(stdout)));
    });
    const [first, sentAt, second] = out.trim().split("\n");
    expect(first?.split(" ")[0]).toBe("200");
    expect(second?.split(" ")[0]).toBe("200");
    const secondSent = Number(sentAt);
    const secondAcked = secondSent + Number(second?.split(" ")[1]) * 1000;
    expect(blocked).toBeDefined();
    expect(secondSent).toBeGreaterThan(blocked!.from);
    expect(secondAcked).toBeLessThan(blocked!.to);
    await h.slack.waitForResponse("first");
    await h.slack.waitForResponse("second");
  });

  it("a front thread that dies is started again on the same port; readiness says not listening meanwhile", async () => {
    const receiver = (h.app.app as unknown as { receiver: { worker?: { terminate(): Promise<number> } } })
      .receiver;
    const transport = watchTransport(h.app.receiver, "http");
    expect(transport.problem()).toBeUndefined();
    await receiver.worker?.terminate();
    expect(transport.problem()).toBe("the HTTP receiver is not listening");
    const deadline = Date.now() + 5_000;
    while (Date.now() < deadline && transport.problem() !== undefined)
      await new Promise((r) => setTimeout(r, 50));
    expect(transport.problem()).toBeUndefined();
    const res = await h.command("help");
    expect(res.status).toBe(200);
    await h.slack.waitForResponse(res.responseId);
    expect(h.logs.text).toContain("the HTTP front thread exited; starting it again");
  });
});

const shellQuote = (s: string) => `'${s.replaceAll("'", "'\\''")}'`;
