/**
 * Buttons that ask for a change straight after Slack's confirm dialog (the incident card's and an alert's Block,
 * `/edge bots`), through the receiver, the fake Slack and the simulator: where the channel's approvals are off,
 * no approval card will show the change's impact, so the presser gets a confirmation with its impact preview
 * that says it applies at once, and nothing changes until its Confirm.
 */
import { describe, expect, it } from "vitest";
import { alertViewOf } from "../../../src/alerts/view.js";
import { alertParentMessage } from "../../../src/slack/blocks/alerts.js";
import { ACTIONS } from "../../../src/slack/ids.js";
import { SIM_IDS } from "../../../tools/simulator/index.js";
import { blocksText, findButtons, type Harness } from "../../support/harness.js";
import { useHarness } from "../../support/use-harness.js";
import { openWafAlert, zoneWatch } from "../../support/zone-alert.js";

const ZONE = SIM_IDS.zoneUnderAttack;
const AT_ONCE = "Approvals are off here: this applies at once.";
/** The preview, read (a number, or why not; under a seeded run the event log may write values edgeops can't match). */
const PREVIEW =
  /matched [\d,]+ events?|[\d,]+ bot-detection events?|triggered [\d,]+ times?|Impact in the last hour: unknown/;
let seq = 0;

const accessListWrites = (h: Harness) =>
  h.sim.requests.filter((r) => r.method !== "GET" && /\/access-lists/.test(r.path));

/** A channel of its own whose approvals are off (or left at the default, approvals required). */
async function channel(h: Harness, approvals: "off" | "required"): Promise<string> {
  seq += 1;
  const id = `C0BTN${seq}`;
  if (approvals === "off") await h.store.policies.setChannel("T0001", id, { approvals: "off" });
  return id;
}

async function incidentBlockButton(h: Harness, channelId: string) {
  const res = await h.command(`incident ${ZONE}`, { channelId });
  const card = await h.slack.waitForResponse(res.responseId, (r) => r.body.replace_original === true, 15_000);
  const block = findButtons(card.body.blocks).find((b) => /^Block \S+$/.test(b.text));
  expect(block, blocksText(card.body.blocks)).toBeDefined();
  return block!;
}

/**
 * Presses `button` where no approval card follows: the presser's own confirmation (not replacing the message it
 * was pressed on), saying the change applies at once, with the change's impact.
 */
async function confirmationOf(
  h: Harness,
  button: Parameters<Harness["click"]>[0],
  where: Parameters<Harness["click"]>[1],
) {
  const click = await h.click(button, where);
  const answer = await h.slack.waitForResponse(click.responseId, undefined, 15_000);
  const text = blocksText(answer.body.blocks);
  expect(answer.body.replace_original).toBe(false);
  expect(text).toContain(AT_ONCE);
  expect(text).toMatch(PREVIEW);
  return { answer, text };
}

