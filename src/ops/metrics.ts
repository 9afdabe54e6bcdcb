import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";

/**
 * Prometheus metrics, one registry per bot (so tests can build several). Label values are always
 * from small fixed sets: subcommand names, operation names, outcomes, HTTP statuses, Slack error
 * codes. Never a key, a token, a team id or free text.
 */
export interface Metrics {
  readonly registry: Registry;
  readonly commands: Counter<"subcommand" | "outcome">;
  readonly edgeRequests: Counter<"operation" | "status">;
  readonly edgeLatency: Histogram<"operation">;
  readonly queueWait: Histogram;
  readonly queueRejections: Counter;
  readonly slackApiErrors: Counter<"method" | "error">;
  readonly approvals: Counter<"state">;
  readonly schedulerRuns: Counter<"outcome">;
  readonly edgeQueueKeys: Gauge;
  readonly edgeQueueWaiting: Gauge;
  readonly edgeQueueInFlight: Gauge;
  readonly slackInFlight: Gauge;
  readonly shutdownAbandoned: Counter;
  readonly slackRefused: Counter<"reason" | "kind">;
}

export function createMetrics(options: { defaults?: boolean } = {}): Metrics {
  const registry = new Registry();
  if (options.defaults !== false) collectDefaultMetrics({ register: registry, prefix: "edgeops_" });
  const registers = [registry];
  return {
    registry,
    commands: new Counter({
      name: "edgeops_commands_total",
      help: "Slash commands answered, by subcommand and outcome (ok, usage, error).",
      labelNames: ["subcommand", "outcome"],
      registers,
    }),
    edgeRequests: new Counter({
      name: "edgeops_edge_requests_total",
      help: "Edge API HTTP attempts by operation and status (HTTP status or error kind).",
      labelNames: ["operation", "status"],
      registers,
    }),
    edgeLatency: new Histogram({
      name: "edgeops_edge_request_duration_seconds",
      help: "Edge API attempt latency by operation.",
      labelNames: ["operation"],
      buckets: [0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    }),
    queueWait: new Histogram({
      name: "edgeops_edge_queue_wait_seconds",
      help: "Time Edge API calls waited in their key's queue.",
      buckets: [0.001, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    }),
    queueRejections: new Counter({
      name: "edgeops_edge_queue_rejections_total",
      help: "Edge API calls refused at once because their key's queue was full.",
      registers,
    }),
    slackApiErrors: new Counter({
      name: "edgeops_slack_api_errors_total",
      help: "Slack Web API calls that failed, by method and Slack error code.",
      labelNames: ["method", "error"],
      registers,
    }),
    approvals: new Counter({
      name: "edgeops_approval_requests_total",
      help: "Approval requests entering each state (pending, approved, rejected, expired, applied, failed, cancelled).",
      labelNames: ["state"],
      registers,
    }),
    schedulerRuns: new Counter({
      name: "edgeops_scheduler_runs_total",
      help: "Scheduled DNS summaries run, by outcome.",
      labelNames: ["outcome"],
      registers,
    }),
    edgeQueueKeys: new Gauge({
      name: "edgeops_edge_queue_keys",
      help: "API keys with a live (non-idle) Edge API queue.",
      registers,
    }),
    edgeQueueWaiting: new Gauge({
      name: "edgeops_edge_queue_waiting",
      help: "Edge API calls waiting in their key's queue (all keys).",
      registers,
    }),
    edgeQueueInFlight: new Gauge({
      name: "edgeops_edge_queue_in_flight",
      help: "Edge API calls in progress (all keys).",
      registers,
    }),
    slackInFlight: new Gauge({
      name: "edgeops_slack_requests_in_flight",
      help: "Slack requests (commands, actions, views, events) whose listeners are still working.",
      registers,
    }),
    shutdownAbandoned: new Counter({
      name: "edgeops_shutdown_abandoned_total",
      help: "Slack requests still unfinished when a graceful shutdown ran out of time.",
      registers,
    }),
    slackRefused: new Counter({
      name: "edgeops_slack_refused_total",
      help: "Slack requests acknowledged and then not run, by reason (authorization, shutdown) and kind.",
      labelNames: ["reason", "kind"],
      registers,
    }),
  };
}
