import { describe, expect, it } from "vitest";
import { SWEEP_READ_ATTEMPTS, undoDue } from "../../src/changes/engine.js";
import { SIM_IDS } from "../../src/edge/simulator/index.js";
import { createApprovalSweeper } from "../../src/slack/approval-sweeper.js";
import { dropSchema, IN_CI, pgReachable, randomSchema } from "../store/helpers.js";
import { type Harness, type HarnessOptions, startHarness, TEST_EDGE_KEY } from "../support/harness.js";

/**
 * Issue 27.8: requests whose current value can't be read (a workspace without a key) back off and end
 * with a sentence; they no longer fill every sweep and keep another workspace's request from settling.
 */

const ZONE = SIM_IDS.customerAccessList.zoneId;

/** A bot-category request left `approved` (its replica died before the apply finished). */
async function leftApproved(h: Harness, teamId: string) {
  const r = await h.store.approvals.create({
    kind: "bot_category",
    teamId,
    channelId: "C0001",
    requesterId: "U0002",
    params: { shieldZoneId: ZONE, category: 1, action: 1 },
    observed: 0,
    expiresAt: h.deps.now() + 30 * 60_000,
  });
  await h.store.approvals.transition(r.id, "pending", "approved", { decidedBy: "U0003" });
  return r.id;
}

async function keylessRows(options: HarnessOptions = {}) {
  const h = await startHarness(options);
  try {
    h.sim.state.botCategories.get(ZONE)!.find((g) => g.category === 1)!.categoryAction = 1;
    // 50 of a workspace with no key, older than the one of a workspace that has one.
    const keyless: string[] = [];
    for (let i = 0; i < 50; i++) keyless.push(await leftApproved(h, "T0002"));
    h.advanceClock(10);
    const ours = await leftApproved(h, "T0001");
    const sweeper = createApprovalSweeper(h.app.env);

    h.advanceClock(61_000);
    await sweeper.sweep();
    await sweeper.sweep();
    // The change took effect (the category is Block): the reconciler found it and says so.
    expect((await h.store.approvals.get(ours))?.state).toBe("applied");

    for (let i = 1; i < SWEEP_READ_ATTEMPTS; i++) {
      h.advanceClock(61_000);
      await sweeper.sweep();
    }
    const ended = await Promise.all(keyless.map((id) => h.store.approvals.get(id)));
    expect(ended.map((r) => r?.state)).toEqual(keyless.map(() => "failed"));
    expect(ended[0]?.lastError?.message).toContain(
      `the current value could not be read ${SWEEP_READ_ATTEMPTS} times (No Edge API key for this workspace yet`,
    );
    expect(ended[0]?.lastError?.message).toContain(`/edge bots ${ZONE}`);
  } finally {
    await h.close();
  }
}

/** A temporary bot-category change (Block, was None) in force and due to be undone. */
async function dueUndo(h: Harness, teamId: string, shieldZoneId: number, category: number) {
  h.sim.state.botCategories.get(shieldZoneId)!.find((g) => g.category === category)!.categoryAction = 1;
  const r = await h.store.approvals.create({
    kind: "bot_category",
    teamId,
    channelId: "C0001",
    requesterId: "U0002",
    params: { shieldZoneId, category, action: 1 },
    observed: 0,
    expiresAt: h.deps.now() + 30 * 60_000,
    undoAfterMs: 60_000,
  });
  await h.store.approvals.transition(r.id, "pending", "approved", { decidedBy: "U0003" });
  await h.store.approvals.transition(r.id, "approved", "applied", { undoAt: h.deps.now() });
  return r.id;
}

/** One workspace's three slow undos, due first; another workspace's undo is not held behind them. */
async function slowWorkspace(options: HarnessOptions = {}) {
  const h = await startHarness(options);
  try {
    await h.store.keys.set("T0002", TEST_EDGE_KEY, "U0001");
    const slowZone = SIM_IDS.firstShieldZone + 1;
    const fastZone = SIM_IDS.firstShieldZone + 2;
    h.sim.addFault({ path: `/shield/shield-zone/${slowZone}/bot-categorization`, latencyMs: 1_200 });
    const slow: string[] = [];
    for (const category of [1, 2, 3]) slow.push(await dueUndo(h, "T0002", slowZone, category));
    h.advanceClock(10);
    const fast = await dueUndo(h, "T0001", fastZone, 1);
    h.advanceClock(1_000);

    const undone = async (id: string) => (await h.store.approvals.get(id))?.state === "undone";
    const sweep = undoDue(h.deps);
    while (!(await undone(fast))) await new Promise((r) => setTimeout(r, 20));
    const slowDoneFirst = (await Promise.all(slow.map(undone))).filter(Boolean).length;
    expect(slowDoneFirst).toBeLessThanOrEqual(1);
    expect((await sweep).map((r) => r.state)).toEqual(["undone", "undone", "undone", "undone"]);
  } finally {
    await h.close();
  }
}

const pgUp = await pgReachable();

describe("the sweeper backs off unreadable requests and ends them (issue 27.8)", () => {
  it("50 requests of a keyless workspace don't keep another workspace's from settling (SQLite)", async () => {
    await keylessRows();
  }, 60_000);

  it.runIf(pgUp || IN_CI)(
    "the same on PostgreSQL",
    async () => {
      const schema = randomSchema();
      try {
        await keylessRows({ pgSchema: schema });
      } finally {
        await dropSchema(schema).catch(() => undefined);
      }
    },
    60_000,
  );

  it("three slow undos of one workspace don't hold back another workspace's (SQLite)", async () => {
    await slowWorkspace();
  }, 60_000);

  it.runIf(pgUp || IN_CI)(
    "three slow undos of one workspace … (PostgreSQL)",
    async () => {
      const schema = randomSchema();
      try {
        await slowWorkspace({ pgSchema: schema });
      } finally {
        await dropSchema(schema).catch(() => undefined);
      }
    },
    60_000,
  );
});
