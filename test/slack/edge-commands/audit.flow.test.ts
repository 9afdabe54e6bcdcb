import { describe, expect, it } from "vitest";
import { expireDue, reconcileStaleUndos } from "../../../src/jobs/change-sweeps.js";
import { ACTIONS, VIEWS } from "../../../src/slack/ids.js";
import type { ChangeState } from "../../../src/store/index.js";
import { SIM_IDS } from "../../../tools/simulator/index.js";
import { askAndApprove, askAndConfirm, pendingCard } from "../../support/change-flow.js";
import { answerTo, cardUpdate, findButtons } from "../../support/harness.js";
import { useHarness } from "../../support/use-harness.js";
import { ALICE, BOB, CAROL } from "../../support/users.js";
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

/**
 * A request's audit rows (`action:outcome`) as they were when the change observers were told of its move to
 * each of `states` (the first such move from now on). This observer's turn comes after the card's redraw,
 * registered before it: whoever sees the card redrawn and runs /edge audit finds at least these rows.
 */
function auditWhenMovedTo(...states: ChangeState[]) {
  const waiting = new Map<ChangeState, (rows: string[]) => void>();
  const rows = new Map(
    states.map((state) => [state, new Promise<string[]>((resolve) => waiting.set(state, resolve))]),
  );
  const stop = h.deps.changeObservers.add(async (request) => {
    const resolve = waiting.get(request.state);
    if (!resolve) return;
    waiting.delete(request.state);
    const audit = await h.deps.store.audit.list(request.teamId, 50);
    resolve(audit.filter((r) => r.details?.requestId === request.id).map((r) => `${r.action}:${r.outcome}`));
  });
  return { at: (state: ChangeState) => rows.get(state)!, stop };
}

describe("a move's audit row is written before any card is told of the move", () => {
  const ZONE = SIM_IDS.firstShieldZone;
  const zone = () => h.sim.state.shieldZones.find((z) => z.shieldZoneId === ZONE)!;

  it("approve, then applied: each move's row is in the audit when the card is told of it", async () => {
    zone().dDoSShieldSensitivity = 1;
    const told = auditWhenMovedTo("approved", "applied");
    try {
      h.slack.clear();
      await askAndApprove(h, `ddos ${ZONE} high`, "DDoS");
      expect(await told.at("approved")).toContain("ddos_sensitivity.approve:approved");
      expect(await told.at("applied")).toContain("ddos_sensitivity.apply:applied");
    } finally {
      told.stop();
    }
  });

  it("reject and withdraw: the decision's row is in the audit when the card is told of it", async () => {
    zone().dDoSShieldSensitivity = 0;
    const told = auditWhenMovedTo("rejected", "cancelled");
    try {
      h.slack.clear();
      await askAndConfirm(h, `ddos ${ZONE} medium`);
      await h.click((await pendingCard(h, "DDoS")).reject, { userId: CAROL });
      expect(await told.at("rejected")).toContain("ddos_sensitivity.reject:rejected");

      h.slack.clear();
      await askAndConfirm(h, `ddos ${ZONE} low`);
      await h.click((await pendingCard(h, "DDoS")).reject, { userId: BOB });
      expect(await told.at("cancelled")).toContain("ddos_sensitivity.withdraw:cancelled");
    } finally {
      told.stop();
    }
  });

  it("expiry: the sweeper's row is in the audit when the card is told the request expired", async () => {
    zone().dDoSShieldSensitivity = 1;
    const told = auditWhenMovedTo("expired");
    try {
      h.slack.clear();
      await askAndConfirm(h, `ddos ${ZONE} medium`);
      await pendingCard(h, "DDoS");
      h.advanceClock(24 * 60 * 60_000);
      expect((await expireDue(h.deps)).map((r) => r.state)).toEqual(["expired"]);
      expect(await told.at("expired")).toContain("ddos_sensitivity.expire:expired");
    } finally {
      told.stop();
    }
  });

  it("undo, settled by the reconciler or pressed: its row is in the audit when the card is told it is undone", async () => {
    // A replica that died mid-undo left the request undoing, after it had put the value back.
    zone().dDoSShieldSensitivity = 1;
    let told = auditWhenMovedTo("undone");
    try {
      h.slack.clear();
      await askAndApprove(h, `ddos ${ZONE} high for 30m`, "DDoS");
      const [r] = await h.store.changeRequests.listDueUndo(Number.MAX_SAFE_INTEGER);
      await h.store.changeRequests.transition(r!.id, "applied", "undoing", {});
      zone().dDoSShieldSensitivity = 1;
      h.advanceClock(61_000);
      expect((await reconcileStaleUndos(h.deps)).map((x) => x.state)).toEqual(["undone"]);
      expect(await told.at("undone")).toContain("ddos_sensitivity.reconcile:undone");
    } finally {
      told.stop();
    }

    told = auditWhenMovedTo("undone");
    try {
      h.slack.clear();
      const applied = await askAndApprove(h, `ddos ${ZONE} high for 30m`, "DDoS");
      await h.click(applied.buttons.find((b) => b.action_id === ACTIONS.undo)!, { userId: BOB });
      expect(await told.at("undone")).toContain("ddos_sensitivity.undo:undone");
    } finally {
      told.stop();
    }
  });
});
