import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { TARGET_LOCK_LEASE_MS } from "../../src/changes/target-lock.js";
import { MAX_CLOCK_SKEW_MS } from "../../src/clock.js";
import { createChangeSweeper } from "../../src/jobs/change-sweeps.js";
import { edgeopsListName } from "../../src/services/access-lists.js";
import { ACTIONS } from "../../src/slack/ids.js";
import { type Store, storeInternals } from "../../src/store/index.js";
import { SIM_IDS, type Simulator, startSimulator } from "../../tools/simulator/index.js";
import { onPostgres, postgresTests } from "../support/both-stores.js";
import { createManualClock } from "../support/clock.js";
import {
  answerTo,
  blocksText,
  findButtons,
  type Harness,
  type HarnessOptions,
  startHarness,
  TEST_EDGE_KEY,
} from "../support/harness.js";
import { BOB, CAROL } from "../support/users.js";
import { WORLD_START } from "../support/world.js";

/**
 * Writes to one access list are serialised, within a replica and across replicas, so two
 * blocks made at the same moment both end up in the list (each is a read-modify-PUT of the whole list).
 */

const ZONE = SIM_IDS.customerAccessList.zoneId;
const BLOCKED = edgeopsListName("ip", "block");

const blockedIps = (h: Harness) =>
  (h.sim.state.accessLists.get(ZONE) ?? [])
    .filter((l) => l.name === BLOCKED)
    .flatMap((l) => l.content.split("\n").filter((x) => x !== ""));

/** Bob types the block and confirms it; the answer's text. */
async function confirmBlock(h: Harness, ip: string, channelId: string) {
  const typed = await answerTo(h, `block ${ZONE} ${ip}`, BOB, channelId);
  const confirm = typed.buttons.find((b) => b.action_id === ACTIONS.changeConfirm);
  if (!confirm) throw new Error(`no Confirm on: ${typed.text}`);
  const click = await h.click(confirm, { userId: BOB, channelId });
  expect(click.status).toBe(200);
  return blocksText((await h.slack.waitForResponse(click.responseId, undefined, 30_000)).body.blocks);
}

/** 20 blocks, confirmed 4 at a time, where approvals are off: all 20 in the list, all 20 audited applied. */
async function twentyFourAtATime(options: HarnessOptions = {}) {
  const h = await startHarness(options);
  try {
    await h.store.policies.setChannel("T0001", "C0OPEN", { approvals: "off", updatedBy: "U0001" });
    const ips = Array.from({ length: 20 }, (_, i) => `198.51.100.${i + 20}`);
    for (let i = 0; i < ips.length; i += 4) {
      const answers = await Promise.all(ips.slice(i, i + 4).map((ip) => confirmBlock(h, ip, "C0OPEN")));
      for (const a of answers) expect(a).toContain("Done: *Block IP");
    }
    expect(blockedIps(h).sort()).toEqual([...ips].sort());
    const audit = await h.store.audit.list("T0001", 100);
    expect(audit.filter((e) => e.action === "access_block.apply" && e.outcome === "applied")).toHaveLength(
      20,
    );
  } finally {
    await h.close();
  }
}

/** Resolves `met` when a replica finds an Edge target's lock row held by another (its take() says no). */
function lockRefused(stores: Store[]) {
  let found = () => {};
  const met = new Promise<void>((resolve) => (found = resolve));
  const restores = stores.map((store) => {
    const take = store.targetLocks.take;
    store.targetLocks.take = async (...args) => {
      const taken = await take.apply(store.targetLocks, args);
      if (!taken) found();
      return taken;
    };
    return () => {
      store.targetLocks.take = take;
    };
  });
  return {
    met,
    restore: () => {
      for (const restore of restores) restore();
    },
  };
}

const ACCESS_LISTS = /\/access-lists/;

/**
 * Holds the next access-list call at the Edge API, keeping its writer's read-modify-write open, until the
 * other replica has found the target locked, or (were the lock broken) another access-list call arrives:
 * a window between read and PUT that closes on an event, not after some milliseconds.
 */
function holdFirstWriter(sim: Simulator, stores: Store[]): Promise<void> {
  let release = () => {};
  sim.addFault({ path: ACCESS_LISTS, holdUntil: new Promise<void>((r) => (release = r)), times: 1 });
  const seen = sim.requests.length;
  const refused = lockRefused(stores);
  const accessListCalls = () => sim.requests.slice(seen).filter((r) => ACCESS_LISTS.test(r.path)).length;
  const secondCall = sim.waitForRequest(() => accessListCalls() >= 2, 30_000).catch(() => undefined);
  return Promise.race([refused.met, secondCall]).then(() => {
    release();
    refused.restore();
  });
}

/**
 * Two replicas (one database, one Edge API): Bob asks for two blocks, Carol approves one card on each
 * replica at the same moment, five times over. Both IPs are in the list every time.
 */
