import { type ExpressionBuilder, type Selectable, sql } from "kysely";
import { listRoundRobin, newClockRow, setFailing } from "./clock.js";
import { newId, parseJson, type RepoContext, readRow, updatedOne, type WorkScope } from "./context.js";
import type { AlertEpisodesTable, Database, WatchesTable } from "./db.js";
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

/** A watch as the domain reads it: its row (db.ts), with the kind, the failing flag and the JSON read. */
export interface Watch extends Omit<Selectable<WatchesTable>, "kind" | "options" | "failing" | "state"> {
  kind: WatchKind;
  options: WatchOptions;
  failing: boolean;
  /** The poller's memory between evaluations (baseline samples, app statuses). */
  state: unknown;
}

/** What a new watch is made from; the rest starts empty. */
export interface NewWatch
  extends Pick<Watch, "teamId" | "channelId" | "createdBy" | "kind" | "target" | "options" | "nextPollAt"> {
  id?: string;
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
  /**
   * Only within the team; true when removed. Its alerts stay history (the timeline and the postmortem tell them):
   * a firing one is closed at the removal, marked so. `history: "forget"` (a workspace removing edgeops) deletes them.
   */
  remove(teamId: string, id: string, history?: "keep" | "forget"): Promise<boolean>;
  /** Only within the team; null unmutes. True when the watch exists. */
  mute(teamId: string, id: string, until: number | null): Promise<boolean>;
  /** Only within the team: the watch's options replaced. True when the watch exists. */
  setOptions(teamId: string, id: string, options: WatchOptions): Promise<boolean>;
  /** next_poll_at <= now, round-robin across workspaces (as schedules' listDue). */
  listDue(now: number, limit: number, scope?: WorkScope): Promise<Watch[]>;
  /** Compare-and-set on next_poll_at; true for the single claimer of this evaluation. */
  claim(id: string, expectedNextPollAt: number, newNextPollAt: number, scope?: WorkScope): Promise<boolean>;
  recordPoll(id: string, poll: WatchPoll): Promise<boolean>;
  markFailing(id: string, reason: string): Promise<boolean>;
  clearFailing(id: string): Promise<boolean>;
}

export type EpisodeStatus = "firing" | "resolved";

/** An alert episode as the domain reads it: its row (db.ts), with the status and the details read. */
export interface AlertEpisode extends Omit<Selectable<AlertEpisodesTable>, "status" | "details"> {
  status: EpisodeStatus;
  /** The latest numbers and history for the messages. */
  details: unknown;
}

/** What opening an episode is given; it starts firing, at version 1, not yet posted. */
export type NewEpisode = Pick<
  AlertEpisode,
  "watchId" | "teamId" | "channelId" | "subject" | "seq" | "kind" | "details"
>;

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

function toWatch(r: Selectable<WatchesTable>): Watch {
  return readRow(r, {
    kind: r.kind as WatchKind,
    options: JSON.parse(r.options) as WatchOptions,
    failing: r.failing === 1,
    state: parseJson(r.state),
  });
}

export function toEpisode(r: Selectable<AlertEpisodesTable>): AlertEpisode {
  return readRow(r, { status: r.status as EpisodeStatus, details: parseJson(r.details) });
}

