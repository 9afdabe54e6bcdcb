import { describe, expect, it } from "vitest";
import { ACTIONS, VIEWS } from "../../../src/slack/ids.js";
import { SIM_IDS } from "../../../tools/simulator/index.js";
import { askAndConfirm, pendingCard } from "../../support/change-flow.js";
import { answerTo, cardUpdate, findButtons } from "../../support/harness.js";
import { useHarness } from "../../support/use-harness.js";
import { ALICE, CAROL } from "../../support/users.js";
import { viewSubmission } from "../../support/view-submission.js";

/**
 * `/edge audit` reads as what happened: one row for a policy tightened at once, channels as channels (never
 * raw ids), and a reject with the reason its rejecter gave.
 */

const h = useHarness({}, { resetEach: false });

const auditLines = async () => (await answerTo(h, "audit", CAROL)).text.split("\n");

/** Carol rejects the pending DDoS card, then adds `reason` through the reject's "Add a reason" modal. */
async function rejectWithReason(reason: string) {
  const { reject } = await pendingCard(h, "DDoS");
  const rejected = await h.click(reject, { userId: CAROL });
  const answer = await h.slack.waitForResponse(rejected.responseId);
  const add = findButtons(answer.body.blocks).find((b) => b.action_id === ACTIONS.rejectReason)!;
  await h.click(add, { userId: CAROL });
  const opened = await h.slack.waitForCall("views.open");
  await h.interact(
    viewSubmission({
      userId: CAROL,
      userName: "carol",
      callbackId: VIEWS.rejectReason,
      title: "Reason",
      privateMetadata: (opened.args.view as { private_metadata: string }).private_metadata,
      values: { [VIEWS.rejectReason]: { [VIEWS.rejectReason]: { type: "plain_text_input", value: reason } } },
    }),
  );
  await cardUpdate(h, (t) => t.includes(reason));
}

describe("/edge audit", () => {
  it("a channel's policy tightened at once is one row, naming the channel as a channel", async () => {
    expect((await answerTo(h, "policy expiry 10m here", ALICE)).text).toContain("Policy updated");
    const lines = await auditLines();
    const policyRows = lines.filter((l) => l.includes("`policy."));
    expect(policyRows).toHaveLength(1);
    expect(policyRows[0]).toContain("`policy.apply` · policy of channel <#C0001>");
    expect(policyRows[0]).toContain("*applied* without approval");
    expect(lines.join("\n")).not.toMatch(/channel C0001/);
  });

  it("a reject shows the reason its rejecter added, on one row", async () => {
    await askAndConfirm(h, `ddos ${SIM_IDS.firstShieldZone} high`);
    await rejectWithReason("not during the sale");
    const rejects = (await auditLines()).filter((l) => l.includes("`ddos_sensitivity.reject`"));
    expect(rejects).toHaveLength(1);
    expect(rejects[0]).toContain("*rejected*: not during the sale");
  });

  it("a note's audit row is written before its card is told: the redraw never runs ahead of /edge audit", async () => {
    h.slack.clear();
    await askAndConfirm(h, `ddos ${SIM_IDS.firstShieldZone} medium`);
    // What the audit held for this request when the card was told of the reason (the observer's own turn
    // comes after the card's redraw, registered before it).
    let stop = () => {};
    const auditedWhenTold = new Promise<string[]>((resolve) => {
      stop = h.deps.changeObservers.addNoted(async (request) => {
        const rows = await h.deps.store.audit.list(request.teamId, 50);
        if (request.reason?.kind === "rejected" && request.reason.text)
          resolve(
            rows.filter((r) => r.details?.requestId === request.id).map((r) => `${r.action}:${r.outcome}`),
          );
      });
    });
    try {
      await rejectWithReason("too soon");
      expect(await auditedWhenTold).toContain("ddos_sensitivity.reject:reason");
    } finally {
      stop();
    }
  });
});
