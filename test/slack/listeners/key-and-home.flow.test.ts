import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { BLOCKS, KEY_ACTION_SELECT, KEY_INPUT_ACTION, VIEWS } from "../../../src/slack/ids.js";
import { blocksText, SIGNING_SECRET, TEST_EDGE_KEY } from "../../support/harness.js";
import { postSigned } from "../../support/slack-signer.js";
import { useHarness } from "../../support/use-harness.js";
import { viewSubmission } from "../../support/view-submission.js";

const h = useHarness({ seedKey: false }, { resetEach: false });

function submission(userId: string, key: string | undefined, remove = false) {
  const values: Record<string, Record<string, unknown>> = {
    [BLOCKS.keyInput]: { [KEY_INPUT_ACTION]: { type: "plain_text_input", value: key ?? null } },
  };
  if (remove)
    values[BLOCKS.keyAction] = {
      [KEY_ACTION_SELECT]: { type: "checkboxes", selected_options: [{ value: "remove" }] },
    };
  return viewSubmission({
    userId,
    callbackId: VIEWS.keyModal,
    title: "Edge API key",
    privateMetadata: JSON.stringify({ teamId: "T0001" }),
    values,
  });
}

async function command(text: string, userId: string) {
  const res = await h.command(text, { userId });
  return blocksText((await h.slack.waitForResponse(res.responseId)).body.blocks);
}

