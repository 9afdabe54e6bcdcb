import { describe, expect } from "vitest";
import { type ChangeSweeper, createChangeSweeper } from "../../src/jobs/change-sweeps.js";
import { UNINSTALL_GRACE_MS } from "../../src/services/uninstall.js";
import { ACTIONS } from "../../src/slack/ids.js";
import { SIM_IDS } from "../../tools/simulator/index.js";
import { onBothStores } from "../support/both-stores.js";
import { eventsHandled } from "../support/events-handled.js";
import {
  answerTo,
  blocksText,
  cardUpdate,
  eventCallback,
  findButtons,
  type HarnessOptions,
  SIGNING_SECRET,
  TEST_EDGE_KEY,
} from "../support/harness.js";
import { postSigned } from "../support/slack-signer.js";
import { BOB, CAROL } from "../support/users.js";
import { startWorld, type World } from "../support/world.js";

/**
 * A workspace that removes edgeops while a temporary block is in force: the block is undone with the
 * workspace's Edge API key before the key is deleted, whichever of Slack's two events comes first and
 * however many replicas handle them; an undo that fails is retried with the key; one that never works is
 * left in force and the audit log says so, with the command that undoes it by hand.
 */

const ZONE = SIM_IDS.firstShieldZone;
const IP = "203.0.113.7";
const ACCESS_LIST_WRITE = /\/access-lists\/\d+$/;

const blocked = (w: World) =>
  (w.sim.state.accessLists.get(ZONE) ?? []).some(
    (l) => l.name === "edgeops: blocked IPs" && l.content.split("\n").includes(IP),
  );

/** The removal's audit row, written once the key is deleted: the removal is over. */
const removalRow = async (w: World) =>
  (await w.store.audit.list("T0001", 200)).find((e) => e.action === "app.uninstalled");

/** The removal is over (its audit row is written), and the key is gone. */
const removed = async (w: World) =>
  (await removalRow(w)) !== undefined && (await w.store.keys.get("T0001")) === undefined;

/** Calls to the Edge API made with the workspace's own key. */
const withKey = (w: World) => w.sim.requests.filter((r) => r.headers.accesskey === TEST_EDGE_KEY);

async function installedWorld(options: HarnessOptions) {
  const events = eventsHandled();
  const w = await startWorld({
    ...options,
    oauth: true,
    installs: ["T0001"],
    middleware: [events.middleware],
  });
  return { events, w };
}

/** Bob blocks the IP for 30 minutes, Carol approves: the block is in force. */
async function blockFor30m(w: World): Promise<string> {
  const typed = await answerTo(w, `block ${ZONE} ${IP} for 30m`, BOB);
  await w.click(typed.buttons.find((b) => b.action_id === ACTIONS.changeConfirm)!, { userId: BOB });
  const card = await w.slack.waitForCall("chat.postMessage", (c) =>
    blocksText(c.args.blocks).includes(`Block IP ${IP}`),
  );
  await w.click(findButtons(card.args.blocks).find((b) => b.action_id === ACTIONS.approve)!, {
    userId: CAROL,
  });
  await cardUpdate(w, (t) => t.includes(`Block IP ${IP}`) && t.includes("is in effect"));
  expect(blocked(w)).toBe(true);
  const [request] = await w.store.changeRequests.listDueUndo(Number.MAX_SAFE_INTEGER, 10, {
    teamIds: ["T0001"],
  });
  expect(request?.state).toBe("applied");
  return request!.id;
}

/** An Events API event, signed as Slack signs it (Bolt skips authorize for the uninstall events). */
async function sendEvent(w: World, event: Record<string, unknown>) {
  const body = eventCallback("T0001", { ...event, event_ts: String(w.clock.now() / 1000) });
  const res = await postSigned(w.eventsUrl, JSON.stringify(body), SIGNING_SECRET, {
    contentType: "application/json",
  });
  expect(res.status).toBe(200);
}

const APP_UNINSTALLED = { type: "app_uninstalled" };
const TOKENS_REVOKED = { type: "tokens_revoked", tokens: { oauth: [], bot: ["UBOT"] } };

/**
 * Move the world's clock a sweeper's interval (15 s) at a time, the change sweeper ticking after each
 * step, until `done` holds, at most `maxMs`; the time it took. The sweeper ticks here rather than on its
 * own timer, so no Edge call is in flight while the clock moves (which would time it out).
 */
async function advanceUntil(
  w: World,
  sweeper: ChangeSweeper,
  done: () => Promise<boolean>,
  maxMs: number,
): Promise<number> {
  const step = 15_000;
  let waited = 0;
  while (!(await done())) {
    if (waited >= maxMs) return Number.POSITIVE_INFINITY;
    await w.clock.advance(step);
    await sweeper.sweep();
    await w.settled();
    waited += step;
  }
  return waited;
}

