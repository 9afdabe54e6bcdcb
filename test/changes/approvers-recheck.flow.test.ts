import { describe, expect } from "vitest";
import { edgeopsListName } from "../../src/services/access-lists.js";
import { SIM_IDS } from "../../tools/simulator/index.js";
import { onBothStores } from "../support/both-stores.js";
import { askAndConfirm, CAROL, pendingCard } from "../support/change-flow.js";
import type { Harness, HarnessOptions } from "../support/harness.js";
import { blocksText, cardUpdate, startHarness } from "../support/harness.js";

/**
 * At the final approval of an N-of-M request, every earlier approval is checked against the
 * channel's rule as it is now; one whose approver was taken off the list does not count.
 */

const ZONE = SIM_IDS.customerAccessList.zoneId;
const DAVE = "U0004";
const ERIN = "U0005";
const IP = "192.0.2.77";
const LABEL = `Block IP ${IP} on shield zone ${ZONE}`;

const blocked = (h: Harness) =>
  (h.sim.state.accessLists.get(ZONE) ?? [])
    .filter((l) => l.name === edgeopsListName("ip", "block"))
    .some((l) => l.content.split("\n").includes(IP));

const list = (users: string[]) => ({ kind: "list" as const, users, usergroups: [] });

async function droppedApprover(options: HarnessOptions = {}) {
  const h = await startHarness(options);
  try {
    h.slack.users.set(DAVE, { id: DAVE, name: "dave" });
    h.slack.users.set(ERIN, { id: ERIN, name: "erin" });
    await h.store.policies.setChannel("T0001", "C0001", {
      approvers: list([CAROL, DAVE, ERIN]),
      approvalsNeeded: 2,
      updatedBy: "U0001",
    });
    await askAndConfirm(h, `block ${ZONE} ${IP}`);
    const { approve } = await pendingCard(h, LABEL);

    await h.click(approve, { userId: DAVE });
    await cardUpdate(h, (t) => t.includes("Approved by 1 of 2"));
    // Dave is taken off the approvers; Carol's approval would be the second.
    await h.store.policies.setChannel("T0001", "C0001", {
      approvers: list([CAROL, ERIN]),
      updatedBy: "U0001",
    });
    const carol = await h.click(approve, { userId: CAROL });
    const said = blocksText((await h.slack.waitForResponse(carol.responseId)).body.blocks);
    expect(said).toContain(`the approval of <@${DAVE}> no longer counts`);
    expect(said).toContain("1 more approver is needed");
    const updated = await cardUpdate(h, (t) => t.includes("no longer an approver here"));
    expect(blocksText(updated.args.blocks)).toContain(`Approved by 1 of 2: <@${CAROL}>`);
    expect(blocked(h)).toBe(false);
    const waiting = await h.store.changeRequests.listPending("T0001");
    expect(waiting.map((r) => r.approvedBy)).toEqual([[CAROL]]);

    await h.click(approve, { userId: ERIN });
    await cardUpdate(h, (t) => t.includes(LABEL) && t.includes("is in effect"));
    expect(blocked(h)).toBe(true);
    const done = await h.store.changeRequests.get(waiting[0]!.id);
    expect(done?.approvedBy).toEqual([CAROL, ERIN]);
    expect(h.slack.violations).toEqual([]);
  } finally {
    await h.close();
  }
}

describe("N-of-M approvals are rechecked at the final approval", () => {
  onBothStores("an approver taken off the list no longer counts", droppedApprover);
});
