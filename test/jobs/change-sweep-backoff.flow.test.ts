import { describe, expect, it } from "vitest";
import { SWEEP_READ_ATTEMPTS, SWEEP_READ_DEADLINE_MS } from "../../src/changes/moves.js";
import { systemClock } from "../../src/clock.js";
import type { Deps } from "../../src/deps.js";
import { createChangeSweeper, expireDue, reconcileStale, undoDue } from "../../src/jobs/change-sweeps.js";
import { SIM_IDS } from "../../tools/simulator/index.js";
import { onBothStores } from "../support/both-stores.js";
import { nextTimer } from "../support/clock.js";
import { type Harness, type HarnessOptions, startHarness, TEST_EDGE_KEY } from "../support/harness.js";
import { startWorld } from "../support/world.js";

/**
 * Requests whose current value can't be read (a workspace without a key) back off and end
 * with a sentence; they no longer fill every sweep and keep another workspace's request from settling.
 */

const ZONE = SIM_IDS.customerAccessList.zoneId;

/**
 * A bot-category request left `approved` (its replica died before the apply finished); with
 * `undoAfterMs`, a temporary one.
 */
async function leftApproved(
  h: Harness,
  teamId: string,
  shieldZoneId = ZONE,
  category = 1,
  undoAfterMs?: number,
) {
  const r = await h.store.changeRequests.create({
    kind: "bot_category",
    teamId,
    channelId: "C0001",
    requesterId: "U0002",
    params: { shieldZoneId, category, action: 1 },
    observed: 0,
    expiresAt: h.deps.clock.now() + 30 * 60_000,
    ...(undoAfterMs === undefined ? {} : { undoAfterMs }),
  });
  await h.store.changeRequests.transition(r.id, "pending", "approved", { decidedBy: "U0003" });
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
    const sweeper = createChangeSweeper(h.app.env);

    h.advanceClock(61_000);
    await sweeper.sweep();
    await sweeper.sweep();
    // The change took effect (the category is Block): the reconciler found it and says so.
    expect((await h.store.changeRequests.get(ours))?.state).toBe("applied");

    for (let i = 1; i < SWEEP_READ_ATTEMPTS; i++) {
      h.advanceClock(61_000);
      await sweeper.sweep();
    }
    const ended = await Promise.all(keyless.map((id) => h.store.changeRequests.get(id)));
    expect(ended.map((r) => r?.state)).toEqual(keyless.map(() => "failed"));
    expect(ended[0]?.lastError?.message).toContain(
      `the current value could not be read ${SWEEP_READ_ATTEMPTS} times (No Edge API key for this workspace yet`,
    );
    expect(ended[0]?.lastError?.message).toContain(`/edge bots ${ZONE}`);
  } finally {
    await h.close();
  }
}

/** `work`, or a failure naming `what` if it has not settled within 5 s of real time (a guard, not a wait). */
function guarded<T>(work: Promise<T>, what: string): Promise<T> {
  let cancel = () => {};
  const guard = new Promise<never>((_, reject) => {
    cancel = systemClock.setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), 5_000);
  });
  return Promise.race([work, guard]).finally(cancel);
}

/** A temporary bot-category change (Block, was None) in force and due to be undone. */
async function dueUndo(h: Harness, teamId: string, shieldZoneId: number, category: number) {
  h.sim.state.botCategories.get(shieldZoneId)!.find((g) => g.category === category)!.categoryAction = 1;
  const id = await leftApproved(h, teamId, shieldZoneId, category, 60_000);
  await h.store.changeRequests.transition(id, "approved", "applied", { undoAt: h.deps.clock.now() });
  return id;
}

/**
 * One workspace's three requests on a zone whose reads are held until the end, made first; another
 * workspace's request on a zone that answers is settled by `sweep` while at most one of the slow ones is,
 * and all four are once the held reads are released.
 */
async function slowWorkspaceAmongOthers(
  options: HarnessOptions,
  requests: {
    /** The simulator's state before the requests are made. */
    prepare?: (h: Harness, zones: number[]) => void;
    make: (h: Harness, teamId: string, shieldZoneId: number, category: number) => Promise<string>;
    /** How long after the requests are made the sweep runs. */
    dueAfterMs: number;
    sweep: (deps: Deps) => Promise<{ state: string }[]>;
    settled: string;
  },
) {
  const h = await startHarness(options);
  try {
    await h.store.keys.set("T0002", TEST_EDGE_KEY, "U0001");
    const slowZone = SIM_IDS.firstShieldZone + 1;
    const fastZone = SIM_IDS.firstShieldZone + 2;
    requests.prepare?.(h, [slowZone, fastZone]);
    // The slow workspace's reads are held until the other workspace's request is settled.
    let release = () => {};
    const held = new Promise<void>((r) => (release = r));
    h.sim.addFault({ path: `/shield/shield-zone/${slowZone}/bot-categorization`, holdUntil: held });
    const slow: string[] = [];
    for (const category of [1, 2, 3]) slow.push(await requests.make(h, "T0002", slowZone, category));
    h.advanceClock(10);
    const fast = await requests.make(h, "T0001", fastZone, 1);
    h.advanceClock(requests.dueAfterMs);

    const settled = async (id: string) => (await h.store.changeRequests.get(id))?.state === requests.settled;
    const watched = watchTransitions(h);
    const sweep = requests.sweep(watched.deps);
    await watched.until(() => settled(fast));
    expect((await Promise.all(slow.map(settled))).filter(Boolean).length).toBeLessThanOrEqual(1);
    release();
    expect((await sweep).map((r) => r.state)).toEqual(Array.from({ length: 4 }, () => requests.settled));
  } finally {
    await h.close();
  }
}

