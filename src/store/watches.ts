import { sql } from "kysely";
import { newId } from "./approvals.js";
import type { RepoContext, WorkScope } from "./context.js";
import type { AlertEpisodesTable, WatchesTable } from "./db.js";
import { guard, StoreError } from "./errors.js";
import { insertIfRoom, type RoomLimits, type RoomResult } from "./room.js";

/**
 * Watches (what a channel asked edgeops to keep an eye on) and alert episodes (one per incident of one
 * subject: an attack on a zone, a failing app). A watch is evaluated by whichever replica claims it
 * (compare-and-set on next_poll_at, as schedules are claimed); an episode is opened once per
 * (watch, subject, seq) by a unique index, and its parent message is recorded once (compare-and-set on
 * message_ts being empty), so neither replicas nor restarts can post an alert twice.
 */

export type WatchKind = "apps" | "zone" | "config";
export type Sensitivity = "low" | "normal" | "high";

export interface WatchOptions {
  /** apps: alert only on these statuses (lower case), null: any status change. */
  statuses?: string[] | null;
  /** zone: how far above its baseline a count must rise. */
  sensitivity?: Sensitivity;
  /** zone: the domain the user typed, for messages. */
  label?: string;
}

export interface Watch {
  id: string;
  teamId: string;
  channelId: string;
  createdBy: string;
  kind: WatchKind;
  /** The shield zone id (zone), "" (apps: every app of the workspace's key). */
  target: string;
  options: WatchOptions;
  nextPollAt: number;
  lastPolledAt: number | null;
  lastError: string | null;
  failing: boolean;
  mutedUntil: number | null;
  /** The poller's memory between evaluations (baseline samples, app statuses). */
  state: unknown;
  createdAt: number;
}

export interface NewWatch {
  id?: string;
  teamId: string;
  channelId: string;
  createdBy: string;
  kind: WatchKind;
  target: string;
  options: WatchOptions;
  nextPollAt: number;
}

export interface WatchPoll {
  at: number;
  /** Replaces the stored state when given. */
  state?: unknown;
  error?: string | null;
}

export type WatchLimits = RoomLimits;
export type CreateWatchResult = RoomResult<Watch>;

export interface WatchesRepo {
  /**
   * Create unless the same watch (channel, kind, target) exists or the channel or workspace is full,
   * in one critical section per workspace (see room.ts).
   */
  createIfRoom(watch: NewWatch, limits: WatchLimits): Promise<CreateWatchResult>;
  list(teamId: string, channelId?: string): Promise<Watch[]>;
  get(id: string): Promise<Watch | undefined>;
  /** How many watches the workspace has, or of one kind (they share its key's polling budget). */
  count(teamId: string, kind?: Watch["kind"]): Promise<number>;
  /** Only within the team; true when removed (its episodes go with it). */
  remove(teamId: string, id: string): Promise<boolean>;
  /** Only within the team; null unmutes. True when the watch exists. */
  mute(teamId: string, id: string, until: number | null): Promise<boolean>;
  /** next_poll_at <= now, round-robin across workspaces (as schedules' listDue). */
  listDue(now: number, limit: number, scope?: WorkScope): Promise<Watch[]>;
  /** Compare-and-set on next_poll_at; true for the single claimer of this evaluation. */
  claim(id: string, expectedNextPollAt: number, newNextPollAt: number, scope?: WorkScope): Promise<boolean>;
  recordPoll(id: string, poll: WatchPoll): Promise<boolean>;
  markFailing(id: string, reason: string): Promise<boolean>;
  clearFailing(id: string): Promise<boolean>;
}

export type EpisodeStatus = "firing" | "resolved";

