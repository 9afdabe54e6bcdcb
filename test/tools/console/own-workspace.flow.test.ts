import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { systemClock } from "../../../src/clock.js";
import { ConfigError } from "../../../src/config.js";
import { silentLogger } from "../../../src/log.js";
import { type ChangeRequest, openStore, type Schedule, type Store } from "../../../src/store/index.js";
import { CONSOLE_TEAM } from "../../../tools/console/index.js";
import { SIM_IDS } from "../../../tools/simulator/index.js";
import { eventWaiter } from "../../support/event-waiter.js";
import {
  configFor,
  dropSchema,
  pgReachable,
  randomSchema,
  TEST_DATABASE_URL,
} from "../../support/helpers.js";
import { type ConsoleDriver, startConsole, TEST_ENCRYPTION_KEY } from "./support.js";

/**
 * The local console runs background work (scheduled summaries, approval expiry, the reconciler) for its
 * own simulated workspace only, and uses a DATABASE_URL only when told it is the console's alone.
 */

const REAL_TEAM = "T0REALTEAM";
const postgres = await pgReachable();
const MINUTE = 60_000;

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
});

function tempDataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "edgeops-console-scope-"));
  cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

interface Seeded {
  real: { schedule: Schedule; expired: ChangeRequest; stale: ChangeRequest };
  own: { schedule: Schedule; expired: ChangeRequest; stale: ChangeRequest };
}

/** Due schedules, expired pending and long-approved requests for a real workspace and for the console's. */
async function seed(env: Record<string, string>, pgSchema?: string): Promise<Seeded> {
  // Written ten minutes ago, so approved requests are stale enough for the reconciler.
  const store: Store = await openStore({
    config: configFor(env),
    logger: silentLogger,
    clock: { ...systemClock, now: () => Date.now() - 10 * MINUTE },
    ...(pgSchema ? { pgSchema } : {}),
  });
  try {
    const work = async (teamId: string, channelId: string) => {
      const schedule = await store.schedules.create({
        teamId,
        channelId,
        createdBy: "U0ALICE",
        kind: "dns",
        target: String(SIM_IDS.dnsZoneCompleted),
        spec: "daily 09:00",
        timezone: "UTC",
        nextRunAt: Date.now() - MINUTE,
      });
      const request = {
        teamId,
        channelId,
        requesterId: "U0BOB",
        kind: "bot_category",
        params: { shieldZoneId: SIM_IDS.firstShieldZone, category: 3, action: 1 },
        observed: 0,
      };
      const expired = await store.changeRequests.create({ ...request, expiresAt: Date.now() - MINUTE });
      const approved = await store.changeRequests.create({ ...request, expiresAt: Date.now() + 30 * MINUTE });
      const stale = await store.changeRequests.transition(approved.id, "pending", "approved", {
        decidedBy: "U0ALICE",
      });
      if (!stale) throw new Error("could not seed an approved request");
      return { schedule, expired, stale };
    };
    return { real: await work(REAL_TEAM, "C0REAL"), own: await work(CONSOLE_TEAM.id, "C0GENERAL") };
  } finally {
    await store.close();
  }
}

const storeWrites = new WeakMap<Store, Set<() => void>>();

/** Wake the listeners of `store` each time one of its schedules' or approvals' writes (not reads) ends. */
function watchWrites(store: Store): Set<() => void> {
  let listeners = storeWrites.get(store);
  if (listeners) return listeners;
  const wake = new Set<() => void>();
  listeners = wake;
  storeWrites.set(store, wake);
  for (const repo of [store.schedules, store.changeRequests] as unknown as Record<string, unknown>[]) {
    for (const [name, fn] of Object.entries(repo)) {
      if (typeof fn !== "function" || /^(get|list|count|find)/.test(name)) continue;
      repo[name] = (...args: unknown[]) => {
        const result = (fn as (...a: unknown[]) => unknown).apply(repo, args);
        const done = () => {
          for (const w of [...wake]) w();
        };
        if (result instanceof Promise) result.then(done, done);
        else done();
        return result;
      };
    }
  }
  return wake;
}

/**
 * Resolves once `check` holds: checked now, and again each time the console's store finishes a write to
 * its schedules or approvals (the background jobs' claims and moves): events, not a clock.
 */
