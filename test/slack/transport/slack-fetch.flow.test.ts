import { describe, expect, it } from "vitest";
import { systemClock } from "../../../src/clock.js";
import { createLogger } from "../../../src/log.js";
import { type ReadinessCheck, readiness } from "../../../src/ops/health.js";
import { createMetrics } from "../../../src/ops/metrics.js";
import {
  instrumentSlackFetch,
  slackErrorLabel,
  slackMethodLabel,
} from "../../../src/slack/transport/slack-fetch.js";

const API = "http://127.0.0.1:1/api/";

function fakeFetch(answer: (url: string) => Response | Error): typeof fetch {
  return (async (input: string | URL | Request) => {
    const r = answer(String(input));
    if (r instanceof Error) throw r;
    return r;
  }) as typeof fetch;
}

async function errors(metrics: ReturnType<typeof createMetrics>) {
  const m = await metrics.slackApiErrors.get();
  return m.values.map((v) => ({ ...v.labels, n: v.value }));
}

describe("instrumentSlackFetch", () => {
  it("counts ok:false answers by method and known error code, unknown codes as other", async () => {
    const metrics = createMetrics({ defaults: false });
    const f = instrumentSlackFetch({
      metrics,
      apiUrl: API,
      base: fakeFetch((url) =>
        Response.json(
          url.endsWith("chat.postMessage")
            ? { ok: false, error: "not_in_channel" }
            : url.endsWith("views.open")
              ? { ok: false, error: "xoxb-secret-looking-thing" }
              : { ok: true },
        ),
      ),
    });
    await f(`${API}chat.postMessage`, { method: "POST" });
    await f(`${API}chat.postMessage`, { method: "POST" });
    await f(`${API}views.open`, { method: "POST" });
    await f(`${API}users.info`, { method: "POST" });
    expect(await errors(metrics)).toEqual([
      { method: "chat.postMessage", error: "not_in_channel", n: 2 },
      { method: "views.open", error: "other", n: 1 },
    ]);
  });

  it("counts 429, HTTP errors, network errors and response_url failures with bounded labels", async () => {
    const metrics = createMetrics({ defaults: false });
    const f = instrumentSlackFetch({
      metrics,
      apiUrl: API,
      base: fakeFetch((url) => {
        if (url.includes("rate")) return new Response("", { status: 429 });
        if (url.includes("boom")) return new Error("ECONNREFUSED");
        if (url.includes("/response/")) return new Response("expired_url", { status: 404 });
        return new Response("<html>", { status: 503 });
      }),
    });
    await f(`${API}rate.limited`);
    await expect(f(`${API}boom.now`)).rejects.toThrow("ECONNREFUSED");
    await f("http://127.0.0.1:2/response/abc");
    await f(`${API}../../etc/passwd`);
    expect(await errors(metrics)).toEqual([
      { method: "rate.limited", error: "ratelimited", n: 1 },
      { method: "boom.now", error: "request_error", n: 1 },
      { method: "response_url", error: "expired_url", n: 1 },
      { method: "other", error: "http_5xx", n: 1 },
    ]);
  });

  it("drops posts to response_urls shutdown already answered", async () => {
    const seen: string[] = [];
    const f = instrumentSlackFetch({
      metrics: createMetrics({ defaults: false }),
      apiUrl: API,
      base: fakeFetch((url) => {
        seen.push(url);
        return new Response("ok");
      }),
      drop: (url) => url.endsWith("/gone"),
    });
    expect((await f("http://x/response/gone", { method: "POST", body: "{}" })).status).toBe(200);
    await f("http://x/response/live", { method: "POST", body: "{}" });
    expect(seen).toEqual(["http://x/response/live"]);
  });

  it("labels", () => {
    expect(slackMethodLabel(`${API}apps.connections.open`, API)).toBe("apps.connections.open");
    expect(slackMethodLabel(`${API}chat.postMessage?x=1`, API)).toBe("chat.postMessage");
    expect(slackMethodLabel(`${API}${"a.".repeat(40)}b`, API)).toBe("other");
    expect(slackMethodLabel("https://hooks.slack.com/commands/T/1/abc", API)).toBe("response_url");
    expect(slackErrorLabel("invalid_auth")).toBe("invalid_auth");
    expect(slackErrorLabel(42)).toBe("other");
  });
});

describe("readiness", () => {
  it("names a check that hangs or throws, and reports shutdown", async () => {
    let stopping = false;
    const checks: ReadinessCheck[] = [
      { name: "store", check: () => new Promise<undefined>(() => undefined) },
      {
        name: "slack",
        check: () => {
          throw new Error("boom");
        },
      },
      { name: "other", check: () => undefined },
    ];
    const options = {
      metrics: createMetrics({ defaults: false }),
      edge: { queueStats: () => ({ keys: 0, waiting: 0, inFlight: 0 }) },
      checks,
      stopping: () => stopping,
      inFlight: () => 0,
      logger: createLogger({ level: "silent" }),
      clock: systemClock,
      checkTimeoutMs: 50,
    };
    const r = await readiness(options);
    expect(r).toEqual({
      ready: false,
      failing: ["store", "slack"],
      // A thrown error is logged, never shown: its message may name a host, port or user.
      checks: { store: "no answer within 50 ms", slack: "unavailable", other: "ok" },
    });
    stopping = true;
    expect((await readiness({ ...options, checks: [checks[2] as ReadinessCheck] })).failing).toEqual([
      "shutdown",
    ]);
  });
});