describe("a workspace that removes edgeops with a temporary block in force", () => {
  onBothStores(
    "app_uninstalled and tokens_revoked at once: the block is undone with the key, then the key goes and is never used again",
    async (options) => {
      const { events, w } = await installedWorld(options);
      const sweeper = createChangeSweeper(w.app.env);
      try {
        const id = await blockFor30m(w);
        // The undo's first read of the access lists is held, so both events run while an undo is in flight.
        let release!: () => void;
        w.sim.addFault({
          method: "GET",
          path: /\/access-lists\/?$/,
          holdUntil: new Promise<void>((r) => {
            release = r;
          }),
          times: 1,
        });
        const listsRead = w.sim.requests.length;
        await Promise.all([sendEvent(w, APP_UNINSTALLED), sendEvent(w, TOKENS_REVOKED)]);
        await w.sim.waitForRequest(
          (r) =>
            r.method === "GET" && /\/access-lists\/?$/.test(r.path) && w.sim.requests.indexOf(r) >= listsRead,
        );
        // One of the two events has handled the uninstall as far as it may while the other's undo is held.
        await Promise.race([events.handled("app_uninstalled"), events.handled("tokens_revoked")]);
        release();
        await events.handled("app_uninstalled");
        await events.handled("tokens_revoked");
        await w.settled();
        // The second event found the removal under way and did nothing.
        expect(w.logs.text).toContain("this workspace's removal was started by another event");

        const took = await advanceUntil(
          w,
          sweeper,
          async () => !blocked(w) && (await w.store.changeRequests.get(id))?.state === "undone",
          15_000,
        );
        expect(took, "the block is undone within 15 s").toBeLessThanOrEqual(15_000);
        expect(await w.store.changeRequests.get(id)).toMatchObject({ state: "undone" });
        expect(await advanceUntil(w, sweeper, () => removed(w), 60_000)).toBeLessThan(
          Number.POSITIVE_INFINITY,
        );
        // Once the key is gone, nothing calls the Edge API with it, however long the sweeper runs.
        const calls = withKey(w).length;
        await advanceUntil(w, sweeper, async () => false, 20 * 60_000);
        expect(withKey(w).length).toBe(calls);
        // One audit row, written when the key went, says what was undone.
        const rows = (await w.store.audit.list("T0001", 200)).filter((e) => e.action === "app.uninstalled");
        expect(rows).toHaveLength(1);
        expect(rows[0]).toMatchObject({
          details: { keyRemoved: true, undone: 1, leftInForce: [] },
        });
        expect(JSON.stringify(rows[0]!.details)).toContain(id);
      } finally {
        await sweeper.stop();
        await w.close();
      }
    },
    60_000,
  );

  onBothStores(
    "an undo that fails once at uninstall time is tried again with the key and succeeds; the key goes afterwards",
    async (options) => {
      const { events, w } = await installedWorld(options);
      const sweeper = createChangeSweeper(w.app.env);
      try {
        const id = await blockFor30m(w);
        // Every attempt of the first undo's write answers 503 (the client's own retries included).
        w.sim.addFault({ method: "PATCH", path: ACCESS_LIST_WRITE, status: 503, times: 3 });
        await sendEvent(w, APP_UNINSTALLED);
        await events.handled("app_uninstalled");
        await w.settled();
        expect(await w.store.changeRequests.get(id)).toMatchObject({ state: "applied" });
        expect(blocked(w)).toBe(true);
        // The key stays while the undo is due again.
        expect(await w.store.keys.get("T0001")).toBeDefined();

        const took = await advanceUntil(
          w,
          sweeper,
          async () => !blocked(w) && (await w.store.changeRequests.get(id))?.state === "undone",
          5 * 60_000,
        );
        expect(took).toBeLessThan(Number.POSITIVE_INFINITY);
        expect(await w.store.changeRequests.get(id)).toMatchObject({ state: "undone" });
        expect(await advanceUntil(w, sweeper, () => removed(w), 60_000)).toBeLessThan(
          Number.POSITIVE_INFINITY,
        );
        const row = (await w.store.audit.list("T0001", 200)).find((e) => e.action === "app.uninstalled");
        expect(row).toMatchObject({ details: { keyRemoved: true, undone: 1, leftInForce: [] } });
      } finally {
        await sweeper.stop();
        await w.close();
      }
    },
    60_000,
  );

  onBothStores(
    "an undo that keeps failing past the grace period: the key goes, and the audit row and the request name what was left in force, why, and the command that undoes it",
    async (options) => {
      const { events, w } = await installedWorld(options);
      const sweeper = createChangeSweeper(w.app.env);
      try {
        const id = await blockFor30m(w);
        w.sim.addFault({ method: "PATCH", path: ACCESS_LIST_WRITE, status: 503 });
        await sendEvent(w, TOKENS_REVOKED);
        await events.handled("tokens_revoked");
        await w.settled();
        const took = await advanceUntil(w, sweeper, () => removed(w), 30 * 60_000);
        expect(took).toBeLessThan(Number.POSITIVE_INFINITY);
        expect(blocked(w)).toBe(true);

        const request = await w.store.changeRequests.get(id);
        expect(request?.state).toBe("applied");
        const sentence = request?.lastError?.message ?? "";
        expect(sentence).toContain(`/edge unblock ${ZONE} ${IP}`);
        expect(sentence).not.toContain(`/edge block ${ZONE} ${IP}`);

        const row = (await w.store.audit.list("T0001", 200)).find((e) => e.action === "app.uninstalled");
        expect(row).toMatchObject({ details: { keyRemoved: true, undone: 0 } });
        const left =
          (row?.details as { leftInForce?: Record<string, unknown>[] } | undefined)?.leftInForce ?? [];
        expect(left).toHaveLength(1);
        expect(left[0]).toMatchObject({ requestId: id, change: `Block IP ${IP} on shield zone ${ZONE}` });
        expect(String(left[0]?.why)).toContain("503");
        expect(String(left[0]?.undoBy)).toBe(`/edge unblock ${ZONE} ${IP}`);
        // Nothing calls the Edge API with the key after it went.
        const calls = withKey(w).length;
        await advanceUntil(w, sweeper, async () => false, 5 * 60_000);
        expect(withKey(w).length).toBe(calls);
      } finally {
        await sweeper.stop();
        await w.close();
      }
    },
    60_000,
  );

  onBothStores(
    "an undo whose outcome stays unknown past the grace period: left in force with the undoing command, then the key goes",
    async (options) => {
      const { events, w } = await installedWorld(options);
      const sweeper = createChangeSweeper(w.app.env);
      try {
        const id = await blockFor30m(w);
        // What the audit held for the request when its card was told it is left in force.
        const auditedWhenLeft: string[][] = [];
        w.deps.changeObservers.addNoted(async (r) => {
          if (r.lastError?.kind !== "left_in_force") return;
          const rows = await w.store.audit.list("T0001", 200);
          auditedWhenLeft.push(
            rows.filter((e) => e.details?.requestId === r.id).map((e) => `${e.action}:${e.outcome}`),
          );
        });
        // Every undo's write loses its connection: the undo's outcome is unknown, the reconciler finds the
        // block still there and the undo is due again, over and over (no attempt count ends it).
        w.sim.addFault({ method: "PATCH", path: ACCESS_LIST_WRITE, reset: true });
        const since = w.clock.now();
        await sendEvent(w, APP_UNINSTALLED);
        await events.handled("app_uninstalled");
        expect(await w.store.keys.get("T0001"), "kept while the undo is in doubt").toBeDefined();
        expect(await advanceUntil(w, sweeper, () => removed(w), 30 * 60_000)).toBeLessThan(
          Number.POSITIVE_INFINITY,
        );
        expect(w.clock.now() - since).toBeGreaterThanOrEqual(UNINSTALL_GRACE_MS);
        expect(blocked(w)).toBe(true);

        const request = await w.store.changeRequests.get(id);
        expect(request).toMatchObject({ state: "applied", undoAt: null });
        expect(request?.lastError?.message).toContain("edgeops was removed from this workspace");
        expect(request?.lastError?.message).toContain(`/edge unblock ${ZONE} ${IP}`);
        expect(request?.lastError?.message).not.toContain(`/edge block ${ZONE} ${IP}`);
        expect(auditedWhenLeft).toHaveLength(1);
        expect(auditedWhenLeft[0]).toContain("access_block.undo:left_in_force");
        const row = await removalRow(w);
        expect(row?.outcome).toBe("left_in_force");
        expect(row?.details).toMatchObject({
          keyRemoved: true,
          undone: 0,
          leftInForce: [{ requestId: id, undoBy: `/edge unblock ${ZONE} ${IP}` }],
        });
        const calls = withKey(w).length;
        await advanceUntil(w, sweeper, async () => false, 5 * 60_000);
        expect(withKey(w).length).toBe(calls);
      } finally {
        await sweeper.stop();
        await w.close();
      }
    },
    60_000,
  );
});
