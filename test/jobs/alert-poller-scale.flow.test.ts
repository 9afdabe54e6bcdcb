/**
 * Alerts at scale: three replicas (three pollers, each with its own store and pool) on one PostgreSQL
 * post every alert once; and a command typed while the watches poll during an attack is answered ahead
 * of the polling, whose intervals stretch to the key's WATCH_SHARE.
 */
import { afterEach, describe, expect, it } from "vitest";
import { stretchedInterval } from "../../src/alerts/interval.js";
import type { Clock } from "../../src/clock.js";
import type { Deps } from "../../src/deps.js";
import { createPoller, type Poller } from "../../src/jobs/alerts.js";
import { createWatch } from "../../src/services/watches.js";
import type { SlackClientFor } from "../../src/slack/transport/clients.js";
import { openStore } from "../../src/store/index.js";
import { SIM_IDS, type Simulator, startSimulator } from "../../tools/simulator/index.js";
import { createManualClock, steppedClock } from "../support/clock.js";
import { answerTo, blocksText, type Harness, startHarness, TEST_EDGE_KEY } from "../support/harness.js";
import { captureLogger, dropSchema, pgReachable, randomSchema } from "../support/helpers.js";

const MIN = 60_000;
const T0 = Date.UTC(2026, 7, 20, 10, 0, 30);
const reachable = await pgReachable();

let clock = T0;
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function simulator(on: Clock = steppedClock(() => clock)): Promise<Simulator> {
  const sim = await startSimulator({
    scanDurationMs: 50,
    apiKeys: [TEST_EDGE_KEY],
    clock: on,
  });
  cleanups.push(() => sim.close());
  return sim;
}

async function minutes(n: number, pollers: Poller[]): Promise<void> {
  for (let i = 0; i < n; i++) {
    clock += MIN;
    await Promise.all(pollers.map((p) => p.tick()));
  }
}

const posts = (h: Harness) => h.slack.callsTo("chat.postMessage");

/**
 * `clientFor` whose clients hold Slack's answer to the calls `matches` accepts until `until` settles: the
 * call reaches the fake Slack (and is recorded) at once, its answer reaches the bot when the test says.
 */
function heldAnswer(
  clientFor: SlackClientFor,
  matches: (method: string, args: Record<string, unknown>) => boolean,
  until: Promise<unknown>,
): SlackClientFor {
  return async (teamId) => {
    const client = await clientFor(teamId);
    const hold =
      (method: string, call: (args: never) => Promise<unknown>) => async (args: Record<string, unknown>) => {
        const answer = await call(args as never);
        if (matches(method, args)) await until;
        return answer;
      };
    const chat = {
      ...client.chat,
      postMessage: hold("chat.postMessage", client.chat.postMessage),
      update: hold("chat.update", client.chat.update),
    };
    return new Proxy(client, { get: (target, p) => (p === "chat" ? chat : Reflect.get(target, p)) });
  };
}

/** Another replica's store on the same PostgreSQL schema and clock (closed after the test). */
async function anotherReplicaStore(h: Harness, schema: string, on: Clock = steppedClock(() => clock)) {
  const store = await openStore({
    config: h.config,
    logger: captureLogger().logger,
    clock: on,
    pgSchema: schema,
  });
  cleanups.push(() => store.close());
  return store;
}

describe.skipIf(!reachable)("three replicas on one PostgreSQL", () => {
  it("every replica polls, each alert is posted once, each reply once", async () => {
    clock = T0;
    const sim = await simulator();
    const schema = randomSchema();
    cleanups.push(() => dropSchema(schema));
    const h = await startHarness({ sim, clock: steppedClock(() => clock), pgSchema: schema });
    cleanups.push(() => h.close());
    const replicas: Deps[] = [h.deps];
    for (let i = 1; i < 3; i++) {
      replicas.push({ ...h.deps, store: await anotherReplicaStore(h, schema) });
    }
    const pollers = replicas.map((deps) =>
      createPoller({
        deps,
        clientFor: h.app.env.clientFor,
        clock: steppedClock(() => clock),
        concurrency: 4,
      }),
    );
    for (const p of pollers) cleanups.push(() => p.stop());

    const listed = await h.deps.edge.forKey(TEST_EDGE_KEY).listShieldZones({ perPage: 20 });
    const zones = listed.items
      .map((z) => z.shieldZoneId)
      .filter((id) => id !== SIM_IDS.zoneUnderAttack)
      .slice(0, 3);
    expect(zones).toHaveLength(3);
    for (const [i, zone] of zones.entries())
      expect((await answerTo(h, `watch zone ${zone}`, "U0001", `C00${i + 1}0`)).text).toContain("Watching");
    expect((await answerTo(h, "watch apps", "U0001", "C0040")).text).toContain("Watching apps");
    const apps = await h.deps.edge.forKey(TEST_EDGE_KEY).listApps({ limit: 1000 });
    const active = apps.items.filter((a) => a.status === "active").slice(0, 3);
    expect(active).toHaveLength(3);

    await Promise.all(pollers.map((p) => p.tick()));
    for (const zone of zones)
      sim.stageAttack(zone, {
        startsAt: T0 + 90_000,
        rampMinutes: 0,
        durationMinutes: 60,
        peakPerMinute: 900,
      });
    for (const app of active)
      sim.stageAppStatus(app.id, [
        { at: T0 + 2 * MIN, status: "failing" },
        { at: T0 + 8 * MIN, status: "active" },
      ]);
    await minutes(10, pollers);

    const parentsIn = (channel: string) =>
      posts(h).filter((c) => c.args.channel === channel && !c.args.thread_ts);
    for (const i of [1, 2, 3]) {
      const ps = parentsIn(`C00${i}0`);
      expect(ps, `zone channel C00${i}0`).toHaveLength(1);
      expect(blocksText(ps[0]?.args.blocks)).toContain("Attack on");
    }
    const appParents = parentsIn("C0040");
    expect(appParents).toHaveLength(3);
    for (const a of active)
      expect(
        appParents.filter((c) => blocksText(c.args.blocks).includes(`${a.name} is failing`)),
      ).toHaveLength(1);
    // Each app's recovery: one Resolved reply in its thread, not one per replica.
    const resolvedReplies = posts(h).filter(
      (c) => c.args.channel === "C0040" && c.args.thread_ts && blocksText(c.args.blocks).includes("Resolved"),
    );
    expect(resolvedReplies).toHaveLength(3);
    expect(new Set(resolvedReplies.map((c) => c.args.thread_ts)).size).toBe(3);
    // Every watch was evaluated once per interval across the three replicas (not three times).
    const watches = await h.store.watches.list("T0001");
    for (const w of watches) expect(w.nextPollAt).toBeLessThanOrEqual(clock + MIN);
    const episodes = (await Promise.all(watches.map((w) => h.store.episodes.listForWatch(w.id)))).flat();
    expect(episodes).toHaveLength(6);
    expect(h.slack.violations).toEqual([]);
  }, 120_000);
});