/** One workspace's three slow undos, due first; another workspace's undo is not held behind them. */
function slowWorkspace(options: HarnessOptions = {}) {
  return slowWorkspaceAmongOthers(options, {
    make: dueUndo,
    dueAfterMs: 1_000,
    sweep: undoDue,
    settled: "undone",
  });
}

/** One workspace's three stale requests with slow reads, stale first; another's is not held behind them. */
function slowReconcile(options: HarnessOptions = {}) {
  return slowWorkspaceAmongOthers(options, {
    prepare: (h, zones) => {
      for (const zone of zones)
        for (const g of h.sim.state.botCategories.get(zone)!) if (g.category <= 3) g.categoryAction = 1;
    },
    make: leftApproved,
    dueAfterMs: 61_000,
    sweep: reconcileStale,
    settled: "applied",
  });
}

/**
 * The harness's deps with the change requests' transitions observed: `until(check)` resolves once `check`
 * holds, asked now and again after each transition the sweep makes (an event, not a polling loop).
 */
function watchTransitions(h: Harness) {
  const waiters = new Set<() => void>();
  const approvals = h.deps.store.changeRequests;
  const transition: typeof approvals.transition = async (...args) => {
    const result = await approvals.transition(...args);
    for (const w of [...waiters]) w();
    return result;
  };
  const deps: Deps = { ...h.deps, store: { ...h.deps.store, changeRequests: { ...approvals, transition } } };
  const until = (check: () => Promise<boolean>) =>
    new Promise<void>((resolve, reject) => {
      const ask = () =>
        check().then((ok) => {
          if (!ok || !waiters.delete(ask)) return;
          resolve();
        }, reject);
      waiters.add(ask);
      ask();
    });
  return { deps, until };
}

/** 30 expired requests of one workspace, older than another's: that one is not expired last. */
async function busyExpiry(options: HarnessOptions = {}) {
  const h = await startHarness(options);
  try {
    const pending = (teamId: string) =>
      h.store.changeRequests.create({
        kind: "bot_category",
        teamId,
        channelId: "C0001",
        requesterId: "U0002",
        params: { shieldZoneId: ZONE, category: 1, action: 1 },
        observed: 0,
        expiresAt: h.deps.clock.now() + 60_000,
      });
    for (let i = 0; i < 30; i++) await pending("T0002");
    h.advanceClock(10);
    const ours = await pending("T0001");
    h.advanceClock(61_000);
    // Open the store's connections first (PostgreSQL's pool opens one per concurrent query on first use):
    // a fresh connection costs more than a whole expiry, and would order the results by it, not by turns.
    await Promise.all(Array.from({ length: 4 }, () => h.store.changeRequests.get(ours.id)));

    const expired = await expireDue(h.deps);
    expect(expired.map((r) => r.state)).toEqual(expired.map(() => "expired"));
    expect(expired).toHaveLength(31);
    // Cards are updated in this order: ours among the first round, not after the other's 30.
    expect(expired.findIndex((r) => r.id === ours.id)).toBeLessThan(4);
  } finally {
    await h.close();
  }
}

describe("the sweeper backs off unreadable requests and ends them", () => {
  onBothStores(
    "50 requests of a keyless workspace don't keep another workspace's from settling",
    keylessRows,
    60_000,
  );
  onBothStores(
    "three slow undos of one workspace don't hold back another workspace's",
    slowWorkspace,
    60_000,
  );
  onBothStores(
    "three slow reconcile reads of one workspace don't hold back another workspace's",
    slowReconcile,
    60_000,
  );
  onBothStores("30 expired requests of one workspace don't put another workspace's last", busyExpiry, 60_000);

  it("an undo's own read of the current value ends at the sweep's deadline (retried in a minute)", async () => {
    // On a world: the client's waits for the 429s and the sweep's deadline pass as the test moves time.
    const h = await startWorld();
    try {
      const zone = SIM_IDS.firstShieldZone + 1;
      const id = await dueUndo(h, "T0001", zone, 1);
      // Three 429s asking for 6 s each: the client's own waits add up past the sweep's deadline.
      h.sim.addFault({
        method: "GET",
        path: `/shield/shield-zone/${zone}/bot-categorization`,
        retryAfter: "6",
        times: 3,
      });
      h.advanceClock(1_000);
      const started = h.clock.now();
      // Each 429 pauses the key's queue for 6 s: time moves only once the pause is set, so each retry goes
      // out and meets its 429 before the next 6 s pass, whatever the machine's load.
      let paused = nextTimer(h.deps.clock, 6_000);
      const sweep = undoDue(h.deps);
      for (let retry = 1; retry <= 2; retry++) {
        await paused;
        paused = nextTimer(h.deps.clock, 6_000);
        await h.clock.advance(6_000);
      }
      await paused;
      // Time passes until the sweep's deadline, not a moment longer: the read ends there, mid-pause.
      await h.clock.advance(SWEEP_READ_DEADLINE_MS - 12_000);
      const [r] = await guarded(sweep, "the sweep to end at its deadline");
      expect(h.clock.now() - started).toBe(SWEEP_READ_DEADLINE_MS);
      expect(r?.id).toBe(id);
      expect(r?.state).toBe("applied");
      expect(r?.lastError?.message).toContain(
        `did not answer within ${SWEEP_READ_DEADLINE_MS / 1000} seconds`,
      );
      expect(r?.lastError?.message).toContain("tries again in a minute");
    } finally {
      await h.close();
    }
  }, 60_000);
});
