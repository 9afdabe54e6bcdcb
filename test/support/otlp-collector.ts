import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";

/** What an OpenTelemetry collector on loopback received: one OTLP/HTTP post each. */
export interface Received {
  path: string;
  contentType: string | undefined;
  body: Buffer;
}

/**
 * A stand-in for an OpenTelemetry collector on 127.0.0.1: it records every post and answers 200.
 * Protobuf keeps strings as UTF-8 bytes, so a test finds span names and ids in `body` as they are.
 */
export async function startCollector() {
  const received: Received[] = [];
  let arrived: (() => void) | undefined;
  const server = createServer((req: IncomingMessage, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      received.push({
        path: req.url ?? "",
        contentType: req.headers["content-type"],
        body: Buffer.concat(chunks),
      });
      res.writeHead(200, { "content-type": "application/x-protobuf" }).end();
      arrived?.();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    next: () =>
      new Promise<void>((resolve) => {
        arrived = resolve;
      }),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
