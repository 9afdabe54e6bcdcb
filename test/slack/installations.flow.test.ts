import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { ConfigError } from "../../src/config.js";
import { UNINSTALLED_SENTENCE } from "../../src/services/uninstall.js";
import { ACTIONS, VIEWS } from "../../src/slack/ids.js";
import { OTHER_WORKSPACE_SENTENCE } from "../../src/slack/transport/connection.js";
import { NOT_INSTALLED_SENTENCE } from "../../src/store/installations.js";
import { SIM_IDS } from "../../tools/simulator/index.js";
import { onPostgres, postgresTests } from "../support/both-stores.js";
import { eventsHandled } from "../support/events-handled.js";
import {
  answerTo,
  blocksText,
  cardUpdate,
  eventCallback,
  findButtons,
  type Harness,
  type HarnessOptions,
  installWorkspace,
  SIGNING_SECRET,
  startHarness,
} from "../support/harness.js";
import { postSigned } from "../support/slack-signer.js";
import { useHarness } from "../support/use-harness.js";
import { BOB, CAROL } from "../support/users.js";

/** Installations and admins: which workspace a request comes from decides who is an admin and whether it is served. */

async function answerIn(h: Harness, text: string, teamId: string, userId: string): Promise<string> {
  const res = await h.command(text, { teamId, userId });
  expect(res.status).toBe(200);
  return blocksText((await h.slack.waitForResponse(res.responseId)).body.blocks);
}

describe("ADMIN_USER_IDS with OAuth installs", () => {
  let h: Harness;
  beforeAll(async () => {
    // Bob (U0002) is no Slack admin; the pair makes him an admin of T0002 only.
    h = await startHarness({
      oauth: true,
      installs: ["T0001", "T0002"],
      env: { ADMIN_USER_IDS: "T0002:U0002" },
    });
  });
  afterAll(async () => {
    await h?.close();
  });

  it("a T…:U… pair makes the user an admin of that workspace only", async () => {
    expect(await answerIn(h, "key", "T0001", "U0002")).toContain(
      "Only workspace admins can set the Edge API key",
    );
    expect(h.slack.callsTo("views.open")).toHaveLength(0);

    expect((await h.command("key", { teamId: "T0002", userId: "U0002" })).status).toBe(200);
    const open = await h.slack.waitForCall("views.open");
    expect((open.args.view as { callback_id: string }).callback_id).toBe(VIEWS.keyModal);
  });

  it("a bare user id stops start-up with a sentence naming the pair to write", async () => {
    const started = startHarness({ oauth: true, env: { ADMIN_USER_IDS: "U0002" } });
    await expect(started).rejects.toBeInstanceOf(ConfigError);
    await expect(started).rejects.toThrow(/ADMIN_USER_IDS: with OAuth installs .* like T012ABCDEF:U0002/);
  });
});

describe("ADMIN_USER_IDS on a single-token install", () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  it("a bare id is an admin of the one workspace", async () => {
    h = await startHarness({ admins: ["U0002"] });
    expect((await h.command("key", { userId: "U0002" })).status).toBe(200);
    await h.slack.waitForCall("views.open");
  });
});

describe("a single-token install answers only its token's workspace", () => {
  const h = useHarness({ env: { EDGE_API_KEY: "sim-deployment-key-0000" } }, { resetEach: false });
  beforeAll(async () => {
    // auth.test names the token's workspace (T0001 in the fake Slack): its answer handled, nothing is open.
    await h.slack.waitForCall("auth.test");
    await h.settled();
    expect(h.app.problem()).toBeUndefined();
  });

  it("a command from another workspace gets a sentence and nothing else", async () => {
    const edgeBefore = h.sim.requests.length;
    const slackBefore = h.slack.calls.length;
    const res = await h.command("zones", { teamId: "T0OTHER", userId: "U0002" });
    expect(res.status).toBe(200);
    const answer = await h.slack.waitForResponse(res.responseId);
    expect(answer.body.text ?? blocksText(answer.body.blocks)).toBe(OTHER_WORKSPACE_SENTENCE);
    expect(h.slack.responsesTo(res.responseId)).toHaveLength(1);
    expect(h.sim.requests.length).toBe(edgeBefore);
    expect(h.slack.calls.slice(slackBefore).map((c) => c.method)).toEqual([]);
  });

  it("a button pressed in another workspace is refused the same way; its own workspace is answered", async () => {
    const res = await h.click({ action_id: "anything", value: "x" }, { teamId: "T0OTHER", userId: "U0002" });
    expect(res.status).toBe(200);
    const answer = await h.slack.waitForResponse(res.responseId);
    expect(answer.body.text ?? blocksText(answer.body.blocks)).toBe(OTHER_WORKSPACE_SENTENCE);

    const own = await h.command("help", { userId: "U0002" });
    expect(blocksText((await h.slack.waitForResponse(own.responseId)).body.blocks)).toContain("/edge");
  });
});

