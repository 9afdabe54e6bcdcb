/**
 * Nothing grows without limit: the App Home reads a page of the pending requests and
 * their count, and the approval sweeper deletes audit rows past AUDIT_RETENTION_DAYS and workflow steps past
 * FUNCTION_EXECUTION_RETENTION_DAYS, in batches. Through
 * the real receiver and the real sweeper, on SQLite and PostgreSQL.
 */
import { expect } from "vitest";
import { createChangeSweeper } from "../../src/jobs/change-sweeps.js";
import { SIM_IDS } from "../../tools/simulator/index.js";
import { openHome } from "../support/app-home.js";
import { describeOnBothStores } from "../support/both-stores.js";
import { answerTo, type HarnessOptions, startHarness } from "../support/harness.js";
import { ALICE } from "../support/users.js";

const DAVE = "U0004";
const DAY = 24 * 60 * 60_000;
const ZONE = SIM_IDS.customerAccessList.zoneId;

async function pendingPage(options: HarnessOptions) {
  const h = await startHarness(options);
  try {
    h.slack.users.set(DAVE, { id: DAVE, name: "dave" });
    h.slack.memberships.set(DAVE, ["C0001"]);
    for (let i = 1; i <= 25; i++) {
      await h.store.changeRequests.create({
        kind: "access_block",
        teamId: "T0001",
        channelId: "C0001",
        requesterId: ALICE,
        params: { shieldZoneId: ZONE, type: "ip", value: `203.0.113.${i}`, state: "block" },
        expiresAt: Date.now() + 60 * 60_000,
      });
      h.advanceClock(1_000);
    }
    const text = await openHome(h, DAVE);
    expect(text).toContain("*Pending approvals in your channels* (25)");
    expect(text).toContain("The newest 20 are shown");
    expect(text).toContain("203.0.113.25");
    expect(text).toContain("203.0.113.6 ");
    expect(text).not.toContain("203.0.113.5 ");
    expect(text.match(/expires/g)).toHaveLength(20);
  } finally {
    await h.close();
  }
}

async function retention(options: HarnessOptions) {
  const h = await startHarness({ ...options, env: { AUDIT_RETENTION_DAYS: "30" } });
  try {
    const now = Date.now();
    const old = (teamId: string, i: number) =>
      h.store.audit.append({
        at: now - 31 * DAY - i,
        teamId,
        userId: ALICE,
        action: "key.set",
        target: "edge_api_key",
        outcome: "ok",
        details: { channelId: "C0001", n: i },
      });
    // More than one batch's worth, across two workspaces.
    await Promise.all([
      ...Array.from({ length: 1000 }, (_, i) => old("T0001", i)),
      ...Array.from({ length: 203 }, (_, i) => old("T0OTHER", i)),
    ]);
    await h.store.audit.append({
      at: now - 29 * DAY,
      teamId: "T0001",
      userId: ALICE,
      action: "schedule.create",
      target: "schedule:kept",
      outcome: "ok",
      details: { channelId: "C0001" },
    });
    // A row written the ordinary way: a confirmed request.
    const typed = await answerTo(h, `block ${ZONE} 198.51.100.7`, ALICE);
    const confirm = typed.buttons.find((b) => b.text === "Confirm");
    if (!confirm) throw new Error(`no Confirm on: ${typed.text}`);
    const click = await h.click(confirm, { userId: ALICE });
    await h.slack.waitForResponse(click.responseId);
    await createChangeSweeper(h.app.env).sweep();

    const left = await h.store.audit.list("T0001", 1000);
    expect(left.map((e) => e.action)).toEqual(["access_block.request", "schedule.create"]);
    expect(await h.store.audit.list("T0OTHER", 1000)).toEqual([]);
    const audit = await answerTo(h, "audit 200", ALICE);
    expect(audit.text).toContain("schedule:kept");
    expect(audit.text).not.toContain("edge_api_key");
  } finally {
    await h.close();
  }
}

describeOnBothStores("the App Home's pending approvals: the newest 20 and how many", pendingPage, 20_000);
describeOnBothStores(
  "AUDIT_RETENTION_DAYS: the sweeper deletes older audit rows in batches",
  retention,
  30_000,
);

async function stepRetention(options: HarnessOptions) {
  const h = await startHarness({ ...options, env: { FUNCTION_EXECUTION_RETENTION_DAYS: "30" } });
  try {
    const step = (id: string, teamId = "T0001") =>
      h.store.functionExecutions.create({
        id,
        teamId,
        callbackId: "request_block",
        requestId: `R${id}`,
        token: "xwfp-step-token",
      });
    // More than one batch's worth of old steps across two workspaces: completed ones and ones never settled.
    for (let i = 0; i < 520; i++) await step(`Fold${i}`, i % 2 === 0 ? "T0001" : "T0OTHER");
    expect(await h.store.functionExecutions.claim("Fold0", 60_000)).toBeDefined();
    expect(await h.store.functionExecutions.complete("Fold0", { outputs: {} })).toBe(true);
    h.advanceClock(31 * DAY);
    await step("Fnew");
    // Created long ago, but being completed now: kept.
    expect(await h.store.functionExecutions.claim("Fold2", 60_000)).toBeDefined();
    await createChangeSweeper(h.app.env).sweep();
    expect(await h.store.functionExecutions.get("Fold0")).toBeUndefined();
    expect(await h.store.functionExecutions.get("Fold519")).toBeUndefined();
    expect(await h.store.functionExecutions.get("Fnew")).toBeDefined();
    expect(await h.store.functionExecutions.get("Fold2")).toBeDefined();
    expect(await h.store.functionExecutions.token("Fnew")).toBe("xwfp-step-token");
  } finally {
    await h.close();
  }
}

describeOnBothStores(
  "FUNCTION_EXECUTION_RETENTION_DAYS: the sweeper deletes workflow steps not updated since, in batches",
  stepRetention,
  60_000,
);
