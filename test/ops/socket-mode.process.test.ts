import { createHash } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type RunningBot, startBot } from "../../src/app/bot.js";
import { systemClock } from "../../src/clock.js";
import { loadConfig } from "../../src/config.js";
import { withDeadline } from "../../src/deadline.js";
import { createLogger } from "../../src/log.js";
import { BOT_TOKEN, LogCapture, TEST_ENCRYPTION_KEY } from "../support/harness.js";
import { waitFor, waitUntilReady } from "./process-support.js";

/**
 * A fake Slack for Socket Mode: apps.connections.open hands out a ws:// URL on loopback, and a minimal
 * WebSocket server (RFC 6455, text frames, ping/pong, close) says hello and records acks.
 */
interface FakeSocketSlack {
  apiUrl: string;
  acks: Record<string, unknown>[];
  connections: number;
  send(message: unknown): void;
  /** Drop every open WebSocket (Slack recycling the connection). */
  dropAll(): void;
  /** While false, apps.connections.open fails, so the client cannot come back. */
  accepting: boolean;
  /** While false, every Web API request's connection is dropped unanswered (Slack unreachable). */
  reachable: boolean;
  /** Web API requests received, by method, answered or not. */
  requests: string[];
  close(): Promise<void>;
}

function frame(opcode: number, payload: Buffer): Buffer {
  const len = payload.length;
  const head =
    len < 126
      ? Buffer.from([0x80 | opcode, len])
      : Buffer.from([0x80 | opcode, 126, (len >> 8) & 0xff, len & 0xff]);
  return Buffer.concat([head, payload]);
}

