import { describe, expect, it } from "vitest";
import { SWEEP_READ_ATTEMPTS } from "../../src/changes/engine.js";
import { SIM_IDS } from "../../src/edge/simulator/index.js";
import { createApprovalSweeper } from "../../src/slack/approval-sweeper.js";
import { dropSchema, IN_CI, pgReachable, randomSchema } from "../store/helpers.js";
import { type Harness, type HarnessOptions, startHarness } from "../support/harness.js";

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
});
