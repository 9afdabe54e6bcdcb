import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { ACTION_PATTERNS, ACTIONS, CHANGE_MODAL, FUNCTIONS, VIEWS } from "../../src/slack/ids.js";
import { NOT_CONNECTED_SENTENCE, OTHER_WORKSPACE_SENTENCE } from "../../src/slack/transport/connection.js";
import { SIM_IDS } from "../../tools/simulator/index.js";
import {
  blocksText,
  findButtons,
  type Harness,
  type HarnessOptions,
  SIGNING_SECRET,
  startHarness,
} from "../support/harness.js";
import { dropSchema, IN_CI, pgReachable, randomSchema } from "../support/helpers.js";
import { waitFor } from "../support/ops-bot.js";
import { postSigned } from "../support/slack-signer.js";

/**
 * Who may see a thing is decided like who may do it (issue 28), for the entries the last session left
 * open: the change modal and the DNS summary step act in a channel only for its members; the incident
 * card marks only the waiting requests of the channel it is shown in; a single-token install serves no
 * request before auth.test named its workspace; an org-wide install removed takes its installation and
 * its workspaces' keys with it. Through the real receiver (signed requests, fake Slack, simulator).
 */

const BOB = "U0002";
const CAROL = "U0003";
const PRIVATE = "G0SECRET";
const rid = () => Math.random().toString(36).slice(2);
const ranBy = (id: string) => ({ id, secret: `uctx-secret-of-${id}` });
const selected = (value: string) => ({
  type: "static_select",
  selected_option: { value, text: { type: "plain_text", text: value } },
});

describe("acting in a channel needs its members", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
    h.slack.memberships.set(BOB, ["C0001"]);
  });
  afterEach(() => {
    h.slack.clear();
    h.sim.clearRequests();
  });
  afterAll(async () => {
    await h.close();
  });

  /** The change modal submitted by Bob with a DDoS change to be confirmed in `channel`. */
  async function submitModal(channel: string) {
    const responseId = `modal-${rid()}`;
    const res = await h.interact({
      type: "view_submission",
      trigger_id: `trigger-${rid()}`,
      api_app_id: "A0001",
      token: "legacy",
      user: { id: BOB, username: "bob", name: "bob", team_id: "T0001" },
      team: { id: "T0001", domain: "acme" },
      view: {
        id: "V1",
        hash: "h1",
        type: "modal",
        callback_id: VIEWS.changeModal,
        blocks: [],
        private_metadata: "",
        state: {
          values: {
            [CHANGE_MODAL.kind]: { [ACTIONS.changeModalKind]: selected("ddos") },
            [CHANGE_MODAL.target]: {
              value: {
                type: "external_select",
                selected_option: { value: String(SIM_IDS.zoneUnderAttack) },
              },
            },
            [`${CHANGE_MODAL.fieldPrefix}value`]: { value: selected("high") },
            [CHANGE_MODAL.channel]: {
              value: { type: "conversations_select", selected_conversation: channel },
            },
          },
        },
      },
      response_urls: [
        {
          block_id: CHANGE_MODAL.channel,
          action_id: CHANGE_MODAL.value,
          channel_id: channel,
          response_url: h.slack.responseUrl(responseId),
        },
      ],
    });
    expect(res.status).toBe(200);
    return { res, responseId };
  }

  it("Request a change: a channel Bob is not in keeps the modal open with the reason; nothing is posted there", async () => {
    const { res } = await submitModal(PRIVATE);
    expect(JSON.parse(res.body)).toEqual({
      response_action: "errors",
      errors: { [CHANGE_MODAL.channel]: expect.stringContaining("not a member of that channel") },
    });
    await new Promise((r) => setTimeout(r, 300));
    expect(h.slack.responses).toEqual([]);
    expect(h.slack.calls.filter((c) => c.method.startsWith("chat."))).toEqual([]);

    // His own channel: the Confirm comes back there, as before.
    const { responseId } = await submitModal("C0001");
    const confirm = await h.slack.waitForResponse(responseId);
    expect(findButtons(confirm.body.blocks).some((b) => b.action_id === ACTIONS.changeConfirm)).toBe(true);
  });

  it("Post a DNS summary: run by someone outside the channel, nothing is scanned or posted", async () => {
    const inputs = { dns_zone_id: SIM_IDS.dnsZoneCompleted, channel: PRIVATE, requester: ranBy(BOB) };
    const outsider = await h.functionExecuted(FUNCTIONS.dnsSummary, inputs);
    const refused = await h.slack.waitForCompletion(outsider.executionId, 15_000);
    expect(refused.kind).toBe("error");
    expect(refused.error).toContain("not a member of the channel");
    expect(h.slack.callsTo("chat.postMessage")).toEqual([]);
    expect(h.sim.requests).toEqual([]);

    // Without the person who ran it (a scheduled trigger): a sentence saying what to do instead.
    const nobody = await h.functionExecuted(FUNCTIONS.dnsSummary, { ...inputs, requester: undefined });
    const told = await h.slack.waitForCompletion(nobody.executionId, 15_000);
    expect(told.error).toContain("/edge schedule dns");

    const member = await h.functionExecuted(FUNCTIONS.dnsSummary, { ...inputs, channel: "C0001" });
    const done = await h.slack.waitForCompletion(member.executionId, 15_000);
    expect(done.kind, done.error).toBe("success");
    expect(h.slack.callsTo("chat.postMessage").map((c) => c.args.channel)).toEqual(["C0001"]);
  }, 30_000);
});

