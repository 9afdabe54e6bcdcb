import { createHash, timingSafeEqual } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { CustomRoute } from "@slack/bolt";
import type { Clock } from "../clock.js";
import { withDeadline } from "../deadline.js";
import type { EdgeApi } from "../edge/client.js";
import type { Logger } from "../log.js";
import type { Metrics } from "./metrics.js";

/**
 * `GET /healthz` (the process is alive), `GET /readyz` (every readiness check passes: 200, otherwise
 * 503 naming the failing parts) and `GET /metrics` (Prometheus text, behind METRICS_TOKEN when set).
 * Served on PORT beside /slack/events in HTTP mode and by Bolt's Socket Mode HTTP server in Socket
 * Mode; /metrics moves to its own server with METRICS_PORT (src/ops/metrics-server.ts).
 */

export interface ReadinessCheck {
  readonly name: string;
  /**
   * undefined when healthy, otherwise a short sentence of ours saying what is wrong. /readyz is often
   * public: never a driver's message (host, port, user). A check that throws reads "unavailable".
   */
  check(): Promise<string | undefined> | string | undefined;
  /** Its problem is shown under `checks` but does not fail readiness (degraded, still serving). */
  readonly advisory?: boolean;
}

/** How long each readiness check gets by default; a probe of /readyz must wait longer than this. */
export const READINESS_CHECK_TIMEOUT_MS = 2000;

/** What /readyz says of a check that failed with an error: the error itself goes to the log only. */
export const UNAVAILABLE = "unavailable";

export interface OpsRoutesOptions {
  metrics: Metrics;
  edge: Pick<EdgeApi, "queueStats">;
  checks: readonly ReadinessCheck[];
  /** True once a graceful shutdown has begun: readiness fails so load balancers stop sending work. */
  stopping: () => boolean;
  inFlight: () => number;
  logger: Logger;
  /** Times each readiness check. */
  clock: Clock;
  /** Each readiness check gets this long before it counts as failing. */
  checkTimeoutMs?: number;
  /** METRICS_TOKEN: /metrics answers 401 without `Authorization: Bearer <token>`. */
  metricsToken?: string | undefined;
  /** False when /metrics has its own port (METRICS_PORT) and is not served beside the others. */
  metricsOnPort?: boolean;
}

export interface Readiness {
  ready: boolean;
  checks: Record<string, string>;
  failing: string[];
}

export async function readiness(options: OpsRoutesOptions): Promise<Readiness> {
  const timeoutMs = options.checkTimeoutMs ?? READINESS_CHECK_TIMEOUT_MS;
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
          options.clock,
          Promise.resolve().then(() => c.check()),
          timeoutMs,
          () => `no answer within ${timeoutMs} ms`,
        );
        return [c.name, problem, c.advisory === true] as const;
      } catch (err) {
        options.logger.warn({ err, check: c.name }, "a readiness check failed");
        return [c.name, UNAVAILABLE, c.advisory === true] as const;
      }
    }),
  );
  for (const [name, problem, advisory] of results) {
    checks[name] = problem ?? "ok";
    if (problem !== undefined && !advisory) failing.push(name);
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

/** Compares digests, so neither the token's length nor its prefix shows in the timing. */
function bearerMatches(header: string | undefined, token: string): boolean {
  const presented = /^Bearer +(\S+)$/i.exec(header?.trim() ?? "")?.[1];
  if (presented === undefined) return false;
  const digest = (v: string) => createHash("sha256").update(v).digest();
  return timingSafeEqual(digest(presented), digest(token));
}

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/** The /metrics handler, on PORT or on METRICS_PORT's own server. */
export function metricsHandler(options: OpsRoutesOptions): Handler {
  const { metrics, metricsToken } = options;
  return guarded(options.logger, "/metrics", async (req, res) => {
    if (metricsToken !== undefined && !bearerMatches(req.headers.authorization, metricsToken)) {
      res.setHeader("www-authenticate", 'Bearer realm="edgeops metrics"');
      send(
        res,
        401,
        "text/plain; charset=utf-8",
        "/metrics needs the header Authorization: Bearer <METRICS_TOKEN>.\n",
      );
      return;
    }
    const q = options.edge.queueStats();
    metrics.edgeQueueKeys.set(q.keys);
    metrics.edgeQueueWaiting.set(q.waiting);
    metrics.edgeQueueInFlight.set(q.inFlight);
    metrics.slackInFlight.set(options.inFlight());
    send(res, 200, metrics.registry.contentType, await metrics.registry.metrics());
  });
}

function guarded(
  logger: Logger,
  name: string,
  fn: (req: IncomingMessage, res: ServerResponse) => Promise<void> | void,
): Handler {
  return (req, res) => {
    Promise.resolve()
      .then(() => fn(req, res))
      .catch((err: unknown) => {
        logger.error({ err, route: name }, "an operations endpoint failed");
        if (!res.headersSent) send(res, 500, "text/plain; charset=utf-8", "internal error\n");
        else res.destroy();
      });
  };
}

export function opsRoutes(options: OpsRoutesOptions): CustomRoute[] {
  const guard = (name: string, fn: (res: ServerResponse) => Promise<void> | void): Handler =>
    guarded(options.logger, name, (_req, res) => fn(res));
  const routes: CustomRoute[] = [
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
  ];
  if (options.metricsOnPort !== false)
    routes.push({ path: "/metrics", method: "GET", handler: metricsHandler(options) });
  return routes;
}
