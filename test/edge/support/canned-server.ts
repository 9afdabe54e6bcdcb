import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** A tiny loopback HTTP server answering with canned status / headers / bodies, recording every request. */

export interface CannedRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  headers: Record<string, string>;
  body: string;
  at: number;
}

export interface CannedAnswer {
  status?: number;
  headers?: Record<string, string>;
  /** A string is sent as is; anything else as JSON; undefined = empty body. */
  body?: unknown;
  delayMs?: number;
  /** Destroy the socket without answering. */
  reset?: boolean;
}

export type CannedHandler = (req: CannedRequest, index: number) => CannedAnswer | Promise<CannedAnswer>;

export interface CannedServer {
  url: string;
  requests: CannedRequest[];
  handle(h: CannedHandler): void;
  close(): Promise<void>;
}

export async function startCannedServer(initial?: CannedHandler): Promise<CannedServer> {
  let handler: CannedHandler = initial ?? (() => ({ status: 200, body: {} }));
  const requests: CannedRequest[] = [];
  const sockets = new Set<import("node:net").Socket>();
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", async () => {
      const url = new URL(req.url ?? "/", "http://localhost");
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers)) {
        if (v !== undefined) headers[k.toLowerCase()] = Array.isArray(v) ? v.join(", ") : v;
      }
      const r: CannedRequest = {
        method: req.method ?? "GET",
        path: url.pathname,
        query: Object.fromEntries(url.searchParams),
        headers,
        body: Buffer.concat(chunks).toString("utf8"),
        at: Date.now(),
      };
      const index = requests.push(r) - 1;
      const a = await handler(r, index);
      if (a.delayMs) await new Promise((ok) => setTimeout(ok, a.delayMs));
      if (a.reset) {
        req.socket.destroy();
        return;
      }
      if (res.destroyed) return;
      const body = a.body === undefined ? "" : typeof a.body === "string" ? a.body : JSON.stringify(a.body);
      res.writeHead(a.status ?? 200, {
        ...(body !== "" ? { "content-type": "application/json" } : {}),
        ...a.headers,
      });
      res.end(body);
    });
  });
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    handle(h) {
      handler = h;
    },
    close: () =>
      new Promise<void>((ok) => {
        for (const s of sockets) s.destroy();
        server.close(() => ok());
      }),
  };
}
