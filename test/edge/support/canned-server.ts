import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { eventWaiter } from "../../support/event-waiter.js";

/**
 * A tiny loopback HTTP server answering with canned status / headers / bodies, recording every request.
 * It never waits on time: a slow answer is one held until the test releases it (`holdUntil`), and a test
 * waits for a request to arrive (`waitForRequests`), not for a delay to pass.
 */

export interface CannedRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  headers: Record<string, string>;
  body: string;
  /** When received, on the server's `now` (default the wall clock; a test's manual clock). */
  at: number;
}

export interface CannedAnswer {
  status?: number;
  headers?: Record<string, string>;
  /** A string is sent as is; anything else as JSON; undefined = empty body. */
  body?: unknown;
  /**
   * Hold the answer until this promise settles: the test decides when the call stops being in flight
   * (e.g. release it once other calls queued behind it, or never, and move a manual clock past the
   * client's timeout). A held answer never keeps the server from closing.
   */
  holdUntil?: Promise<unknown>;
  /** Destroy the socket without answering. */
  reset?: boolean;
}

export type CannedHandler = (req: CannedRequest, index: number) => CannedAnswer | Promise<CannedAnswer>;

export interface CannedServer {
  url: string;
  requests: CannedRequest[];
  /**
   * Resolves once `count` requests were received (already or later), with them; rejects after `guardMs`
   * (a guard that fails the test, not a wait).
   */
  waitForRequests(count: number, guardMs?: number): Promise<CannedRequest[]>;
  /** Requests received and not yet answered (held, or dropped by the client). */
  inFlight(): number;
  handle(h: CannedHandler): void;
  close(): Promise<void>;
}

export interface CannedServerOptions {
  /** The clock requests are stamped with (`at`); default the wall clock. */
  now?: () => number;
}

export async function startCannedServer(
  initial?: CannedHandler,
  options: CannedServerOptions = {},
): Promise<CannedServer> {
  let handler: CannedHandler = initial ?? (() => ({ status: 200, body: {} }));
  const now = options.now ?? Date.now;
  const requests: CannedRequest[] = [];
  const arrivals = eventWaiter();
  let inFlight = 0;
  let closing = () => {};
  const closed = new Promise<void>((resolve) => (closing = resolve));
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
        at: now(),
      };
      const index = requests.push(r) - 1;
      inFlight++;
      res.once("close", () => inFlight--);
      arrivals.notify();
      const a = await handler(r, index);
      if (a.holdUntil) await Promise.race([a.holdUntil.catch(() => undefined), closed]);
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
    waitForRequests: (count, guardMs = 115_000) =>
      arrivals.until(
        () => requests.length >= count && requests.slice(0, count),
        () => `canned server: ${count} requests (${requests.length} so far)`,
        guardMs,
      ),
    inFlight: () => inFlight,
    handle(h) {
      handler = h;
    },
    close: () =>
      new Promise<void>((ok) => {
        closing();
        for (const s of sockets) s.destroy();
        server.close(() => ok());
      }),
  };
}
