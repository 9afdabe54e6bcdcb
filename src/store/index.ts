import { type Kysely, sql } from "kysely";
import type { Clock } from "../clock.js";
import type { Config } from "../config.js";
import type { Logger } from "../log.js";
import { type AgentTokensRepo, createAgentTokensRepo } from "./agent-tokens.js";
import { type AuditRepo, createAuditRepo } from "./audit.js";
import { type ChangeRequestsRepo, createChangeRequestsRepo } from "./change-requests.js";
import type { RepoContext } from "./context.js";
import { type Engine, openDb, type StoredTables, type StoreStatement, withCamelCase } from "./db.js";
import { StoreError, toStoreError } from "./errors.js";
import { createFunctionExecutionsRepo, type FunctionExecutionsRepo } from "./function-executions.js";
import { createInstallationsRepo, type InstallationsRepo } from "./installations.js";
import { createKeysRepo, type KeysRepo } from "./keys.js";
import { migrate } from "./migrations.js";
import { createPoliciesRepo, type PoliciesRepo } from "./policies.js";
import { createRemovalsRepo, type RemovalsRepo } from "./removals.js";
import { createSchedulesRepo, type SchedulesRepo } from "./schedules.js";
import { createTargetLocksRepo, type TargetLocksRepo } from "./target-locks.js";
import { createTimelineReads, type TimelineReads } from "./timeline.js";
import { createUndoHeadsUpsRepo, type UndoHeadsUpsRepo } from "./undo-heads-ups.js";
import { resolveMasterKeys, Vault } from "./vault.js";
import { createEpisodesRepo, createWatchesRepo, type EpisodesRepo, type WatchesRepo } from "./watches.js";
import { createZoneReadingsRepo, type ZoneReadingsRepo } from "./zone-readings.js";

export type { AgentToken, AgentTokensRepo, NewAgentToken } from "./agent-tokens.js";
export type { AuditEntry, AuditEntryInput, AuditRepo } from "./audit.js";
export type {
  ChangeError,
  ChangeNote,
  ChangePatch,
  ChangeRequest,
  ChangeRequestsRepo,
  ChangeState,
  DecisionReason,
  NewChangeRequest,
  OtherRequest,
  PendingQuery,
  ProposedBy,
  TransitionGuard,
} from "./change-requests.js";
export { CHANGE_STATES, CHANGE_TRANSITIONS } from "./change-requests.js";
export type { WorkScope } from "./context.js";
export type { MasterKey, MasterKeyRing } from "./crypto.js";
export { fingerprintOf, parseMasterKeys } from "./crypto.js";
export type { Engine, StoreStatement } from "./db.js";
export { isStoreError, StoreError, type StoreErrorKind } from "./errors.js";
export type {
  FunctionExecution,
  FunctionExecutionState,
  FunctionExecutionsRepo,
  NewFunctionExecution,
} from "./function-executions.js";
export { SETTLED_REQUEST_STATES } from "./function-executions.js";
export type { InstallationsRepo } from "./installations.js";
export type { ApiKeyInfo, ApiKeyRecord, KeysRepo } from "./keys.js";
export type {
  ApprovalsMode,
  Approvers,
  EffectivePolicy,
  PoliciesRepo,
  PolicyPatch,
  PolicyRow,
  PolicySource,
  PolicyValues,
} from "./policies.js";
export { DEFAULT_POLICY, EVERY_CHANGE, MAX_APPROVALS_NEEDED } from "./policies.js";
export type { RemovalsRepo, WorkspaceRemoval } from "./removals.js";
export type { RoomLimits, RoomResult } from "./room.js";
export type {
  CreateIfRoomResult,
  LeaseChange,
  NewSchedule,
  Schedule,
  ScheduleKind,
  ScheduleLimits,
  ScheduleRun,
  SchedulesRepo,
} from "./schedules.js";
export type { TargetLocksRepo } from "./target-locks.js";
export type { AuditStep, TimelineReads, ZoneChange } from "./timeline.js";
export type { HeadsUpKey, UndoHeadsUpsRepo } from "./undo-heads-ups.js";
export { type SecretPurpose, Vault } from "./vault.js";
export type {
  AlertEpisode,
  CreateWatchResult,
  EpisodePatch,
  EpisodeStatus,
  EpisodesRepo,
  NewEpisode,
  NewWatch,
  Sensitivity,
  Watch,
  WatchesRepo,
  WatchKind,
  WatchLimits,
  WatchOptions,
  WatchPoll,
} from "./watches.js";
export type { ZoneReadingRow, ZoneReadingsRepo } from "./zone-readings.js";

export interface StoreOptions {
  config: Config;
  logger: Logger;
  /** The times the store writes (decisions, leases, claims). */
  clock: Clock;
  /** PostgreSQL schema for every table (created if missing); default "public". Ignored for SQLite. */
  pgSchema?: string;
  /** PostgreSQL pool size; default 10. */
  poolSize?: number;
  /** How long migrations wait for another process's PostgreSQL migration lock; default 60 s. */
  migrationLockWaitMs?: number;
  /** How long a SQLite statement waits for another process's lock; default 5 s. */
  sqliteLockedWaitMs?: number;
  /** Told of every statement the store runs, and of each transaction (tests count what a flow costs). */
  onStatement?: (statement: StoreStatement) => void;
}

