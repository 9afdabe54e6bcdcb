import { z } from "zod";

/**
 * The only reader of the environment. Every variable is listed in `.env.example` with its default;
 * a test keeps the configuration table in docs/operations.md, `.env.example` and this schema equal.
 */

const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;

const emptyToUndefined = (v: unknown) => (typeof v === "string" && v.trim() === "" ? undefined : v);

function intVar(name: string, def: number, min: number, max: number) {
  return z.preprocess(
    emptyToUndefined,
    z
      .string()
      .optional()
      .transform((v, ctx) => {
        if (v === undefined) return def;
        const n = Number(v.trim());
        if (!Number.isInteger(n) || n < min || n > max) {
          ctx.addIssue({
            code: "custom",
            message: `${name} must be a whole number from ${min} to ${max} (got "${v}")`,
          });
          return z.NEVER;
        }
        return n;
      }),
  );
}

function urlVar(name: string, protocols: readonly string[]) {
  return z.preprocess(
    emptyToUndefined,
    z
      .string()
      .optional()
      .refine(
        (v) => {
          if (v === undefined) return true;
          try {
            return protocols.includes(new URL(v).protocol);
          } catch {
            return false;
          }
        },
        { message: `${name} must be a URL starting with ${protocols.map((p) => `${p}//`).join(" or ")}` },
      ),
  );
}

const optionalString = z.preprocess(emptyToUndefined, z.string().trim().optional());

/** A comma-separated list of Slack ids matching `pattern`, e.g. user ids or team ids. */
function idListVar(name: string, pattern: RegExp, what: string) {
  return z.preprocess(
    emptyToUndefined,
    z
      .string()
      .optional()
      .transform((v, ctx) => {
        if (v === undefined) return [] as string[];
        const ids = v
          .split(",")
          .map((s) => s.trim())
          .filter(Boolean);
        const bad = ids.filter((id) => !pattern.test(id));
        if (bad.length > 0) {
          ctx.addIssue({
            code: "custom",
            message: `${name} must be comma-separated ${what} (not ${bad.join(", ")})`,
          });
          return z.NEVER;
        }
        return ids;
      }),
  );
}

/** An admin from ADMIN_USER_IDS: `U…` (every workspace the deployment serves) or `T…:U…` (that one). */
export interface AdminId {
  readonly teamId: string | undefined;
  readonly userId: string;
}

const ADMIN_ID = /^(?:([TE][A-Z0-9]{2,}):)?([UW][A-Z0-9]{2,})$/;

function adminIdsVar(name: string) {
  return idListVar(
    name,
    ADMIN_ID,
    "Slack user ids like U012ABCDEF, or T012ABCDEF:U012ABCDEF pairs",
  ).transform((ids): AdminId[] =>
    ids.map((id) => {
      const m = ADMIN_ID.exec(id)!;
      return { teamId: m[1], userId: m[2]! };
    }),
  );
}

function flagVar(name: string) {
  return z.preprocess(
    (v) => (typeof v === "string" ? v.trim().toLowerCase() || undefined : v),
    z
      .enum(["0", "1", "true", "false"], { message: `${name} must be 1 or 0` })
      .optional()
      .transform((v) => v === "1" || v === "true"),
  );
}

const envSchema = z.object({
  NODE_ENV: z.preprocess(emptyToUndefined, z.string().default("development")),
  LOG_LEVEL: z.preprocess(
    (v) => (typeof v === "string" ? v.trim().toLowerCase() || undefined : v),
    z.enum(LOG_LEVELS, { message: `LOG_LEVEL must be one of ${LOG_LEVELS.join(", ")}` }).default("info"),
  ),
  EDGE_API_URL: urlVar("EDGE_API_URL", ["https:", "http:"]),
  EDGE_API_KEY: optionalString,
  EDGE_API_KEY_TEAMS: idListVar("EDGE_API_KEY_TEAMS", /^[TE][A-Z0-9]{2,}$/, "Slack team ids like T012ABCDEF"),
  EDGE_API_RATE_PER_SEC: intVar("EDGE_API_RATE_PER_SEC", 10, 1, 1000),
  EDGE_API_CONCURRENCY: intVar("EDGE_API_CONCURRENCY", 4, 1, 100),
  EDGE_API_TIMEOUT_MS: intVar("EDGE_API_TIMEOUT_MS", 10_000, 100, 120_000),
  EDGE_API_MAX_QUEUE: intVar("EDGE_API_MAX_QUEUE", 100, 1, 100_000),
  EDGE_API_MAX_BODY_BYTES: intVar("EDGE_API_MAX_BODY_BYTES", 10_485_760, 1024, 1_073_741_824),
  DATA_DIR: z.preprocess(emptyToUndefined, z.string().default("./data")),
  DATABASE_URL: urlVar("DATABASE_URL", ["postgres:", "postgresql:"]),
  DATABASE_STATEMENT_TIMEOUT_MS: intVar("DATABASE_STATEMENT_TIMEOUT_MS", 5000, 100, 600_000),
  AUDIT_RETENTION_DAYS: intVar("AUDIT_RETENTION_DAYS", 400, 1, 36_500),
  FUNCTION_EXECUTION_RETENTION_DAYS: intVar("FUNCTION_EXECUTION_RETENTION_DAYS", 30, 1, 36_500),
  ENCRYPTION_KEY: optionalString,
  ENCRYPTION_KEYS: optionalString,
  PORT: intVar("PORT", 3000, 0, 65_535),
  HTTP_MAX_PAYLOADS_IN_FLIGHT: intVar("HTTP_MAX_PAYLOADS_IN_FLIGHT", 500, 1, 100_000),
  SLACK_API_URL: urlVar("SLACK_API_URL", ["https:", "http:"]),
  SLACK_BOT_TOKEN: optionalString,
  SLACK_SIGNING_SECRET: optionalString,
  SLACK_APP_TOKEN: optionalString,
  SLACK_CLIENT_ID: optionalString,
  SLACK_CLIENT_SECRET: optionalString,
  SLACK_STATE_SECRET: optionalString,
  ADMIN_USER_IDS: adminIdsVar("ADMIN_USER_IDS"),
  SHUTDOWN_TIMEOUT_MS: intVar("SHUTDOWN_TIMEOUT_MS", 10_000, 0, 600_000),
  SCHEDULES_PER_CHANNEL: intVar("SCHEDULES_PER_CHANNEL", 10, 1, 1000),
  SCHEDULES_PER_WORKSPACE: intVar("SCHEDULES_PER_WORKSPACE", 100, 1, 100_000),
  WATCHES_PER_CHANNEL: intVar("WATCHES_PER_CHANNEL", 10, 1, 1000),
  WATCHES_PER_WORKSPACE: intVar("WATCHES_PER_WORKSPACE", 50, 1, 100_000),
  WATCH_SHARE: intVar("WATCH_SHARE", 30, 1, 100),
  WATCH_INTERVAL_MS: intVar("WATCH_INTERVAL_MS", 60_000, 1_000, 3_600_000),
  WATCH_STUCK_DEPLOYING_MS: intVar("WATCH_STUCK_DEPLOYING_MS", 900_000, 60_000, 86_400_000),
  ALERT_COOLDOWN_MS: intVar("ALERT_COOLDOWN_MS", 600_000, 0, 86_400_000),
  SCHEDULER_INTERVAL_MS: intVar("SCHEDULER_INTERVAL_MS", 30_000, 500, 3_600_000),
  SCHEDULER_LEASE_MS: intVar("SCHEDULER_LEASE_MS", 60_000, 1_000, 3_600_000),
  METRICS_TOKEN: optionalString,
  METRICS_PORT: intVar("METRICS_PORT", 0, 0, 65_535),
  CONSOLE_ALLOW_DATABASE_URL: flagVar("CONSOLE_ALLOW_DATABASE_URL"),
  REDIS_URL: urlVar("REDIS_URL", ["redis:", "rediss:"]),
  EXPECTED_REPLICAS: intVar("EXPECTED_REPLICAS", 1, 1, 1000),
  OTEL_EXPORTER_OTLP_ENDPOINT: urlVar("OTEL_EXPORTER_OTLP_ENDPOINT", ["http:", "https:"]),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: urlVar("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", ["http:", "https:"]),
  MCP_ENABLED: flagVar("MCP_ENABLED"),
  EDGEOPS_AGENT_TOKEN: optionalString,
});

export interface Config {
  readonly nodeEnv: string;
  readonly production: boolean;
  readonly logLevel: (typeof LOG_LEVELS)[number];
  readonly edge: {
    readonly baseUrl: string;
    readonly defaultApiKey: string | undefined;
    /** With OAuth installs, the only workspaces the deployment's key serves. */
    readonly defaultApiKeyTeams: readonly string[];
    readonly ratePerSec: number;
    readonly concurrency: number;
    readonly timeoutMs: number;
    readonly maxQueue: number;
    readonly maxBodyBytes: number;
  };
  readonly store: {
    readonly dataDir: string;
    readonly databaseUrl: string | undefined;
    readonly statementTimeoutMs: number;
    /** Audit rows older than this many days are deleted by the sweeper. */
    readonly auditRetentionDays: number;
    /** Days a Workflow Builder step's row is kept after its last update (FUNCTION_EXECUTION_RETENTION_DAYS). */
    readonly functionExecutionRetentionDays: number;
    readonly encryptionKey: string | undefined;
    readonly encryptionKeys: string | undefined;
  };
  readonly slack: {
    readonly apiUrl: string | undefined;
    readonly botToken: string | undefined;
    readonly signingSecret: string | undefined;
    readonly appToken: string | undefined;
    readonly clientId: string | undefined;
    readonly clientSecret: string | undefined;
    readonly stateSecret: string | undefined;
    /** Bare ids only on single-workspace deployments (loadConfig refuses them with OAuth). */
    readonly adminUserIds: readonly AdminId[];
  };
  readonly port: number;
  /**
   * HTTP mode: payloads acknowledged by the front thread and not yet handled by the main thread, at most;
   * beyond it a signed payload is answered 503 with Retry-After.
   */
  readonly httpMaxPayloadsInFlight: number;
  readonly shutdownTimeoutMs: number;
  readonly schedules: {
    readonly perChannel: number;
    readonly perWorkspace: number;
    /** How often every replica looks for due schedules. */
    readonly intervalMs: number;
    /** A claimed occurrence whose replica stopped renewing this long is claimed again by another. */
    readonly leaseMs: number;
  };
  readonly watches: {
    readonly perChannel: number;
    readonly perWorkspace: number;
    /** Percent of a key's EDGE_API_RATE_PER_SEC its watches may use together. */
    readonly sharePercent: number;
    /** How often a watch is evaluated when its key's budget allows (stretched when it does not). */
    readonly intervalMs: number;
    /** An app still deploying after this long alerts. */
    readonly stuckDeployingMs: number;
    /** A resolved alert that fires again within this long reopens in the same thread. */
    readonly cooldownMs: number;
  };
  readonly metrics: {
    /** Bearer token /metrics requires when set. */
    readonly token: string | undefined;
    /** Serve /metrics on this port instead of PORT when not 0. */
    readonly port: number;
  };
  readonly console: {
    readonly allowDatabaseUrl: boolean;
  };
  readonly redis: {
    /** Shares the per-key Edge API rate across replicas when set. */
    readonly url: string | undefined;
    /** Divides the rate while Redis is away (each replica's local share). */
    readonly expectedReplicas: number;
  };
  /** OpenTelemetry traces (src/ops/tracing.ts): off while neither endpoint is set. */
  readonly tracing: {
    readonly endpoint: string | undefined;
    readonly tracesEndpoint: string | undefined;
  };
  readonly mcp: {
    /** The MCP server for AI agents (src/mcp): /mcp on the HTTP server, and `npm run mcp`. Off by default. */
    readonly enabled: boolean;
    /** `npm run mcp` (stdio): the agent token it acts with. */
    readonly agentToken: string | undefined;
  };
}

export class ConfigError extends Error {
  override readonly name = "ConfigError";
  constructor(readonly problems: readonly string[]) {
    super(`Configuration is not valid:\n${problems.map((p) => `  - ${p}`).join("\n")}`);
  }
}

export const CONFIG_VARIABLES = Object.keys(envSchema.shape) as readonly (keyof typeof envSchema.shape)[];

function deepFreeze<T>(o: T): T {
  if (o && typeof o === "object") {
    for (const v of Object.values(o)) deepFreeze(v);
    Object.freeze(o);
  }
  return o;
}

/** The Slack credential variables that are set (names only): any of them means a real Slack deployment. */
export function slackCredentialsSet(config: Config): string[] {
  const s = config.slack;
  const vars: [string, string | undefined][] = [
    ["SLACK_BOT_TOKEN", s.botToken],
    ["SLACK_SIGNING_SECRET", s.signingSecret],
    ["SLACK_APP_TOKEN", s.appToken],
    ["SLACK_CLIENT_ID", s.clientId],
    ["SLACK_CLIENT_SECRET", s.clientSecret],
    ["SLACK_STATE_SECRET", s.stateSecret],
  ];
  return vars.filter(([, v]) => Boolean(v)).map(([name]) => name);
}

/** Parse the environment once. Throws ConfigError naming every bad variable and what it accepts. */
export function loadConfig(env: Record<string, string | undefined>): Config {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => {
      const name = String(i.path[0] ?? "environment");
      return i.message.includes(name) ? i.message : `${name}: ${i.message}`;
    });
    throw new ConfigError(problems);
  }
  const e = parsed.data;
  const bareAdmins = e.ADMIN_USER_IDS.filter((a) => a.teamId === undefined).map((a) => a.userId);
  if (bareAdmins.length > 0 && (e.SLACK_CLIENT_ID || e.SLACK_CLIENT_SECRET || e.SLACK_STATE_SECRET)) {
    // With OAuth installs a bare id would be an admin in every workspace that installs the app.
    throw new ConfigError([
      `ADMIN_USER_IDS: with OAuth installs (SLACK_CLIENT_ID) write each admin as the workspace and user id, ` +
        `like T012ABCDEF:${bareAdmins[0]} (not ${bareAdmins.join(", ")})`,
    ]);
  }
  return deepFreeze({
    nodeEnv: e.NODE_ENV,
    production: e.NODE_ENV === "production",
    logLevel: e.LOG_LEVEL,
    edge: {
      baseUrl: (e.EDGE_API_URL ?? "https://api.bunny.net").replace(/\/+$/, ""),
      defaultApiKey: e.EDGE_API_KEY,
      defaultApiKeyTeams: e.EDGE_API_KEY_TEAMS,
      ratePerSec: e.EDGE_API_RATE_PER_SEC,
      concurrency: e.EDGE_API_CONCURRENCY,
      timeoutMs: e.EDGE_API_TIMEOUT_MS,
      maxQueue: e.EDGE_API_MAX_QUEUE,
      maxBodyBytes: e.EDGE_API_MAX_BODY_BYTES,
    },
    store: {
      dataDir: e.DATA_DIR,
      databaseUrl: e.DATABASE_URL,
      statementTimeoutMs: e.DATABASE_STATEMENT_TIMEOUT_MS,
      auditRetentionDays: e.AUDIT_RETENTION_DAYS,
      functionExecutionRetentionDays: e.FUNCTION_EXECUTION_RETENTION_DAYS,
      encryptionKey: e.ENCRYPTION_KEY,
      encryptionKeys: e.ENCRYPTION_KEYS,
    },
    slack: {
      apiUrl: e.SLACK_API_URL,
      botToken: e.SLACK_BOT_TOKEN,
      signingSecret: e.SLACK_SIGNING_SECRET,
      appToken: e.SLACK_APP_TOKEN,
      clientId: e.SLACK_CLIENT_ID,
      clientSecret: e.SLACK_CLIENT_SECRET,
      stateSecret: e.SLACK_STATE_SECRET,
      adminUserIds: e.ADMIN_USER_IDS,
    },
    port: e.PORT,
    httpMaxPayloadsInFlight: e.HTTP_MAX_PAYLOADS_IN_FLIGHT,
    shutdownTimeoutMs: e.SHUTDOWN_TIMEOUT_MS,
    schedules: {
      perChannel: e.SCHEDULES_PER_CHANNEL,
      perWorkspace: e.SCHEDULES_PER_WORKSPACE,
      intervalMs: e.SCHEDULER_INTERVAL_MS,
      leaseMs: e.SCHEDULER_LEASE_MS,
    },
    watches: {
      perChannel: e.WATCHES_PER_CHANNEL,
      perWorkspace: e.WATCHES_PER_WORKSPACE,
      sharePercent: e.WATCH_SHARE,
      intervalMs: e.WATCH_INTERVAL_MS,
      stuckDeployingMs: e.WATCH_STUCK_DEPLOYING_MS,
      cooldownMs: e.ALERT_COOLDOWN_MS,
    },
    metrics: { token: e.METRICS_TOKEN, port: e.METRICS_PORT },
    console: { allowDatabaseUrl: e.CONSOLE_ALLOW_DATABASE_URL },
    redis: { url: e.REDIS_URL, expectedReplicas: e.EXPECTED_REPLICAS },
    tracing: {
      endpoint: e.OTEL_EXPORTER_OTLP_ENDPOINT,
      tracesEndpoint: e.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT,
    },
    mcp: { enabled: e.MCP_ENABLED, agentToken: e.EDGEOPS_AGENT_TOKEN },
  });
}
