import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createScheduler } from "../../src/jobs/schedules.js";
import { NO_KEY_SENTENCE } from "../../src/services/edge-access.js";
import { VIEWS } from "../../src/slack/ids.js";
import { SIM_IDS } from "../../tools/simulator/index.js";
import {
  blocksText,
  commandAnswer,
  type Harness,
  installWorkspace,
  SIGNING_SECRET,
  startHarness,
  TEST_EDGE_KEY,
} from "../support/harness.js";
import { postSigned } from "../support/slack-signer.js";
import { useHarness } from "../support/use-harness.js";

/**
 * Whose key answers: the deployment's EDGE_API_KEY serves a workspace without a key of its own only on
 * a single-token install, or with OAuth installs when EDGE_API_KEY_TEAMS names the workspace.
 */

const OPERATOR = "T0001";
const STRANGER = "T0STRANGER";

async function answerTo(h: Harness, text: string, teamId: string): Promise<string> {
  return (await commandAnswer(h, text, { teamId, userId: "U0001" })).text;
}

async function openHome(h: Harness, teamId: string): Promise<string> {
  const before = h.slack.callsTo("views.publish").length;
  const event = {
    token: "legacy",
    team_id: teamId,
    api_app_id: "A0001",
    type: "event_callback",
    event_id: `Ev${Math.random().toString(36).slice(2)}`,
    event_time: Math.floor(Date.now() / 1000),
    event: { type: "app_home_opened", user: "U0001", channel: "D0001", tab: "home", event_ts: "1.1" },
    authorizations: [{ team_id: teamId, user_id: "UBOT", is_bot: true }],
  };
  const ack = await postSigned(h.eventsUrl, JSON.stringify(event), SIGNING_SECRET, {
    contentType: "application/json",
  });
  expect(ack.status).toBe(200);
  const publish = await h.slack.waitForCall(
    "views.publish",
    () => h.slack.callsTo("views.publish").length > before,
  );
  const latest = h.slack.callsTo("views.publish").at(-1) ?? publish;
  return blocksText((latest.args.view as { blocks: unknown }).blocks);
}

/** Edge API requests the simulator received while `work` ran. */
async function edgeRequestsDuring(h: Harness, work: () => Promise<unknown>): Promise<number> {
  const before = h.sim.requests.length;
  await work();
  return h.sim.requests.length - before;
}

describe("OAuth installs: EDGE_API_KEY serves only EDGE_API_KEY_TEAMS", () => {
  const h = useHarness(
    {
      oauth: true,
      seedKey: false,
      env: { EDGE_API_KEY: TEST_EDGE_KEY, EDGE_API_KEY_TEAMS: OPERATOR },
    },
    { resetEach: false },
  );
  beforeAll(async () => {
    await installWorkspace(h.store, OPERATOR);
    await installWorkspace(h.store, STRANGER);
  });

  it("the operator's workspace, named in EDGE_API_KEY_TEAMS, is answered with the deployment's key", async () => {
    expect(await answerTo(h, "zones", OPERATOR)).toContain("Shield zones");
    expect(h.sim.requests.at(-1)?.headers.accesskey).toBe(TEST_EDGE_KEY);
  });

  it("a workspace that installed the app and stored no key is told to run /edge key; the Edge API is never called", async () => {
    for (const command of [
      "zones",
      "apps",
      `bots ${SIM_IDS.firstShieldZone}`,
      `dns ${SIM_IDS.dnsZoneCompleted}`,
    ]) {
      let text = "";
      const calls = await edgeRequestsDuring(h, async () => {
        text = await answerTo(h, command, STRANGER);
      });
      expect(text, command).toContain(NO_KEY_SENTENCE);
      expect(calls, command).toBe(0);
    }
    // A change is refused before anything is read or requested.
    let text = "";
    const calls = await edgeRequestsDuring(h, async () => {
      text = await answerTo(h, `bot ${SIM_IDS.firstShieldZone} aiscraper block`, STRANGER);
    });
    expect(text).toContain(NO_KEY_SENTENCE);
    expect(calls).toBe(0);
    expect(await h.store.changeRequests.listPending(STRANGER)).toEqual([]);
  });

  it("its scheduled summaries do not read the operator's zones either", async () => {
    const schedule = await h.store.schedules.create({
      teamId: STRANGER,
      channelId: "C0STRANGER",
      createdBy: "U0001",
      kind: "dns",
      target: String(SIM_IDS.dnsZoneCompleted),
      spec: "daily 09:00",
      timezone: "UTC",
      nextRunAt: Date.now() - 1000,
    });
    const scheduler = createScheduler({ deps: h.deps, clientFor: h.app.env.clientFor });
    const calls = await edgeRequestsDuring(h, () => scheduler.tick());
    await scheduler.stop();
    expect(calls).toBe(0);
    const post = h.slack.callsTo("chat.postMessage").find((c) => c.args.channel === "C0STRANGER");
    expect(blocksText(post?.args.blocks)).toContain(NO_KEY_SENTENCE);
    expect((await h.store.schedules.get(schedule.id))?.lastError).toContain(NO_KEY_SENTENCE);
  });

  it("the App Home says which key answers: the deployment's for the operator, none for the others", async () => {
    const operator = await openHome(h, OPERATOR);
    expect(operator).toContain("this deployment's key answers");
    expect(operator).toMatch(/47 applications/);

    const stranger = await openHome(h, STRANGER);
    expect(stranger).toContain("No Edge API key for this workspace yet");
    expect(stranger).not.toContain("deployment's key answers");
    expect(stranger).toContain("Set an Edge API key to see your applications here.");
  });

  it("the key dialog tells a stranger's admin that no key answers yet", async () => {
    await h.command("key", { teamId: STRANGER, userId: "U0001" });
    const open = await h.slack.waitForCall(
      "views.open",
      (c) => (c.args.view as { callback_id?: string }).callback_id === VIEWS.keyModal,
    );
    expect(blocksText((open.args.view as { blocks: unknown }).blocks)).toContain(
      "No Edge API key for this workspace yet",
    );
  });

  it("once the stranger stores its own key, that key answers", async () => {
    await h.store.keys.set(STRANGER, TEST_EDGE_KEY, "U0001");
    expect(await answerTo(h, "zones", STRANGER)).toContain("Shield zones");
    expect(await openHome(h, STRANGER)).toContain("This workspace's own key answers");
  });
});

describe("single-token install: EDGE_API_KEY still serves a workspace without a key", () => {
  let h: Harness;
  beforeAll(async () => {
    // EDGE_API_KEY_TEAMS applies to OAuth installs only: a single-token install serves its one workspace.
    h = await startHarness({
      seedKey: false,
      env: { EDGE_API_KEY: TEST_EDGE_KEY, EDGE_API_KEY_TEAMS: "T0ELSEWHERE" },
    });
  });
  afterAll(async () => {
    await h?.close();
  });

  it("commands and the App Home use the deployment's key", async () => {
    expect(await answerTo(h, "zones", OPERATOR)).toContain("Shield zones");
    expect(h.sim.requests.at(-1)?.headers.accesskey).toBe(TEST_EDGE_KEY);
    const home = await openHome(h, OPERATOR);
    expect(home).toContain("this deployment's key answers");
    expect(home).toMatch(/47 applications/);
  });
});
