import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import BetterSqlite3 from "better-sqlite3";
import {
  CamelCasePlugin,
  type CompiledQuery,
  type DatabaseConnection,
  type Driver,
  type Generated,
  Kysely,
  PostgresDialect,
  type QueryResult,
  SqliteDialect,
  sql,
  type TransactionSettings,
} from "kysely";
import pg from "pg";
import { yieldToWaitingRequests } from "../ack-priority.js";
import { systemClock } from "../clock.js";
import type { Logger } from "../log.js";
import { LruCache } from "../lru.js";
import { inSpan, markFailed, type Span, startSpan } from "../ops/tracing.js";
import { StoreError, toStoreError } from "./errors.js";

/** Real time: waiting out another process's lock, which no manual clock in this one moves. */
const otherProcessTime = systemClock;

/**
 * The tables, as the repositories see them: camelCase names, which Kysely's CamelCasePlugin maps to the
 * snake_case columns the migrations created (`StoredTables` below is the same tables under those names).
 * Timestamps are epoch milliseconds (bigint in PostgreSQL, parsed to number); booleans are 0/1 integers;
 * JSON is text. Nothing here ever holds a plaintext secret.
 */
export interface ApiKeysTable {
  teamId: string;
  ciphertext: string;
  fingerprint: string;
  setBy: string;
  setAt: number;
  rotatedAt: number | null;
}

export interface InstallationsTable {
  /** `T:<teamId>` or `E:<enterpriseId>` for an org-wide install. */
  id: string;
  teamId: string | null;
  enterpriseId: string | null;
  isEnterpriseInstall: number;
  ciphertext: string;
  installedAt: number;
  updatedAt: number;
}

export interface PoliciesTable {
  teamId: string;
  /** "" for the workspace row. */
  channelId: string;
  approvals: string | null;
  approvers: string | null;
  expiryMinutes: number | null;
  approvalsNeeded: number | null;
  /** JSON array of change names or risk levels approvals apply to ("*": every change); null inherits. */
  approvalsFor: string | null;
  updatedBy: string | null;
  updatedAt: number;
}

export interface ChangeRequestsTable {
  id: string;
  teamId: string;
  channelId: string;
  requesterId: string;
  shieldZoneId: number;
  category: number;
  requestedAction: number;
  previousAction: number | null;
  state: string;
  decidedBy: string | null;
  decidedAt: number | null;
  expiresAt: number;
  messageChannel: string | null;
  messageTs: string | null;
  attempts: number;
  lastError: string | null;
  createdAt: number;
  updatedAt: number;
  /** The change kind (src/changes/kinds); rows from before migration 2 are bot_category. */
  kind: string;
  /** JSON: the kind's parameters; null on rows from before migration 2 (read from the columns above). */
  params: string | null;
  /** JSON: the value the request saw when it was made. */
  observed: string | null;
  /** When the last attempt failed (the Retry window counts from here). */
  failedAt: number | null;
  /** Distinct approvers a request needs (fixed when it is made). */
  approvalsNeeded: number;
  /** JSON array of the user ids who approved so far. */
  approvedBy: string;
  /** A temporary change: undone this long after it was applied (null: permanent). */
  undoAfterMs: number | null;
  /** When an applied temporary change is due to be undone. */
  undoAt: number | null;
  /**
   * The change itself (kind, parameters, duration) where only one request for it may wait (migration 7);
   * unique among pending ones; else null.
   */
  twinKey: string | null;
  /** JSON `{value}`: what the request's apply replaced, which its undo puts back (migration 8). */
  replaced: string | null;
  /** JSON: what the card says about other requests for the same target (migration 8). */
  note: string | null;
  /** While an apply or undo is in flight: until when its replica holds it (renewed); migration 11. */
  leaseUntil: number | null;
  /** Who undid a temporary change: a user id, or "system" at the end of its period (migration 12). */
  undoneBy: string | null;
  /** JSON {@link DecisionReason}: a reject's reason, a withdrawal, no approval needed (migration 12). */
  reason: string | null;
  /** JSON {@link ProposedBy}: an agent proposed it for the requester, and why (migration 14). */
  proposedBy: string | null;
}

/** Which request last set each target (a zone's setting, a bot category, an access entry). */
export interface ChangeTargetsTable {
  teamId: string;
  targetKey: string;
  requestId: string;
  updatedAt: number;
}

