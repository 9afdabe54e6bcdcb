import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { ConfigError } from "../../src/config.js";
import { VIEWS } from "../../src/slack/ids.js";
import { blocksText, type Harness, startHarness } from "../support/harness.js";

/** Installations and admins: which workspace a request comes from decides who is an admin and whether it is served. */

async function install(h: Harness, teamId: string): Promise<void> {
  await h.store.installations.storeInstallation({
    team: { id: teamId, name: teamId },
    enterprise: undefined,
    user: { id: "U0001", token: undefined, scopes: undefined },
    bot: {
      id: `B${teamId}`,
      userId: "UBOT",
      token: `xoxb-installed-${teamId.toLowerCase()}`,
      scopes: ["commands", "chat:write"],
    },
    tokenType: "bot",
    isEnterpriseInstall: false,
    appId: "A0001",
  });
}

async function answerIn(h: Harness, text: string, teamId: string, userId: string): Promise<string> {
  const res = await h.command(text, { teamId, userId });
  expect(res.status).toBe(200);
  return blocksText((await h.slack.waitForResponse(res.responseId)).body.blocks);
}

describe("ADMIN_USER_IDS with OAuth installs", () => {
  let h: Harness;
  beforeAll(async () => {
    // Bob (U0002) is no Slack admin; the pair makes him an admin of T0002 only.
    h = await startHarness({ oauth: true, env: { ADMIN_USER_IDS: "T0002:U0002" } });
    await install(h, "T0001");
    await install(h, "T0002");
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