function waitFor(store: Store, what: string, check: () => Promise<boolean>, guardMs = 15_000): Promise<void> {
  const wake = watchWrites(store);
  const checked = eventWaiter();
  let holds = false;
  let running = false;
  let again = false;
  let failed: (err: unknown) => void = () => {};
  const failure = new Promise<never>((_, reject) => (failed = reject));
  const test = () => {
    if (running) {
      again = true;
      return;
    }
    running = true;
    again = false;
    check().then((ok) => {
      running = false;
      holds = ok;
      checked.notify();
      if (!ok && again) test();
    }, failed);
  };
  wake.add(test);
  test();
  return Promise.race([
    checked.until(
      () => holds || undefined,
      () => what,
      guardMs,
    ),
    failure,
  ])
    .then(() => undefined)
    .finally(() => wake.delete(test));
}

/** Start the console over the seeded data; once its own work has moved, the real workspace's must not have. */
async function expectOnlyOwnWorkClaimed(c: ConsoleDriver, seeded: Seeded): Promise<void> {
  const store = c.handle.deps.store;
  const { own, real } = seeded;
  // Its own work proves the scheduler, the expiry sweep and the reconciler have all run.
  await waitFor(store, "the console's own schedule to be claimed", async () => {
    return (await store.schedules.get(own.schedule.id))?.nextRunAt !== own.schedule.nextRunAt;
  });
  await waitFor(store, "the console's own expired request to expire", async () => {
    return (await store.changeRequests.get(own.expired.id))?.state === "expired";
  });
  await waitFor(store, "the console's own stale approved request to be reconciled", async () => {
    return (await store.changeRequests.get(own.stale.id))?.state !== "approved";
  });

  expect((await store.schedules.get(real.schedule.id))?.nextRunAt).toBe(real.schedule.nextRunAt);
  expect((await store.schedules.get(real.schedule.id))?.lastRunAt).toBeNull();
  expect((await store.changeRequests.get(real.expired.id))?.state).toBe("pending");
  expect((await store.changeRequests.get(real.stale.id))?.state).toBe("approved");
  expect(await store.audit.list(REAL_TEAM, 10)).toEqual([]);
}

describe("the local console claims only its own workspace's background work", () => {
  it("on SQLite shared with a real workspace's rows", async () => {
    const dataDir = tempDataDir();
    const seeded = await seed({ DATA_DIR: dataDir, ENCRYPTION_KEY: TEST_ENCRYPTION_KEY });
    const c = await startConsole({ dataDir, keepDataDir: true });
    cleanups.push(() => c.close());
    await expectOnlyOwnWorkClaimed(c, seeded);
  });

  it.runIf(postgres)(
    "on PostgreSQL, with CONSOLE_ALLOW_DATABASE_URL=1, shared with a real workspace's rows",
    async () => {
      const schema = randomSchema();
      cleanups.push(() => dropSchema(schema));
      const dataDir = tempDataDir();
      const env = { DATA_DIR: dataDir, ENCRYPTION_KEY: TEST_ENCRYPTION_KEY, DATABASE_URL: TEST_DATABASE_URL };
      const seeded = await seed(env, schema);
      const c = await startConsole({
        dataDir,
        keepDataDir: true,
        pgSchema: schema,
        env: { DATABASE_URL: TEST_DATABASE_URL, CONSOLE_ALLOW_DATABASE_URL: "1" },
      });
      cleanups.push(() => c.close());
      expect(c.output).toContain("Storage: PostgreSQL");
      await expectOnlyOwnWorkClaimed(c, seeded);
    },
  );
});

describe("the local console and DATABASE_URL", () => {
  it("refuses DATABASE_URL without CONSOLE_ALLOW_DATABASE_URL=1, with a sentence, before touching the database", async () => {
    const dataDir = tempDataDir();
    const err = await startConsole({
      dataDir,
      keepDataDir: true,
      // Nothing listens here: the refusal must come before any connection attempt.
      env: { DATABASE_URL: "postgres://postgres@127.0.0.1:9/none" },
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    const message = (err as ConfigError).message;
    expect(message).toContain("DATABASE_URL is set");
    expect(message).toContain("CONSOLE_ALLOW_DATABASE_URL=1");
    expect(message).toContain("unset DATABASE_URL");
  });
});
