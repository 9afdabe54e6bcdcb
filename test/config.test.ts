import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { CONFIG_VARIABLES, ConfigError, loadConfig } from "../src/config.js";

describe("loadConfig", () => {
  it("gives the documented defaults for an empty environment", () => {
    const c = loadConfig({});
    expect(c.edge).toEqual({
      baseUrl: "https://api.bunny.net",
      defaultApiKey: undefined,
      defaultApiKeyTeams: [],
      ratePerSec: 10,
      concurrency: 4,
      timeoutMs: 10_000,
      maxQueue: 100,
      maxBodyBytes: 10 * 1024 * 1024,
    });
    expect(c.store.statementTimeoutMs).toBe(5000);
    expect(c.schedules).toEqual({ perChannel: 10, perWorkspace: 100, intervalMs: 30_000, leaseMs: 60_000 });
    expect(c.metrics).toEqual({ token: undefined, port: 0 });
    expect(c.console.allowDatabaseUrl).toBe(false);
    expect(c.logLevel).toBe("info");
    expect(c.store.dataDir).toBe("./data");
    expect(c.port).toBe(3000);
    expect(c.production).toBe(false);
  });

  it("is frozen", () => {
    const c = loadConfig({});
    expect(Object.isFrozen(c)).toBe(true);
    expect(Object.isFrozen(c.edge)).toBe(true);
  });

  it("reads values and trims a trailing slash from URLs", () => {
    const c = loadConfig({
      EDGE_API_URL: "http://127.0.0.1:9999/",
      EDGE_API_RATE_PER_SEC: "5",
      LOG_LEVEL: "DEBUG",
    });
    expect(c.edge.baseUrl).toBe("http://127.0.0.1:9999");
    expect(c.edge.ratePerSec).toBe(5);
    expect(c.logLevel).toBe("debug");
  });

  it.each([
    ["EDGE_API_KEY_TEAMS", "T01,nope", /EDGE_API_KEY_TEAMS must be comma-separated Slack team ids/],
    ["CONSOLE_ALLOW_DATABASE_URL", "yes", /CONSOLE_ALLOW_DATABASE_URL must be 1 or 0/],
    ["EDGE_API_RATE_PER_SEC", "ten", /EDGE_API_RATE_PER_SEC must be a whole number from 1 to 1000/],
    ["EDGE_API_CONCURRENCY", "0", /EDGE_API_CONCURRENCY must be a whole number from 1/],
    ["EDGE_API_TIMEOUT_MS", "1.5", /EDGE_API_TIMEOUT_MS must be a whole number/],
    ["EDGE_API_URL", "ftp://x", /EDGE_API_URL must be a URL starting with https:\/\/ or http:\/\//],
    ["DATABASE_URL", "mysql://x", /DATABASE_URL must be a URL starting with postgres:\/\//],
    ["LOG_LEVEL", "loud", /LOG_LEVEL must be one of fatal, error/],
    ["REDIS_URL", "http://x", /REDIS_URL must be a URL starting with redis:\/\/ or rediss:\/\//],
    ["EXPECTED_REPLICAS", "0", /EXPECTED_REPLICAS must be a whole number from 1/],
    ["SCHEDULER_INTERVAL_MS", "100", /SCHEDULER_INTERVAL_MS must be a whole number from 500/],
    ["SCHEDULER_LEASE_MS", "soon", /SCHEDULER_LEASE_MS must be a whole number from 1000/],
    ["ADMIN_USER_IDS", "U123ABC,bob", /ADMIN_USER_IDS must be comma-separated Slack user ids.*bob/],
  ])("refuses a bad %s with a message naming it", (name, value, message) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(message);
  });

  it("reads ADMIN_USER_IDS as bare ids and T…:U… pairs; with OAuth a bare id is refused with a sentence", () => {
    expect(loadConfig({ ADMIN_USER_IDS: "U0AAA, T0001:U0BBB" }).slack.adminUserIds).toEqual([
      { teamId: undefined, userId: "U0AAA" },
      { teamId: "T0001", userId: "U0BBB" },
    ]);
    const oauth = { SLACK_CLIENT_ID: "1.2", SLACK_CLIENT_SECRET: "s", SLACK_STATE_SECRET: "t" };
    expect(loadConfig({ ...oauth, ADMIN_USER_IDS: "T0001:U0BBB" }).slack.adminUserIds).toHaveLength(1);
    expect(() => loadConfig({ ...oauth, ADMIN_USER_IDS: "T0001:U0BBB,U0AAA" })).toThrow(
      /ADMIN_USER_IDS: with OAuth installs .*T012ABCDEF:U0AAA \(not U0AAA\)/,
    );
  });

  it("reads REDIS_URL and EXPECTED_REPLICAS (unset: no Redis, one replica)", () => {
    expect(loadConfig({}).redis).toEqual({ url: undefined, expectedReplicas: 1 });
    expect(loadConfig({ REDIS_URL: "redis://10.0.0.5:6379", EXPECTED_REPLICAS: "3" }).redis).toEqual({
      url: "redis://10.0.0.5:6379",
      expectedReplicas: 3,
    });
  });

  it("lists every problem at once", () => {
    try {
      loadConfig({ EDGE_API_RATE_PER_SEC: "x", PORT: "-1" });
      expect.unreachable();
    } catch (e) {
      expect((e as ConfigError).problems).toHaveLength(2);
    }
  });

  it("treats empty strings as unset", () => {
    expect(loadConfig({ EDGE_API_URL: "", EDGE_API_KEY: " " }).edge).toMatchObject({
      baseUrl: "https://api.bunny.net",
      defaultApiKey: undefined,
    });
  });

  it(".env.example lists exactly the variables loadConfig reads", () => {
    const example = readFileSync(new URL("../.env.example", import.meta.url), "utf8");
    const listed = [...example.matchAll(/^([A-Z][A-Z0-9_]+)=/gm)].map((m) => m[1]).sort();
    expect(listed).toEqual([...CONFIG_VARIABLES].sort());
  });
});
