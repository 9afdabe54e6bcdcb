import { describe, expect, it } from "vitest";
import { pendingCard } from "../../support/change-flow.js";
import { answerTo, cardUpdate, type Harness } from "../../support/harness.js";
import { useHarness } from "../../support/use-harness.js";
import { ALICE, BOB, CAROL } from "../../support/users.js";

/**
 * An approval policy whose requests could never be approved is refused, whoever the approvers are (the
 * workspace admins by default, a private channel's members, a named list), and a loosening back never needs
 * more approvals than could come. Through the real receiver: signed commands and clicks, the fake Slack's
 * admins (alice the admin and carol the owner), groups and memberships.
 */

const DAVE = "U0004";
const ERIN = "U0005";
const FRANK = "U0006";
const PRIVATE = "G0OPS";

const workspacePolicy = (h: Harness) => h.store.policies.getEffective("T0001");

/** The policy request asked last, waiting for approval, and its card's Approve button. */
async function pendingPolicy(h: Harness) {
  const { approve } = await pendingCard(h, "Approval policy");
  const waiting = (await h.store.changeRequests.listPending("T0001")).filter((r) => r.kind === "policy");
  const request = waiting.sort((a, b) => a.createdAt - b.createdAt).at(-1);
  expect(request).toBeDefined();
  expect(approve.value).toContain(request!.id);
  return { request: request!, approve };
}

/** `userId` presses Approve; the card once it says the policy change is in effect. */
async function approvedBy(h: Harness, approve: { action_id: string; value?: string }, userId: string) {
  await h.click(approve, { userId });
  return cardUpdate(h, (t) => t.includes("Approval policy") && t.includes("is in effect"));
}

describe("a number of approvals nobody could give is refused", () => {
  const h = useHarness();

  it("with the workspace admins (the default): two admins can't give two approvals besides the one asking", async () => {
    const asked = await answerTo(h, "policy approvals 2", ALICE);
    expect(asked.text).toContain("only 1 person besides you could approve");
    expect(asked.text).toContain("workspace admins");
    expect(asked.text).toContain("/edge policy approvals 1");
    expect((await workspacePolicy(h)).approvalsNeeded).toBe(1);
    expect(h.slack.callsTo("users.list").length).toBeGreaterThan(0);

    // A third admin makes two approvals possible: the tightening applies at once.
    h.slack.users.set(DAVE, { id: DAVE, name: "dave", is_admin: true });
    h.advanceClock(10 * 60_000); // past the admin list's cache
    expect((await answerTo(h, "policy approvals 2", ALICE)).text).toContain("Policy updated");
    expect((await workspacePolicy(h)).approvalsNeeded).toBe(2);
  });

  it("when Slack does not list the admins, the number is refused as not known rather than counted short", async () => {
    h.advanceClock(10 * 60_000); // past the admin list's cache
    h.slack.addFault({ method: "users.list", error: "internal_error", times: 1 });
    const asked = await answerTo(h, "policy approvals 3", ALICE);
    expect(asked.text).toContain("it did not list everyone, so I can't tell whether 3 could");
    expect((await workspacePolicy(h)).approvalsNeeded).toBe(2);
  });

  it("in a private channel only its members see the card, so only they count", async () => {
    // Admins alice, carol, dave; the private channel has alice and carol only.
    h.slack.memberships.set(ALICE, [PRIVATE]);
    h.slack.memberships.set(CAROL, [PRIVATE]);
    const asked = await answerTo(h, "policy approvals 2 here", ALICE, PRIVATE);
    expect(asked.text).toContain("only 1 person besides you could approve");
    expect(asked.text).toContain("members of this private channel");
    expect((await h.store.policies.getChannel("T0001", PRIVATE))?.approvalsNeeded ?? null).toBeNull();
    // A public channel's card can be approved by any admin, member or not.
    expect((await answerTo(h, "policy approvals 2 here", ALICE, "C0PUBLIC")).text).toContain(
      "Policy updated",
    );
  });
});

