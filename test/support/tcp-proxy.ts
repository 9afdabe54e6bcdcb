import { connect, createServer, type Server, type Socket } from "node:net";

/**
 * A TCP proxy to PostgreSQL for fault tests. `cut()` drops every connection and stops listening (the
 * database "goes away"); `stall()` keeps the connections open now but stops forwarding on them in both
 * directions, until `resume()`: half-open connections (nothing is refused, nothing answers), as when a
 * firewall or NAT forgets a flow. Connections made after `stall()` are forwarded.
 */
export interface TcpProxy {
  /** Listen (again) on `port`, or on a free port; resolves to the port. */
  start(port?: number): Promise<number>;
  cut(): Promise<void>;
  stall(): void;
  resume(): void;
}

export function tcpProxy(target: URL): TcpProxy {
  let server: Server | undefined;
  const pairs = new Set<{ client: Socket; upstream: Socket }>();
  const forward = ({ client, upstream }: { client: Socket; upstream: Socket }) => {
    client.pipe(upstream);
    upstream.pipe(client);
  };
  return {
    start(port = 0) {
      server = createServer((client) => {
        const upstream = connect(Number(target.port || 5432), target.hostname);
        const pair = { client, upstream };
        pairs.add(pair);
        forward(pair);
        const end = () => {
          client.destroy();
          upstream.destroy();
          pairs.delete(pair);
        };
        client.on("error", end).on("close", end);
        upstream.on("error", end).on("close", end);
      });
      return new Promise((resolve) =>
        server!.listen(port, "127.0.0.1", () => resolve((server!.address() as { port: number }).port)),
      );
    },
    cut() {
      for (const { client, upstream } of pairs) {
        client.destroy();
        upstream.destroy();
      }
      pairs.clear();
      return new Promise((resolve) => (server ? server.close(() => resolve()) : resolve()));
    },
    stall() {
      for (const { client, upstream } of pairs) {
        client.unpipe(upstream);
        upstream.unpipe(client);
        client.pause();
        upstream.pause();
      }
    },
    resume() {
      for (const pair of pairs) {
        forward(pair);
        pair.client.resume();
        pair.upstream.resume();
      }
    },
  };
}
