import { type Kysely, sql, type Transaction } from "kysely";
import { systemClock } from "../clock.js";
import type { Logger } from "../log.js";
import type { Engine, StoredTables } from "./db.js";
import { StoreError } from "./errors.js";

/** Real time: waiting out another process's lock, which no manual clock in this one moves. */
const otherProcessTime = systemClock;

/**
 * Versioned, in-code migrations written with the schema builder so the same code serves SQLite and
 * PostgreSQL. Append new entries; never edit an applied one.
 */
export interface Migration {
  version: number;
  name: string;
  // biome-ignore lint/suspicious/noExplicitAny: migrations describe tables that the typed schema does not have yet
  up(db: Kysely<any>, engine: Engine): Promise<void>;
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: "initial tables",
    async up(db, engine) {
      const ts = engine === "postgres" ? "bigint" : "integer";
      await db.schema
        .createTable("api_keys")
        .addColumn("team_id", "text", (c) => c.primaryKey())
        .addColumn("ciphertext", "text", (c) => c.notNull())
        .addColumn("fingerprint", "text", (c) => c.notNull())
        .addColumn("set_by", "text", (c) => c.notNull())
        .addColumn("set_at", ts, (c) => c.notNull())
        .addColumn("rotated_at", ts)
        .execute();

      await db.schema
        .createTable("installations")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("team_id", "text")
        .addColumn("enterprise_id", "text")
        .addColumn("is_enterprise_install", "integer", (c) => c.notNull().defaultTo(0))
        .addColumn("ciphertext", "text", (c) => c.notNull())
        .addColumn("installed_at", ts, (c) => c.notNull())
        .addColumn("updated_at", ts, (c) => c.notNull())
        .execute();

      await db.schema
        .createTable("policies")
        .addColumn("team_id", "text", (c) => c.notNull())
        .addColumn("channel_id", "text", (c) => c.notNull())
        .addColumn("approvals", "text")
        .addColumn("approvers", "text")
        .addColumn("expiry_minutes", "integer")
        .addColumn("updated_by", "text")
        .addColumn("updated_at", ts, (c) => c.notNull())
        .addPrimaryKeyConstraint("policies_pk", ["team_id", "channel_id"])
        .execute();

      await db.schema
        .createTable("approval_requests")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("team_id", "text", (c) => c.notNull())
        .addColumn("channel_id", "text", (c) => c.notNull())
        .addColumn("requester_id", "text", (c) => c.notNull())
        .addColumn("shield_zone_id", ts, (c) => c.notNull())
        .addColumn("category", "integer", (c) => c.notNull())
        .addColumn("requested_action", "integer", (c) => c.notNull())
        .addColumn("previous_action", "integer")
        .addColumn("state", "text", (c) => c.notNull())
        .addColumn("decided_by", "text")
        .addColumn("decided_at", ts)
        .addColumn("expires_at", ts, (c) => c.notNull())
        .addColumn("message_channel", "text")
        .addColumn("message_ts", "text")
        .addColumn("attempts", "integer", (c) => c.notNull().defaultTo(0))
        .addColumn("last_error", "text")
        .addColumn("created_at", ts, (c) => c.notNull())
        .addColumn("updated_at", ts, (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex("approval_requests_team_state")
        .on("approval_requests")
        .columns(["team_id", "state"])
        .execute();
      await db.schema
        .createIndex("approval_requests_state_expires")
        .on("approval_requests")
        .columns(["state", "expires_at"])
        .execute();

      await db.schema
        .createTable("schedules")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("team_id", "text", (c) => c.notNull())
        .addColumn("channel_id", "text", (c) => c.notNull())
        .addColumn("created_by", "text", (c) => c.notNull())
        .addColumn("kind", "text", (c) => c.notNull())
        .addColumn("target", "text", (c) => c.notNull())
        .addColumn("spec", "text", (c) => c.notNull())
        .addColumn("timezone", "text", (c) => c.notNull())
        .addColumn("next_run_at", ts, (c) => c.notNull())
        .addColumn("last_run_at", ts)
        .addColumn("last_outcome", "text")
        .addColumn("last_error", "text")
        .addColumn("failing", "integer", (c) => c.notNull().defaultTo(0))
        .addColumn("snapshot", "text")
        .addColumn("created_at", ts, (c) => c.notNull())
        .execute();
      await db.schema.createIndex("schedules_next_run").on("schedules").column("next_run_at").execute();
      await db.schema
        .createIndex("schedules_team_channel")
        .on("schedules")
        .columns(["team_id", "channel_id"])
        .execute();

      await db.schema
        .createTable("audit_log")
        .addColumn("id", engine === "postgres" ? "bigserial" : "integer", (c) =>
          engine === "postgres" ? c.primaryKey() : c.primaryKey().autoIncrement(),
        )
        .addColumn("at", ts, (c) => c.notNull())
        .addColumn("team_id", "text", (c) => c.notNull())
        .addColumn("user_id", "text", (c) => c.notNull())
        .addColumn("action", "text", (c) => c.notNull())
        .addColumn("target", "text", (c) => c.notNull())
        .addColumn("outcome", "text", (c) => c.notNull())
        .addColumn("details", "text")
        .execute();
      await db.schema.createIndex("audit_log_team_at").on("audit_log").columns(["team_id", "at"]).execute();
    },
  },
  {
    version: 2,
    name: "change requests of any kind, N approvers",
    async up(db, engine) {
      const ts = engine === "postgres" ? "bigint" : "integer";
      await db.schema
        .alterTable("approval_requests")
        .addColumn("kind", "text", (c) => c.notNull().defaultTo("bot_category"))
        .execute();
      await db.schema.alterTable("approval_requests").addColumn("params", "text").execute();
      await db.schema.alterTable("approval_requests").addColumn("observed", "text").execute();
      await db.schema.alterTable("approval_requests").addColumn("failed_at", ts).execute();
      await db.schema
        .alterTable("approval_requests")
        .addColumn("approvals_needed", "integer", (c) => c.notNull().defaultTo(1))
        .execute();
      await db.schema
        .alterTable("approval_requests")
        .addColumn("approved_by", "text", (c) => c.notNull().defaultTo("[]"))
        .execute();
      await db.schema.alterTable("policies").addColumn("approvals_needed", "integer").execute();
      // The reconciler looks for approved requests by age.
      await db.schema
        .createIndex("approval_requests_state_updated")
        .on("approval_requests")
        .columns(["state", "updated_at"])
        .execute();
    },
  },
  {
    version: 3,
    name: "temporary changes that undo themselves; approvals for some changes only",
    async up(db, engine) {
      const ts = engine === "postgres" ? "bigint" : "integer";
      await db.schema.alterTable("approval_requests").addColumn("undo_after_ms", ts).execute();
      await db.schema.alterTable("approval_requests").addColumn("undo_at", ts).execute();
      await db.schema.alterTable("policies").addColumn("approvals_for", "text").execute();
      await db.schema
        .createIndex("approval_requests_state_undo")
        .on("approval_requests")
        .columns(["state", "undo_at"])
        .execute();
    },
  },
  {
    version: 4,
    name: "watches and alert episodes",
    async up(db, engine) {
      const ts = engine === "postgres" ? "bigint" : "integer";
      await db.schema
        .createTable("watches")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("team_id", "text", (c) => c.notNull())
        .addColumn("channel_id", "text", (c) => c.notNull())
        .addColumn("created_by", "text", (c) => c.notNull())
        .addColumn("kind", "text", (c) => c.notNull())
        .addColumn("target", "text", (c) => c.notNull())
        .addColumn("options", "text", (c) => c.notNull())
        .addColumn("next_poll_at", ts, (c) => c.notNull())
        .addColumn("last_polled_at", ts)
        .addColumn("last_error", "text")
        .addColumn("failing", "integer", (c) => c.notNull().defaultTo(0))
        .addColumn("muted_until", ts)
        .addColumn("state", "text")
        .addColumn("created_at", ts, (c) => c.notNull())
        .execute();
      await db.schema.createIndex("watches_next_poll").on("watches").column("next_poll_at").execute();
      await db.schema
        .createIndex("watches_team_channel")
        .on("watches")
        .columns(["team_id", "channel_id"])
        .execute();

      await db.schema
        .createTable("alert_episodes")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("watch_id", "text", (c) => c.notNull())
        .addColumn("team_id", "text", (c) => c.notNull())
        .addColumn("channel_id", "text", (c) => c.notNull())
        .addColumn("subject", "text", (c) => c.notNull())
        .addColumn("seq", "integer", (c) => c.notNull())
        .addColumn("kind", "text", (c) => c.notNull())
        .addColumn("status", "text", (c) => c.notNull())
        .addColumn("opened_at", ts, (c) => c.notNull())
        .addColumn("updated_at", ts, (c) => c.notNull())
        .addColumn("resolved_at", ts)
        .addColumn("message_ts", "text")
        .addColumn("details", "text")
        .addColumn("acknowledged_by", "text")
        .addColumn("acknowledged_at", ts)
        .addColumn("version", "integer", (c) => c.notNull().defaultTo(1))
        .execute();
      // One episode per (watch, subject, seq): the second replica to open the same episode inserts nothing.
      await db.schema
        .createIndex("alert_episodes_watch_subject_seq")
        .unique()
        .on("alert_episodes")
        .columns(["watch_id", "subject", "seq"])
        .execute();
      await db.schema
        .createIndex("alert_episodes_watch_status")
        .on("alert_episodes")
        .columns(["watch_id", "status"])
        .execute();
      await db.schema
        .createIndex("alert_episodes_team_status")
        .on("alert_episodes")
        .columns(["team_id", "status"])
        .execute();
    },
  },
  {
    version: 5,
    name: "Workflow Builder steps waiting on change requests",
    async up(db, engine) {
      const ts = engine === "postgres" ? "bigint" : "integer";
      await db.schema
        .createTable("function_executions")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("team_id", "text", (c) => c.notNull())
        .addColumn("callback_id", "text", (c) => c.notNull())
        .addColumn("request_id", "text", (c) => c.notNull())
        .addColumn("token_ciphertext", "text")
        .addColumn("state", "text", (c) => c.notNull())
        .addColumn("lease_until", ts)
        .addColumn("retry_at", ts, (c) => c.notNull())
        .addColumn("attempts", "integer", (c) => c.notNull().defaultTo(0))
        .addColumn("outcome", "text")
        .addColumn("created_at", ts, (c) => c.notNull())
        .addColumn("updated_at", ts, (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex("function_executions_request")
        .on("function_executions")
        .column("request_id")
        .execute();
      await db.schema
        .createIndex("function_executions_state_retry")
        .on("function_executions")
        .columns(["state", "retry_at"])
        .execute();
    },
  },
  {
    version: 6,
    name: "schedule leases: an occurrence claimed by a replica that died is claimed again",
    async up(db, engine) {
      const ts = engine === "postgres" ? "bigint" : "integer";
      await db.schema.alterTable("schedules").addColumn("lease_until", ts).execute();
    },
  },
  {
    version: 7,
    name: "one pending request per change that waits for approval",
    async up(db) {
      await db.schema.alterTable("approval_requests").addColumn("twin_key", "text").execute();
      // Only while pending: once decided or expired, the same change may be asked for again.
      await db.schema
        .createIndex("approval_requests_pending_twin")
        .on("approval_requests")
        .columns(["team_id", "twin_key"])
        .unique()
        .where(sql.ref("state"), "=", "pending")
        .execute();
    },
  },
  {
    version: 8,
    name: "each target remembers the request that set it last",
    async up(db, engine) {
      const ts = engine === "postgres" ? "bigint" : "integer";
      await db.schema.alterTable("approval_requests").addColumn("replaced", "text").execute();
      await db.schema.alterTable("approval_requests").addColumn("note", "text").execute();
      await db.schema
        .createTable("change_targets")
        .addColumn("team_id", "text", (c) => c.notNull())
        .addColumn("target_key", "text", (c) => c.notNull())
        .addColumn("request_id", "text", (c) => c.notNull())
        .addColumn("updated_at", ts, (c) => c.notNull())
        .addPrimaryKeyConstraint("change_targets_pk", ["team_id", "target_key"])
        .execute();
    },
  },
  {
    version: 9,
    name: "one writer per Edge target: target locks held as renewed leases",
    async up(db, engine) {
      const ts = engine === "postgres" ? "bigint" : "integer";
      await db.schema
        .createTable("target_locks")
        .addColumn("key", "text", (c) => c.primaryKey())
        .addColumn("holder", "text", (c) => c.notNull())
        .addColumn("lease_until", ts, (c) => c.notNull())
        .execute();
    },
  },
  {
    version: 10,
    name: "what an alert's parent message last showed in Slack",
    async up(db) {
      await db.schema.alterTable("alert_episodes").addColumn("shown_version", "integer").execute();
      await db.schema.alterTable("alert_episodes").addColumn("shown_digest", "text").execute();
      // Parents posted before this migration are taken as shown at their current version.
      await db
        .updateTable("alert_episodes")
        .set({ shown_version: sql.ref("version") })
        .where("message_ts", "is not", null)
        .execute();
    },
  },
  {
    version: 11,
    name: "an apply or undo in flight holds a lease on its request; the reconciler waits for it to end",
    async up(db, engine) {
      const ts = engine === "postgres" ? "bigint" : "integer";
      await db.schema.alterTable("approval_requests").addColumn("lease_until", ts).execute();
    },
  },
  {
    version: 12,
    name: "who undid a temporary change; a reject's reason; a change applied without approval",
    async up(db) {
      await db.schema.alterTable("approval_requests").addColumn("undone_by", "text").execute();
      await db.schema.alterTable("approval_requests").addColumn("reason", "text").execute();
    },
  },
  {
    version: 13,
    name: "a workspace being removed: since when, its claim, and what its removal did so far",
    async up(db, engine) {
      const ts = engine === "postgres" ? "bigint" : "integer";
      await db.schema
        .createTable("workspace_removals")
        .addColumn("team_id", "text", (c) => c.primaryKey())
        .addColumn("event", "text", (c) => c.notNull())
        .addColumn("since", ts, (c) => c.notNull())
        .addColumn("lease_until", ts)
        .addColumn("finished_at", ts)
        .addColumn("progress", "text", (c) => c.notNull())
        .execute();
    },
  },
  {
    version: 14,
    name: "agents' tokens (their hash only) for the MCP server",
    async up(db, engine) {
      const ts = engine === "postgres" ? "bigint" : "integer";
      await db.schema
        .createTable("agent_tokens")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("team_id", "text", (c) => c.notNull())
        .addColumn("user_id", "text", (c) => c.notNull())
        .addColumn("name", "text", (c) => c.notNull())
        .addColumn("token_hash", "text", (c) => c.notNull().unique())
        .addColumn("created_at", ts, (c) => c.notNull())
        .addColumn("expires_at", ts, (c) => c.notNull())
        .addColumn("revoked_at", ts)
        .addColumn("revoked_by", "text")
        .addColumn("last_used_at", ts)
        .execute();
      await db.schema
        .createIndex("agent_tokens_team_user")
        .on("agent_tokens")
        .columns(["team_id", "user_id"])
        .execute();
      // Who proposed a change for a person: the agent's name, its token's id and its reason (JSON).
      await db.schema.alterTable("approval_requests").addColumn("proposed_by", "text").execute();
    },
  },
  {
    version: 15,
    name: "zone readings: one detailed-metrics read per API key, zone and minute, shared by every replica",
    async up(db, engine) {
      const ts = engine === "postgres" ? "bigint" : "integer";
      await db.schema
        .createTable("zone_readings")
        .addColumn("key_id", "text", (c) => c.notNull())
        .addColumn("zone_id", ts, (c) => c.notNull())
        .addColumn("minute", ts, (c) => c.notNull())
        .addColumn("reader", "text", (c) => c.notNull())
        .addColumn("claimed_at", ts, (c) => c.notNull())
        .addColumn("read_at", ts)
        .addColumn("reading", "text")
        .addPrimaryKeyConstraint("zone_readings_pk", ["key_id", "zone_id", "minute"])
        .execute();
    },
  },
  {
    version: 16,
    name: "the five-minute heads-up before a temporary change's undo: one per request, undo time and alert",
    async up(db, engine) {
      const ts = engine === "postgres" ? "bigint" : "integer";
      await db.schema
        .createTable("undo_heads_ups")
        .addColumn("request_id", "text", (c) => c.notNull())
        .addColumn("undo_at", ts, (c) => c.notNull())
        .addColumn("episode_id", "text", (c) => c.notNull())
        .addColumn("team_id", "text", (c) => c.notNull())
        .addColumn("claimed_at", ts, (c) => c.notNull())
        .addPrimaryKeyConstraint("undo_heads_ups_pk", ["request_id", "undo_at", "episode_id"])
        .execute();
    },
  },
];

export interface MigrateResult {
  applied: number[];
}

async function ensureVersionTable(
  db: Kysely<StoredTables> | Transaction<StoredTables>,
  engine: Engine,
): Promise<void> {
  await db.schema
    .createTable("edgeops_migrations")
    .ifNotExists()
    .addColumn("version", "integer", (c) => c.primaryKey())
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("applied_at", engine === "postgres" ? "bigint" : "integer", (c) => c.notNull())
    .execute();
}

async function pending(db: Kysely<StoredTables> | Transaction<StoredTables>): Promise<Migration[]> {
  const rows = await db.selectFrom("edgeops_migrations").select("version").execute();
  const done = new Set(rows.map((r) => Number(r.version)));
  const known = new Set(MIGRATIONS.map((m) => m.version));
  const unknown = [...done].filter((v) => !known.has(v));
  if (unknown.length > 0) {
    throw new StoreError(
      "migration",
      `The database has migration version ${Math.max(...unknown)}, newer than this edgeops knows (${Math.max(...known)}); run a newer edgeops`,
    );
  }
  return MIGRATIONS.filter((m) => !done.has(m.version)).sort((a, b) => a.version - b.version);
}

/** How long start-up waits for another process's migrations (the PostgreSQL advisory lock). */
export const MIGRATION_LOCK_WAIT_MS = 60_000;

/**
 * Bring the schema up to date. PostgreSQL: on one connection holding `pg_advisory_lock` for the schema,
 * so two replicas starting at once take turns (the second finds nothing to do); each migration runs in
 * its own transaction with its version row. The lock is polled (`pg_try_advisory_lock`) for at most
 * `lockWaitMs`, so a session stuck holding it stops start-up with a sentence instead of hanging it.
 * SQLite: everything in one `BEGIN IMMEDIATE` transaction, which takes the file's write lock (other
 * processes' statements wait for it, see db.ts).
 */
export async function migrate(
  db: Kysely<StoredTables>,
  engine: Engine,
  options: { pgSchema: string; logger: Logger; now: () => number; lockWaitMs?: number },
): Promise<MigrateResult> {
  const applied: number[] = [];
  const { logger, now } = options;
  try {
    if (engine === "postgres") {
      const lockName = `edgeops:migrate:${options.pgSchema}`;
      await db.connection().execute(async (conn) => {
        await takeMigrationLock(
          conn,
          lockName,
          options.pgSchema,
          options.lockWaitMs ?? MIGRATION_LOCK_WAIT_MS,
        );
        try {
          await sql`create schema if not exists ${sql.id(options.pgSchema)}`.execute(conn);
          await ensureVersionTable(conn, engine);
          for (const m of await pending(conn)) {
            await conn.transaction().execute(async (trx) => {
              await m.up(trx, engine);
              await trx
                .insertInto("edgeops_migrations")
                .values({ version: m.version, name: m.name, applied_at: now() })
                .execute();
            });
            applied.push(m.version);
          }
        } finally {
          await sql`select pg_advisory_unlock(hashtext(${lockName}))`.execute(conn);
        }
      });
    } else {
      await db.connection().execute(async (conn) => {
        await sql`begin immediate`.execute(conn);
        try {
          await ensureVersionTable(conn, engine);
          for (const m of await pending(conn)) {
            await m.up(conn, engine);
            await conn
              .insertInto("edgeops_migrations")
              .values({ version: m.version, name: m.name, applied_at: now() })
              .execute();
            applied.push(m.version);
          }
          await sql`commit`.execute(conn);
        } catch (e) {
          await sql`rollback`.execute(conn).catch(() => {});
          throw e;
        }
      });
    }
  } catch (e) {
    if (e instanceof StoreError) throw e;
    throw new StoreError("migration", `Database migration failed: ${(e as Error).message}`, { cause: e });
  }
  if (applied.length > 0) logger.info({ applied }, "database migrated");
  return { applied };
}

async function takeMigrationLock(
  conn: Kysely<StoredTables>,
  lockName: string,
  pgSchema: string,
  waitMs: number,
): Promise<void> {
  const deadline = otherProcessTime.elapsed() + waitMs;
  for (let delay = 50; ; delay = Math.min(delay * 2, 500)) {
    const { rows } = await sql<{
      locked: boolean;
    }>`select pg_try_advisory_lock(hashtext(${lockName})) as locked`.execute(conn);
    if (rows[0]?.locked) return;
    const left = deadline - otherProcessTime.elapsed();
    if (left <= 0) {
      throw new StoreError(
        "migration",
        `Another edgeops process has held the migration lock of schema "${pgSchema}" for over ${Math.round(waitMs / 1000)} s. If no other edgeops is starting, end the session holding it (pg_locks, locktype 'advisory'; pg_terminate_backend) and start again.`,
      );
    }
    await otherProcessTime.sleep(Math.min(delay, left));
  }
}