async function twoReplicas(options: Omit<HarnessOptions, "sim" | "dataDir">) {
  const sim = await startSimulator({ scanDurationMs: 50, apiKeys: [TEST_EDGE_KEY] });
  const dataDir = mkdtempSync(join(tmpdir(), "edgeops-replicas-"));
  const a = await startHarness({ ...options, sim, dataDir });
  const b = await startHarness({ ...options, sim, dataDir, seedKey: false });
  try {
    for (let round = 0; round < 5; round++) {
      const ips = [`203.0.113.${round * 2 + 10}`, `203.0.113.${round * 2 + 11}`];
      const cards = [];
      for (const ip of ips) {
        expect(await confirmBlock(a, ip, "C0001")).toContain("needs a second person's approval");
        const card = await a.slack.waitForCall("chat.postMessage", (c) =>
          blocksText(c.args.blocks).includes(`Block IP ${ip} on`),
        );
        cards.push(findButtons(card.args.blocks).find((x) => x.action_id === ACTIONS.approve)!);
      }
      // The first writer's first access-list call waits at the Edge API until the other replica finds the
      // target locked: the window between read and PUT is open while both try.
      const released = holdFirstWriter(sim, [a.store, b.store]);
      await Promise.all([a.click(cards[0]!, { userId: CAROL }), b.click(cards[1]!, { userId: CAROL })]);
      await Promise.all(
        [a, b].map((h, i) =>
          h.slack.waitForCall(
            "chat.update",
            (c) => {
              const t = blocksText(c.args.blocks);
              return t.includes(`Block IP ${ips[i]} on`) && t.includes("is in effect");
            },
            30_000,
          ),
        ),
      );
      await released;
      expect(blockedIps(a)).toEqual(expect.arrayContaining(ips));
    }
    expect(blockedIps(a)).toHaveLength(10);
  } finally {
    await a.close();
    await b.close();
    await sim.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/**
 * Replica A holds the access lists' lock, stalled on a read the Edge API holds; replica B's clock runs so far
 * ahead that A's lease looks lapsed to it, so B takes the lock and blocks its IP. When A's read is answered,
 * A must not write beside B: it stops before its write, says "not known yet", and the reconciler settles its
 * request from what the Edge API holds.
 */
async function overtakenWriterSendsNoWrite(options: Omit<HarnessOptions, "sim" | "dataDir" | "clock">) {
  const clock = createManualClock(WORLD_START);
  const sim = await startSimulator({ scanDurationMs: 50, apiKeys: [TEST_EDGE_KEY], clock });
  const dataDir = mkdtempSync(join(tmpdir(), "edgeops-replicas-"));
  const a = await startHarness({ ...options, sim, dataDir, clock });
  const b = await startHarness({ ...options, sim, dataDir, clock, seedKey: false });
  try {
    await a.store.policies.setChannel("T0001", "C0OPEN", { approvals: "off", updatedBy: "U0001" });
    const start = sim.requests.length;
    const accessCalls = () => sim.requests.slice(start).filter((r) => ACCESS_LISTS.test(r.path));
    const locks = () => storeInternals(a.store).rawDb.selectFrom("target_locks").select("holder").execute();
    const aAnswer = confirmBlock(a, "203.0.113.50", "C0OPEN");
    // Each access-list call waits at the Edge API; those before A holds the lock go on, A's first under it waits.
    let releaseA = () => {};
    let holders: { holder: string }[] = [];
    for (let seen = 1; holders.length === 0; seen++) {
      sim.addFault({ path: ACCESS_LISTS, holdUntil: new Promise<void>((r) => (releaseA = r)), times: 1 });
      await sim.waitForRequest(() => accessCalls().length >= seen);
      holders = await locks();
      if (holders.length === 0) releaseA();
    }
    b.advanceClock(TARGET_LOCK_LEASE_MS + MAX_CLOCK_SKEW_MS + 1_000);
    expect(await confirmBlock(b, "203.0.113.51", "C0OPEN")).toContain("Done: *Block IP 203.0.113.51");
    const writesBeforeA = accessCalls().filter((r) => r.method !== "GET").length;
    releaseA();
    const answered = await aAnswer;
    expect(answered).toContain("Not known yet");
    expect(answered).toContain("another change to the same target took over");
    expect(accessCalls().filter((r) => r.method !== "GET")).toHaveLength(writesBeforeA);
    expect(blockedIps(a)).toEqual(["203.0.113.51"]);
    await clock.advance(61_000);
    await createChangeSweeper(a.app.env).sweep();
    const settled = await a.slack.waitForCall("chat.update", (c) =>
      blocksText(c.args.blocks).includes("may never have reached the Edge API"),
    );
    expect(blocksText(settled.args.blocks)).toContain("203.0.113.50");
  } finally {
    await a.close();
    await b.close();
    await sim.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

describe("one writer per target", () => {
  it("a stalled writer overtaken by a replica whose clock runs ahead sends no write (SQLite)", async () => {
    await overtakenWriterSendsNoWrite({});
  });

  it.runIf(postgresTests)(
    "a stalled writer overtaken by a replica whose clock runs ahead sends no write (PostgreSQL)",
    () => onPostgres(overtakenWriterSendsNoWrite),
  );

  it("20 blocks confirmed 4 at a time with approvals off: 20 in the list (SQLite)", async () => {
    await twentyFourAtATime();
  }, 60_000);

  it.runIf(postgresTests)(
    "20 blocks confirmed 4 at a time with approvals off: 20 in the list (PostgreSQL)",
    () => onPostgres(twentyFourAtATime),
    60_000,
  );

  it("two cards approved at the same moment on two replicas: both IPs blocked (SQLite)", async () => {
    await twoReplicas({});
  }, 90_000);

  it.runIf(postgresTests)(
    "two cards approved at the same moment on two replicas: both IPs blocked (PostgreSQL)",
    () => onPostgres(twoReplicas),
    90_000,
  );
});