const ZONE = SIM_IDS.firstShieldZone;

/** An event Slack sends without authorizations (Bolt skips authorize for these two). */
async function sendEvent(h: Harness, teamId: string, event: Record<string, unknown>) {
  const body = eventCallback(teamId, { ...event, event_ts: String(Date.now() / 1000) });
  const res = await postSigned(h.eventsUrl, JSON.stringify(body), SIGNING_SECRET, {
    contentType: "application/json",
  });
  expect(res.status).toBe(200);
}

/** The bot installed by OAuth in `installs`; `events` tells when it has handled an event. */
async function startInstalledIn(installs: string[], options: HarnessOptions = {}) {
  const events = eventsHandled();
  const h = await startHarness({ ...options, oauth: true, installs, middleware: [events.middleware] });
  return { events, h };
}

async function auditOf(h: Harness, teamId: string) {
  return h.store.audit.list(teamId, 200);
}

/** A workspace that removes edgeops leaves nothing running; a reinstall starts clean. */
async function uninstallForgetsTheWorkspace(
  options: HarnessOptions,
  event: "app_uninstalled" | "tokens_revoked",
) {
  const { events, h } = await startInstalledIn(["T0001", "T0002"], options);
  try {
    const category = (c: number) => h.sim.state.botCategories.get(ZONE)!.find((g) => g.category === c)!;
    // A temporary change in force: Bob blocks category 1 for 30 minutes, Carol approves.
    category(1).categoryAction = 2;
    const typed = await answerTo(h, `bot ${ZONE} 1 block for 30m`, BOB);
    await h.click(typed.buttons.find((b) => b.action_id === ACTIONS.changeConfirm)!, { userId: BOB });
    const card = await h.slack.waitForCall("chat.postMessage", (c) =>
      blocksText(c.args.blocks).includes("SEO"),
    );
    await h.click(findButtons(card.args.blocks).find((b) => b.action_id === ACTIONS.approve)!, {
      userId: CAROL,
    });
    await cardUpdate(h, (t) => t.includes("SEO") && t.includes("is in effect"));
    expect(category(1).categoryAction).toBe(1);
    // A request waiting for approval.
    const asked = await answerTo(h, `bot ${ZONE} 3 block`, BOB);
    await h.click(asked.buttons.find((b) => b.action_id === ACTIONS.changeConfirm)!, { userId: BOB });
    await h.slack.waitForCall(
      "chat.postMessage",
      (c) =>
        findButtons(c.args.blocks).some((b) => b.action_id === ACTIONS.approve) &&
        !blocksText(c.args.blocks).includes("SEO"),
    );
    const [temporary] = await h.store.changeRequests.listDueUndo(Number.MAX_SAFE_INTEGER, 10, {
      teamIds: ["T0001"],
    });
    const [pending] = await h.store.changeRequests.listPending("T0001");
    expect(temporary?.state).toBe("applied");
    expect(pending?.state).toBe("pending");
    // A schedule and a watch here; a watch in the other workspace.
    const far = h.deps.clock.now() + 3_600_000;
    await h.store.schedules.create({
      teamId: "T0001",
      channelId: "C0001",
      createdBy: BOB,
      kind: "dns",
      target: String(SIM_IDS.dnsZoneCompleted),
      spec: "daily 07:00",
      timezone: "UTC",
      nextRunAt: far,
    });
    for (const teamId of ["T0001", "T0002"])
      await h.store.watches.createIfRoom(
        {
          teamId,
          channelId: "C0001",
          createdBy: BOB,
          kind: "zone",
          target: String(ZONE),
          options: { sensitivity: "normal", label: "shop" },
          nextPollAt: far,
        },
        { perChannel: 10, perWorkspace: 10 },
      );
    const auditBefore = (await auditOf(h, "T0001")).length;
    const putsBefore = h.sim.requests.filter((r) => r.method === "PUT").length;

    await sendEvent(
      h,
      "T0001",
      event === "app_uninstalled"
        ? { type: "app_uninstalled" }
        : { type: "tokens_revoked", tokens: { oauth: [], bot: ["UBOT"] } },
    );
    // Acknowledged first, handled after: wait for its listener to end, then for anything it started.
    await events.handled(event);
    await h.settled();
    expect((await auditOf(h, "T0001")).some((e) => e.action === "app.uninstalled")).toBe(true);

    expect(await h.store.installations.findByTeam("T0001")).toBeUndefined();
    expect(await h.store.keys.get("T0001")).toBeUndefined();
    expect(await h.store.watches.list("T0001")).toEqual([]);
    expect(await h.store.schedules.list("T0001")).toEqual([]);
    expect(await h.store.changeRequests.get(pending!.id)).toMatchObject({
      state: "cancelled",
      lastError: { message: UNINSTALLED_SENTENCE },
    });
    // Where Slack still takes the post (the fake does), the card says so.
    await cardUpdate(h, (t) => t.includes(UNINSTALLED_SENTENCE));
    // The temporary change was put back once, while the key still opened.
    expect(await h.store.changeRequests.get(temporary!.id)).toMatchObject({ state: "undone" });
    expect(category(1).categoryAction).toBe(2);
    expect(h.sim.requests.filter((r) => r.method === "PUT").length - putsBefore).toBe(1);
    // The audit log is kept, and says what happened.
    const audit = await auditOf(h, "T0001");
    expect(audit.length).toBeGreaterThan(auditBefore);
    expect(audit.find((e) => e.action === "app.uninstalled")).toMatchObject({
      outcome: "ok",
      details: { event, keyRemoved: true, watches: 1, schedules: 1, cancelled: 1, undone: 1 },
    });
    // The other workspace keeps its installation and its watch.
    expect(await h.store.installations.findByTeam("T0002")).toBeDefined();
    expect(await h.store.watches.list("T0002")).toHaveLength(1);

    // Removed: a command is told so. Reinstalled: the key is asked again.
    const gone = await h.command("zones", { userId: BOB });
    expect((await h.slack.waitForResponse(gone.responseId)).body.text).toBe(NOT_INSTALLED_SENTENCE);
    await installWorkspace(h.store, "T0001");
    expect((await answerTo(h, "zones", BOB)).text).toContain("No Edge API key for this workspace yet");
  } finally {
    await h.close();
  }
}