describe("the way back never needs the number nobody could give", () => {
  const h = useHarness();

  it("a policy at two approvals with two admins: 'approvals 1' needs one admin's approval, and applies", async () => {
    // As this policy could be set before (or became when an admin left).
    await h.store.policies.setWorkspace("T0001", { approvalsNeeded: 2, updatedBy: ALICE });
    const asked = await answerTo(h, "policy approvals 1", CAROL);
    expect(asked.text).toContain("another admin has to approve it");
    expect(asked.text).toContain("It needs 1 approval, not the policy's 2");
    const { request, approve } = await pendingPolicy(h);
    expect(request.approvalsNeeded).toBe(1);
    await approvedBy(h, approve, ALICE);
    expect((await workspacePolicy(h)).approvalsNeeded).toBe(1);
  });

  it("'approvals off here' likewise needs one admin's approval, not two", async () => {
    h.slack.clear();
    await h.store.policies.setWorkspace("T0001", { approvalsNeeded: 2, updatedBy: ALICE });
    await answerTo(h, "policy approvals off here", CAROL);
    const { request, approve } = await pendingPolicy(h);
    expect(request.approvalsNeeded).toBe(1);
    await approvedBy(h, approve, ALICE);
    expect((await h.store.policies.getEffective("T0001", "C0001")).approvals).toBe("off");
  });

  it("a named list that can give two approvals still leaves policy changes to the admins: at most what they can give", async () => {
    h.slack.clear();
    for (const [id, name] of [
      [ERIN, "erin"],
      [FRANK, "frank"],
    ] as const)
      h.slack.users.set(id, { id, name });
    await h.store.policies.clearChannel("T0001", "C0001");
    await h.store.policies.setWorkspace("T0001", {
      approvers: { kind: "list", users: [BOB, ERIN, FRANK], usergroups: [] },
      approvalsNeeded: 2,
      updatedBy: ALICE,
    });
    await answerTo(h, "policy expiry 60m", CAROL);
    const { request, approve } = await pendingPolicy(h);
    expect(request.approvalsNeeded).toBe(1);
    await approvedBy(h, approve, ALICE);
    expect((await workspacePolicy(h)).expiryMinutes).toBe(60);
  });

  it("asked in a small private channel, a loosening still needs what the workspace's admins can give", async () => {
    h.slack.clear();
    h.slack.users.set(DAVE, { id: DAVE, name: "dave", is_admin: true });
    h.advanceClock(10 * 60_000); // past the admin list's cache
    h.slack.memberships.set(ALICE, [PRIVATE]);
    h.slack.memberships.set(CAROL, [PRIVATE]);
    await h.store.policies.setWorkspace("T0001", { approvalsNeeded: 2, updatedBy: ALICE });
    await answerTo(h, "policy expiry 90m", CAROL, PRIVATE);
    const { request } = await pendingPolicy(h);
    // Alice and Dave besides Carol: two, though only Alice is in the channel.
    expect(request.approvalsNeeded).toBe(2);
  });
});

describe("/edge policy expiry", () => {
  const h = useHarness({ admins: [ALICE] });

  it("takes a duration with its unit, and refuses a bare number or one too short to approve in, with the forms it takes", async () => {
    const forms = "a duration from 5m to 7d, like 30m, 2h, 1d or 1h30m. For example: /edge policy expiry 30m";
    const bare = await answerTo(h, "policy expiry 1", ALICE);
    expect(bare.text).toContain(`"1" has no unit: did you mean 1m (minutes)? Give the expiry as ${forms}`);
    const short = await answerTo(h, "policy expiry 2m", ALICE);
    expect(short.text).toContain(
      `2m is too short for anyone to approve a request in. Give the expiry as ${forms}`,
    );
    const long = await answerTo(h, "policy expiry 8d", ALICE);
    expect(long.text).toContain("8d is longer than a week");
    expect((await h.store.policies.getWorkspace("T0001"))?.expiryMinutes ?? 30).toBe(30);

    const taken = await answerTo(h, "policy expiry 10m here", ALICE, "C0TEN");
    expect(taken.text).toContain("Policy updated for this channel");
    expect(taken.text).toContain("10 minutes");
  });
});
