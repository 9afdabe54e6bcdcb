import pino, { type DestinationStream, type Logger } from "pino";
import { activeTraceIds } from "./ops/tracing.js";

export type { Logger } from "pino";

/**
 * Field names whose values are never logged: the Edge API `AccessKey` header, Slack tokens and
 * signing secrets, master keys, and anything else named like a key, secret, token or password.
 */
const SECRET_NAME =
  /(^|[_-])?(access[_-]?key|api[_-]?key|key|keys|secret|token|tokens|password|authorization|cookie|ciphertext)$/i;
// xwfp-: the token Slack gives a workflow step's execution (function_executed); edgeops_at_: an agent's
// token (src/services/agent-tokens.ts), wherever it appears (a header, a URL, an agent's text).
const SECRET_VALUE =
  /\b(xox[abposr]-[A-Za-z0-9-]{6,}|xapp-[A-Za-z0-9-]{6,}|xwfp-[A-Za-z0-9-]{6,}|edgeops_at_[A-Za-z0-9_-]{6,})/g;
/** `client_secret=…`, `"token":"…"`, `AccessKey: …` inside free text (e.g. Bolt's and WebClient's debug lines). */
const SECRET_PAIR =
  /((?:client_secret|secret|token|password|access_?key|api_?key|authorization|code)["']?\s*[:=]\s*["']?)([^"'&\s,}]+)/gi;

function censorString(s: string): string {
  return s.replace(SECRET_VALUE, REDACTED).replace(SECRET_PAIR, `$1${REDACTED}`);
}
export const REDACTED = "[redacted]";

function isSecretName(name: string): boolean {
  return SECRET_NAME.test(name) || /token|secret|password|accesskey/i.test(name);
}

/** Deep copy of a log object with secret-named fields and Slack-token-looking strings censored. */
export function censor(value: unknown, depth = 0): unknown {
  if (depth > 8) return "[depth]";
  if (typeof value === "string") return censorString(value);
  if (Array.isArray(value)) return value.map((v) => censor(v, depth + 1));
  if (value instanceof Error) {
    return censor(
      { type: value.name, message: value.message, ...(value as unknown as Record<string, unknown>) },
      depth,
    );
  }
  if (value && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      out[k] =
        isSecretName(k) && v !== undefined && v !== null && typeof v !== "boolean"
          ? REDACTED
          : censor(v, depth + 1);
    }
    return out;
  }
  return value;
}

export interface LoggerOptions {
  level?: string;
  /** Where JSON lines go; stdout by default. Tests pass a stream that captures them. */
  destination?: DestinationStream;
}

/** The one root logger; everything else is a child of it carrying context (teamId, userId, jobId ...). */
export function createLogger(options: LoggerOptions = {}): Logger {
  return pino(
    {
      level: options.level ?? "info",
      base: { app: "edgeops" },
      timestamp: pino.stdTimeFunctions.isoTime,
      // A line written inside a traced request or job names its trace (nothing while tracing is off).
      mixin: () => {
        const ids = activeTraceIds();
        return ids ? { trace_id: ids.traceId, span_id: ids.spanId } : {};
      },
      formatters: {
        level: (label) => ({ level: label }),
        log: (obj) => censor(obj) as Record<string, unknown>,
      },
      hooks: {
        logMethod(args, method) {
          // Censor Slack-token-looking strings in the message itself, too.
          const censored = args.map((a) => (typeof a === "string" ? censorString(a) : a));
          method.apply(this, censored as Parameters<typeof method>);
        },
      },
    },
    options.destination ?? pino.destination({ dest: 1, sync: false }),
  );
}

/** A logger that writes nothing, for tests that do not assert on logs. */
export const silentLogger: Logger = pino({ level: "silent" });
