import type { EdgeClient } from "../edge/client.js";
import {
  METRICS_RESOLUTION,
  unreadableMetricKeys,
  unreadableMetricsSentence,
} from "../edge/schemas/shield.js";
import { UserError } from "../errors.js";
import { accessEntryOf } from "../services/access-entries.js";
import { readEntryState } from "../services/access-lists.js";
import { APPS_MAX_LIMIT } from "../services/apps.js";
import { busiestGroup, readEventLogGroups } from "../services/event-log-groups.js";
import type { AlertEpisode, Sensitivity } from "../store/index.js";
import {
  classifyApp,
  evaluateZone,
  nextBaseline,
  normaliseAppStatus,
  samplesFromDetailed,
  WATCHED_FEATURES,
  type ZoneEpisode,
  type ZoneSample,
  type ZoneVerdict,
  zoneEpisodeStep,
} from "./detect.js";
import { type AlertNotice, type EpisodeContext, fire, resolve } from "./episodes.js";
import type { AlertSignal, EpisodeDetails, SignalNumbers } from "./view.js";

/**
 * One evaluation of one watch (after the poller claimed it): read the Edge API, run detect.ts, and turn
 * its verdicts into episode changes. The watch's state (baseline samples, app statuses) is what the next
 * evaluation starts from, on whichever replica claims it.
 */

/** The detailed metrics' two-minute buckets (Resolution 1). */
export const BUCKET_MS = 120_000;
/** How far back the first evaluation reads to fill the baseline at once. */
export const BASELINE_FILL_MS = 3_600_000;
/** Apps read at most (pages of APPS_MAX_LIMIT). */
const APPS_MAX_PAGES = 5;

export interface ZoneState {
  /** The baseline, oldest first. */
  samples: ZoneSample[];
  /** The start of the newest bucket already evaluated. */
  lastBucketAt: number | null;
  episode: ZoneEpisode | null;
  /**
   * Every sample of the last RECENT_MS, attacks included (the baseline leaves them out): what the alert's chart
   * draws, so the chart costs no Edge API call of its own. Absent in states saved before it was kept.
   */
  recent?: ZoneSample[];
}

/** How far back the watch keeps every sample for the alert's chart. */
export const RECENT_MS = 3_600_000;

export interface AppsState {
  /** `firstSeen`: the app had this status when the watch first looked, so `since` is only a lower bound. */
  apps: Record<string, { status: string; since: number; name: string; firstSeen?: true }>;
}

export interface EvaluationResult {
  state: unknown;
  /** Edge API calls made (the key's polling budget). */
  calls: number;
  /** What Slack should be shown and told, in order. */
  notices: AlertNotice[];
}

function pushNotice(notices: AlertNotice[], n: AlertNotice | undefined): void {
  if (n) notices.push(n);
}

/** Minutes in one bucket: a sample counts a whole bucket, an alert shows a rate per minute. */
const BUCKET_MINUTES = BUCKET_MS / 60_000;

const numbers = (v: ZoneVerdict): SignalNumbers[] =>
  v.readings.map((r) => ({
    signal: r.signal as AlertSignal,
    count: r.count / BUCKET_MINUTES,
    mean: r.mean / BUCKET_MINUTES,
    z: r.z,
    over: r.over,
  }));