/** What a channel asked edgeops to do on the clock (schedules, watches: clock.ts), and how it went. */
export interface ClockColumns {
  id: string;
  teamId: string;
  channelId: string;
  createdBy: string;
  kind: string;
  target: string;
  /** The last run's or poll's error, or the reason it was marked failing with. */
  lastError: string | null;
  /** 1 while it is marked failing (clock.ts setFailing), else 0. */
  failing: number;
  createdAt: number;
}

export interface SchedulesTable extends ClockColumns {
  /** The zone id the schedule is about. */
  target: string;
  /** The cron / "when" text as the user gave it. */
  spec: string;
  timezone: string;
  nextRunAt: number;
  /**
   * While a replica runs a claimed occurrence: until when its claim holds (it renews it while running).
   * Past it, the run is taken to be lost (the replica died) and the occurrence is due again.
   */
  leaseUntil: number | null;
  lastRunAt: number | null;
  lastOutcome: string | null;
  snapshot: string | null;
}

export interface WatchesTable extends ClockColumns {
  /** "apps" | "zone" */
  kind: string;
  /** The shield zone id (zone), "" (apps: every app of the workspace's key). */
  target: string;
  /** JSON: statuses, sensitivity, label. */
  options: string;
  nextPollAt: number;
  lastPolledAt: number | null;
  mutedUntil: number | null;
  /** JSON: the poller's memory (baseline samples, app statuses). */
  state: string | null;
}

export interface AlertEpisodesTable {
  id: string;
  watchId: string;
  teamId: string;
  channelId: string;
  /** The app id or shield zone id the episode is about. */
  subject: string;
  /** 1, 2, … per (watch, subject), unique with them: opening an episode happens once. */
  seq: number;
  /** What fired: "attack", "failing", "stuck_deploying", … */
  kind: string;
  /** "firing" | "resolved" */
  status: string;
  openedAt: number;
  updatedAt: number;
  resolvedAt: number | null;
  /** The parent message's ts once posted. */
  messageTs: string | null;
  /** JSON: the latest numbers and the history shown in the messages. */
  details: string | null;
  acknowledgedBy: string | null;
  acknowledgedAt: number | null;
  /** Bumped by every update: the compare-and-set token of update(). */
  version: number;
  /** The version whose parent Slack last accepted (null: never shown). */
  shownVersion: number | null;
  /** A digest of that parent's text and blocks: an unchanged parent is not sent again. */
  shownDigest: string | null;
}

export interface AuditLogTable {
  id: Generated<number>;
  at: number;
  teamId: string;
  userId: string;
  action: string;
  target: string;
  outcome: string;
  details: string | null;
}

/** A Workflow Builder step (function execution) waiting on a change request (migration 5). */
export interface FunctionExecutionsTable {
  /** Slack's function_execution_id. */
  id: string;
  teamId: string;
  callbackId: string;
  requestId: string;
  /** The execution's own token, sealed by the Vault; null when Slack sent none. */
  tokenCiphertext: string | null;
  /** waiting → completing (leased) → completed. */
  state: string;
  leaseUntil: number | null;
  /** A waiting step is not settled again before this instant (after a failed completion). */
  retryAt: number;
  attempts: number;
  /** JSON: what the step was completed with (outputs or the error sentence). */
  outcome: string | null;
  createdAt: number;
  updatedAt: number;
}

export interface MigrationsTable {
  version: number;
  name: string;
  appliedAt: number;
}

export interface Database {
  edgeops_migrations: MigrationsTable;
  api_keys: ApiKeysTable;
  installations: InstallationsTable;
  policies: PoliciesTable;
  approval_requests: ChangeRequestsTable;
  change_targets: ChangeTargetsTable;
  schedules: SchedulesTable;
  audit_log: AuditLogTable;
  watches: WatchesTable;
  alert_episodes: AlertEpisodesTable;
  function_executions: FunctionExecutionsTable;
  target_locks: TargetLocksTable;
  workspace_removals: WorkspaceRemovalsTable;
  agent_tokens: AgentTokensTable;
  zone_readings: ZoneReadingsTable;
  undo_heads_ups: UndoHeadsUpsTable;
}

/**
 * One read of a zone's detailed metrics per API key, zone and minute (migration 15): the row is first the
 * claim ("this reader reads zone Z for minute M", inserted once), then holds what the read found.
 */
