import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { WebClient } from "@slack/web-api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { composeDeps } from "../../src/app/compose.js";
import { loadConfig } from "../../src/config.js";
import type { Deps } from "../../src/deps.js";
import { RETRY_FAST } from "../../src/edge/queue.js";
import { createScheduler, type Scheduler } from "../../src/jobs/schedules.js";
import { createLogger } from "../../src/log.js";
import { createSchedule, parseWhenWords } from "../../src/services/schedules.js";
import { SIM_IDS, type Simulator, startSimulator } from "../../tools/simulator/index.js";
import { steppedClock } from "../support/clock.js";
import { type FakeSlack, startFakeSlack } from "../support/fake-slack.js";
import { BOT_TOKEN, LogCapture, TEST_EDGE_KEY, TEST_ENCRYPTION_KEY } from "../support/harness.js";
import { dropSchema, pgReachable, randomSchema, TEST_DATABASE_URL } from "../support/helpers.js";
import { withoutPostgres } from "../support/postgres-required.js";

/**
 * Three replicas (each its own store and connection pool) against one PostgreSQL schema, ticking at
 * the same moment over fifty due schedules: fifty posts, none twice.
 */

const reachable = await pgReachable();
const REPLICAS = 3;
const SCHEDULES = 50;

interface Replica {
  deps: Deps;
  scheduler: Scheduler;
  close(): Promise<void>;
}

let sim: Simulator;
let slack: FakeSlack;
let schema: string;
let dataDir: string;
let clock = Date.parse("2026-03-02T06:00:00Z");
const replicas: Replica[] = [];

async function startReplica(n: number): Promise<Replica> {
  const config = loadConfig({
    EDGE_API_URL: sim.url,
    DATA_DIR: dataDir,
    DATABASE_URL: TEST_DATABASE_URL,
    ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
    SLACK_API_URL: slack.apiUrl,
    SLACK_SIGNING_SECRET: "test-signing-secret-0123456789",
    SLACK_BOT_TOKEN: BOT_TOKEN,
    PORT: "0",
    EDGE_API_RATE_PER_SEC: "1000",
    EDGE_API_CONCURRENCY: "16",
    EDGE_API_MAX_QUEUE: "1000",
  });
  const logger = createLogger({ level: "warn", destination: new LogCapture() }).child({ replica: n });
  // Each replica its own store and connection pool, as in production (src/app/compose.ts).
  const composed = await composeDeps({
    config,
    logger,
    clock: steppedClock(() => clock),
    pgSchema: schema,
    poolSize: 4,
    processMetrics: false,
    edgeOptions: { timeoutMs: 2000, retry: RETRY_FAST },
  });
  const { deps } = composed;
  const client = new WebClient(BOT_TOKEN, {
    slackApiUrl: slack.apiUrl,
    retryConfig: { retries: 2, factor: 2, minTimeout: 50, maxTimeout: 500 },
  });
  const scheduler = createScheduler({
    deps,
    clientFor: async () => client,
    clock: steppedClock(() => clock),
    concurrency: 4,
    scanWait: { firstDelayMs: 20, maxWaitMs: 3000 },
  });
  return { deps, scheduler, close: () => composed.close() };
}

if (reachable) {
  describe(`scheduler: ${REPLICAS} replicas, one PostgreSQL`, () => {
    beforeAll(async () => {
      sim = await startSimulator({ scanDurationMs: 50, apiKeys: [TEST_EDGE_KEY] });
      slack = await startFakeSlack();
      schema = randomSchema();
      dataDir = mkdtempSync(join(tmpdir(), "edgeops-sched-"));
      for (let i = 0; i < REPLICAS; i++) replicas.push(await startReplica(i));
      await replicas[0]!.deps.store.keys.set("T0001", TEST_EDGE_KEY, "U0001");
      const zones = [
        SIM_IDS.dnsZoneCompleted,
        SIM_IDS.dnsZoneLarge,
        SIM_IDS.dnsZoneFailedScan,
        SIM_IDS.dnsZoneOddRecords,
      ];
      for (let i = 0; i < SCHEDULES; i++) {
        await createSchedule(replicas[i % REPLICAS]!.deps, {
          teamId: "T0001",
          channelId: `C${String(100 + i)}`,
          userId: "U0001",
          zoneId: zones[i % zones.length]!,
          when: parseWhenWords(["daily", "09:00"]).when,
          timezone: "Europe/Amsterdam",
        });
      }
    }, 60_000);

    afterAll(async () => {
      for (const r of replicas) {
        await r.scheduler.stop();
        await r.close();
      }
      await sim?.close();
      await slack?.close();
      if (schema) await dropSchema(schema);
      if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    });

    const posts = () =>
      slack.callsTo("chat.postMessage").filter((c) => /^C\d+$/.test(String(c.args.channel)));

    async function tickTogether(): Promise<number[]> {
      // Each replica ticks twice at once, as overlapping intervals might.
      const ticks = replicas.flatMap((r) => [r.scheduler.tick(), r.scheduler.tick()]);
      return Promise.all(ticks);
    }

    it("fifty due schedules: fifty posts and no (channel, schedule) pair twice, occurrence after occurrence", async () => {
      for (const [day, due] of [
        ["2026-03-02", "2026-03-02T08:00:00Z"],
        ["2026-03-03", "2026-03-03T08:00:05Z"],
      ] as const) {
        slack.clear();
        clock = Date.parse(due);
        const ran = await tickTogether();
        expect(
          ran.reduce((a, b) => a + b, 0),
          `runs on ${day}`,
        ).toBe(SCHEDULES);
        const all = posts();
        expect(all, `posts on ${day}`).toHaveLength(SCHEDULES);
        const pairs = new Set(
          all.map(
            (c) =>
              `${String(c.args.channel)}|${JSON.stringify(c.args.blocks).match(/id `(s[a-z0-9]+)`/)?.[1]}`,
          ),
        );
        expect(pairs.size).toBe(SCHEDULES);
        // Every replica did some of the work.
        expect(ran.filter((n) => n > 0).length).toBeGreaterThan(1);
        // Nothing is due any more: ticking again posts nothing.
        expect((await tickTogether()).reduce((a, b) => a + b, 0)).toBe(0);
        expect(posts()).toHaveLength(SCHEDULES);
      }
      const stored = await replicas[1]!.deps.store.schedules.list("T0001");
      expect(stored).toHaveLength(SCHEDULES);
      for (const s of stored) {
        expect(new Date(s.nextRunAt).toISOString()).toBe("2026-03-04T08:00:00.000Z");
        expect(s.lastRunAt).toBe(Date.parse("2026-03-03T08:00:05Z"));
        expect(s.lastOutcome).toBe("ok");
      }
    }, 60_000);
  });
} else {
  withoutPostgres("scheduler replicas (postgres)", "Scheduler multi-replica test");
}
