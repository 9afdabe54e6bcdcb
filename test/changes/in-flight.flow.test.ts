import { describe, expect, it } from "vitest";
import { IN_FLIGHT_LEASE_MS } from "../../src/changes/in-flight.js";
import { reconcileStale } from "../../src/jobs/change-sweeps.js";
import { ACTIONS } from "../../src/slack/ids.js";
import { SIM_IDS } from "../../tools/simulator/index.js";
import { onPostgres, postgresTests } from "../support/both-stores.js";
import {
  answerTo,
  blocksText,
  cardUpdate,
  findButtons,
  type Harness,
  type HarnessOptions,
} from "../support/harness.js";
import { BOB, CAROL } from "../support/users.js";
import { startWorld } from "../support/world.js";

/**
 * The reconciler takes over requests left `approved` for a minute, but an apply still in
 * flight holds a renewed lease on its request, and the reconciler waits for that lease to end.
 */

const APP = SIM_IDS.appWithUnknownStatus;
const RESTART = { method: "POST", path: /\/mc\/apps\/[^/]+\/restart$/ };

const restarts = (h: Harness) => h.sim.state.appRestarts.get(APP)?.length ?? 0;
const restartPosts = (h: Harness) =>
  h.sim.requests.filter((r) => r.method === RESTART.method && RESTART.path.test(r.path)).length;

async function slowRestart(options: Omit<HarnessOptions, "clock"> = {}) {
  // On a manual clock: the Edge client's timeout never cuts the held POST short, however long it is held.
  const h = await startWorld(options);
  try {
    const typed = await answerTo(h, `restart ${APP}`, BOB);
    const confirm = typed.buttons.find((b) => b.action_id === ACTIONS.changeConfirm)!;
    await h.click(confirm, { userId: BOB });
    const card = await h.slack.waitForCall("chat.postMessage", (c) =>
      blocksText(c.args.blocks).includes("Approval needed"),
    );
    const approve = findButtons(card.args.blocks).find((b) => b.action_id === ACTIONS.approve)!;
    const requestId = approve.value!;

    // The restart's POST is held at the Edge API until the test answers it; while it runs, a minute passes.
    let answer = () => {};
    h.sim.addFault({ ...RESTART, holdUntil: new Promise<void>((r) => (answer = r)), times: 1 });
    await h.click(approve, { userId: CAROL });
    await h.sim.waitForRequest((r) => r.method === RESTART.method && RESTART.path.test(r.path));
    expect(restartPosts(h)).toBe(1);
    h.advanceClock(61_000);
    expect(await reconcileStale(h.deps)).toEqual([]);
    expect((await h.store.changeRequests.get(requestId))?.state).toBe("approved");

    answer();
    await cardUpdate(h, (t) => t.includes("is in effect"));
    await h.settled();
    expect((await h.store.changeRequests.get(requestId))?.state).toBe("applied");
    expect((await h.store.changeRequests.get(requestId))?.lastError).toBeNull();
    // Retry on the (old) card can't restart it a second time.
    const retry = await h.click({ action_id: ACTIONS.retry, value: requestId }, { userId: CAROL });
    expect(blocksText((await h.slack.waitForResponse(retry.responseId)).body.blocks)).not.toContain("Retry");
    await h.settled();
    expect(restartPosts(h)).toBe(1);
    expect(restarts(h)).toBe(1);

    // A replica that died mid-apply: its lease is left as it was; the reconciler waits for it to end.
    const orphan = await h.store.changeRequests.create({
      kind: "restart_app",
      teamId: "T0001",
      channelId: "C0001",
      requesterId: BOB,
      params: { appId: APP, appName: "shop" },
      expiresAt: h.deps.clock.now() + 30 * 60_000,
    });
    await h.store.changeRequests.transition(orphan.id, "pending", "approved", { decidedBy: CAROL });
    expect(
      await h.store.changeRequests.takeLease(orphan.id, "approved", h.deps.clock.now() + IN_FLIGHT_LEASE_MS),
    ).toBe(true);
    h.advanceClock(61_000);
    expect(await reconcileStale(h.deps)).toEqual([]);
    h.advanceClock(IN_FLIGHT_LEASE_MS - 60_000);
    expect((await reconcileStale(h.deps)).map((r) => r.id)).toEqual([orphan.id]);
  } finally {
    await h.close();
  }
}

describe("an apply in flight holds a lease the reconciler waits for", () => {
  it("a slow restart is not marked 'can't tell' while its POST runs, and Retry can't restart it twice (SQLite)", async () => {
    await slowRestart();
  }, 30_000);

  it.runIf(postgresTests)(
    "the same on PostgreSQL",
    async () => {
      await onPostgres(slowRestart);
    },
    30_000,
  );
});