export async function evaluateZoneWatch(
  c: EpisodeContext,
  edge: EdgeClient,
  previous: ZoneState | null,
): Promise<EvaluationResult> {
  const { watch, now } = c;
  const zoneId = Number(watch.target);
  const sensitivity: Sensitivity = watch.options.sensitivity ?? "normal";
  const state: ZoneState = previous ?? { samples: [], lastBucketAt: null, episode: null };
  const from = Math.max(
    state.lastBucketAt === null ? 0 : state.lastBucketAt + BUCKET_MS,
    Math.floor((now - BASELINE_FILL_MS) / BUCKET_MS) * BUCKET_MS,
  );
  let calls = 1;
  const notices: AlertNotice[] = [];
  if (from >= now) return { state, calls: 0, notices };
  const detailed = await edge.getMetricsOverviewDetailed(zoneId, {
    from,
    to: now,
    resolution: METRICS_RESOLUTION.twoMinutes,
  });
  const unreadable = unreadableMetricKeys(detailed, WATCHED_FEATURES);
  if (unreadable.length > 0) {
    // Counts at times edgeops cannot place would read as no traffic: say so rather than stay silent.
    throw new UserError(
      "unavailable",
      unreadableMetricsSentence(unreadable, "this watch cannot see an attack on it"),
    );
  }
  const fresh = samplesFromDetailed(detailed, now, BUCKET_MS).filter(
    (s) => state.lastBucketAt === null || s.at > state.lastBucketAt,
  );
  if (fresh.length === 0) return { state, calls, notices };

  const wasOpen = state.episode !== null;
  let history = state.samples;
  let episode = state.episode;
  let lastAttack: ZoneVerdict | undefined;
  let lastVerdict: ZoneVerdict | undefined;
  for (const sample of fresh) {
    const verdict = evaluateZone(history, sample, sensitivity);
    const step = zoneEpisodeStep(episode, verdict);
    history = nextBaseline(history, sample, verdict, episode !== null);
    episode = step.episode;
    lastVerdict = verdict;
    if (verdict.attack) lastAttack = verdict;
  }
  const lastBucketAt = fresh.at(-1)?.at ?? state.lastBucketAt;
  const recent = [...(state.recent ?? []), ...fresh].filter(
    (s) => lastBucketAt === null || s.at > lastBucketAt - RECENT_MS,
  );
  const next: ZoneState = { samples: history, lastBucketAt, episode, recent };

  const subjectId = watch.target;
  const label = watch.options.label ?? null;
  if (episode !== null && lastAttack) {
    // Firing (or opened). A new episode is told what the mitigations need: the top offender and the
    // zone's DDoS sensitivity, each failing alone.
    const open = (await c.deps.store.episodes.latest(watch.id, subjectId)) ?? null;
    const known = firingZoneSubject(open);
    let top: TopIp = known
      ? {
          ip: known.topOffender,
          ...(known.topOffenderOfGroups === undefined ? {} : { ofGroups: known.topOffenderOfGroups }),
        }
      : { ip: null };
    if (!known) {
      top = await topIp(edge, zoneId, now).then(
        (t) => {
          calls += t.calls;
          return t;
        },
        () => {
          calls += 1;
          return { ip: null };
        },
      );
    }
    // Read again at every evaluation while it fires: a button for a move the zone already has (the IP
    // blocked, DDoS already High, by edgeops or by hand since) would be a stale offer.
    const standing = await standingMitigations(edge, zoneId, top.ip, known);
    calls += standing.calls;
    const readings = numbers(lastAttack);
    const subject: ZoneSubject = {
      kind: "zone",
      shieldZoneId: zoneId,
      label,
      readings,
      topOffender: top.ip,
      ...(top.ip !== null && top.ofGroups !== undefined ? { topOffenderOfGroups: top.ofGroups } : {}),
      ddosSensitivity: standing.ddosSensitivity,
      ...(standing.topOffenderBlocked ? { topOffenderBlocked: true } : {}),
    };
    pushNotice(
      notices,
      await fire(
        c,
        subjectId,
        "attack",
        subject,
        (prev) => {
          const before = new Set(
            (prev.subject as ZoneSubject).readings.filter((r) => r.over).map((r) => r.signal),
          );
          const joined = readings.filter((r) => r.over && !before.has(r.signal)).map((r) => r.signal);
          return joined.length > 0 ? { kind: "worse", signals: joined, readings } : undefined;
        },
        open,
      ),
    );
  } else if (episode === null && (wasOpen || lastAttack)) {
    // Calm for long enough (or an attack that came and went between two evaluations): resolve.
    const open = (await c.deps.store.episodes.latest(watch.id, subjectId)) ?? null;
    const known = firingZoneSubject(open);
    pushNotice(
      notices,
      await resolve(
        c,
        subjectId,
        known && lastVerdict ? { ...known, readings: numbers(lastVerdict) } : undefined,
        open,
      ),
    );
  }
  return { state: next, calls, notices };
}

type ZoneSubject = Extract<EpisodeDetails["subject"], { kind: "zone" }>;

/** What the zone's open alert already knows (top offender, DDoS sensitivity), if one is firing. */
function firingZoneSubject(open: AlertEpisode | null): ZoneSubject | undefined {
  return open?.status === "firing"
    ? ((open.details as EpisodeDetails).subject as ZoneSubject | undefined)
    : undefined;
}

/**
 * What the zone has now that the alert's buttons depend on: its DDoS sensitivity, and whether edgeops' block
 * list in force holds the top offender. Each read fails alone and keeps what the alert knew before.
 */
