/**
 * The one error type that leaves src/store. `kind` says what went wrong; `userMessage` is the sentence
 * a Slack user may see; `message` is for operators and logs. Neither ever contains a secret.
 */
export type StoreErrorKind = "unavailable" | "decrypt_failed" | "master_key" | "migration" | "invalid";

const USER_MESSAGES: Record<StoreErrorKind, string> = {
  unavailable: "Storage is unavailable right now, so nothing was changed. Please try again in a minute.",
  decrypt_failed:
    "A stored secret for this workspace can't be decrypted (the server's master key may have changed). An admin needs to set it again.",
  master_key: "The server's encryption key is not configured correctly. An operator needs to fix it.",
  migration: "The database could not be prepared. An operator needs to look at the server logs.",
  invalid: "That request could not be stored because it is not valid.",
};

export interface StoreErrorOptions {
  teamId?: string | undefined;
  userMessage?: string;
  cause?: unknown;
}

export class StoreError extends Error {
  override readonly name = "StoreError";
  readonly kind: StoreErrorKind;
  readonly teamId?: string;
  readonly userMessage: string;

  constructor(kind: StoreErrorKind, message: string, options: StoreErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.kind = kind;
    if (options.teamId !== undefined) this.teamId = options.teamId;
    this.userMessage = options.userMessage ?? USER_MESSAGES[kind];
  }

  /** Whether trying the same operation again later may succeed. */
  get isRetryable(): boolean {
    return this.kind === "unavailable";
  }
}

export function isStoreError(e: unknown): e is StoreError {
  return e instanceof StoreError;
}

function describe(e: unknown): string {
  if (e instanceof Error) {
    const code = (e as { code?: unknown }).code;
    // AggregateError (pg connecting to several addresses) has an empty message.
    const msg = e.message || (e instanceof AggregateError ? String(e.errors[0]?.message ?? "") : "");
    return typeof code === "string" && !msg.includes(code) ? `${msg} (${code})` : msg;
  }
  return String(e);
}

/** Map any error from a driver to a StoreError; StoreErrors pass through unchanged. */
export function toStoreError(e: unknown, context: string, teamId?: string): StoreError {
  if (e instanceof StoreError) return e;
  const code = typeof (e as { code?: unknown })?.code === "string" ? (e as { code: string }).code : "";
  const text = describe(e);
  if (code.startsWith("SQLITE_CONSTRAINT") || /^23/.test(code) || /^22/.test(code)) {
    return new StoreError("invalid", `${context}: ${text}`, { teamId, cause: e });
  }
  // Connection refused/reset/terminated, SQLITE_BUSY/IOERR, a closed pool, and anything else the
  // driver could not do: from a user's point of view, storage did not do the job, and nothing changed.
  return new StoreError("unavailable", `${context}: storage unavailable: ${text}`, { teamId, cause: e });
}

/**
 * Wrap every method of a repository object so that any driver error leaves as a StoreError.
 * Arguments are never included in messages (they may hold secrets).
 */
export function guard<T extends object>(name: string, repo: T): T {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(repo)) {
    if (typeof value !== "function") {
      out[key] = value;
      continue;
    }
    const fn = value as (...args: unknown[]) => unknown;
    out[key] = async (...args: unknown[]) => {
      try {
        return await fn.apply(repo, args);
      } catch (e) {
        throw toStoreError(e, `${name}.${key} failed`);
      }
    };
  }
  return out as T;
}
