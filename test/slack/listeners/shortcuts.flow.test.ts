import { beforeAll, describe, expect, it } from "vitest";
import { ACTIONS, CHANGE_MODAL, SHORTCUTS, VIEWS } from "../../../src/slack/ids.js";
import { SIM_IDS } from "../../../tools/simulator/index.js";
import {
  BOB_OF_ACME,
  type ChangeModalView,
  selected,
  submitChangeModal,
} from "../../support/change-modal.js";
import { blocksText, findButtons, type Harness } from "../../support/harness.js";
import { useHarness } from "../../support/use-harness.js";
import { BOB } from "../../support/users.js";

/**
 * The global shortcut "Request a change" (a modal whose submission goes through the
 * one change flow) and the message shortcut "Open incident overview", through the real receiver.
 */

const ZONE = SIM_IDS.zoneUnderAttack; // shop.acme-example.com
const who = BOB_OF_ACME;

const rid = () => Math.random().toString(36).slice(2);

async function messageShortcut(h: Harness, text: string) {
  const responseId = `sc-${rid()}`;
  const res = await h.interact({
    type: "message_action",
    callback_id: SHORTCUTS.incidentOverview,
    trigger_id: `trigger-${rid()}`,
    message_ts: "1700000000.000100",
    response_url: h.slack.responseUrl(responseId),
    message: { type: "message", user: "U0009", ts: "1700000000.000100", text },
    channel: { id: "C0001", name: "incident-42" },
    token: "legacy",
    action_ts: String(Date.now() / 1000),
    ...who,
  });
  expect(res.status).toBe(200);
  const answer = await h.slack.waitForResponse(responseId);
  return { body: answer.body, text: blocksText(answer.body.blocks) };
}