async function standingMitigations(
  edge: EdgeClient,
  zoneId: number,
  ip: string | null,
  known: ZoneSubject | undefined,
): Promise<{ ddosSensitivity: number | null; topOffenderBlocked: boolean; calls: number }> {
  const entry = ip === null ? undefined : accessEntryOf(ip);
  const keptBlocked = known?.topOffender === ip && known?.topOffenderBlocked === true;
  const [ddosSensitivity, topOffenderBlocked] = await Promise.all([
    edge
      .getShieldZone(zoneId)
      .then((z) => z.ddosShieldSensitivity ?? null)
      .catch(() => known?.ddosSensitivity ?? null),
    entry
      ? readEntryState(edge, zoneId, entry).then(
          (state) => state === "block",
          () => keptBlocked,
        )
      : Promise.resolve(false),
  ]);
  // The access lists take a list of lists and one read per edgeops list in force: two is the usual cost.
  return { ddosSensitivity, topOffenderBlocked, calls: 1 + (entry ? 2 : 0) };
}

interface TopIp {
  ip: string | null;
  /** Set when not every IP group was read: the busiest is of this many groups. */
  ofGroups?: number;
}

/**
 * The busiest IP of the zone's event log in the last 10 minutes. The document promises no order for the
 * groups: the busiest is the one with the most events of every group read (as the incident card reads them).
 */
async function topIp(edge: EdgeClient, zoneId: number, now: number): Promise<TopIp & { calls: number }> {
  const read = await readEventLogGroups(edge, zoneId, { from: now - 10 * 60_000, to: now, groupBy: ["ip"] });
  const ip = busiestGroup(read.groups)?.key.ip ?? null;
  return { ip, ...(read.readGroups === undefined ? {} : { ofGroups: read.readGroups }), calls: read.calls };
}

export async function evaluateAppsWatch(
  c: EpisodeContext,
  edge: EdgeClient,
  previous: AppsState | null,
  stuckAfterMs: number,
): Promise<EvaluationResult> {
  const { watch, now } = c;
  const apps: { id: string; name: string; status: string }[] = [];
  let cursor: string | undefined;
  let calls = 0;
  for (let i = 0; i < APPS_MAX_PAGES; i++) {
    calls++;
    const page = await edge.listApps({ limit: APPS_MAX_LIMIT, ...(cursor ? { cursor } : {}) });
    apps.push(...page.items.map((a) => ({ id: a.id, name: a.name, status: normaliseAppStatus(a.status) })));
    if (!page.nextCursor) break;
    cursor = page.nextCursor;
  }
  const next: AppsState = { apps: {} };
  const notices: AlertNotice[] = [];
  const watched = watch.options.statuses ?? null;
  for (const app of apps) {
    const before = previous?.apps[app.id];
    const same = before !== undefined && before.status === app.status;
    const since = same ? before.since : now;
    // The API does not say since when an app has its status: one already there at the first look is older.
    const firstSeen = same ? before.firstSeen === true : previous === null;
    next.apps[app.id] = { status: app.status, since, name: app.name, ...(firstSeen ? { firstSeen } : {}) };
    // The first evaluation learns the statuses: a watch alerts on changes from then on.
    if (previous === null) continue;
    const transition = classifyApp(before, app.status, now, stuckAfterMs, watched);
    const subject = (t: "failing" | "stuck_deploying") => ({
      kind: "app" as const,
      appId: app.id,
      appName: app.name,
      status: app.status,
      transition: t,
      since,
      ...(firstSeen ? { sinceAtLeast: true } : {}),
    });
    if (transition === "failing" || transition === "stuck_deploying") {
      pushNotice(notices, await fire(c, app.id, transition, subject(transition)));
    } else if (transition === "recovered") {
      pushNotice(notices, await resolve(c, app.id, { ...subject("failing"), status: app.status }));
    } else if (before && before.status !== app.status) {
      // Moved between two alerting statuses (failing → suspended): the open alert says so in its thread.
      const open = await c.deps.store.episodes.latest(watch.id, app.id);
      if (open?.status === "firing") {
        const t = (open.details as EpisodeDetails).subject;
        const transitionNow = t.kind === "app" ? t.transition : "failing";
        pushNotice(
          notices,
          await fire(
            c,
            app.id,
            open.kind,
            subject(transitionNow),
            () => ({
              kind: "status",
              appName: app.name,
              status: app.status,
            }),
            open,
          ),
        );
      }
    }
  }
  return { state: next, calls, notices };
}
