import type { AddressInfo } from "node:net";
import { createServer } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { BOT_TOKEN, SIGNING_SECRET, TEST_EDGE_KEY, TEST_ENCRYPTION_KEY } from "../support/harness.js";
import { type OpsBot, startOpsBot } from "../support/ops-bot.js";
import { tcpProxy } from "../support/tcp-proxy.js";

let ob: OpsBot | undefined;
afterEach(async () => {
  await ob?.close();
  ob = undefined;
});

/** One sample's value from Prometheus text, or undefined when the series is absent. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split("\n")) {
    if (!line.startsWith(name)) continue;
    const m = /^([a-z_:]+)(?:\{(.*)\})? (.+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const got = Object.fromEntries(
      [...(m[2] ?? "").matchAll(/([a-z_]+)="([^"]*)"/g)].map((x) => [x[1], x[2]]),
    );
    if (Object.entries(labels).every(([k, v]) => got[k] === v)) return Number(m[3]);
  }
  return undefined;
}

describe("/healthz, /readyz, /metrics in HTTP mode (startBot, real loopback HTTP)", () => {
  it("answers /healthz and /readyz beside /slack/events", async () => {
    ob = await startOpsBot();
    const health = await ob.get("/healthz");
    expect(health).toMatchObject({ status: 200, body: "ok\n" });
    const ready = await ob.get("/readyz");
    expect(ready.status).toBe(200);
    expect(JSON.parse(ready.body)).toEqual({ status: "ready", checks: { store: "ok", slack: "ok" } });
    const head = await fetch(`${ob.baseUrl}/healthz`, { method: "HEAD" });
    expect(head.status).toBe(200);
  });

  it("/readyz is 503 naming the store when the store stops answering, /healthz stays 200", async () => {
    ob = await startOpsBot();
    await ob.bot.deps.store.close();
    const ready = await ob.get("/readyz");
    expect(ready.status).toBe(503);
    const body = JSON.parse(ready.body) as {
      failing: string[];
      checks: Record<string, string>;
      message: string;
    };
    expect(body.failing).toEqual(["store"]);
    expect(body.checks.slack).toBe("ok");
    expect(body.message).toMatch(/^Not ready: store \(/);
    expect((await ob.get("/healthz")).status).toBe(200);
  });

  it("/metrics counts commands, Edge requests and latency, queue waits and Slack API errors; no secrets in labels", async () => {
    ob = await startOpsBot();
    const res = await ob.command("apps");
    expect(res.status).toBe(200);
    await ob.slack.waitForResponse(res.responseId);
    // /edge key opens a modal; Slack refuses the trigger: counted by method and error code.
    ob.slack.addFault({ method: "views.open", error: "expired_trigger_id" });
    const key = await ob.command("key");
    expect(key.status).toBe(200);
    await ob.slack.waitForCall("views.open");

    let text = "";
    const deadline = Date.now() + 5000;
    while (Date.now() < deadline) {
      const m = await ob.get("/metrics");
      expect(m.status).toBe(200);
      expect(m.contentType).toMatch(/^text\/plain/);
      text = m.body;
      const counted = (sample(text, "edgeops_slack_api_errors_total", { method: "views.open" }) ?? 0) > 0;
      if (counted && sample(text, "edgeops_slack_requests_in_flight") === 0) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(sample(text, "edgeops_commands_total", { subcommand: "apps", outcome: "ok" })).toBe(1);
    expect(
      sample(text, "edgeops_edge_requests_total", { operation: "listApps", status: "200" }),
    ).toBeGreaterThanOrEqual(1);
    expect(
      sample(text, "edgeops_edge_request_duration_seconds_count", { operation: "listApps" }),
    ).toBeGreaterThanOrEqual(1);
    expect(sample(text, "edgeops_edge_queue_wait_seconds_count")).toBeGreaterThanOrEqual(1);
    expect(sample(text, "edgeops_edge_queue_rejections_total")).toBe(0);
    expect(
      sample(text, "edgeops_slack_api_errors_total", { method: "views.open", error: "expired_trigger_id" }),
    ).toBeGreaterThanOrEqual(1);
    expect(sample(text, "edgeops_slack_requests_in_flight")).toBe(0);
    // Process defaults are there, prefixed.
    expect(text).toMatch(/^edgeops_process_cpu_user_seconds_total /m);
    expect(text).toMatch(/^edgeops_nodejs_heap_size_used_bytes /m);
    // Defined families with no samples yet still show their HELP.
    for (const name of [
      "edgeops_approval_requests_total",
      "edgeops_scheduler_runs_total",
      "edgeops_edge_queue_keys",
    ]) {
      expect(text).toContain(`# HELP ${name} `);
    }
    for (const secret of [
      TEST_EDGE_KEY,
      BOT_TOKEN,
      SIGNING_SECRET,
      TEST_ENCRYPTION_KEY,
      "T0001",
      "U0001",
      "C0001",
    ]) {
      expect(text).not.toContain(secret);
    }
  });

  it("unknown paths are 404 and Slack events still need a signature", async () => {
    ob = await startOpsBot();
    expect((await ob.get("/nope")).status).toBe(404);
    const unsigned = await fetch(`${ob.baseUrl}/slack/events`, { method: "POST", body: "x=1" });
    expect(unsigned.status).toBe(401);
  });

  it("METRICS_TOKEN: /metrics answers 401 with a sentence unless the bearer token is sent", async () => {
    const token = "metrics-token-5b1e0c";
    ob = await startOpsBot({ METRICS_TOKEN: token });
    const bare = await fetch(`${ob.baseUrl}/metrics`);
    expect(bare.status).toBe(401);
    expect(bare.headers.get("www-authenticate")).toMatch(/^Bearer /);
    expect(await bare.text()).toBe("/metrics needs the header Authorization: Bearer <METRICS_TOKEN>.\n");
    for (const header of [`Bearer ${token}x`, `Bearer ${token.slice(0, -1)}`, token, "Basic Zm9vOmJhcg=="]) {
      const wrong = await fetch(`${ob.baseUrl}/metrics`, { headers: { authorization: header } });
      expect(wrong.status, header).toBe(401);
      expect(await wrong.text()).not.toContain(token);
    }
    const ok = await fetch(`${ob.baseUrl}/metrics`, { headers: { authorization: `Bearer ${token}` } });
    expect(ok.status).toBe(200);
    expect(await ok.text()).toContain("# HELP edgeops_commands_total ");
    // Liveness and readiness stay open to probes.
    expect((await ob.get("/healthz")).status).toBe(200);
    expect((await ob.get("/readyz")).status).toBe(200);
  });

  it("METRICS_PORT: /metrics is served on its own port only, and closes with the bot", async () => {
    const metricsPort = await freePort();
    ob = await startOpsBot({ METRICS_PORT: String(metricsPort) });
    expect(ob.bot.metricsPort).toBe(metricsPort);
    expect((await ob.get("/metrics")).status).toBe(404);
    expect((await ob.get("/healthz")).status).toBe(200);
    const own = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
    expect(own.status).toBe(200);
    expect(await own.text()).toContain("# HELP edgeops_commands_total ");
    const other = await fetch(`http://127.0.0.1:${metricsPort}/healthz`);
    expect(other.status).toBe(404);
    expect(await other.text()).toBe("Only GET /metrics is served on METRICS_PORT.\n");
    await ob.bot.stop();
    await expect(fetch(`http://127.0.0.1:${metricsPort}/metrics`)).rejects.toThrow();
  });

  it("METRICS_PORT already taken stops start-up with a sentence naming it", async () => {
    const taken = createServer();
    await new Promise<void>((r) => taken.listen(0, r));
    const port = (taken.address() as AddressInfo).port;
    try {
      await expect(startOpsBot({ METRICS_PORT: String(port) })).rejects.toThrow(
        "METRICS_PORT is already in use: choose another METRICS_PORT (0 serves /metrics on PORT).",
      );
    } finally {
      taken.close();
    }
  });
});

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, r));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

async function until(predicate: () => Promise<boolean>, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error("timed out waiting for /readyz");
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("/readyz with REDIS_URL (the shared Edge API rate)", () => {
  it("shows redis as degraded but stays ready while Redis is away, serves commands, and recovers", async () => {
    const redisUrl = new URL(process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379");
    const proxy = tcpProxy(redisUrl);
    const port = await proxy.start();
    try {
      ob = await startOpsBot({ REDIS_URL: `redis://127.0.0.1:${port}`, EXPECTED_REPLICAS: "3" });
      const bot = ob;
      const readyz = async () => JSON.parse((await bot.get("/readyz")).body) as Record<string, unknown>;
      await until(async () => ((await readyz()).checks as Record<string, string>).redis === "ok");
      await proxy.cut();
      let degraded: Record<string, unknown> = {};
      await until(async () => {
        degraded = await readyz();
        return ((degraded.checks as Record<string, string>).redis ?? "").startsWith("degraded");
      });
      expect(degraded.status).toBe("ready");
      expect((await ob.get("/readyz")).status).toBe(200);
      expect((degraded.checks as Record<string, string>).redis).toMatch(/3\/s and 1 at once per key/);
      // No command fails because Redis is down.
      const res = await ob.command("apps");
      expect(res.status).toBe(200);
      await ob.slack.waitForResponse(res.responseId);
      const metrics = (await ob.get("/metrics")).body;
      expect(sample(metrics, "edgeops_commands_total", { subcommand: "apps", outcome: "ok" })).toBe(1);
      expect(ob.logs.lines.filter((l) => l.includes("Redis does not answer"))).toHaveLength(1);
      // Redis answers again: back to the shared limit.
      await proxy.start(port);
      await until(async () => ((await readyz()).checks as Record<string, string>).redis === "ok", 10_000);
      expect(ob.logs.text).toMatch(/Redis answers again/);
    } finally {
      await ob?.close();
      ob = undefined;
      await proxy.cut();
    }
  }, 20_000);
});