export interface ZoneReadingsTable {
  /** A hash of the API key (edge/queue.ts keyId), never the key. */
  keyId: string;
  zoneId: number;
  /** The minute's start (epoch ms). */
  minute: number;
  /** Who claimed the read (random per claim). */
  reader: string;
  claimedAt: number;
  /** When the read's outcome was recorded; null while it is being read (or its reader died). */
  readAt: number | null;
  /** JSON: the outcome (services/zone-status.ts ZoneReading); null until read. */
  reading: string | null;
}

/**
 * The five-minute heads-up before a temporary change's undo (migration 16): a row per request, undo time and
 * alert, inserted by the replica that posts it (the insert is the claim), so it is posted once across replicas
 * and again only when an Extend moves the undo time.
 */
export interface UndoHeadsUpsTable {
  requestId: string;
  undoAt: number;
  episodeId: string;
  teamId: string;
  claimedAt: number;
}

/**
 * A person's token for an AI agent (the MCP server, src/mcp), migration 14: only its SHA-256 is stored,
 * never the token. It acts as `userId` in `teamId` until it expires or is revoked.
 */
export interface AgentTokensTable {
  id: string;
  teamId: string;
  userId: string;
  /** The name its owner gave it (unique among their tokens not revoked). */
  name: string;
  /** Hex SHA-256 of the token. */
  tokenHash: string;
  createdAt: number;
  expiresAt: number;
  revokedAt: number | null;
  revokedBy: string | null;
  /** When a call last presented it (at most once a minute is recorded). */
  lastUsedAt: number | null;
}

/**
 * A workspace that removed edgeops (app_uninstalled, tokens_revoked), from the first event until its Edge
 * API key is deleted (migration 13): one row per workspace, claimed as a renewed lease by whoever works on
 * it (the event's listener, then the change sweeper), so one removal runs at a time across replicas.
 */
export interface WorkspaceRemovalsTable {
  teamId: string;
  /** The event that started it. */
  event: string;
  /** When the removal started: its grace period counts from here. */
  since: number;
  /** While a replica works on it: until when its claim holds (renewed); null or past: free. */
  leaseUntil: number | null;
  /** When the key was deleted and the removal's audit row written; null while it runs. */
  finishedAt: number | null;
  /** JSON: what the removal did so far (services/uninstall.ts RemovalProgress). */
  progress: string;
}

/** One writer at a time per Edge target (an access list, a zone's settings, a bot category), migration 9. */
export interface TargetLocksTable {
  /** The target, as its change kind names it (changes/kind.ts lockKey). */
  key: string;
  /** The process and call holding it (random per hold). */
  holder: string;
  /** Held until this instant unless renewed; past it, anyone may take it (its holder died). */
  leaseUntil: number;
}

/** `teamId` → `team_id`, as Kysely's CamelCasePlugin (default options) maps a name. */
type SnakeCase<S extends string> = S extends `${infer C}${infer Rest}`
  ? `${C extends Lowercase<C> ? C : `_${Lowercase<C>}`}${SnakeCase<Rest>}`
  : S;

/**
 * The same tables under the names the migrations gave them: what a Kysely without the CamelCasePlugin
 * sees (migrations, and tests that look under the repositories).
 */
export type StoredTables = {
  [T in keyof Database]: { [C in keyof Database[T] & string as SnakeCase<C>]: Database[T][C] };
};

/**
 * The repositories' view of a database opened by openDb: the same connections, with every identifier
 * mapped between camelCase and snake_case by the plugin. (The plugin maps identifiers and result keys,
 * not the text of raw `sql` fragments: those keep the stored snake_case names.)
 */
export function withCamelCase(db: Kysely<StoredTables>): Kysely<Database> {
  // withPlugin keeps the table types; the plugin is what makes the camelCase ones true. Values are
  // left as they are (no key inside a value is ever renamed).
  const plugin = new CamelCasePlugin({ maintainNestedObjectKeys: true });
  return db.withPlugin(plugin) as unknown as Kysely<Database>;
}

export type Engine = "sqlite" | "postgres";

export interface OpenedDb {
  engine: Engine;
  /** Without the CamelCasePlugin (see withCamelCase for the repositories' view). */
  db: Kysely<StoredTables>;
  /** Where the data lives, with any password removed. */
  where: string;
}