async function startFakeSocketSlack(): Promise<FakeSocketSlack> {
  const sockets = new Set<Socket>();
  const fake: FakeSocketSlack = {
    apiUrl: "",
    acks: [],
    connections: 0,
    accepting: true,
    reachable: true,
    requests: [],
    send(message) {
      for (const s of sockets) s.write(frame(1, Buffer.from(JSON.stringify(message))));
    },
    dropAll() {
      for (const s of sockets) s.destroy();
      sockets.clear();
    },
    close: async () => undefined,
  };
  const server: Server = createServer((req, res) => {
    const method = (req.url ?? "").replace(/^\/api\//, "").split("?")[0];
    fake.requests.push(method ?? "");
    if (!fake.reachable) {
      req.socket.destroy();
      return;
    }
    req.resume();
    req.on("end", () => {
      res.setHeader("content-type", "application/json");
      if (method === "apps.connections.open") {
        if (!fake.accepting) return res.end(JSON.stringify({ ok: false, error: "internal_error" }));
        const { port } = server.address() as AddressInfo;
        return res.end(JSON.stringify({ ok: true, url: `ws://127.0.0.1:${port}/link` }));
      }
      if (method === "auth.test") {
        return res.end(JSON.stringify({ ok: true, user_id: "UBOT", bot_id: "BBOT", team_id: "T0001" }));
      }
      res.end(JSON.stringify({ ok: true }));
    });
  });
  server.on("upgrade", (req, socket: Socket) => {
    const key = String(req.headers["sec-websocket-key"]);
    const accept = createHash("sha1").update(`${key}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`).digest("base64");
    socket.write(
      `HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n\r\n`,
    );
    sockets.add(socket);
    fake.connections += 1;
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => sockets.delete(socket));
    let buf = Buffer.alloc(0);
    socket.on("data", (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      while (buf.length >= 2) {
        const opcode = (buf[0] ?? 0) & 0x0f;
        let len = (buf[1] ?? 0) & 0x7f;
        let offset = 2;
        if (len === 126) {
          len = buf.readUInt16BE(2);
          offset = 4;
        } else if (len === 127) {
          len = Number(buf.readBigUInt64BE(2));
          offset = 10;
        }
        const masked = ((buf[1] ?? 0) & 0x80) !== 0;
        const total = offset + (masked ? 4 : 0) + len;
        if (buf.length < total) return;
        const mask = masked ? buf.subarray(offset, offset + 4) : undefined;
        const payload = Buffer.from(buf.subarray(total - len, total));
        if (mask)
          for (let i = 0; i < payload.length; i++) payload[i] = (payload[i] ?? 0) ^ (mask[i % 4] ?? 0);
        buf = buf.subarray(total);
        if (opcode === 0x9) socket.write(frame(0xa, payload));
        else if (opcode === 0x8) {
          socket.write(frame(0x8, Buffer.alloc(0)));
          socket.end();
        } else if (opcode === 0x1)
          fake.acks.push(JSON.parse(payload.toString("utf8")) as Record<string, unknown>);
      }
    });
    socket.write(frame(1, Buffer.from(JSON.stringify({ type: "hello", num_connections: 1 }))));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  fake.apiUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/`;
  fake.close = () =>
    new Promise<void>((r) => {
      fake.dropAll();
      server.close(() => r());
    });
  return fake;
}

let cleanup: (() => Promise<void>) | undefined;
afterEach(async () => {
  await cleanup?.();
  cleanup = undefined;
});

/** A fresh data directory and a Socket Mode configuration pointing at the fake, with `env` on top. */
function socketModeConfig(fake: FakeSocketSlack, env: Record<string, string> = {}) {
  const dataDir = mkdtempSync(join(tmpdir(), "edgeops-sock-"));
  const config = loadConfig({
    SLACK_APP_TOKEN: "xapp-1-test-app-token",
    SLACK_BOT_TOKEN: BOT_TOKEN,
    SLACK_API_URL: fake.apiUrl,
    EDGE_API_URL: "http://127.0.0.1:9",
    DATA_DIR: dataDir,
    ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
    PORT: "0",
    ...env,
  });
  return { config, dataDir };
}

/** After the test: stop the bot (unless the test already did), close the fake, remove the data directory. */
function cleanUpAfterTest(
  bot: RunningBot,
  fake: FakeSocketSlack,
  dataDir: string,
  stoppedByTest: () => boolean = () => false,
): void {
  cleanup = async () => {
    if (!stoppedByTest()) await bot.stop().catch(() => undefined);
    await fake.close();
    rmSync(dataDir, { recursive: true, force: true });
  };
}

describe("Socket Mode: the operations endpoints on PORT and readiness that follows the connection", () => {
  it("serves /healthz, /readyz and /metrics, and /readyz names slack while the socket is down", async () => {
    const fake = await startFakeSocketSlack();
    const { config, dataDir } = socketModeConfig(fake, { SHUTDOWN_TIMEOUT_MS: "1000" });
    const logs = new LogCapture();
    const bot: RunningBot = await startBot({
      config,
      logger: createLogger({ level: "debug", destination: logs }),
    });
    let stopped = false;
    cleanUpAfterTest(bot, fake, dataDir, () => stopped);
    expect(bot.mode).toBe("socket");
    expect(bot.port).toBeGreaterThan(0);
    const base = `http://127.0.0.1:${bot.port}`;
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    await waitUntilReady(base);
    const ready = await fetch(`${base}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: "ready", checks: { store: "ok", slack: "ok" } });
    const metrics = await (await fetch(`${base}/metrics`)).text();
    expect(metrics).toContain("# HELP edgeops_commands_total ");

    // Slack drops the connection and cannot hand out a new one: not ready, naming slack; alive still.
    fake.accepting = false;
    fake.dropAll();
    let body: { failing?: string[]; checks?: Record<string, string> } = {};
    const deadline = Date.now() + 5000;
    let status = 200;
    while (Date.now() < deadline) {
      const r = await fetch(`${base}/readyz`);
      status = r.status;
      body = (await r.json()) as typeof body;
      if (status === 503) break;
      await new Promise((res) => setTimeout(res, 20));
    }
    expect(status).toBe(503);
    expect(body.failing).toEqual(["slack"]);
    expect(body.checks?.slack).toMatch(/^Socket Mode is (reconnecting|connecting|disconnected)/);
    expect((await fetch(`${base}/healthz`)).status).toBe(200);

    stopped = true;
    await bot.stop();
    await expect(fetch(`${base}/healthz`)).rejects.toThrow();
  });

  it("Slack unreachable at start: running at once, /readyz names slack, connects with backoff once Slack answers", async () => {
    const fake = await startFakeSocketSlack();
    fake.reachable = false;
    const { config, dataDir } = socketModeConfig(fake, { SHUTDOWN_TIMEOUT_MS: "1000" });
    const logs = new LogCapture();
    const starting = startBot({ config, logger: createLogger({ level: "debug", destination: logs }) });
    // Before: startBot waited for the WebSocket (apps.connections.open retried for minutes).
    const bot = await withDeadline(systemClock, starting, 3000, () => {
      throw new Error("startBot did not return while Slack was unreachable");
    });
    cleanUpAfterTest(bot, fake, dataDir);
    const base = `http://127.0.0.1:${bot.port}`;
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    const down = await fetch(`${base}/readyz`);
    expect(down.status).toBe(503);
    const body = (await down.json()) as { failing: string[]; checks: Record<string, string> };
    expect(body.failing).toEqual(["slack"]);
    expect(body.checks.slack).toMatch(
      /^Slack has not answered the token check yet.*; Socket Mode is connecting$/,
    );

    // Both the token check and the WebSocket URL are asked for again, not given up on.
    const count = (m: string) => fake.requests.filter((r) => r === m).length;
    await waitFor(() => count("auth.test") >= 2 && count("apps.connections.open") >= 2, 10_000, "retries");
    fake.reachable = true;
    await waitUntilReady(base, 15_000);
    expect(fake.connections).toBe(1);
    expect(logs.text).toContain("Slack answered the token check");
    expect(logs.text).not.toContain(BOT_TOKEN);
    expect(logs.text).not.toContain("xapp-1-test-app-token");
  }, 30_000);

  it("acks a slash command arriving over the socket, runs it through the in-flight tracking, counts it", async () => {
    const fake = await startFakeSocketSlack();
    const { config, dataDir } = socketModeConfig(fake);
    const bot = await startBot({ config, logger: createLogger({ level: "silent" }) });
    cleanUpAfterTest(bot, fake, dataDir);
    await waitUntilReady(`http://127.0.0.1:${bot.port}`);
    fake.send({
      envelope_id: "env-1",
      type: "slash_commands",
      accepts_response_payload: true,
      payload: {
        token: "legacy",
        team_id: "T0001",
        team_domain: "acme",
        channel_id: "C0001",
        channel_name: "incident-42",
        user_id: "U0001",
        user_name: "alice",
        command: "/edge",
        text: "help",
        api_app_id: "A0001",
        response_url: `${fake.apiUrl.replace(/\/api\/$/, "")}/response/r1`,
        trigger_id: "trigger-1",
      },
    });
    await waitFor(() => fake.acks.some((a) => a.envelope_id === "env-1"), 5000, "the ack over the socket");
    // The listener ran through the in-flight middleware, answered, and is no longer in flight.
    let text = "";
    for (let i = 0; i < 100; i++) {
      text = await (await fetch(`http://127.0.0.1:${bot.port}/metrics`)).text();
      if (/^edgeops_slack_requests_in_flight 0$/m.test(text) && text.includes('subcommand="help"')) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(text).toMatch(/^edgeops_commands_total\{subcommand="help",outcome="ok"\} 1$/m);
    expect(text).toMatch(/^edgeops_slack_requests_in_flight 0$/m);
  });
});
