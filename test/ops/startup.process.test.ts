import { createServer, type Server, Socket } from "node:net";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import type { TransportError } from "../../src/errors.js";
import { BOT_TOKEN } from "../support/harness.js";
import { pgReachable, TEST_DATABASE_URL } from "../support/helpers.js";
import { type OpsBot, startOpsBot } from "../support/ops-bot.js";
import { waitFor, waitUntilReady } from "./process-support.js";

const PG = await pgReachable();

let ob: OpsBot | undefined;
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  await ob?.close();
  ob = undefined;
  for (const c of cleanups.splice(0).reverse()) await c();
});

interface ReadyBody {
  status: string;
  failing?: string[];
  checks: Record<string, string>;
  message?: string;
}

async function readyz(o: OpsBot): Promise<{ status: number; body: ReadyBody; raw: string }> {
  const r = await o.get("/readyz");
  return { status: r.status, body: JSON.parse(r.body) as ReadyBody, raw: r.body };
}

const logLines = (o: OpsBot, msg: string) =>
  o.logs.lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.msg === msg);

describe("Slack unreachable at start-up (HTTP, single token)", () => {
  it("stays up: /healthz 200, /readyz 503 naming slack, auth.test retried with backoff, ready once Slack answers", async () => {
    ob = await startOpsBot({}, { waitUntilReady: false, beforeStart: (s) => s.setUnreachable(true) });
    const o = ob;
    expect(o.bot.mode).toBe("http");
    expect((await o.get("/healthz")).status).toBe(200);
    const down = await readyz(o);
    expect(down.status).toBe(503);
    expect(down.body.failing).toEqual(["slack"]);
    expect(down.body.checks.store).toBe("ok");
    expect(down.body.checks.slack).toMatch(/^Slack has not answered the token check yet/);

    // Retried with a growing delay (about 0.5–1 s, then 1–2 s), each failure logged without the token.
    await waitFor(() => logLines(o, "Slack did not answer the token check; retrying").length >= 2, 10_000);
    const [first, second] = logLines(o, "Slack did not answer the token check; retrying");
    expect(first).toMatchObject({ attempt: 1, reason: expect.stringMatching(/^no connection/) });
    expect(second).toMatchObject({ attempt: 2 });
    expect(first?.retryInMs).toBeGreaterThanOrEqual(500);
    expect(first?.retryInMs).toBeLessThanOrEqual(1000);
    expect(second?.retryInMs).toBeGreaterThanOrEqual(1000);
    expect(second?.retryInMs).toBeLessThanOrEqual(2000);
    expect((await readyz(o)).body.checks.slack).toMatch(/\(2 failed attempts, last: no connection/);

    // Slack can still reach edgeops meanwhile: a command is answered.
    const cmd = await o.command("help");
    expect(cmd.status).toBe(200);
    await o.slack.waitForResponse(cmd.responseId);

    o.slack.setUnreachable(false);
    await waitUntilReady(o.baseUrl, 10_000);
    expect((await readyz(o)).body).toEqual({ status: "ready", checks: { store: "ok", slack: "ok" } });
    expect(logLines(o, "Slack answered the token check")).toHaveLength(1);
    expect(o.slack.callsTo("auth.test").length).toBeGreaterThanOrEqual(1);
    expect(o.logs.text).not.toContain(BOT_TOKEN);
  }, 30_000);

  it("a slow Slack is the same: /readyz names slack until the token check is answered", async () => {
    ob = await startOpsBot(
      {},
      {
        waitUntilReady: false,
        beforeStart: (s) => s.addFault({ method: "auth.test", latencyMs: 1500, times: 1 }),
      },
    );
    const down = await readyz(ob);
    expect(down.status).toBe(503);
    expect(down.body.failing).toEqual(["slack"]);
    await waitUntilReady(ob.baseUrl, 5_000);
  }, 15_000);

  it("a token Slack refuses (invalid_auth) is not retried: the bot reports it once, with a sentence and no token", async () => {
    const fatal: TransportError[] = [];
    ob = await startOpsBot(
      {},
      {
        waitUntilReady: false,
        beforeStart: (s) => s.addFault({ method: "auth.test", error: "invalid_auth" }),
        onFatal: (err) => fatal.push(err),
      },
    );
    const o = ob;
    await waitFor(() => fatal.length === 1, 5_000, "the fatal report");
    expect(fatal[0]?.message).toBe(
      "Slack rejected SLACK_BOT_TOKEN (invalid_auth): set the bot token (xoxb-…) of the installed app and start again.",
    );
    const down = await readyz(o);
    expect(down.status).toBe(503);
    expect(down.body.checks.slack).toBe("Slack rejected SLACK_BOT_TOKEN (invalid_auth)");
    await new Promise((r) => setTimeout(r, 1500));
    expect(o.slack.callsTo("auth.test")).toHaveLength(1);
    expect(fatal).toHaveLength(1);
    expect(down.raw).not.toContain(BOT_TOKEN);
  }, 15_000);
});

/** A TCP proxy in front of PostgreSQL that the test can cut, as a network fault would. */
async function startCuttableProxy(target: URL): Promise<{ port: number; cut(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = new Socket();
    upstream.connect(Number(target.port || 5432), target.hostname);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on("error", () => s.destroy());
      s.on("close", () => sockets.delete(s));
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as { port: number }).port;
  return {
    port,
    cut: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}

describe("/readyz names a failing check without the driver's message", () => {
  it.runIf(PG)(
    "PostgreSQL cut off: store 'unavailable', no host, port, user or database in the answer; the log has the detail",
    async () => {
      const name = `edgeops_ready_${Math.random().toString(36).slice(2, 10)}`;
      const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
      await admin.connect();
      await admin.query(`create database "${name}"`);
      await admin.end();
      cleanups.push(async () => {
        const c = new pg.Client({ connectionString: TEST_DATABASE_URL });
        await c.connect();
        await c.query(`drop database if exists "${name}" with (force)`).finally(() => c.end());
      });
      const target = new URL(TEST_DATABASE_URL);
      const proxy = await startCuttableProxy(target);
      const url = new URL(TEST_DATABASE_URL);
      url.port = String(proxy.port);
      url.pathname = `/${name}`;
      ob = await startOpsBot({ DATABASE_URL: url.toString() });
      const o = ob;
      expect((await readyz(o)).status).toBe(200);

      await proxy.cut();
      const down = await readyz(o);
      expect(down.status).toBe(503);
      expect(down.body.failing).toEqual(["store"]);
      expect(down.body.checks.store).toBe("unavailable");
      expect(down.body.message).toBe("Not ready: store (unavailable)");
      for (const leak of [String(proxy.port), "127.0.0.1", "postgres", name, "ECONNREFUSED"])
        expect(down.raw).not.toContain(leak);
      // Operators find the driver's reason in the log, once per outage.
      await readyz(o);
      const logged = logLines(o, "the store does not answer");
      expect(logged).toHaveLength(1);
      expect(JSON.stringify(logged[0])).toMatch(/ECONNREFUSED|terminated|closed/i);
    },
    30_000,
  );

  it("a closed SQLite store reads 'unavailable', not the driver's sentence", async () => {
    ob = await startOpsBot();
    await ob.bot.deps.store.close();
    const down = await readyz(ob);
    expect(down.status).toBe(503);
    expect(down.body.checks).toEqual({ store: "unavailable", slack: "ok" });
  });
});