export interface Store {
  readonly engine: Engine;
  readonly keys: KeysRepo;
  readonly installations: InstallationsRepo;
  readonly policies: PoliciesRepo;
  /** Every change request, pending or decided (change-requests.ts). */
  readonly changeRequests: ChangeRequestsRepo;
  readonly schedules: SchedulesRepo;
  readonly audit: AuditRepo;
  readonly watches: WatchesRepo;
  readonly episodes: EpisodesRepo;
  /** Workflow Builder steps waiting on change requests. */
  readonly functionExecutions: FunctionExecutionsRepo;
  /** One writer at a time per Edge target, across replicas (changes/target-lock.ts). */
  readonly targetLocks: TargetLocksRepo;
  /** Workspaces being removed (uninstalled), until their Edge API key is deleted (services/uninstall.ts). */
  readonly removals: RemovalsRepo;
  /** An incident's timeline: one zone's changes, their audit steps and its alert episodes (read-only). */
  readonly timeline: TimelineReads;
  /** People's tokens for AI agents (the MCP server), stored hashed. */
  readonly agentTokens: AgentTokensRepo;
  /** Zones' detailed-metrics reads, one per API key, zone and minute across replicas (services/zone-status.ts). */
  readonly zoneReadings: ZoneReadingsRepo;
  /** The five-minute heads-ups before temporary changes' undos, claimed once across replicas. */
  readonly undoHeadsUps: UndoHeadsUpsRepo;
  readonly vault: Vault;
  /** Resolves when the database answers; rejects with StoreError("unavailable") otherwise (readiness). */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** Internals for rotation and tests; not for features. */
export interface StoreInternals {
  /** What the repositories get (their db speaks camelCase names, see db.ts withCamelCase). */
  readonly context: RepoContext;
  /** The same database without the CamelCasePlugin: the tables under their stored snake_case names. */
  readonly rawDb: Kysely<StoredTables>;
}

const internals = new WeakMap<Store, StoreInternals>();

export function storeInternals(store: Store): StoreInternals {
  const i = internals.get(store);
  if (!i) throw new StoreError("invalid", "Not a store made by openStore");
  return i;
}

/**
 * Resolve the master keys (the local console may generate DATA_DIR/master.key), open SQLite
 * (DATA_DIR/edgeops.sqlite, WAL) or PostgreSQL (DATABASE_URL), and migrate. Throws StoreError with a
 * message fit for an operator: master_key, unavailable (cannot reach/open the database) or migration.
 */
export async function openStore(options: StoreOptions): Promise<Store> {
  const { config, logger } = options;
  const now = options.clock.now;
  const pgSchema = options.pgSchema ?? "public";
  const vault = new Vault(await resolveMasterKeys(config, logger));
  const opened = await openDb({
    dataDir: config.store.dataDir,
    databaseUrl: config.store.databaseUrl,
    pgSchema,
    logger,
    statementTimeoutMs: config.store.statementTimeoutMs,
    ...(options.poolSize !== undefined ? { poolSize: options.poolSize } : {}),
    ...(options.sqliteLockedWaitMs !== undefined ? { sqliteLockedWaitMs: options.sqliteLockedWaitMs } : {}),
    ...(options.onStatement ? { onStatement: options.onStatement } : {}),
  });
  const { db, engine } = opened;
  try {
    await migrate(db, engine, {
      pgSchema,
      logger,
      now,
      ...(options.migrationLockWaitMs !== undefined ? { lockWaitMs: options.migrationLockWaitMs } : {}),
    });
  } catch (e) {
    await db.destroy().catch(() => {});
    throw e;
  }
  logger.info({ engine, where: opened.where, masterKeyId: vault.currentKeyId }, "store opened");

  const context: RepoContext = { db: withCamelCase(db), engine, vault, logger, now };
  let closed = false;
  const store: Store = {
    engine,
    vault,
    keys: createKeysRepo(context),
    installations: createInstallationsRepo(context),
    policies: createPoliciesRepo(context),
    changeRequests: createChangeRequestsRepo(context),
    schedules: createSchedulesRepo(context),
    audit: createAuditRepo(context),
    watches: createWatchesRepo(context),
    episodes: createEpisodesRepo(context),
    functionExecutions: createFunctionExecutionsRepo(context),
    targetLocks: createTargetLocksRepo(context),
    removals: createRemovalsRepo(context),
    timeline: createTimelineReads(context),
    agentTokens: createAgentTokensRepo(context),
    zoneReadings: createZoneReadingsRepo(context),
    undoHeadsUps: createUndoHeadsUpsRepo(context),
    async ping() {
      if (closed) throw new StoreError("unavailable", "The store is closed");
      try {
        await sql`select 1`.execute(db);
      } catch (e) {
        throw toStoreError(e, "Database ping failed");
      }
    },
    async close() {
      if (closed) return;
      closed = true;
      await db.destroy();
    },
  };
  internals.set(store, { context, rawDb: db });
  return store;
}