export interface AlertEpisode {
  id: string;
  watchId: string;
  teamId: string;
  channelId: string;
  /** The app id or shield zone id the episode is about. */
  subject: string;
  /** 1, 2, … per (watch, subject): the unique index that makes opening an episode exactly-once. */
  seq: number;
  /** What fired: "attack", "failing", "stuck_deploying", … */
  kind: string;
  status: EpisodeStatus;
  openedAt: number;
  updatedAt: number;
  resolvedAt: number | null;
  /** The parent message's ts once posted. */
  messageTs: string | null;
  /** The latest numbers and history for the messages. */
  details: unknown;
  acknowledgedBy: string | null;
  acknowledgedAt: number | null;
  /** Bumped by every update: the compare-and-set token of update(). */
  version: number;
  /** The version whose parent Slack last accepted (null: none yet). */
  shownVersion: number | null;
  /** The digest of the parent Slack last accepted: one unchanged is not sent again. */
  shownDigest: string | null;
}

export interface NewEpisode {
  watchId: string;
  teamId: string;
  channelId: string;
  subject: string;
  seq: number;
  kind: string;
  details: unknown;
}

export interface EpisodePatch {
  kind?: string;
  status?: EpisodeStatus;
  resolvedAt?: number | null;
  details?: unknown;
}

export interface EpisodesRepo {
  /** The newest episode of (watch, subject), whatever its status. */
  latest(watchId: string, subject: string): Promise<AlertEpisode | undefined>;
  /** Open an episode; undefined when another process already opened this (watch, subject, seq). */
  open(episode: NewEpisode): Promise<AlertEpisode | undefined>;
  get(id: string): Promise<AlertEpisode | undefined>;
  /** Compare-and-set on version; the updated episode, or undefined when it moved since. */
  update(id: string, expectedVersion: number, patch: EpisodePatch): Promise<AlertEpisode | undefined>;
  /** Record the parent message once: true only when no ts was recorded yet. */
  setMessage(id: string, ts: string): Promise<boolean>;
  /** First acknowledgement wins: true when this one was recorded. */
  acknowledge(id: string, userId: string): Promise<boolean>;
  /** Firing episodes of a workspace (only these channels when given), newest first. */
  listOpen(teamId: string, channelIds?: readonly string[], limit?: number): Promise<AlertEpisode[]>;
  /** Every episode of a watch, oldest first (tests, list views). */
  listForWatch(watchId: string): Promise<AlertEpisode[]>;
  /** Firing episodes of a watch whose parent was never posted (muted, or delivery failed). */
  listUndelivered(watchId: string): Promise<AlertEpisode[]>;
  /** Record what Slack accepted as the parent: this version, rendered to this digest. */
  setShown(id: string, version: number, digest: string): Promise<boolean>;
  /**
   * Posted episodes of a watch whose parent may not show what is true: every firing one (its mute line may
   * have ended), and any other whose latest version Slack never accepted (a resolution it refused).
   */
  listToRefresh(watchId: string): Promise<AlertEpisode[]>;
}

const KINDS: readonly WatchKind[] = ["apps", "zone", "config"];

function toWatch(r: WatchesTable): Watch {
  return {
    id: r.id,
    teamId: r.team_id,
    channelId: r.channel_id,
    createdBy: r.created_by,
    kind: r.kind as WatchKind,
    target: r.target,
    options: JSON.parse(r.options) as WatchOptions,
    nextPollAt: Number(r.next_poll_at),
    lastPolledAt: r.last_polled_at === null ? null : Number(r.last_polled_at),
    lastError: r.last_error,
    failing: Number(r.failing) === 1,
    mutedUntil: r.muted_until === null ? null : Number(r.muted_until),
    state: r.state === null ? null : JSON.parse(r.state),
    createdAt: Number(r.created_at),
  };
}

