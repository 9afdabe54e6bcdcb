import { sql } from "kysely";
import type { AuditEntry } from "./audit.js";
import {
  type ChangeError,
  type ChangeRequest,
  type ChangeState,
  type DecisionReason,
  toRequest,
} from "./change-requests.js";
import { parseJson, type RepoContext, readRow } from "./context.js";
import { guard } from "./errors.js";
import { type AlertEpisode, toEpisode } from "./watches.js";

/**
 * A change request as a timeline tells it: the columns it reads. A whole row is more work for the driver
 * and the camelCase mapping (500 rows: 4.3 against 3.0 ms in better-sqlite3 alone).
 */
export type ZoneChange = Pick<
  ChangeRequest,
  | "id"
  | "kind"
  | "params"
  | "channelId"
  | "requesterId"
  | "state"
  | "createdAt"
  | "updatedAt"
  | "decidedAt"
  | "decidedBy"
  | "expiresAt"
  | "failedAt"
  | "lastError"
  | "undoneBy"
  | "reason"
  | "approvalsNeeded"
  | "undoAt"
>;

/**
 * An audit entry as a timeline reads it: the request it is about read by the database (it filters on it
 * anyway), and its details left as stored, for the few steps that tell more than who and when.
 */
export interface AuditStep extends Pick<AuditEntry, "id" | "at" | "userId" | "action" | "outcome"> {
  requestId: string | null;
  /** The details' JSON as stored. */
  details: string | null;
}

/**
 * What an incident's timeline reads about one shield zone, each in one query: the change requests, the
 * audit steps of those requests and of the zone's watches, the alert episodes, and which requests still
 * own their target. Read-only; services/timeline.ts makes the story of them.
 */
export interface TimelineReads {
  /**
   * The zone's change requests touched in [from, to] (made before `to`, last moved at or after `from`), and
   * every one still applied (in force, whatever its age); the newest `limit` of them, oldest first.
   */
  changesOfZone(
    teamId: string,
    zoneId: number,
    from: number,
    to: number,
    limit: number,
  ): Promise<ChangeRequest[]>;
  /** The same requests as changesOfZone, with only the columns a timeline reads. */
  zoneChanges(teamId: string, zoneId: number, from: number, to: number, limit: number): Promise<ZoneChange[]>;
  /** Audit entries in [from, to] about these requests or these watches (target `watch:<id>`), oldest first. */
  auditOf(
    teamId: string,
    query: {
      requestIds: readonly string[];
      watchIds: readonly string[];
      from: number;
      to: number;
      limit: number;
    },
  ): Promise<AuditStep[]>;
  /** A zone's attack alerts in the range, its watches' removed ones included (history stays). */
  zoneEpisodes(teamId: string, zoneId: number, from: number, to: number): Promise<AlertEpisode[]>;
  /**
   * The zone's requests in force now (applied, or being undone), whatever their age or channel; the oldest
   * `limit`, oldest applied first.
   */
  inForceOnZone(teamId: string, zoneId: number, limit: number): Promise<ChangeRequest[]>;
  /** Of these requests, the ones that set their target last (no later request replaced what they did). */
  ownersAmong(teamId: string, requestIds: readonly string[]): Promise<Set<string>>;
}

/** Ids one IN list holds at most (SQLite allows 32766 parameters; PostgreSQL 65535). */
const IN_CHUNK = 1_000;

function chunks<T>(items: readonly T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += IN_CHUNK) out.push(items.slice(i, i + IN_CHUNK));
  return out;
}

