import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { TransportError } from "../errors.js";
import type { Logger } from "../log.js";

export interface MetricsServer {
  readonly port: number;
  close(): Promise<void>;
}

/**
 * METRICS_PORT: /metrics alone on its own port, so it can stay on an internal network while PORT faces
 * Slack or a load balancer. Every other path is 404.
 */
export async function startMetricsServer(o: {
  port: number;
  handler: (req: IncomingMessage, res: ServerResponse) => void;
  logger: Logger;
}): Promise<MetricsServer> {
  const server = createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0];
    if (path === "/metrics" && req.method === "GET") return o.handler(req, res);
    res.writeHead(404, { "content-type": "text/plain; charset=utf-8" });
    res.end("Only GET /metrics is served on METRICS_PORT.\n");
  });
  try {
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(o.port, () => {
        server.off("error", reject);
        resolve();
      });
    });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new TransportError(
      code === "EADDRINUSE"
        ? "METRICS_PORT is already in use: choose another METRICS_PORT (0 serves /metrics on PORT)."
        : `The /metrics server could not start on METRICS_PORT: ${(err as Error).message}`,
    );
  }
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : o.port;
  o.logger.info({ port }, "serving /metrics on METRICS_PORT");
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
