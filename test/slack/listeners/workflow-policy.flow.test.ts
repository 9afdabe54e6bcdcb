/**
 * A workflow step's author picks the channel its approval request goes to; that must not let a workflow
 * borrow a loose channel's policy. Through the real receiver: signed function_executed
 * events, the fake Slack's channel members, the Edge API simulator, the store on SQLite and PostgreSQL.
 */
import { describe, expect, it } from "vitest";
import { stepRequestId } from "../../../src/slack/functions/completion.js";
import { FUNCTIONS } from "../../../src/slack/ids.js";
import { SIM_IDS } from "../../../tools/simulator/index.js";
import { describeOnBothStores } from "../../support/both-stores.js";
import {
  answerTo,
  blocksText,
  type Harness,
  type HarnessOptions,
  startHarness,
} from "../../support/harness.js";
import { useHarness } from "../../support/use-harness.js";
import { ALICE } from "../../support/users.js";

const DAVE = "U0004"; // a member of no channel at first
const LOOSE = "G0LOOSE"; // private, approvals off here
const ZONE = SIM_IDS.customerAccessList.zoneId;

const ranBy = (id: string) => ({ id, secret: `uctx-secret-of-${id}` });
const writes = (h: Harness) => h.sim.requests.filter((r) => r.method !== "GET");
const blockStep = (entry: string) => ({
  zone: String(ZONE),
  entry,
  channel: LOOSE,
  requester: ranBy(DAVE),
});

async function looseChannel(options: HarnessOptions) {
  const h = await startHarness(options);
  try {
    h.slack.users.set(DAVE, { id: DAVE, name: "dave" });
    await h.store.policies.setChannel("T0001", LOOSE, { approvals: "off", updatedBy: ALICE });
    h.sim.clearRequests();

    // Dave is not in the channel: the step refuses, nothing is asked or applied.
    const outsider = await h.functionExecuted(FUNCTIONS.requestBlock, blockStep("AS4134"));
    const refused = await h.slack.waitForCompletion(outsider.executionId);
    expect(refused.kind).toBe("error");
    expect(refused.error).toContain("not a member of the channel");
    expect(await h.store.changeRequests.get(stepRequestId(outsider.executionId))).toBeUndefined();
    expect(writes(h)).toEqual([]);

    // A member: the channel says approvals off, the workspace requires them; the stricter one holds.
    h.slack.memberships.set(DAVE, [LOOSE]);
    h.advanceClock(6_000); // a list without Dave is read again after 5 s (he may just have joined)
    const member = await h.functionExecuted(FUNCTIONS.requestBlock, blockStep("AS4135"));
    const card = await h.slack.waitForCall(
      "chat.postMessage",
      (c) => c.args.channel === LOOSE && blocksText(c.args.blocks).includes("Approval needed"),
    );
    expect(blocksText(card.args.blocks)).toContain("AS4135");
    expect(await h.store.changeRequests.get(stepRequestId(member.executionId))).toMatchObject({
      state: "pending",
      requesterId: DAVE,
    });
    expect(writes(h)).toEqual([]);
    expect(h.slack.completions.filter((c) => c.executionId === member.executionId)).toEqual([]);

    // A workspace that requires two approvers: the step's request needs two, though the channel says off.
    await h.store.policies.setWorkspace("T0001", { approvalsNeeded: 2, updatedBy: ALICE });
    const two = await h.functionExecuted(FUNCTIONS.requestBlock, blockStep("AS4136"));
    await h.slack.waitForCall("chat.postMessage", (c) => blocksText(c.args.blocks).includes("AS4136"));
    expect(await h.store.changeRequests.get(stepRequestId(two.executionId))).toMatchObject({
      approvalsNeeded: 2,
    });

    // Where both say off, the step's change is applied at once, as before.
    await h.store.policies.setWorkspace("T0001", {
      approvals: "off",
      approvalsNeeded: null,
      updatedBy: ALICE,
    });
    const open = await h.functionExecuted(FUNCTIONS.requestBlock, blockStep("AS4137"));
    const done = await h.slack.waitForCompletion(open.executionId, 10_000);
    expect(done.outputs).toMatchObject({ final_state: "applied" });
    expect(writes(h).length).toBeGreaterThan(0);
    expect(h.slack.violations).toEqual([]);
  } finally {
    await h.close();
  }
}

describeOnBothStores(
  "a workflow step's request keeps the stricter policy and needs a member of its channel",
  looseChannel,
  30_000,
);

describe("/edge policy approvals off here", () => {
  const h = useHarness();

  it("says it covers every zone for anyone who can post in the channel", async () => {
    const answer = await answerTo(h, "policy approvals off here", ALICE, LOOSE);
    expect(answer.text).toContain("covers every zone, for anyone who can post in this channel");
  }, 20_000);
});