describe("/edge key and the key modal", () => {
  it("a workspace without a key is told to run /edge key", async () => {
    expect(await command("zones", "U0002")).toContain(
      "No Edge API key for this workspace yet: an admin can run /edge key.",
    );
  });

  it("a non-admin is refused and no modal opens", async () => {
    expect(await command("key", "U0002")).toContain("Only workspace admins can set the Edge API key");
    expect(h.slack.callsTo("views.open")).toHaveLength(0);
  });

  it("a key typed as command text is refused and never echoed", async () => {
    const text = await command(`key ${TEST_EDGE_KEY}`, "U0001");
    expect(text).toContain("Never type an API key into a command");
    expect(text).not.toContain(TEST_EDGE_KEY);
  });

  it("an admin gets the modal", async () => {
    expect((await h.command("key", { userId: "U0001" })).status).toBe(200);
    const open = await h.slack.waitForCall("views.open");
    expect((open.args.view as { callback_id: string }).callback_id).toBe(VIEWS.keyModal);
    expect(blocksText((open.args.view as { blocks: unknown }).blocks)).toContain(
      "No Edge API key for this workspace yet",
    );
  });

  it("Slack's 429 on views.open is waited out and the modal still opens; an expired trigger gets a sentence", async () => {
    h.slack.addFault({ method: "views.open", retryAfterSec: 1, times: 1 });
    await h.command("key", { userId: "U0001" });
    await h.slack.waitForCall("views.open", () => h.slack.callsTo("views.open").length >= 3, 8000);
    h.slack.addFault({ method: "views.open", error: "expired_trigger_id", times: 1 });
    expect(await command("key", "U0001")).toContain("run the command again");
  });

  it("a key the Edge API rejects is shown as an error on the field and not stored", async () => {
    const res = await h.interact(submission("U0001", "wrong-key-123456789"));
    expect(res.status).toBe(200);
    const body = JSON.parse(res.body) as { response_action: string; errors: Record<string, string> };
    expect(body.response_action).toBe("errors");
    expect(body.errors[BLOCKS.keyInput]).toContain("The Edge API rejected this key");
    expect(await h.store.keys.info("T0001")).toBeUndefined();
    const check = h.sim.requests.find((r) => r.path === "/mc/apps" && r.query.limit === "1");
    expect(check?.headers.accesskey).toBe("wrong-key-123456789");
  });

  it("a submission from a non-admin is refused", async () => {
    const body = JSON.parse((await h.interact(submission("U0002", TEST_EDGE_KEY))).body) as {
      errors: Record<string, string>;
    };
    expect(body.errors[BLOCKS.keyInput]).toContain("Only workspace admins");
    expect(await h.store.keys.info("T0001")).toBeUndefined();
  });

  it("an accepted key is stored encrypted; only its fingerprint is shown", async () => {
    const res = await h.interact(submission("U0001", TEST_EDGE_KEY));
    const body = JSON.parse(res.body) as { response_action: string; view: { blocks: unknown } };
    expect(body.response_action).toBe("update");
    const shown = blocksText(body.view.blocks);
    expect(shown).toContain(`…${TEST_EDGE_KEY.slice(-4)}`);
    expect(shown).not.toContain(TEST_EDGE_KEY);
    expect((await h.store.keys.info("T0001"))?.fingerprint).toBe(`…${TEST_EDGE_KEY.slice(-4)}`);
    expect(await command("zones", "U0002")).toContain("Shield zones");
    // Never in plaintext in the database files, the logs or anything sent to Slack.
    for (const f of readdirSync(h.dataDir).filter((n) => n.startsWith("edgeops.sqlite"))) {
      expect(readFileSync(join(h.dataDir, f)).includes(TEST_EDGE_KEY)).toBe(false);
    }
    expect(h.logs.text).not.toContain(TEST_EDGE_KEY);
    expect(JSON.stringify(h.slack.calls) + JSON.stringify(h.slack.responses)).not.toContain(TEST_EDGE_KEY);
  });

  it("the modal shows the fingerprint and who set it, and Remove removes the key", async () => {
    await h.command("key", { userId: "U0001" });
    const open = await h.slack.waitForCall("views.open", (c) =>
      blocksText((c.args.view as { blocks: unknown }).blocks).includes("set by"),
    );
    expect(blocksText((open.args.view as { blocks: unknown }).blocks)).toContain(
      `This workspace's own key answers: \`…${TEST_EDGE_KEY.slice(-4)}\`, set by <@U0001>`,
    );
    const body = JSON.parse((await h.interact(submission("U0001", undefined, true))).body) as {
      view: { blocks: unknown };
    };
    expect(blocksText(body.view.blocks)).toContain("The Edge API key was removed.");
    expect(await h.store.keys.info("T0001")).toBeUndefined();
    const audit = await h.store.audit.list("T0001", 10);
    expect(audit.map((a) => a.action)).toEqual(expect.arrayContaining(["key.set", "key.remove"]));
  });

  it("a blank or malformed key gets a sentence on the field", async () => {
    const blank = JSON.parse((await h.interact(submission("U0001", ""))).body) as {
      errors: Record<string, string>;
    };
    expect(blank.errors[BLOCKS.keyInput]).toContain("Paste the Edge API key");
    const spaced = JSON.parse((await h.interact(submission("U0001", "abc def ghi jkl"))).body) as {
      errors: Record<string, string>;
    };
    expect(spaced.errors[BLOCKS.keyInput]).toContain("no spaces");
  });
});

describe("App Home", () => {
  it("shows key status with fingerprint, application counts by status, approvals and schedules", async () => {
    await h.store.keys.set("T0001", TEST_EDGE_KEY, "U0001");
    const event = {
      token: "legacy",
      team_id: "T0001",
      api_app_id: "A0001",
      type: "event_callback",
      event_id: "Ev0001",
      event_time: Math.floor(Date.now() / 1000),
      event: { type: "app_home_opened", user: "U0001", channel: "D0001", tab: "home", event_ts: "1.1" },
      authorizations: [{ team_id: "T0001", user_id: "UBOT", is_bot: true }],
    };
    const ack = await postSigned(h.eventsUrl, JSON.stringify(event), SIGNING_SECRET, {
      contentType: "application/json",
    });
    expect(ack.status).toBe(200);
    const publish = await h.slack.waitForCall("views.publish");
    const text = blocksText((publish.args.view as { blocks: unknown }).blocks);
    expect(publish.args.user_id).toBe("U0001");
    expect(text).toContain(`…${TEST_EDGE_KEY.slice(-4)}`);
    expect(text).toMatch(/47 applications/);
    expect(text).toContain("Pending approvals");
    expect(text).toContain("Schedules");
    expect(h.slack.violations).toEqual([]);
  });
});
