import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { ACTION_PATTERNS, ACTIONS, CHANGE_MODAL, FUNCTIONS, VIEWS } from "../../src/slack/ids.js";
import { SIM_IDS } from "../../tools/simulator/index.js";
import { selected, submitChangeModal } from "../support/change-modal.js";
import { blocksText, findButtons, type Harness, startHarness } from "../support/harness.js";
import { BOB, CAROL } from "../support/users.js";

/**
 * Who may see a thing is decided like who may do it: the change modal and the DNS summary step act in a
 * channel only for its members; the incident card marks only the waiting requests of the channel it is
 * shown in. Through the real receiver (signed requests, fake Slack, simulator).
 */

const PRIVATE = "G0SECRET";
const ranBy = (id: string) => ({ id, secret: `uctx-secret-of-${id}` });

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
    const submitted = await submitChangeModal(
      h,
      { id: "V1", hash: "h1", callback_id: VIEWS.changeModal, blocks: [] },
      {
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
      channel,
    );
    expect(submitted.res.status).toBe(200);
    return submitted;
  }

  it("Request a change: a channel Bob is not in keeps the modal open with the reason; nothing is posted there", async () => {
    const { res } = await submitModal(PRIVATE);
    expect(JSON.parse(res.body)).toEqual({
      response_action: "errors",
      errors: { [CHANGE_MODAL.channel]: expect.stringContaining("not a member of that channel") },
    });
    await h.settled();
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
      expect((await h.store.changeRequests.listPending("T0001")).map((r) => r.channelId)).toEqual([PRIVATE]);

      expect(blocksText(await card(PRIVATE))).toContain("block awaiting approval");
      const elsewhere = blocksText(await card("C0002"));
      expect(elsewhere).toContain(ip);
      expect(elsewhere).not.toContain("awaiting approval");
    } finally {
      await h.close();
    }
  }, 30_000);
});