describe("a workspace that removes edgeops", () => {
  it("app_uninstalled on SQLite: installation, key, watches, schedules go; requests settle; audit kept", async () => {
    await uninstallForgetsTheWorkspace({}, "app_uninstalled");
  }, 30_000);

  it.runIf(postgresTests)(
    "tokens_revoked (the bot's) on PostgreSQL: the same",
    async () => {
      await onPostgres((options) => uninstallForgetsTheWorkspace(options, "tokens_revoked"));
    },
    30_000,
  );

  it("a revoked user token alone changes nothing", async () => {
    const { events, h } = await startInstalledIn(["T0001"]);
    try {
      await sendEvent(h, "T0001", { type: "tokens_revoked", tokens: { oauth: ["U0001"], bot: [] } });
      await events.handled("tokens_revoked");
      await h.settled();
      expect(h.logs.text).toContain("only user tokens were revoked");
      expect(await h.store.installations.findByTeam("T0001")).toBeDefined();
      expect(await h.store.keys.get("T0001")).toBeDefined();
    } finally {
      await h.close();
    }
  });
});

const rid = () => Math.random().toString(36).slice(2);

/** An org-wide (Enterprise Grid) install removed: its installation goes, and the workspaces it can name. */
async function enterpriseUninstall(options: HarnessOptions) {
  const { events, h } = await startInstalledIn(["T0001", "T0003"], options);
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
    // Acknowledged first, handled after: wait for its listener to end, then for anything it started.
    await events.handled("app_uninstalled");
    await h.settled();
    expect(await forgotten("T0001")).toBe(true);
    expect(await forgotten("T0002")).toBe(true);
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

describe("an org-wide (Enterprise Grid) install removed", () => {
  it("its installation and tokens go, and the enterprise's workspaces are forgotten with their keys (SQLite)", async () => {
    await enterpriseUninstall({});
  }, 30_000);

  it.runIf(postgresTests)("the same on PostgreSQL", () => onPostgres(enterpriseUninstall), 30_000);
});