describe("the incident card's 'awaiting approval' mark", () => {
  it("shows a private channel's waiting block only in that channel", async () => {
    const h = await startHarness();
    try {
      h.slack.memberships.set(BOB, [PRIVATE]);
      const card = async (channelId: string) => {
        const res = await h.command(`incident ${SIM_IDS.zoneUnderAttack}`, { userId: CAROL, channelId });
        return (
          await h.slack.waitForResponse(res.responseId, (r) => r.body.replace_original === true, 15_000)
        ).body.blocks;
      };
      const first = findButtons(await card(PRIVATE)).find(
        (b) => ACTION_PATTERNS.changeConfirm.test(b.action_id) && JSON.parse(b.value!).p.type === "ip",
      )!;
      const ip = JSON.parse(first.value!).p.value as string;

      // Bob asks, in the private channel, to block the top IP: it waits for approval there.
      await h.click(first, { userId: BOB, channelId: PRIVATE });
      await h.slack.waitForCall(
        "chat.postMessage",
        (c) => c.args.channel === PRIVATE && blocksText(c.args.blocks).includes("Approval needed"),
      );
      expect((await h.store.approvals.listPending("T0001")).map((r) => r.channelId)).toEqual([PRIVATE]);

      expect(blocksText(await card(PRIVATE))).toContain("block awaiting approval");
      const elsewhere = blocksText(await card("C0002"));
      expect(elsewhere).toContain(ip);
      expect(elsewhere).not.toContain("awaiting approval");
    } finally {
      await h.close();
    }
  }, 30_000);
});

describe("a single-token install before Slack named its token's workspace", () => {
  it("serves no request until auth.test answers, then only its own workspace", async () => {
    const h = await startHarness({
      env: { EDGE_API_KEY: "sim-deployment-key-0000" },
      slackFaults: [{ method: "auth.test", latencyMs: 4_000, times: 1 }],
    });
    try {
      const sentenceOf = async (teamId: string) => {
        const res = await h.command("zones", { teamId, userId: BOB });
        expect(res.status).toBe(200);
        const answer = await h.slack.waitForResponse(res.responseId, () => true, 10_000);
        return answer.body.text ?? blocksText(answer.body.blocks);
      };
      expect(h.app.problem()).toBeDefined();
      expect(await sentenceOf("T0OTHER")).toBe(NOT_CONNECTED_SENTENCE);
      expect(h.sim.requests).toEqual([]);

      await waitFor(() => h.app.problem() === undefined, 10_000);
      expect(await sentenceOf("T0OTHER")).toBe(OTHER_WORKSPACE_SENTENCE);
      expect(h.sim.requests).toEqual([]);
      expect(await sentenceOf("T0001")).toBe("Shield zones, page 1");
      expect(h.sim.requests.length).toBeGreaterThan(0);
    } finally {
      await h.close();
    }
  }, 30_000);
});