export function toEpisode(r: AlertEpisodesTable): AlertEpisode {
  return {
    id: r.id,
    watchId: r.watch_id,
    teamId: r.team_id,
    channelId: r.channel_id,
    subject: r.subject,
    seq: Number(r.seq),
    kind: r.kind,
    status: r.status as EpisodeStatus,
    openedAt: Number(r.opened_at),
    updatedAt: Number(r.updated_at),
    resolvedAt: r.resolved_at === null ? null : Number(r.resolved_at),
    messageTs: r.message_ts,
    details: r.details === null ? null : JSON.parse(r.details),
    acknowledgedBy: r.acknowledged_by,
    acknowledgedAt: r.acknowledged_at === null ? null : Number(r.acknowledged_at),
    version: Number(r.version),
    shownVersion: r.shown_version === null || r.shown_version === undefined ? null : Number(r.shown_version),
    shownDigest: r.shown_digest ?? null,
  };
}

const updated = (r: { numUpdatedRows: bigint }) => Number(r.numUpdatedRows) === 1;

export function createWatchesRepo(ctx: RepoContext): WatchesRepo {
  const { db, now } = ctx;

  function newRow(w: NewWatch): WatchesTable {
    if (!KINDS.includes(w.kind)) throw new StoreError("invalid", `Unknown watch kind "${String(w.kind)}"`);
    if (!Number.isSafeInteger(w.nextPollAt))
      throw new StoreError("invalid", "nextPollAt must be epoch milliseconds");
    return {
      id: w.id ?? newId(),
      team_id: w.teamId,
      channel_id: w.channelId,
      created_by: w.createdBy,
      kind: w.kind,
      target: w.target,
      options: JSON.stringify(w.options),
      next_poll_at: w.nextPollAt,
      last_polled_at: null,
      last_error: null,
      failing: 0,
      muted_until: null,
      state: null,
      created_at: now(),
    };
  }

  return guard("watches", {
    async createIfRoom(w: NewWatch, limits: WatchLimits): Promise<CreateWatchResult> {
      const row = newRow(w);
      return insertIfRoom(ctx, {
        table: "watches",
        teamId: w.teamId,
        channelId: w.channelId,
        limits,
        findSame: async (tx) => {
          const same = await tx
            .selectFrom("watches")
            .selectAll()
            .where("team_id", "=", w.teamId)
            .where("channel_id", "=", w.channelId)
            .where("kind", "=", w.kind)
            .where("target", "=", w.target)
            .orderBy("created_at")
            .orderBy("id")
            .executeTakeFirst();
          return same ? toWatch(same) : undefined;
        },
        insert: async (tx) => {
          await tx.insertInto("watches").values(row).execute();
          return toWatch(row);
        },
      });
    },

    async list(teamId: string, channelId?: string): Promise<Watch[]> {
      let q = db.selectFrom("watches").selectAll().where("team_id", "=", teamId);
      if (channelId !== undefined) q = q.where("channel_id", "=", channelId);
      return (await q.orderBy("created_at").orderBy("id").execute()).map(toWatch);
    },

    async get(id: string): Promise<Watch | undefined> {
      const r = await db.selectFrom("watches").selectAll().where("id", "=", id).executeTakeFirst();
      return r ? toWatch(r) : undefined;
    },

    async count(teamId: string, kind?: Watch["kind"]): Promise<number> {
      let q = db
        .selectFrom("watches")
        .select(sql<string | number>`count(*)`.as("n"))
        .where("team_id", "=", teamId);
      if (kind !== undefined) q = q.where("kind", "=", kind);
      const r = await q.executeTakeFirstOrThrow();
      return Number(r.n);
    },

    async remove(teamId: string, id: string): Promise<boolean> {
      return db.transaction().execute(async (trx) => {
        const r = await trx
          .deleteFrom("watches")
          .where("id", "=", id)
          .where("team_id", "=", teamId)
          .executeTakeFirst();
        if (Number(r.numDeletedRows) !== 1) return false;
        await trx.deleteFrom("alert_episodes").where("watch_id", "=", id).execute();
        return true;
      });
    },

    async mute(teamId: string, id: string, until: number | null): Promise<boolean> {
      const r = await db
        .updateTable("watches")
        .set({ muted_until: until })
        .where("id", "=", id)
        .where("team_id", "=", teamId)
        .executeTakeFirst();
      return updated(r);
    },

    async listDue(at: number, limit: number, scope: WorkScope = {}): Promise<Watch[]> {
      const { teamIds } = scope;
      if (teamIds?.length === 0) return [];
      let ranked = db
        .selectFrom("watches")
        .selectAll()
        .select(sql<number>`row_number() over (partition by team_id order by next_poll_at, id)`.as("round"))
        .where("next_poll_at", "<=", at);
      if (teamIds) ranked = ranked.where("team_id", "in", teamIds);
      const rows = await db
        .selectFrom(ranked.as("due"))
        .selectAll()
        .orderBy("round")
        .orderBy("next_poll_at")
        .orderBy("id")
        .limit(limit)
        .execute();
      return rows.map(toWatch);
    },

    async claim(id: string, expected: number, next: number, scope: WorkScope = {}): Promise<boolean> {
      const { teamIds } = scope;
      if (teamIds?.length === 0) return false;
      let q = db
        .updateTable("watches")
        .set({ next_poll_at: next })
        .where("id", "=", id)
        .where("next_poll_at", "=", expected);
      if (teamIds) q = q.where("team_id", "in", teamIds);
      return updated(await q.executeTakeFirst());
    },

    async recordPoll(id: string, poll: WatchPoll): Promise<boolean> {
      const r = await db
        .updateTable("watches")
        .set({
          last_polled_at: poll.at,
          last_error: poll.error ?? null,
          ...(poll.state !== undefined ? { state: JSON.stringify(poll.state) } : {}),
        })
        .where("id", "=", id)
        .executeTakeFirst();
      return updated(r);
    },

    async markFailing(id: string, reason: string): Promise<boolean> {
      const r = await db
        .updateTable("watches")
        .set({ failing: 1, last_error: reason })
        .where("id", "=", id)
        .executeTakeFirst();
      return updated(r);
    },

    async clearFailing(id: string): Promise<boolean> {
      const r = await db.updateTable("watches").set({ failing: 0 }).where("id", "=", id).executeTakeFirst();
      return updated(r);
    },
  });
}