describe.skipIf(!reachable)("an evaluation that outlives its interval", () => {
  it("keeps its claim: the next replica does not post again the alert still being posted", async () => {
    // One manual clock for the bot, its store, the simulator and both pollers: the claim's renewals
    // (every interval / 3) fire as the test moves it.
    const mc = createManualClock(T0);
    const sim = await simulator(mc);
    const schema = randomSchema();
    cleanups.push(() => dropSchema(schema));
    const INTERVAL = 1_000;
    const h = await startHarness({
      sim,
      clock: mc,
      pgSchema: schema,
      env: { WATCH_INTERVAL_MS: String(INTERVAL) },
    });
    cleanups.push(() => h.close());
    const store = await anotherReplicaStore(h, schema, mc);
    // Replica A's claims (the first and each renewal) are counted as they complete.
    const claimsOfA: { to: number; ok: boolean }[] = [];
    let claimed = () => {};
    const watchesOfA = {
      ...h.deps.store.watches,
      claim: async (...args: Parameters<Deps["store"]["watches"]["claim"]>) => {
        const ok = await h.deps.store.watches.claim(...args);
        claimsOfA.push({ to: args[2], ok });
        claimed();
        return ok;
      },
    };
    const renewedPast = (t: number) =>
      new Promise<void>((resolve) => {
        const check = () => {
          if (claimsOfA.some((c) => c.ok && c.to > t)) resolve();
        };
        claimed = check;
        check();
      });
    // Slack takes longer than the watch's interval to answer the alert's post (a 429 retried, a slow
    // network): the post reaches Slack, and its answer is held until the test releases it.
    let releasePost = () => {};
    const postHeld = new Promise<void>((r) => (releasePost = r));
    const slowSlack = heldAnswer(
      h.app.env.clientFor,
      (method, args) => method === "chat.postMessage" && args.channel === "C0050",
      postHeld,
    );
    const depsOfA: Deps = { ...h.deps, store: { ...h.deps.store, watches: watchesOfA } };
    const a = createPoller({ deps: depsOfA, clientFor: slowSlack, clock: mc });
    const b = createPoller({ deps: { ...h.deps, store }, clientFor: h.app.env.clientFor, clock: mc });
    cleanups.push(() => a.stop());
    cleanups.push(() => b.stop());

    // Under attack for six minutes when the watch is made: its first evaluation fires.
    sim.stageAttack(SIM_IDS.zoneEnterprise, {
      startsAt: T0 - 6 * MIN,
      rampMinutes: 0,
      durationMinutes: 60,
      peakPerMinute: 900,
    });
    await createWatch(h.deps, {
      teamId: "T0001",
      channelId: "C0050",
      userId: "U0001",
      kind: "zone",
      target: String(SIM_IDS.zoneEnterprise),
      options: { sensitivity: "normal" },
    });
    // The replica posting it keeps its claim on the evaluation meanwhile, so the other one does not
    // evaluate the watch again, find the alert unposted and post it a second time.
    const first = a.tick();
    await h.slack.waitForCall("chat.postMessage", (c) => c.args.channel === "C0050");
    await mc.advance(2 * INTERVAL);
    // A renewal made during those two intervals holds the claim past now.
    await renewedPast(mc.now());
    const [made] = await h.store.watches.list("T0001");
    expect((await h.store.watches.get(made?.id as string))?.nextPollAt).toBeGreaterThan(mc.now());
    expect(await b.tick()).toBe(0);
    releasePost();
    await first;
    await mc.advance(2 * INTERVAL);
    await Promise.all([a.tick(), b.tick()]);

    const parents = posts(h).filter((c) => c.args.channel === "C0050" && !c.args.thread_ts);
    expect(parents).toHaveLength(1);
    const [watch] = await h.store.watches.list("T0001");
    const episodes = await h.store.episodes.listForWatch(watch?.id as string);
    expect(episodes).toHaveLength(1);
    expect(episodes[0]?.messageTs).toBeTruthy();
  }, 60_000);
});

describe("stretchedInterval", () => {
  it("keeps WATCH_INTERVAL_MS while the share allows, and stretches past it", () => {
    const o = { intervalMs: 60_000, ratePerSec: 10, sharePercent: 30 };
    expect(stretchedInterval(1, o)).toBe(60_000);
    expect(stretchedInterval(180, o)).toBe(60_000);
    expect(stretchedInterval(360, o)).toBe(120_000);
    expect(stretchedInterval(10, { ...o, ratePerSec: 1, sharePercent: 10 })).toBe(100_000);
  });
});