export function createTimelineReads(ctx: RepoContext): TimelineReads {
  const { db, engine } = ctx;
  // The zone a request is about: its kind's params name it (legacy bot-category rows: their own column).
  const zoneOfParams =
    engine === "postgres"
      ? sql<string | null>`(params::json ->> 'shieldZoneId')`
      : sql<string | null>`cast(json_extract(params, '$.shieldZoneId') as text)`;
  const requestOfDetails =
    engine === "postgres"
      ? sql<string | null>`(details::json ->> 'requestId')`
      : sql<string | null>`json_extract(details, '$.requestId')`;

  // The zone's requests touched in [from, to] and every one in force, the newest `limit` (newest first).
  const changesOf = (teamId: string, zoneId: number, from: number, to: number, limit: number) =>
    db
      .selectFrom("approval_requests")
      .where("teamId", "=", teamId)
      .where((eb) => eb.or([eb(zoneOfParams, "=", String(zoneId)), eb("shieldZoneId", "=", zoneId)]))
      .where((eb) =>
        eb.or([
          eb.and([eb("createdAt", "<=", to), eb("updatedAt", ">=", from)]),
          eb("state", "in", ["applied", "undoing"]),
        ]),
      )
      // The newest `limit`, given oldest first: a story too long loses its oldest changes, not its latest.
      .orderBy("createdAt", "desc")
      .orderBy("id", "desc")
      .limit(Math.max(0, limit));

  return guard("timeline", {
    async changesOfZone(teamId: string, zoneId: number, from: number, to: number, limit: number) {
      const rows = await changesOf(teamId, zoneId, from, to, limit).selectAll().execute();
      return rows.reverse().map(toRequest);
    },

    async zoneChanges(teamId: string, zoneId: number, from: number, to: number, limit: number) {
      const rows = await changesOf(teamId, zoneId, from, to, limit)
        .select([
          "id",
          "kind",
          "params",
          "channelId",
          "requesterId",
          "state",
          "createdAt",
          "updatedAt",
          "decidedAt",
          "decidedBy",
          "expiresAt",
          "failedAt",
          "lastError",
          "undoneBy",
          "reason",
          "approvalsNeeded",
          "undoAt",
          // Rows from before change kinds: their change is in these (toRequest).
          "shieldZoneId",
          "category",
          "requestedAction",
        ])
        .execute();
      return rows.reverse().map((r) =>
        readRow(
          r,
          {
            params:
              r.params === null
                ? { shieldZoneId: r.shieldZoneId, category: r.category, action: r.requestedAction }
                : (JSON.parse(r.params) as unknown),
            state: r.state as ChangeState,
            lastError: parseJson<ChangeError>(r.lastError),
            reason: parseJson<DecisionReason>(r.reason),
          },
          ["shieldZoneId", "category", "requestedAction"],
        ),
      );
    },

    async inForceOnZone(teamId: string, zoneId: number, limit: number) {
      const rows = await db
        .selectFrom("approval_requests")
        .selectAll()
        .where("teamId", "=", teamId)
        .where((eb) => eb.or([eb(zoneOfParams, "=", String(zoneId)), eb("shieldZoneId", "=", zoneId)]))
        .where("state", "in", ["applied", "undoing"])
        .orderBy("decidedAt")
        .orderBy("createdAt")
        .orderBy("id")
        .limit(Math.max(0, limit))
        .execute();
      return rows.map(toRequest);
    },

    async auditOf(teamId: string, q) {
      if (q.requestIds.length === 0 && q.watchIds.length === 0) return [];
      const out: AuditStep[] = [];
      const watchTargets = q.watchIds.map((id) => `watch:${id}`);
      // One statement per chunk of request ids; the watches' entries come with the first.
      const requestChunks = q.requestIds.length > 0 ? chunks(q.requestIds) : [[]];
      for (const [i, ids] of requestChunks.entries()) {
        const withWatches = i === 0 && watchTargets.length > 0;
        const rows = await db
          .selectFrom("audit_log")
          .select(["id", "at", "userId", "action", "outcome", "details", requestOfDetails.as("requestId")])
          .where("teamId", "=", teamId)
          .where("at", ">=", q.from)
          .where("at", "<=", q.to)
          .where((eb) =>
            eb.or([
              ...(ids.length > 0 ? [eb(requestOfDetails, "in", ids)] : []),
              ...(withWatches ? [eb("target", "in", watchTargets)] : []),
            ]),
          )
          .orderBy("at")
          .orderBy("id")
          .limit(Math.max(0, q.limit))
          .execute();
        out.push(...rows);
      }
      return out.sort((a, b) => a.at - b.at || a.id - b.id).slice(0, q.limit);
    },

    async zoneEpisodes(teamId: string, zoneId: number, from: number, to: number) {
      // A zone watch's subject is its target, the zone id; its episodes are of kind "attack" (alerts/evaluate.ts).
      const rows = await db
        .selectFrom("alert_episodes")
        .selectAll()
        .where("teamId", "=", teamId)
        .where("kind", "=", "attack")
        .where("subject", "=", String(zoneId))
        .where("openedAt", "<=", to)
        .where((eb) => eb.or([eb("resolvedAt", "is", null), eb("resolvedAt", ">=", from)]))
        .orderBy("openedAt")
        .orderBy("id")
        .execute();
      return rows.map(toEpisode);
    },

    async ownersAmong(teamId: string, requestIds: readonly string[]) {
      const owners = new Set<string>();
      for (const ids of chunks(requestIds)) {
        const rows = await db
          .selectFrom("change_targets")
          .select("requestId")
          .where("teamId", "=", teamId)
          .where("requestId", "in", ids)
          .execute();
        for (const r of rows) owners.add(r.requestId);
      }
      return owners;
    },
  });
}