describe("change buttons where no approval card follows", () => {
  const h = useHarness();

  it("the incident card's Block answers the presser with the block's impact and 'applies at once'; only its Confirm blocks", async () => {
    const channelId = await channel(h, "off");
    const block = await incidentBlockButton(h, channelId);
    const writesBefore = accessListWrites(h).length;
    const { answer, text } = await confirmationOf(h, block, { channelId });
    expect(text).not.toContain("estimating");
    await h.settled();
    expect(accessListWrites(h).length).toBe(writesBefore);

    const confirm = findButtons(answer.body.blocks).find((b) => b.text === "Confirm");
    expect(confirm).toBeDefined();
    const confirmed = await h.click(confirm!, { channelId });
    const done = await h.slack.waitForResponse(confirmed.responseId, undefined, 15_000);
    expect(done.body.replace_original).toBe(true);
    expect(blocksText(done.body.blocks)).not.toContain(AT_ONCE);
    await h.settled();
    expect(accessListWrites(h).length).toBeGreaterThan(writesBefore);
  }, 40_000);

  it("where approvals are required the incident card's Block posts the approval card as before, with no confirmation first", async () => {
    const channelId = await channel(h, "required");
    const block = await incidentBlockButton(h, channelId);
    const click = await h.click(block, { channelId });
    const card = await h.slack.waitForCall(
      "chat.postMessage",
      (c) => c.args.channel === channelId && blocksText(c.args.blocks).includes("Approval needed"),
      15_000,
    );
    expect(blocksText(card.args.blocks)).not.toContain(AT_ONCE);
    await h.settled();
    expect(
      h.slack
        .responsesTo(click.responseId)
        .map((r) => blocksText(r.body.blocks))
        .join("\n"),
    ).not.toContain(AT_ONCE);
  }, 40_000);

  it("an alert's Block answers the presser with the impact first; its Confirm answers in the alert's thread", async () => {
    const channelId = await channel(h, "off");
    const watch = await zoneWatch(h.store, {
      teamId: "T0001",
      channelId,
      createdBy: "U0001",
      zoneId: ZONE,
      nextPollAt: h.deps.clock.now() + 600_000,
    });
    const episode = await openWafAlert(h.store, watch, { label: null, topOffender: "203.0.113.77" });
    const parentTs = "1700000555.000100";
    await h.store.episodes.setMessage(episode.id, parentTs);
    const stored = await h.store.episodes.get(episode.id);
    const parent = alertParentMessage(alertViewOf(stored!, watch), h.deps.clock.now());
    const block = findButtons(parent.blocks).find((b) => b.action_id === ACTIONS.alertMitigateBlock)!;
    const { answer } = await confirmationOf(h, block, { channelId, messageTs: parentTs });
    await h.settled();
    const inThread = () =>
      h.slack
        .callsTo("chat.postMessage")
        .filter((c) => c.args.channel === channelId && c.args.thread_ts === parentTs);
    expect(inThread()).toEqual([]);

    const confirm = findButtons(answer.body.blocks).find((b) => b.text === "Confirm")!;
    const confirmed = await h.click(confirm, { channelId, messageTs: "1700000999.000100" });
    await h.slack.waitForCall(
      "chat.postMessage",
      (c) => c.args.channel === channelId && c.args.thread_ts === parentTs,
      15_000,
    );
    const replaced = await h.slack.waitForResponse(
      confirmed.responseId,
      (r) => r.body.replace_original === true,
    );
    expect(findButtons(replaced.body.blocks)).toEqual([]);
  }, 40_000);

  it("/edge bots Block answers the presser with the impact first and says it applies at once", async () => {
    const channelId = await channel(h, "off");
    const res = await h.command(`bots ${ZONE}`, { channelId });
    const view = await h.slack.waitForResponse(
      res.responseId,
      (r) => findButtons(r.body.blocks).some((b) => b.action_id === ACTIONS.botBlock),
      15_000,
    );
    const block = findButtons(view.body.blocks).find((b) => b.action_id === ACTIONS.botBlock)!;
    const { answer } = await confirmationOf(h, block, { channelId });
    expect(findButtons(answer.body.blocks).map((b) => b.text)).toEqual(["Confirm", "Cancel"]);
  }, 40_000);

  it("a WAF rule's Disable rule answers the presser with the rule's impact first and says it applies at once", async () => {
    const channelId = await channel(h, "off");
    const res = await h.command(`waf ${ZONE} ${SIM_IDS.waf.ruleId}`, { channelId });
    const answer = await h.slack.waitForResponse(
      res.responseId,
      (r) => findButtons(r.body.blocks).some((b) => b.text === "Disable rule"),
      15_000,
    );
    const disable = findButtons(answer.body.blocks).find((b) => b.text === "Disable rule")!;
    const { answer: confirmation } = await confirmationOf(h, disable, { channelId });
    expect(findButtons(confirmation.body.blocks).map((b) => b.action_id)).toEqual([
      disable.action_id,
      ACTIONS.changeCancel,
    ]);
  }, 40_000);
});