describe("the default fetch (what Slack clients send, over undici's request)", () => {
  it("sends the method, headers and body, and answers status, headers and body as fetch would", async () => {
    const { createServer } = await import("node:http");
    const seen: {
      method: string | undefined;
      type: string | undefined;
      auth: string | undefined;
      body: string;
    }[] = [];
    const server = createServer((req, res) => {
      let body = "";
      req.on("data", (c) => {
        body += c;
      });
      req.on("end", () => {
        seen.push({
          method: req.method,
          type: req.headers["content-type"],
          auth: req.headers.authorization,
          body,
        });
        if (req.url === "/moved") {
          res.writeHead(302, { location: "/elsewhere" }).end();
          return;
        }
        if (req.url === "/empty") {
          res.writeHead(204).end();
          return;
        }
        res.setHeader("set-cookie", ["a=1", "b=2"]);
        res.writeHead(200, { "content-type": "application/json", "x-slack-req-id": "r1" });
        res.end(JSON.stringify({ ok: true, echo: body }));
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const { port } = server.address() as { port: number };
    const base = `http://127.0.0.1:${port}`;
    const defaultFetch = instrumentSlackFetch({
      metrics: createMetrics({ defaults: false }),
      apiUrl: `${base}/api/`,
    }) as unknown as typeof fetch;
    try {
      const res = await defaultFetch(`${base}/api/users.info`, {
        method: "POST",
        headers: { authorization: "Bearer xoxb-test", "content-type": "application/x-www-form-urlencoded" },
        body: "user=U1&team_id=T1",
        redirect: "error",
      });
      expect(res.status).toBe(200);
      expect(res.ok).toBe(true);
      expect(res.headers.get("x-slack-req-id")).toBe("r1");
      expect(await res.json()).toEqual({ ok: true, echo: "user=U1&team_id=T1" });
      expect(seen[0]).toEqual({
        method: "POST",
        type: "application/x-www-form-urlencoded",
        auth: "Bearer xoxb-test",
        body: "user=U1&team_id=T1",
      });

      await defaultFetch(`${base}/form`, { method: "POST", body: new URLSearchParams({ a: "1 2" }) });
      expect(seen[1]).toMatchObject({
        type: "application/x-www-form-urlencoded;charset=UTF-8",
        body: "a=1+2",
      });

      await expect(defaultFetch(`${base}/moved`, { method: "POST", redirect: "error" })).rejects.toThrow(
        /redirected \(HTTP 302\)/,
      );
      const empty = await defaultFetch(`${base}/empty`, { method: "POST", body: "{}" });
      expect(empty.status).toBe(204);
      expect(await empty.text()).toBe("");

      const aborted = new AbortController();
      aborted.abort(new Error("gave up"));
      await expect(defaultFetch(`${base}/x`, { signal: aborted.signal })).rejects.toThrow();
    } finally {
      server.close();
    }
  });
});

describe("instrumentSlackFetch over undici (no base: what the bot's clients use)", () => {
  it("answers the Web API's status, headers and body, and counts ok:false, HTTP errors and redirects", async () => {
    const { createServer } = await import("node:http");
    const server = createServer((req, res) => {
      req.resume();
      req.on("end", () => {
        if (req.url === "/api/chat.postMessage") {
          res.writeHead(200, { "content-type": "application/json" });
          res.end(JSON.stringify({ ok: false, error: "not_in_channel" }));
        } else if (req.url === "/api/rate.limited") {
          res.writeHead(429, { "retry-after": "3" }).end();
        } else if (req.url === "/api/moved.away") {
          res.writeHead(302, { location: "/elsewhere" }).end();
        } else {
          res.writeHead(200, { "content-type": "application/json", "x-slack-req-id": "r2" });
          res.end(JSON.stringify({ ok: true, user: { id: "U1" } }));
        }
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const { port } = server.address() as { port: number };
    const api = `http://127.0.0.1:${port}/api/`;
    const metrics = createMetrics({ defaults: false });
    const f = instrumentSlackFetch({ metrics, apiUrl: api });
    try {
      const ok = await f(`${api}users.info`, { method: "POST", body: "user=U1", redirect: "error" });
      expect(ok.status).toBe(200);
      expect(ok.headers.get("x-slack-req-id")).toBe("r2");
      expect(await ok.json()).toEqual({ ok: true, user: { id: "U1" } });
      const refused = await f(`${api}chat.postMessage`, { method: "POST", body: "channel=C1" });
      expect(await refused.json()).toEqual({ ok: false, error: "not_in_channel" });
      const limited = await f(`${api}rate.limited`, { method: "POST", body: "" });
      expect(limited.status).toBe(429);
      expect(limited.headers.get("retry-after")).toBe("3");
      await expect(f(`${api}moved.away`, { method: "POST", redirect: "error" })).rejects.toThrow(
        /redirected \(HTTP 302\)/,
      );
      expect(await errors(metrics)).toEqual([
        { method: "chat.postMessage", error: "not_in_channel", n: 1 },
        { method: "rate.limited", error: "ratelimited", n: 1 },
        { method: "moved.away", error: "request_error", n: 1 },
      ]);
    } finally {
      server.close();
    }
  });
});