export function createEpisodesRepo(ctx: RepoContext): EpisodesRepo {
  const { db, now } = ctx;

  async function get(id: string): Promise<AlertEpisode | undefined> {
    const r = await db.selectFrom("alert_episodes").selectAll().where("id", "=", id).executeTakeFirst();
    return r ? toEpisode(r) : undefined;
  }

  return guard("alert_episodes", {
    async latest(watchId: string, subject: string): Promise<AlertEpisode | undefined> {
      const r = await db
        .selectFrom("alert_episodes")
        .selectAll()
        .where("watch_id", "=", watchId)
        .where("subject", "=", subject)
        .orderBy("seq", "desc")
        .executeTakeFirst();
      return r ? toEpisode(r) : undefined;
    },

    async open(e: NewEpisode): Promise<AlertEpisode | undefined> {
      if (!Number.isSafeInteger(e.seq) || e.seq < 1)
        throw new StoreError("invalid", "An episode's seq must be a whole number from 1");
      const at = now();
      const row: AlertEpisodesTable = {
        id: newId(),
        watch_id: e.watchId,
        team_id: e.teamId,
        channel_id: e.channelId,
        subject: e.subject,
        seq: e.seq,
        kind: e.kind,
        status: "firing",
        opened_at: at,
        updated_at: at,
        resolved_at: null,
        message_ts: null,
        details: JSON.stringify(e.details ?? null),
        acknowledged_by: null,
        acknowledged_at: null,
        version: 1,
        shown_version: null,
        shown_digest: null,
      };
      // Another replica that opened this (watch, subject, seq) first wins; this insert then does nothing.
      const inserted = await db
        .insertInto("alert_episodes")
        .values(row)
        .onConflict((oc) => oc.columns(["watch_id", "subject", "seq"]).doNothing())
        .executeTakeFirst();
      return Number(inserted.numInsertedOrUpdatedRows ?? 0n) === 1 ? toEpisode(row) : undefined;
    },

    get,

    async update(
      id: string,
      expectedVersion: number,
      patch: EpisodePatch,
    ): Promise<AlertEpisode | undefined> {
      const r = await db
        .updateTable("alert_episodes")
        .set({
          version: expectedVersion + 1,
          updated_at: now(),
          ...(patch.kind !== undefined ? { kind: patch.kind } : {}),
          ...(patch.status !== undefined ? { status: patch.status } : {}),
          ...(patch.resolvedAt !== undefined ? { resolved_at: patch.resolvedAt } : {}),
          ...(patch.details !== undefined ? { details: JSON.stringify(patch.details) } : {}),
        })
        .where("id", "=", id)
        .where("version", "=", expectedVersion)
        .executeTakeFirst();
      return updated(r) ? get(id) : undefined;
    },

    async setMessage(id: string, ts: string): Promise<boolean> {
      const r = await db
        .updateTable("alert_episodes")
        .set({ message_ts: ts })
        .where("id", "=", id)
        .where("message_ts", "is", null)
        .executeTakeFirst();
      return updated(r);
    },

    async acknowledge(id: string, userId: string): Promise<boolean> {
      const r = await db
        .updateTable("alert_episodes")
        .set({ acknowledged_by: userId, acknowledged_at: now() })
        .where("id", "=", id)
        .where("acknowledged_by", "is", null)
        .executeTakeFirst();
      return updated(r);
    },

    async listOpen(teamId: string, channelIds?: readonly string[], limit = 50): Promise<AlertEpisode[]> {
      if (channelIds?.length === 0) return [];
      let q = db
        .selectFrom("alert_episodes")
        .selectAll()
        .where("team_id", "=", teamId)
        .where("status", "=", "firing");
      if (channelIds) q = q.where("channel_id", "in", channelIds);
      const rows = await q.orderBy("opened_at", "desc").orderBy("id").limit(limit).execute();
      return rows.map(toEpisode);
    },

    async listUndelivered(watchId: string): Promise<AlertEpisode[]> {
      const rows = await db
        .selectFrom("alert_episodes")
        .selectAll()
        .where("watch_id", "=", watchId)
        .where("status", "=", "firing")
        .where("message_ts", "is", null)
        .orderBy("opened_at")
        .orderBy("id")
        .execute();
      return rows.map(toEpisode);
    },

    async setShown(id: string, version: number, digest: string): Promise<boolean> {
      const r = await db
        .updateTable("alert_episodes")
        .set({ shown_version: version, shown_digest: digest })
        .where("id", "=", id)
        // A slower delivery of an older version does not overwrite a newer one's.
        .where((eb) => eb.or([eb("shown_version", "is", null), eb("shown_version", "<=", version)]))
        .executeTakeFirst();
      return updated(r);
    },

    async listToRefresh(watchId: string): Promise<AlertEpisode[]> {
      const rows = await db
        .selectFrom("alert_episodes")
        .selectAll()
        .where("watch_id", "=", watchId)
        .where("message_ts", "is not", null)
        .where((eb) =>
          eb.or([
            eb("status", "=", "firing"),
            eb("shown_version", "is", null),
            eb("shown_version", "<>", eb.ref("version")),
          ]),
        )
        .orderBy("opened_at")
        .orderBy("id")
        .execute();
      return rows.map(toEpisode);
    },

    async listForWatch(watchId: string): Promise<AlertEpisode[]> {
      const rows = await db
        .selectFrom("alert_episodes")
        .selectAll()
        .where("watch_id", "=", watchId)
        .orderBy("subject")
        .orderBy("seq")
        .execute();
      return rows.map(toEpisode);
    },
  });
}