export function createWatchesRepo(ctx: RepoContext): WatchesRepo {
  const { db, now } = ctx;

  function newRow(w: NewWatch): Selectable<WatchesTable> {
    if (!KINDS.includes(w.kind)) throw new StoreError("invalid", `Unknown watch kind "${String(w.kind)}"`);
    if (!Number.isSafeInteger(w.nextPollAt))
      throw new StoreError("invalid", "nextPollAt must be epoch milliseconds");
    return {
      ...newClockRow(w, now()),
      options: JSON.stringify(w.options),
      nextPollAt: w.nextPollAt,
      lastPolledAt: null,
      mutedUntil: null,
      state: null,
    };
  }

  return guard("watches", {
    createIfRoom: (w: NewWatch, limits: WatchLimits): Promise<CreateWatchResult> =>
      insertIfRoom(ctx, {
        table: "watches",
        row: newRow(w),
        sameColumns: ["teamId", "channelId", "kind", "target"],
        limits,
        read: toWatch,
      }),

    async list(teamId: string, channelId?: string): Promise<Watch[]> {
      let q = db.selectFrom("watches").selectAll().where("teamId", "=", teamId);
      if (channelId !== undefined) q = q.where("channelId", "=", channelId);
      return (await q.orderBy("createdAt").orderBy("id").execute()).map(toWatch);
    },

    async get(id: string): Promise<Watch | undefined> {
      const r = await db.selectFrom("watches").selectAll().where("id", "=", id).executeTakeFirst();
      return r ? toWatch(r) : undefined;
    },

    async count(teamId: string, kind?: Watch["kind"]): Promise<number> {
      let q = db
        .selectFrom("watches")
        .select(sql<string | number>`count(*)`.as("n"))
        .where("teamId", "=", teamId);
      if (kind !== undefined) q = q.where("kind", "=", kind);
      const r = await q.executeTakeFirstOrThrow();
      return Number(r.n);
    },

    async remove(teamId: string, id: string, history: "keep" | "forget" = "keep"): Promise<boolean> {
      return db.transaction().execute(async (trx) => {
        const r = await trx
          .deleteFrom("watches")
          .where("id", "=", id)
          .where("teamId", "=", teamId)
          .executeTakeFirst();
        if (Number(r.numDeletedRows) !== 1) return false;
        if (history === "forget") {
          await trx.deleteFrom("alert_episodes").where("watchId", "=", id).execute();
          return true;
        }
        const firing = await trx
          .selectFrom("alert_episodes")
          .select(["id", "details", "version"])
          .where("watchId", "=", id)
          .where("status", "=", "firing")
          .execute();
        const at = now();
        for (const e of firing) {
          const details = parseJson<Record<string, unknown>>(e.details);
          await trx
            .updateTable("alert_episodes")
            .set({
              status: "resolved",
              resolvedAt: at,
              updatedAt: at,
              version: e.version + 1,
              details: JSON.stringify({ ...(details ?? {}), closedBy: "watch_removed" }),
            })
            .where("id", "=", e.id)
            .execute();
        }
        return true;
      });
    },

    async mute(teamId: string, id: string, until: number | null): Promise<boolean> {
      const r = await db
        .updateTable("watches")
        .set({ mutedUntil: until })
        .where("id", "=", id)
        .where("teamId", "=", teamId)
        .executeTakeFirst();
      return updatedOne(r);
    },

    async setOptions(teamId: string, id: string, options: WatchOptions): Promise<boolean> {
      const r = await db
        .updateTable("watches")
        .set({ options: JSON.stringify(options) })
        .where("id", "=", id)
        .where("teamId", "=", teamId)
        .executeTakeFirst();
      return updatedOne(r);
    },

    async listDue(at: number, limit: number, scope: WorkScope = {}): Promise<Watch[]> {
      const due = (eb: ExpressionBuilder<Database, "watches">) => eb("nextPollAt", "<=", at);
      return (await listRoundRobin(db, "watches", "nextPollAt", due, limit, scope)).map(toWatch);
    },

    async claim(id: string, expected: number, next: number, scope: WorkScope = {}): Promise<boolean> {
      const { teamIds } = scope;
      if (teamIds?.length === 0) return false;
      let q = db
        .updateTable("watches")
        .set({ nextPollAt: next })
        .where("id", "=", id)
        .where("nextPollAt", "=", expected);
      if (teamIds) q = q.where("teamId", "in", teamIds);
      return updatedOne(await q.executeTakeFirst());
    },

    async recordPoll(id: string, poll: WatchPoll): Promise<boolean> {
      const r = await db
        .updateTable("watches")
        .set({
          lastPolledAt: poll.at,
          lastError: poll.error ?? null,
          ...(poll.state !== undefined ? { state: JSON.stringify(poll.state) } : {}),
        })
        .where("id", "=", id)
        .executeTakeFirst();
      return updatedOne(r);
    },

    markFailing: (id: string, reason: string) => setFailing(db, "watches", id, reason),
    clearFailing: (id: string) => setFailing(db, "watches", id, null),
  });
}