describe("shortcuts", () => {
  const h = useHarness();
  beforeAll(async () => {
    // The change modal's channel must be one Bob is in (test/slack/channel-members.flow.test.ts).
    h.slack.memberships.set(BOB, ["C0001"]);
  });

  it("Open incident overview: the card of the one zone a message's domain names", async () => {
    const answer = await messageShortcut(
      h,
      "checkout on <https://shop.acme-example.com/cart|shop.acme-example.com> is timing out",
    );
    expect(answer.body.response_type).toBe("ephemeral");
    expect(answer.text).toContain(`Incident picture · shield zone ${ZONE}`);
  });

  it("Open incident overview: a clear sentence when no domain, no zone or several zones are mentioned", async () => {
    expect((await messageShortcut(h, "the site is slow again <@U0001>")).text).toContain(
      "mentions no domain",
    );
    expect((await messageShortcut(h, "is nowhere.example.org down?")).text).toContain(
      "No shield zone of this workspace has the domain nowhere.example.org",
    );
    const several = await messageShortcut(h, "shop.acme-example.com and api.acme-example.com both fail");
    expect(several.text).toContain("several shield zones");
    expect(several.text).toContain(`zone ${ZONE}`);
  });

  it("Request a change: the modal, redrawn for the kind with the same picker, submits into the one confirm → approval flow", async () => {
    const res = await h.interact({
      type: "shortcut",
      callback_id: SHORTCUTS.requestChange,
      trigger_id: `trigger-${rid()}`,
      token: "legacy",
      action_ts: String(Date.now() / 1000),
      ...who,
    });
    expect(res.status).toBe(200);
    const opened = await h.slack.waitForCall("views.open");
    const first = opened.args.view as ChangeModalView;
    expect(first.callback_id).toBe(VIEWS.changeModal);
    expect(blocksText(first.blocks)).toContain("DDoS sensitivity");

    // Choosing the kind redraws the modal with the shield zone picker and the sensitivity menu.
    await h.interact({
      type: "block_actions",
      trigger_id: `trigger-${rid()}`,
      api_app_id: "A0001",
      token: "legacy",
      ...who,
      container: { type: "view", view_id: "V1" },
      view: {
        id: "V1",
        hash: "h1",
        type: "modal",
        callback_id: VIEWS.changeModal,
        blocks: first.blocks,
        state: { values: {} },
      },
      actions: [
        {
          ...selected("ddos"),
          action_id: ACTIONS.changeModalKind,
          block_id: CHANGE_MODAL.kind,
          action_ts: "1",
        },
      ],
    });
    const updated = await h.slack.waitForCall("views.update");
    expect(updated.args.view_id).toBe("V1");
    const view = updated.args.view as ChangeModalView;
    const picker = view.blocks.find((b) => b.block_id === CHANGE_MODAL.target)?.element as {
      type: string;
      action_id: string;
    };
    expect(picker).toMatchObject({ type: "external_select", action_id: "edge.pick.shield" });

    // The picker in the modal is answered like a message's.
    const suggestion = await h.interact({
      type: "block_suggestion",
      ...who,
      api_app_id: "A0001",
      token: "legacy",
      container: { type: "view", view_id: "V1" },
      view: { id: "V1", type: "modal" },
      action_id: picker.action_id,
      block_id: CHANGE_MODAL.target,
      value: "shop.acme",
    });
    expect(JSON.parse(suggestion.body).options[0].value).toBe(String(ZONE));

    // A placeholder choice or a bad duration keeps the modal open with the reason on the field.
    const base = {
      [CHANGE_MODAL.kind]: { [ACTIONS.changeModalKind]: selected("ddos") },
      [`${CHANGE_MODAL.fieldPrefix}value`]: { value: selected("high") },
      [CHANGE_MODAL.channel]: { value: { type: "conversations_select", selected_conversation: "C0001" } },
    };
    const refused = await submitChangeModal(
      h,
      { ...view, id: "V1" },
      {
        ...base,
        [CHANGE_MODAL.target]: {
          value: { type: "external_select", selected_option: { value: String(ZONE) } },
        },
        [CHANGE_MODAL.duration]: { value: { type: "plain_text_input", value: "3 weeks" } },
      },
    );
    expect(JSON.parse(refused.res.body)).toEqual({
      response_action: "errors",
      errors: { [CHANGE_MODAL.duration]: expect.stringContaining("1m to 24h") },
    });

    const { res: done, responseId } = await submitChangeModal(
      h,
      { ...view, id: "V1" },
      {
        ...base,
        [CHANGE_MODAL.target]: {
          value: { type: "external_select", selected_option: { value: String(ZONE) } },
        },
        [CHANGE_MODAL.duration]: { value: { type: "plain_text_input", value: "30m" } },
      },
    );
    expect(done.status).toBe(200);
    const confirm = await h.slack.waitForResponse(responseId);
    expect(confirm.body.response_type).toBe("ephemeral");
    const text = blocksText(confirm.body.blocks);
    expect(text).toContain("DDoS sensitivity");
    expect(text).toContain("for 30 min");
    const button = findButtons(confirm.body.blocks).find((b) => b.action_id === ACTIONS.changeConfirm);
    expect(button, text).toBeDefined();
    await h.click(button!, { userId: BOB });
    const card = await h.slack.waitForCall("chat.postMessage", (c) =>
      blocksText(c.args.blocks).includes("DDoS sensitivity"),
    );
    expect(findButtons(card.args.blocks).some((b) => b.action_id === ACTIONS.approve)).toBe(true);
  });

  it("Request a change: what the command refuses comes back as its sentence in the channel", async () => {
    const { responseId } = await submitChangeModal(
      h,
      { id: "V2", hash: "h", blocks: [], callback_id: VIEWS.changeModal },
      {
        [CHANGE_MODAL.kind]: { [ACTIONS.changeModalKind]: selected("block") },
        [CHANGE_MODAL.target]: {
          value: { type: "external_select", selected_option: { value: String(ZONE) } },
        },
        [`${CHANGE_MODAL.fieldPrefix}entry`]: {
          value: { type: "plain_text_input", value: "not an address" },
        },
        [CHANGE_MODAL.channel]: { value: { type: "conversations_select", selected_conversation: "C0001" } },
      },
    );
    const answer = await h.slack.waitForResponse(responseId);
    expect(findButtons(answer.body.blocks).some((b) => b.action_id === ACTIONS.changeConfirm)).toBe(false);
    expect(blocksText(answer.body.blocks)).toMatch(/:warning:/);
  });
});
