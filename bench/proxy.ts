/**
 * A small round-robin HTTP load balancer in its own process, standing in for the Caddy of compose.yaml
 * in the cluster benchmark (bench/cluster.ts). Each request goes to the next replica in turn. A replica
 * that refuses the connection (it is gone) is left out for a while and the request goes to the next
 * one: nothing was delivered, so that is safe, as a load balancer's passive health check does. A
 * request whose replica dies after it was sent is answered 502 (what Slack would show the user): it
 * may have been received, so it is not sent again.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { Pool } from "undici";
import { serveRpc } from "./common.js";

interface Backend {
  origin: string;
  pool: Pool;
  /** Left out of the rotation until then (ms, Date.now()). */
  downUntil: number;
  sent: number;
  refused: number;
  failedAfterSend: number;
}

/** How long a replica that refused a connection is left out of the rotation. */
const DOWN_FOR_MS = 2_000;
const HOP_BY_HOP = new Set(["connection", "keep-alive", "transfer-encoding", "host", "content-length"]);

let backends: Backend[] = [];
let next = 0;

function setBackends(origins: string[]): void {
  for (const b of backends) void b.pool.close();
  backends = origins.map((origin) => ({
    origin,
    pool: new Pool(origin, { connections: 256, keepAliveTimeout: 4_000 }),
    downUntil: 0,
    sent: 0,
    refused: 0,
    failedAfterSend: 0,
  }));
  next = 0;
}

function pick(exclude: Set<Backend>): Backend | undefined {
  const now = Date.now();
  for (let i = 0; i < backends.length; i++) {
    const b = backends[(next + i) % backends.length] as Backend;
    if (exclude.has(b) || b.downUntil > now) continue;
    next = (next + i + 1) % backends.length;
    return b;
  }
  return undefined;
}

const refusedConnection = (err: unknown) => {
  const code = (err as { code?: string; cause?: { code?: string } }).code;
  const causeCode = (err as { cause?: { code?: string } }).cause?.code;
  return [code, causeCode].some((c) => c === "ECONNREFUSED" || c === "UND_ERR_CONNECT_TIMEOUT");
};

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const body = await readBody(req);
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(req.headers)) {
    if (typeof v === "string" && !HOP_BY_HOP.has(k)) headers[k] = v;
  }
  const tried = new Set<Backend>();
  for (;;) {
    const b = pick(tried);
    if (!b) {
      res.writeHead(503).end("no replica available");
      return;
    }
    tried.add(b);
    try {
      const answer = await b.pool.request({
        path: req.url ?? "/",
        method: (req.method ?? "GET") as "POST",
        headers,
        body: body.length ? body : null,
      });
      b.sent++;
      const text = await answer.body.arrayBuffer();
      const out: Record<string, string> = {};
      for (const [k, v] of Object.entries(answer.headers)) {
        if (typeof v === "string" && !HOP_BY_HOP.has(k)) out[k] = v;
      }
      res.writeHead(answer.statusCode, out).end(Buffer.from(text));
      return;
    } catch (err) {
      if (refusedConnection(err)) {
        b.refused++;
        b.downUntil = Date.now() + DOWN_FOR_MS;
        continue;
      }
      b.failedAfterSend++;
      b.downUntil = Date.now() + DOWN_FOR_MS;
      res.writeHead(502).end("the replica failed");
      return;
    }
  }
}

const server = createServer((req, res) => {
  handle(req, res).catch(() => {
    if (!res.headersSent) res.writeHead(502);
    res.end();
  });
});
server.keepAliveTimeout = 5_000;
await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
const address = server.address();
const port = typeof address === "object" && address ? address.port : 0;

serveRpc(
  {
    backends: (origins: string[]) => {
      setBackends(origins);
      return true;
    },
    stats: () =>
      backends.map(({ origin, sent, refused, failedAfterSend }) => ({
        origin,
        sent,
        refused,
        failedAfterSend,
      })),
    resetStats: () => {
      for (const b of backends) {
        b.sent = 0;
        b.refused = 0;
        b.failedAfterSend = 0;
      }
      return true;
    },
    stop: async () => {
      server.close();
      await Promise.all(backends.map((b) => b.pool.close()));
      setImmediate(() => process.exit(0));
      return true;
    },
  },
  { port },
);
