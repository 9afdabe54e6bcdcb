import type { ServerResponse } from "node:http";
import type { CustomRoute } from "@slack/bolt";
import { withDeadline } from "../deadline.js";
import type { EdgeApi } from "../edge/client.js";
import type { Logger } from "../log.js";
import type { Metrics } from "./metrics.js";

/**
 * `GET /healthz` (the process is alive), `GET /readyz` (every readiness check passes: 200, otherwise
 * 503 naming the failing parts) and `GET /metrics` (Prometheus text). Served on PORT beside
 * /slack/events in HTTP mode and by Bolt's Socket Mode HTTP server in Socket Mode.
 */

export interface ReadinessCheck {
  readonly name: string;
  /** undefined when healthy, otherwise a short sentence saying what is wrong. */
  check(): Promise<string | undefined> | string | undefined;
}

export interface OpsRoutesOptions {
  metrics: Metrics;
  edge: Pick<EdgeApi, "queueStats">;
  checks: readonly ReadinessCheck[];
  /** True once a graceful shutdown has begun: readiness fails so load balancers stop sending work. */
  stopping: () => boolean;
  inFlight: () => number;
  logger: Logger;
  /** Each readiness check gets this long before it counts as failing. */
  checkTimeoutMs?: number;
}

export interface Readiness {
  ready: boolean;
  checks: Record<string, string>;
  failing: string[];
}

export async function readiness(options: OpsRoutesOptions): Promise<Readiness> {
  const timeoutMs = options.checkTimeoutMs ?? 2000;
  const checks: Record<string, string> = {};
  const failing: string[] = [];
  if (options.stopping()) {
    checks.shutdown = "edgeops is shutting down";
    failing.push("shutdown");
  }
  const results = await Promise.all(
    options.checks.map(async (c) => {
      try {
        const problem = await withDeadline(
          Promise.resolve().then(() => c.check()),
          timeoutMs,
          () => `no answer within ${timeoutMs} ms`,
        );
        return [c.name, problem] as const;
      } catch (err) {
        return [c.name, err instanceof Error ? err.message : String(err)] as const;
      }
    }),
  );
  for (const [name, problem] of results) {
    checks[name] = problem ?? "ok";
    if (problem !== undefined) failing.push(name);
  }
  return { ready: failing.length === 0, checks, failing };
}

function send(res: ServerResponse, status: number, contentType: string, body: string): void {
  res.writeHead(status, {
    "content-type": contentType,
    "cache-control": "no-store",
    "content-length": Buffer.byteLength(body),
  });
  res.end(body);
}

export function opsRoutes(options: OpsRoutesOptions): CustomRoute[] {
  const { metrics, logger } = options;
  const guard =
    (name: string, fn: (res: ServerResponse) => Promise<void> | void) =>
    (_req: unknown, res: ServerResponse) => {
      Promise.resolve()
        .then(() => fn(res))
        .catch((err: unknown) => {
          logger.error({ err, route: name }, "an operations endpoint failed");
          if (!res.headersSent) send(res, 500, "text/plain; charset=utf-8", "internal error\n");
          else res.destroy();
        });
    };

  return [
    {
      path: "/healthz",
      method: ["GET", "HEAD"],
      handler: guard("/healthz", (res) => send(res, 200, "text/plain; charset=utf-8", "ok\n")),
    },
    {
      path: "/readyz",
      method: ["GET", "HEAD"],
      handler: guard("/readyz", async (res) => {
        const r = await readiness(options);
        const body = r.ready
          ? { status: "ready", checks: r.checks }
          : {
              status: "not ready",
              failing: r.failing,
              checks: r.checks,
              message: `Not ready: ${r.failing.map((f) => `${f} (${r.checks[f]})`).join(", ")}`,
            };
        send(res, r.ready ? 200 : 503, "application/json", `${JSON.stringify(body)}\n`);
      }),
    },
    {
      path: "/metrics",
      method: "GET",
      handler: guard("/metrics", async (res) => {
        const q = options.edge.queueStats();
        metrics.edgeQueueKeys.set(q.keys);
        metrics.edgeQueueWaiting.set(q.waiting);
        metrics.edgeQueueInFlight.set(q.inFlight);
        metrics.slackInFlight.set(options.inFlight());
        send(res, 200, metrics.registry.contentType, await metrics.registry.metrics());
      }),
    },
  ];
}