/** An org-wide (Enterprise Grid) install removed: its installation goes, and the workspaces it can name. */
async function enterpriseUninstall(options: HarnessOptions) {
  const h = await startHarness({ ...options, oauth: true, installs: ["T0001", "T0003"] });
  try {
    const ENTERPRISE = "E0001";
    const installation = {
      team: undefined,
      enterprise: { id: ENTERPRISE, name: "Acme Grid" },
      user: { id: "U0001", token: undefined, scopes: undefined },
      bot: { id: "BORG", userId: "UBOT", token: "xoxb-org-wide-token", scopes: ["commands"] },
      tokenType: "bot" as const,
      isEnterpriseInstall: true,
      appId: "A0001",
    };
    await h.store.installations.storeInstallation(installation);
    // A workspace of the same enterprise with an install of its own, and its key.
    await h.store.installations.storeInstallation({
      ...installation,
      team: { id: "T0002", name: "T0002" },
      bot: { ...installation.bot, token: "xoxb-installed-t0002" },
      isEnterpriseInstall: false,
    });
    for (const teamId of ["T0002", "T0003"]) await h.store.keys.set(teamId, "sim-other-key-00000", "U0001");
    const orgWide = { enterpriseId: ENTERPRISE, teamId: undefined, isEnterpriseInstall: true };
    expect(await h.store.installations.fetchInstallation(orgWide)).toBeDefined();

    // Signed as Slack sends it: the authorization of the org-wide install names no workspace.
    const body = {
      token: "legacy",
      team_id: "T0001",
      enterprise_id: ENTERPRISE,
      api_app_id: "A0001",
      type: "event_callback",
      event_id: `Ev${rid().toUpperCase()}`,
      event_time: Math.floor(Date.now() / 1000),
      authorizations: [
        { enterprise_id: ENTERPRISE, team_id: null, is_bot: true, is_enterprise_install: true },
      ],
      event: { type: "app_uninstalled", event_ts: String(Date.now() / 1000) },
    };
    const res = await postSigned(h.eventsUrl, JSON.stringify(body), SIGNING_SECRET, {
      contentType: "application/json",
    });
    expect(res.status).toBe(200);

    // Each workspace forgotten leaves an app.uninstalled audit entry, the last thing it does.
    const forgotten = async (teamId: string) =>
      (await h.store.audit.list(teamId, 50)).some((e) => e.action === "app.uninstalled");
    for (const deadline = Date.now() + 5_000; Date.now() < deadline; ) {
      if ((await forgotten("T0001")) && (await forgotten("T0002"))) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    await expect(h.store.installations.fetchInstallation(orgWide)).rejects.toThrow();
    // The workspace the event names and the enterprise's own-install workspace: installation and key gone.
    for (const teamId of ["T0001", "T0002"]) {
      expect(await h.store.installations.findByTeam(teamId)).toBeUndefined();
      expect(await h.store.keys.get(teamId)).toBeUndefined();
    }
    // A workspace outside the enterprise keeps both.
    expect(await h.store.installations.findByTeam("T0003")).toBeDefined();
    expect(await h.store.keys.get("T0003")).toBeDefined();
    expect(h.logs.text).not.toContain("xoxb-org-wide-token");
  } finally {
    await h.close();
  }
}

const pgUp = await pgReachable();

describe("an org-wide (Enterprise Grid) install removed", () => {
  it("its installation and tokens go, and the enterprise's workspaces are forgotten with their keys (SQLite)", async () => {
    await enterpriseUninstall({});
  }, 30_000);

  it.runIf(pgUp || IN_CI)(
    "the same on PostgreSQL",
    async () => {
      const schema = randomSchema();
      try {
        await enterpriseUninstall({ pgSchema: schema });
      } finally {
        await dropSchema(schema).catch(() => undefined);
      }
    },
    30_000,
  );
});