const SCHEMA_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

/** A database URL fit for messages and logs: no password, no query. */
export function describeUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.username ? `${decodeURIComponent(u.username)}@` : ""}${u.host}${u.pathname}`;
  } catch {
    return "(unparseable DATABASE_URL)";
  }
}

const INT8_OID = 20;

/** The PostgreSQL client gives up this long after statement_timeout, so the server cancels first. */
const QUERY_TIMEOUT_GRACE_MS = 1_000;

/**
 * SQLite waits for another process's lock inside the (synchronous) driver call, freezing the event
 * loop: keep that wait this short, and retry a statement that still finds the database locked
 * asynchronously, with backoff, for up to SQLITE_LOCKED_WAIT_MS.
 */
const SQLITE_BUSY_TIMEOUT_MS = 5;
export const SQLITE_LOCKED_WAIT_MS = 5_000;

/**
 * One statement the store ran: its kind ("select", "insert" …, or the first word of raw SQL) and first
 * table, and whether it ran inside a transaction; "begin" once for each transaction (its begin and commit
 * are not counted as statements). Never the SQL or its values.
 */
export interface StoreStatement {
  operation: string;
  table: string | undefined;
  inTransaction: boolean;
}

export async function openDb(options: {
  dataDir: string;
  databaseUrl: string | undefined;
  pgSchema: string;
  logger: Logger;
  /** PostgreSQL statement_timeout (and, a second later, the client's query timeout). */
  statementTimeoutMs: number;
  poolSize?: number;
  /** How long a SQLite statement retries while another process holds the lock. */
  sqliteLockedWaitMs?: number;
  onStatement?: (statement: StoreStatement) => void;
}): Promise<OpenedDb> {
  const { logger } = options;
  if (options.databaseUrl) {
    if (!SCHEMA_NAME.test(options.pgSchema)) {
      throw new StoreError("invalid", `pgSchema "${options.pgSchema}" is not a plain identifier`);
    }
    const where = describeUrl(options.databaseUrl);
    const pool = new pg.Pool({
      connectionString: options.databaseUrl,
      max: options.poolSize ?? 10,
      connectionTimeoutMillis: 5_000,
      idleTimeoutMillis: 30_000,
      options: `-c search_path=${options.pgSchema}`,
      // No statement, lock wait or half-open connection can hold a request (an approval) for ever:
      // the server cancels a statement after statement_timeout, the client gives up on an answer that
      // never comes a second later (and the connection is then ended, below), keep-alive probes notice
      // a peer that vanished, and a transaction left open by a lost client does not keep its locks.
      statement_timeout: options.statementTimeoutMs,
      query_timeout: options.statementTimeoutMs + QUERY_TIMEOUT_GRACE_MS,
      idle_in_transaction_session_timeout: options.statementTimeoutMs * 2,
      keepAlive: true,
      keepAliveInitialDelayMillis: 10_000,
      types: {
        getTypeParser: ((oid: number, format?: "text" | "binary") =>
          oid === INT8_OID && format !== "binary"
            ? (v: string) => Number(v)
            : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
      },
    });
    // An idle client losing its server must not crash the process; the next query reports it.
    pool.on("error", (e) => logger.warn({ err: { message: e.message } }, "PostgreSQL connection lost"));
    // A client checked out of the pool has no error listener (pg-pool removes its idle one), so a
    // connection dropping mid-use would be an uncaught 'error' event and kill the process. The query
    // in flight still rejects; the broken client is discarded on release.
    pool.on("connect", (client) => {
      client.on("error", (e) =>
        logger.warn({ err: { message: e.message } }, "PostgreSQL connection lost while in use"),
      );
      endOnQueryTimeout(client, logger);
    });
    const db = new Kysely<StoredTables>({
      dialect: new AckFirstPostgresDialect({ pool }, options.onStatement),
    });
    try {
      await sql`select 1`.execute(db);
    } catch (e) {
      await db.destroy().catch(() => {});
      const err = toStoreError(e, `Cannot reach the database at ${where}`);
      throw new StoreError("unavailable", err.message.replace(": storage unavailable", ""), { cause: e });
    }
    return { engine: "postgres", db, where };
  }

  const file = join(options.dataDir, "edgeops.sqlite");
  let database: BetterSqlite3.Database;
  try {
    await mkdir(options.dataDir, { recursive: true });
    database = new BetterSqlite3(file);
    database.pragma("journal_mode = WAL");
    database.pragma(`busy_timeout = ${SQLITE_BUSY_TIMEOUT_MS}`);
    database.pragma("synchronous = NORMAL");
    database.pragma("foreign_keys = ON");
  } catch (e) {
    throw new StoreError(
      "unavailable",
      `Cannot open the SQLite database ${file} (DATA_DIR=${options.dataDir}): ${(e as Error).message}`,
      { cause: e },
    );
  }
  cachePreparedStatements(database);
  const db = new Kysely<StoredTables>({
    dialect: new LockWaitingSqliteDialect(
      database,
      options.sqliteLockedWaitMs ?? SQLITE_LOCKED_WAIT_MS,
      options.onStatement,
    ),
  });
  return { engine: "sqlite", db, where: file };
}

/**
 * pg's query_timeout rejects the query but leaves its connection waiting for an answer that may never
 * come (a half-open connection), and the pool would lend it out again: end it, so the pool drops it.
 */
function endOnQueryTimeout(client: pg.PoolClient, logger: Logger): void {
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  client.query = ((...args: unknown[]) => {
    const result = query(...args);
    if (result instanceof Promise) {
      result.catch((e: unknown) => {
        if ((e as Error | undefined)?.message !== "Query read timeout") return;
        logger.warn("PostgreSQL did not answer in time; closing that connection");
        client.end().catch(() => {});
      });
    }
    return result;
  }) as typeof client.query;
}

/**
 * PostgreSQL's dialect, whose statements outside a transaction continue their caller only after the
 * Slack requests waiting for their ack (src/ack-priority.ts): an answer from the database arrives like
 * any other I/O. Statements inside a transaction go on at once, so no transaction holds its locks longer.
 */
class AckFirstPostgresDialect extends PostgresDialect {
  readonly #onStatement: StatementHook | undefined;
  constructor(config: ConstructorParameters<typeof PostgresDialect>[0], onStatement?: StatementHook) {
    super(config);
    this.#onStatement = onStatement;
  }
  override createDriver(): Driver {
    return new AckFirstDriver(super.createDriver(), "postgresql", this.#onStatement);
  }
}

type StatementHook = (statement: StoreStatement) => void;

/** SQLite's own transaction statements, which its driver runs through the wrapper (PostgreSQL's do not). */
const TRANSACTION_CONTROL = /^\s*(begin|commit|rollback)\b/i;

/**
 * A driver that runs every statement of its connections through `run`; transactions, release and the
 * rest are the wrapped driver's. Each of the inner driver's connections gets one wrapper (its identity
 * lasts as long as the connection). Inside a trace (src/ops/tracing.ts) each transaction is a span from
 * its begin to its commit or rollback, and each statement outside a transaction (its own) is one too;
 * a span names the statement's kind and table, never its SQL or values.
 */
abstract class StatementWrappingDriver implements Driver {
  readonly #wrapped = new WeakMap<DatabaseConnection, DatabaseConnection>();
  readonly #innerOf = new WeakMap<DatabaseConnection, DatabaseConnection>();
  readonly #transactions = new WeakMap<DatabaseConnection, { span: Span; statements: number }>();
  constructor(
    protected readonly inner: Driver,
    private readonly system: "sqlite" | "postgresql",
    private readonly onStatement: StatementHook | undefined,
  ) {}

  /** Run one statement of `connection` (the wrapper); `execute` runs it on the inner connection. */
  protected abstract run<R>(
    connection: DatabaseConnection,
    execute: () => Promise<QueryResult<R>>,
  ): Promise<QueryResult<R>>;

  init(): Promise<void> {
    return this.inner.init();
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    const connection = await this.inner.acquireConnection();
    let wrapped = this.#wrapped.get(connection);
    if (!wrapped) {
      const outer: DatabaseConnection = {
        executeQuery: <R>(query: CompiledQuery) =>
          this.#traced(outer, query, () => this.run(outer, () => connection.executeQuery<R>(query))),
        streamQuery: <R>(query: CompiledQuery, chunkSize?: number) =>
          connection.streamQuery<R>(query, chunkSize),
      };
      wrapped = outer;
      this.#wrapped.set(connection, outer);
      this.#innerOf.set(outer, connection);
    }
    return wrapped;
  }

  #traced<R>(
    connection: DatabaseConnection,
    query: CompiledQuery,
    execute: () => Promise<QueryResult<R>>,
  ): Promise<QueryResult<R>> {
    const transaction = this.#transactions.get(connection);
    if (this.onStatement && !TRANSACTION_CONTROL.test(query.sql))
      this.onStatement({ ...statementOf(query), inTransaction: transaction !== undefined });
    if (transaction) {
      transaction.statements++;
      return execute();
    }
    const { operation, table } = statementOf(query);
    return inSpan(
      `store ${operation}${table ? ` ${table}` : ""}`,
      { "db.system.name": this.system, "db.operation.name": operation, "db.collection.name": table },
      execute,
      { childOnly: true },
    );
  }

  /** The inner driver's own connection behind a wrapper. */
  protected unwrap(connection: DatabaseConnection): DatabaseConnection {
    return this.#innerOf.get(connection) ?? connection;
  }

  // By default the inner driver runs begin/commit/rollback through the wrapper, so they go through `run`.
  protected begin(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    return this.inner.beginTransaction(connection, settings);
  }
  protected commit(connection: DatabaseConnection): Promise<void> {
    return this.inner.commitTransaction(connection);
  }
  protected rollback(connection: DatabaseConnection): Promise<void> {
    return this.inner.rollbackTransaction(connection);
  }

  async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    const span = startSpan("store transaction", { "db.system.name": this.system }, { childOnly: true });
    this.#transactions.set(connection, { span, statements: 0 });
    this.onStatement?.({ operation: "begin", table: undefined, inTransaction: true });
    try {
      await this.begin(connection, settings);
    } catch (err) {
      this.#endTransaction(connection, err);
      throw err;
    }
  }
  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    try {
      await this.commit(connection);
      this.#endTransaction(connection, undefined, "commit");
    } catch (err) {
      this.#endTransaction(connection, err, "commit");
      throw err;
    }
  }
  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    try {
      await this.rollback(connection);
      this.#endTransaction(connection, undefined, "rollback");
    } catch (err) {
      this.#endTransaction(connection, err, "rollback");
      throw err;
    }
  }

  #endTransaction(connection: DatabaseConnection, err: unknown, outcome?: "commit" | "rollback"): void {
    const transaction = this.#transactions.get(connection);
    if (!transaction) return;
    this.#transactions.delete(connection);
    const { span, statements } = transaction;
    span.setAttribute("store.statements", statements);
    if (outcome) span.setAttribute("store.outcome", outcome);
    if (err !== undefined) markFailed(span, err);
    span.end();
  }

  protected release(connection: DatabaseConnection): Promise<void> {
    return this.inner.releaseConnection(connection);
  }
  releaseConnection(connection: DatabaseConnection): Promise<void> {
    this.#endTransaction(connection, undefined);
    return this.release(connection);
  }
  destroy(): Promise<void> {
    return this.inner.destroy();
  }
}

const OPERATIONS: Record<string, string> = {
  SelectQueryNode: "select",
  InsertQueryNode: "insert",
  UpdateQueryNode: "update",
  DeleteQueryNode: "delete",
};

interface NodeLike {
  kind?: string;
  node?: NodeLike;
  table?: NodeLike & { identifier?: { name?: unknown } };
  into?: NodeLike;
  from?: { froms?: NodeLike[] };
}

function tableOf(node: NodeLike | undefined): string | undefined {
  if (!node) return undefined;
  if (node.kind === "AliasNode") return tableOf(node.node);
  const name = node.kind === "TableNode" ? node.table?.identifier?.name : undefined;
  return typeof name === "string" ? name : undefined;
}

/** A statement's kind and first table, read from Kysely's tree (raw SQL: its first word only). */
export function statementOf(query: CompiledQuery): { operation: string; table: string | undefined } {
  const node = query.query as NodeLike;
  const operation = OPERATIONS[node.kind ?? ""];
  if (!operation) {
    const word = /^\s*([a-zA-Z]+)/.exec(query.sql)?.[1]?.toLowerCase();
    return { operation: word ?? "statement", table: undefined };
  }
  const target =
    node.kind === "InsertQueryNode"
      ? node.into
      : node.kind === "UpdateQueryNode"
        ? node.table
        : node.from?.froms?.[0];
  return { operation, table: tableOf(target) };
}

class AckFirstDriver extends StatementWrappingDriver {
  readonly #inTransaction = new WeakSet<DatabaseConnection>();

  protected override async run<R>(
    connection: DatabaseConnection,
    execute: () => Promise<QueryResult<R>>,
  ): Promise<QueryResult<R>> {
    const result = await execute();
    if (!this.#inTransaction.has(connection)) await yieldToWaitingRequests();
    return result;
  }

  // pg's begin, commit and release use what only its own connection has: hand it the inner one.
  protected override async begin(
    connection: DatabaseConnection,
    settings: TransactionSettings,
  ): Promise<void> {
    this.#inTransaction.add(connection);
    await this.inner.beginTransaction(this.unwrap(connection), settings);
  }
  protected override async commit(connection: DatabaseConnection): Promise<void> {
    try {
      await this.inner.commitTransaction(this.unwrap(connection));
    } finally {
      this.#inTransaction.delete(connection);
    }
  }
  protected override async rollback(connection: DatabaseConnection): Promise<void> {
    try {
      await this.inner.rollbackTransaction(this.unwrap(connection));
    } finally {
      this.#inTransaction.delete(connection);
    }
  }
  protected override release(connection: DatabaseConnection): Promise<void> {
    this.#inTransaction.delete(connection);
    return this.inner.releaseConnection(this.unwrap(connection));
  }
}

/**
 * Another connection holds the lock. (Not SQLITE_BUSY_SNAPSHOT: a statement in a read transaction
 * that went stale cannot succeed by being repeated.)
 */
const isLocked = (e: unknown) => {
  const code = (e as { code?: unknown } | null)?.code;
  return code === "SQLITE_BUSY" || code === "SQLITE_BUSY_RECOVERY";
};

/** Kysely's SQLite dialect whose statements wait for another process's lock without blocking. */
class LockWaitingSqliteDialect extends SqliteDialect {
  readonly #waitMs: number;
  readonly #onStatement: StatementHook | undefined;
  constructor(database: BetterSqlite3.Database, waitMs: number, onStatement?: StatementHook) {
    super({ database });
    this.#waitMs = waitMs;
    this.#onStatement = onStatement;
  }
  override createDriver(): Driver {
    return new LockWaitingDriver(super.createDriver(), this.#waitMs, this.#onStatement);
  }
}

class LockWaitingDriver extends StatementWrappingDriver {
  constructor(
    inner: Driver,
    private readonly waitMs: number,
    onStatement: StatementHook | undefined,
  ) {
    super(inner, "sqlite", onStatement);
  }

  protected override run<R>(
    _connection: DatabaseConnection,
    execute: () => Promise<QueryResult<R>>,
  ): Promise<QueryResult<R>> {
    return retryWhileLocked(execute, this.waitMs);
  }
}

/**
 * Run a statement; while SQLite answers SQLITE_BUSY (another process holds the lock), try again after
 * 2, 4, 8 … 50 ms, yielding the event loop in between, until `waitMs` have passed. Retrying is safe:
 * a statement that fails with SQLITE_BUSY did nothing, and a busy COMMIT leaves its transaction open.
 */
async function retryWhileLocked<R>(
  run: () => Promise<QueryResult<R>>,
  waitMs: number,
): Promise<QueryResult<R>> {
  const deadline = otherProcessTime.elapsed() + waitMs;
  for (let delay = 2; ; delay = Math.min(delay * 2, 50)) {
    try {
      return await run();
    } catch (e) {
      const left = deadline - otherProcessTime.elapsed();
      if (!isLocked(e) || left <= 0) throw e;
      await otherProcessTime.sleep(Math.min(delay, left));
    }
  }
}

/**
 * Kysely prepares every statement anew; the store runs the same few dozen statements, so keep them
 * (bounded). Safe because the store never streams: a statement is never in use by two callers at once.
 */
function cachePreparedStatements(database: BetterSqlite3.Database, max = 500): void {
  const prepare = database.prepare.bind(database);
  const cache = new LruCache<string, BetterSqlite3.Statement>(max);
  database.prepare = ((source: string) => {
    let statement = cache.get(source);
    if (!statement) {
      statement = prepare(source);
      cache.set(source, statement);
    }
    return statement;
  }) as typeof database.prepare;
}