export function createEpisodesRepo(ctx: RepoContext): EpisodesRepo {
  const { db, now } = ctx;

  const ofWatch = (watchId: string) =>
    db.selectFrom("alert_episodes").selectAll().where("watchId", "=", watchId);

  async function get(id: string): Promise<AlertEpisode | undefined> {
    const r = await db.selectFrom("alert_episodes").selectAll().where("id", "=", id).executeTakeFirst();
    return r ? toEpisode(r) : undefined;
  }

  return guard("alert_episodes", {
    async latest(watchId: string, subject: string): Promise<AlertEpisode | undefined> {
      const r = await ofWatch(watchId)
        .where("subject", "=", subject)
        .orderBy("seq", "desc")
        .executeTakeFirst();
      return r ? toEpisode(r) : undefined;
    },

    async open(e: NewEpisode): Promise<AlertEpisode | undefined> {
      if (!Number.isSafeInteger(e.seq) || e.seq < 1)
        throw new StoreError("invalid", "An episode's seq must be a whole number from 1");
      const at = now();
      const row: Selectable<AlertEpisodesTable> = {
        id: newId(),
        watchId: e.watchId,
        teamId: e.teamId,
        channelId: e.channelId,
        subject: e.subject,
        seq: e.seq,
        kind: e.kind,
        status: "firing",
        openedAt: at,
        updatedAt: at,
        resolvedAt: null,
        messageTs: null,
        details: JSON.stringify(e.details ?? null),
        acknowledgedBy: null,
        acknowledgedAt: null,
        version: 1,
        shownVersion: null,
        shownDigest: null,
      };
      // Another replica that opened this (watch, subject, seq) first wins; this insert then does nothing.
      const inserted = await db
        .insertInto("alert_episodes")
        .values(row)
        .onConflict((oc) => oc.columns(["watchId", "subject", "seq"]).doNothing())
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
          updatedAt: now(),
          ...(patch.kind !== undefined ? { kind: patch.kind } : {}),
          ...(patch.status !== undefined ? { status: patch.status } : {}),
          ...(patch.resolvedAt !== undefined ? { resolvedAt: patch.resolvedAt } : {}),
          ...(patch.details !== undefined ? { details: JSON.stringify(patch.details) } : {}),
        })
        .where("id", "=", id)
        .where("version", "=", expectedVersion)
        .executeTakeFirst();
      return updatedOne(r) ? get(id) : undefined;
    },

    async setMessage(id: string, ts: string): Promise<boolean> {
      const r = await db
        .updateTable("alert_episodes")
        .set({ messageTs: ts })
        .where("id", "=", id)
        .where("messageTs", "is", null)
        .executeTakeFirst();
      return updatedOne(r);
    },

    async acknowledge(id: string, userId: string): Promise<boolean> {
      const r = await db
        .updateTable("alert_episodes")
        .set({ acknowledgedBy: userId, acknowledgedAt: now() })
        .where("id", "=", id)
        .where("acknowledgedBy", "is", null)
        .executeTakeFirst();
      return updatedOne(r);
    },

    async listOpen(teamId: string, channelIds?: readonly string[], limit = 50): Promise<AlertEpisode[]> {
      if (channelIds?.length === 0) return [];
      let q = db
        .selectFrom("alert_episodes")
        .selectAll()
        .where("teamId", "=", teamId)
        .where("status", "=", "firing");
      if (channelIds) q = q.where("channelId", "in", channelIds);
      const rows = await q.orderBy("openedAt", "desc").orderBy("id").limit(limit).execute();
      return rows.map(toEpisode);
    },

    async listUndelivered(watchId: string): Promise<AlertEpisode[]> {
      const rows = await ofWatch(watchId)
        .where("status", "=", "firing")
        .where("messageTs", "is", null)
        .orderBy("openedAt")
        .orderBy("id")
        .execute();
      return rows.map(toEpisode);
    },

    async setShown(id: string, version: number, digest: string): Promise<boolean> {
      const r = await db
        .updateTable("alert_episodes")
        .set({ shownVersion: version, shownDigest: digest })
        .where("id", "=", id)
        // A slower delivery of an older version does not overwrite a newer one's.
        .where((eb) => eb.or([eb("shownVersion", "is", null), eb("shownVersion", "<=", version)]))
        .executeTakeFirst();
      return updatedOne(r);
    },

    async listToRefresh(watchId: string): Promise<AlertEpisode[]> {
      const rows = await ofWatch(watchId)
        .where("messageTs", "is not", null)
        .where((eb) =>
          eb.or([
            eb("status", "=", "firing"),
            eb("shownVersion", "is", null),
            eb("shownVersion", "<>", eb.ref("version")),
          ]),
        )
        .orderBy("openedAt")
        .orderBy("id")
        .execute();
      return rows.map(toEpisode);
    },

    async listForWatch(watchId: string): Promise<AlertEpisode[]> {
      const rows = await ofWatch(watchId).orderBy("subject").orderBy("seq").execute();
      return rows.map(toEpisode);
    },
  });
}
