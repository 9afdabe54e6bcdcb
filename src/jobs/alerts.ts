import type { WebClient } from "@slack/web-api";
import {
  type ConfigState,
  DRIFT_VISIT_GAP_MS,
  evaluateConfigWatch,
  forgetReported,
  withKeptMeanwhile,
} from "../alerts/drift.js";
import {
  type AlertNotice,
  type EpisodeContext,
  planParent,
  recordPosted,
  recordShown,
  recordShownQuietly,
  staleNotices,
  undeliveredNotices,
  watchChannelRefused,
  watchChannelWorks,
} from "../alerts/episodes.js";
import {
  type AppsState,
  type EvaluationResult,
  evaluateAppsWatch,
  evaluateZoneWatch,
  type ZoneState,
} from "../alerts/evaluate.js";
import { CALLS_PER_EVALUATION, watchInterval } from "../alerts/interval.js";
import { isMutedAt } from "../alerts/view.js";
import type { Clock } from "../clock.js";
import type { Deps } from "../deps.js";
import { slackErrorCode, toUserSentence } from "../errors.js";
import { holdLease, type Lease } from "../lease.js";
import type { Logger } from "../log.js";
import { edgeAccessFor } from "../services/edge-access.js";
import { keepReplaced, redrawAlertChart } from "../slack/alert-chart.js";
import { alertParentMessage, alertThreadReply, watchChannelFailingDm } from "../slack/blocks/alerts.js";
import { driftMessage } from "../slack/blocks/drift.js";
import { type Reply, WITHOUT_PICTURE } from "../slack/blocks/reply.js";
import { deliverTo, type PostingOwner } from "../slack/deliver.js";
import { refreshEffectCards } from "../slack/effects.js";
import { deleteChartFile } from "../slack/incident-chart.js";
import { newRequestId } from "../slack/request-ids.js";
import type { SlackClientFor } from "../slack/transport/clients.js";
import type { ChangeRequest, Watch, WorkScope } from "../store/index.js";
import { postCleanupChecklist } from "./alert-cleanup.js";
import { postResolvedTimeline, postWhatWorked } from "./alert-timeline.js";
import { createClaimWorker } from "./pool.js";

/**
 * The alert poller (a job: the clock's entry to the alert domain) runs in every replica, as the scheduler
 * does: each tick lists due watches (round-robin across workspaces), and each evaluation is claimed with a compare-and-set on
 * next_poll_at (expected: the due time it read; new: now + the watch's interval), so one replica
 * evaluates it however many tick. The claim is also the evaluation's lease (holdLease, as the
 * scheduler's): renewed while the evaluation runs, so an evaluation slower than the interval (a Slack
 * post retried after a 429) is not evaluated again meanwhile by another replica, which would find the
 * alert it is posting still unposted and post it too; and renewed once more before an alert's parent is
 * posted (the fence). Evaluations run in the scheduler's fair bounded pool.
 *
 * An evaluation (alerts/evaluate.ts) answers with notices: which episodes Slack should show as they are now, and
 * what their threads should be told. The poller renders them (slack/blocks/alerts.ts) and sends them through
 * slack/deliver.ts, the schedules' way: a channel that refuses posts marks the watch failing and tells its
 * creator once; any other failure (429, 5xx) is logged and the next evaluation tries again.
 *
 * Budget (WATCH_SHARE): a key's watches together use at most that share of the key's
 * EDGE_API_RATE_PER_SEC. Their interval stretches past WATCH_INTERVAL_MS to
 * (watches of the workspace × calls per evaluation) ÷ (share × rate); and this replica also counts the
 * calls its evaluations made per key over the last 10 s, deferring an evaluation that would go over
 * (after downtime, when everything is due at once). Every call goes through the per-key queue as
 * background work, which waits behind people's commands, so a command typed during an attack is
 * answered as fast as without the watches.
 */

export interface PollerOptions {
  deps: Deps;
  clientFor: SlackClientFor;
  /** Default deps.clock. */
  clock?: Clock;
  /** How often start() ticks; default a quarter of WATCH_INTERVAL_MS, from 1 s to 15 s. */
  tickMs?: number;
  logger?: Logger;
  /** Due watches read per tick; default 100. */
  batchSize?: number;
  /** Evaluations at once per replica; default 8. */
  concurrency?: number;
  perWorkspaceConcurrency?: number;
  /** Only these workspaces' watches (the local console's own). */
  scope?: WorkScope;
  /** The polling budget's clock; default the poller's clock's elapsed time. */
  budgetClock?: () => number;
  /**
   * Redraw an approval card in place (src/slack/change-requests.ts updateCard): while a zone's alert is open, the
   * cards of the changes applied on the zone get their measured effect. Absent: no such refresh.
   */
  redrawCard?: (request: ChangeRequest) => Promise<void>;
  /** Called after each evaluation (tests, metrics). */
  onEvaluate?: (watch: Watch, result: PollResult | { error: string }) => void;
}

export type DeliveryOutcome =
  | "posted"
  | "updated"
  /** Slack already shows this parent: nothing sent. */
  | "unchanged"
  | "muted"
  | "channel_failing"
  | "slack_error"
  /** The evaluation's claim ended (another replica evaluates the watch now): nothing posted. */
  | "superseded";

export interface PollResult extends EvaluationResult {
  deliveries: DeliveryOutcome[];
}

/** An evaluation's episodes, with what delivering them needs. */
interface AlertDelivery extends EpisodeContext {
  /** The workspace's Web API client (may throw: e.g. the app was uninstalled). */
  client: () => Promise<WebClient>;
  /** The poller's claim on this evaluation: renewed before a parent is posted, which is not posted if lost. */
  lease: Lease;
  /** A zone watch's state after this evaluation: what its alerts' charts are drawn from. */
  zoneState?: ZoneState | null;
}

/** The watch as the owner of what it posts: a channel that refuses posts marks it failing. */
function watchOwner(d: AlertDelivery, watch: Watch = d.watch): PostingOwner {
  return {
    what: "watch",
    channelId: watch.channelId,
    createdBy: watch.createdBy,
    failing: watch.failing,
    markFailing: (slackError) => watchChannelRefused(d, slackError),
    clearFailing: () => watchChannelWorks(d),
    failingDm: (slackError) => watchChannelFailingDm(watch, slackError),
  };
}

/**
 * A config watch's evaluation (alerts/drift.ts): each setting changed outside edgeops is posted in the
 * watch's channel, once. A drift not posted (muted, the channel refuses, Slack failed) is forgotten as
 * reported, so the next evaluation posts it again. Stops at the first delivery that fails.
 */
async function evaluateConfig(d: AlertDelivery, client: Parameters<typeof evaluateConfigWatch>[2]) {
  const result = await evaluateConfigWatch(
    d.deps,
    d.watch,
    client,
    d.watch.state as ConfigState | null,
    d.now,
  );
  let state = result.state;
  // Several settings changed in one visit to the dashboard are noticed a check or two apart: one post in the
  // channel, and the visit's later changes in its thread (each with its own buttons).
  let visit = (d.watch.state as ConfigState | null)?.visit;
  const deliveries: DeliveryOutcome[] = [];
  for (const drift of result.drifts) {
    let outcome: DeliveryOutcome;
    const failed = deliveries.find((o) => o !== "posted");
    if (isMutedAt(d.watch, d.now)) outcome = "muted";
    else if (failed) outcome = failed;
    else {
      const thread = visit && d.now - visit.lastAt <= DRIFT_VISIT_GAP_MS ? visit.ts : undefined;
      const delivered = await deliverTo(
        { client: d.client, metrics: d.deps.metrics, logger: d.logger, fence: () => d.lease.stillMine() },
        watchOwner(d),
        (to) => to.post(driftMessage(d.watch, drift, newRequestId), thread),
      );
      if (delivered.outcome === "sent") {
        const ts = thread ?? delivered.value;
        visit = ts ? { ts, lastAt: d.now } : undefined;
      }
      outcome =
        delivered.outcome === "sent"
          ? "posted"
          : delivered.outcome === "no_client"
            ? "slack_error"
            : delivered.outcome;
      if (delivered.outcome === "slack_error")
        d.logger.warn({ err: delivered.error }, "posting a drift failed; the next evaluation tries again");
    }
    deliveries.push(outcome);
    if (outcome !== "posted") state = forgetReported(state, drift);
    // The incident's story (timeline, postmortem) tells changes made outside edgeops too; once, as posted.
    else
      await d.deps.store.audit
        .append({
          teamId: d.watch.teamId,
          userId: "system",
          action: "watch.drift",
          target: `watch:${d.watch.id}`,
          outcome: "noticed",
          details: {
            channelId: d.watch.channelId,
            shieldZoneId: Number(d.watch.target),
            setting: drift.key,
            title: drift.title,
            from: drift.fromLabel,
            to: drift.toLabel,
            noticedAt: drift.noticedAt,
          },
        })
        .catch((err: unknown) => d.logger.warn({ err }, "could not record a drift in the audit log"));
  }
  return { state: visit ? { ...state, visit } : state, calls: result.calls, notices: [], deliveries };
}

/**
 * Deliver a notice, a zone alert's chart redrawn first (when what it shows changed): once Slack shows the parent
 * with the new picture, or without one, the file it replaced is deleted. Never throws.
 */
async function deliverNotice(d: AlertDelivery, n: AlertNotice): Promise<DeliveryOutcome> {
  if (d.zoneState === undefined || isMutedAt(d.watch, d.now)) return deliverParent(d, n);
  let client: WebClient;
  try {
    client = await d.client();
  } catch {
    return deliverParent(d, n);
  }
  const drawn = await redrawAlertChart(d.deps, client, d.watch, d.zoneState, n.episode, d.now, d.logger);
  const outcome = await deliverParent(d, { ...n, episode: drawn.episode });
  if (outcome === "posted" || outcome === "updated")
    for (const fileId of drawn.replaced) await deleteChartFile(client, fileId, d.logger);
  else await keepReplaced(d.deps, drawn, d.logger);
  return outcome;
}

/** `send` the parent; a picture Slack refuses (invalid_blocks) is dropped and the rest sent again. */
async function withoutRefusedPicture<T>(
  d: AlertDelivery,
  parent: Reply,
  send: (m: Reply) => Promise<T>,
): Promise<T> {
  try {
    return await send(parent);
  } catch (err) {
    const without = parent[WITHOUT_PICTURE];
    if (!without || slackErrorCode(err) !== "invalid_blocks") throw err;
    d.logger.info({ err }, "Slack refused the alert's picture; sending its parent without it");
    return send(without);
  }
}

/** Post or update the notice's parent (unless Slack already shows it so), then its thread note if any. Never throws. */
async function deliverParent(d: AlertDelivery, n: AlertNotice): Promise<DeliveryOutcome> {
  const plan = await planParent(d, n);
  if (plan.kind === "muted" || plan.kind === "unchanged") return plan.kind;
  const e = n.episode;
  const messageTs = e.messageTs;
  const parent = alertParentMessage(plan.view, d.now);
  if (plan.kind === "quiet") return deliverQuietly(d, e, messageTs, parent, plan.digest);
  const { watch, digest, event } = plan;
  const owner = watchOwner(d, watch);
  const delivered = await deliverTo(
    {
      client: d.client,
      metrics: d.deps.metrics,
      logger: d.logger,
      fence: messageTs === null ? () => d.lease.stillMine() : undefined,
    },
    owner,
    async (to): Promise<DeliveryOutcome> => {
      if (messageTs === null) {
        const ts = await withoutRefusedPicture(d, parent, (m) => to.post(m));
        if (typeof ts !== "string") throw new Error("chat.postMessage returned no ts");
        await recordPosted(d, e, ts, digest);
        // The first post already shows the news; a reply would repeat it.
        return "posted";
      }
      if (plan.changed) await withoutRefusedPicture(d, parent, (m) => to.update(messageTs, m));
      // What Slack shows now, recorded before the reply: a reply that fails does not resend the parent.
      await recordShown(d, e, digest);
      if (event) await to.post(alertThreadReply(event), messageTs);
      if (event?.kind === "resolved") {
        await postResolvedTimeline(d, watch, e, (r) => to.post(r, messageTs));
        await postWhatWorked(d, watch, e, (r) => to.post(r, messageTs));
        await postCleanupChecklist(d, watch, e, d.client, (r) => to.post(r, messageTs));
      }
      return plan.changed ? "updated" : "unchanged";
    },
  );
  switch (delivered.outcome) {
    case "sent":
      return delivered.value;
    case "superseded":
      d.logger.warn(
        { episodeId: e.id },
        "the watch's claim ended before its alert was posted; another replica posts it",
      );
      return "superseded";
    case "channel_failing":
      return "channel_failing";
    case "slack_error":
      d.logger.warn(
        { err: delivered.error, slackError: delivered.slackError },
        "delivering an alert failed; the next evaluation tries again",
      );
      return "slack_error";
    case "no_client":
      return "slack_error";
  }
}

/** A muted watch's resolved parent, updated in place with nothing in its thread. Never throws. */
async function deliverQuietly(
  d: AlertDelivery,
  e: AlertNotice["episode"],
  messageTs: string | null,
  parent: ReturnType<typeof alertParentMessage>,
  digest: string,
): Promise<DeliveryOutcome> {
  if (messageTs === null) return "muted";
  const delivered = await deliverTo(
    { client: d.client, metrics: d.deps.metrics, logger: d.logger },
    watchOwner(d),
    async (to) => {
      await withoutRefusedPicture(d, parent, (m) => to.update(messageTs, m));
      await recordShownQuietly(d, e, digest);
    },
  );
  if (delivered.outcome === "sent") return "updated";
  if (delivered.outcome === "slack_error")
    d.logger.warn({ err: delivered.error }, "updating a muted alert failed; the next evaluation tries again");
  return delivered.outcome === "no_client" ? "slack_error" : delivered.outcome;
}

/**
 * Bring the watch's alerts in Slack up to date: post the parents of firing episodes never delivered, so an open
 * alert is never forgotten; then update every posted parent that no longer shows what is true. A parent Slack
 * already shows as it is costs nothing. Stops at the first delivery that fails.
 */
async function deliverPending(d: AlertDelivery): Promise<DeliveryOutcome[]> {
  const out: DeliveryOutcome[] = [];
  if (isMutedAt(d.watch, d.now)) {
    // Muted: only resolved parents, quietly (a quiet update Slack refused is tried again).
    for (const n of await staleNotices(d)) {
      if (n.episode.status !== "resolved") continue;
      const outcome = await deliverNotice(d, n);
      if (outcome === "muted" || outcome === "unchanged") continue;
      out.push(outcome);
      if (outcome !== "updated") break;
    }
    return out;
  }
  for (const n of await undeliveredNotices(d)) {
    const outcome = await deliverNotice(d, n);
    out.push(outcome);
    if (outcome !== "posted") return out;
  }
  for (const n of await staleNotices(d)) {
    const outcome = await deliverNotice(d, n);
    if (outcome === "unchanged") continue;
    out.push(outcome);
    if (outcome !== "updated") break;
  }
  return out;
}

export interface Poller {
  /** List due watches and evaluate them; resolves with how many this replica evaluated. */
  tick(): Promise<number>;
  start(): void;
  stop(deadlineMs?: number): Promise<void>;
}

const BUDGET_WINDOW_MS = 10_000;

/** A due watch and the interval its claim sets. */
interface DueWatch {
  watch: Watch;
  interval: number;
}

export function createPoller(options: PollerOptions): Poller {
  const { deps, clientFor } = options;
  const { config } = deps;
  const clock = options.clock ?? deps.clock;
  const now = clock.now;
  const batchSize = options.batchSize ?? 100;
  const scope = options.scope ?? {};
  const tickMs =
    options.tickMs ?? Math.min(15_000, Math.max(1_000, Math.floor(config.watches.intervalMs / 4)));
  const budgetClock = options.budgetClock ?? clock.elapsed;
  const logger = (options.logger ?? deps.logger).child({ component: "poller" });
  const budgetPerWindow = Math.max(
    1,
    Math.floor((config.edge.ratePerSec * config.watches.sharePercent * BUDGET_WINDOW_MS) / 100_000),
  );
  /** Calls made by this replica's evaluations, per key: [time, calls]. */
  const spent = new Map<string, [number, number][]>();

  function spentIn(keyId: string): number {
    const at = budgetClock();
    const list = (spent.get(keyId) ?? []).filter(([t]) => at - t < BUDGET_WINDOW_MS);
    if (list.length === 0) spent.delete(keyId);
    else spent.set(keyId, list);
    return list.reduce((n, [, c]) => n + c, 0);
  }

  function spend(keyId: string, calls: number): void {
    const list = spent.get(keyId);
    if (list) list.push([budgetClock(), calls]);
    else spent.set(keyId, [[budgetClock(), calls]]);
  }

  /** Claim one evaluation and run it; true when this replica evaluated it. */
  async function evaluate({ watch: w, interval }: DueWatch): Promise<boolean> {
    const log = logger.child({ watchId: w.id, teamId: w.teamId, channelId: w.channelId });
    // Aborts the evaluation's Edge calls, waiting or sent, once its claim ended: the watch was removed
    // (its workspace uninstalled edgeops, whose key must not be used after its undos settled) or another
    // replica evaluates it now.
    const claimEnded = new AbortController();
    try {
      const at = now();
      let access: Awaited<ReturnType<typeof edgeAccessFor>>;
      try {
        access = await edgeAccessFor(deps, w.teamId, { background: true, signal: claimEnded.signal });
      } catch (err) {
        // No key (removed since): look again at the next interval, and say why in /edge watch list.
        if (await deps.store.watches.claim(w.id, w.nextPollAt, at + interval, scope))
          await deps.store.watches.recordPoll(w.id, { at, error: toUserSentence(err) });
        return false;
      }
      const cost = CALLS_PER_EVALUATION[w.kind];
      // A share smaller than one evaluation still lets one through per window.
      const used = spentIn(access.keyId);
      if (used > 0 && used + cost > budgetPerWindow) {
        // Over the key's share right now: leave it due; a later tick takes it (its interval stretches).
        log.debug({ keyId: access.keyId }, "watch deferred: its key's polling share is used up");
        return false;
      }
      if (!(await deps.store.watches.claim(w.id, w.nextPollAt, at + interval, scope))) return false;
      const lease = holdLease({
        first: at + interval,
        leaseMs: interval,
        clock,
        async renew(from, to) {
          const mine = await deps.store.watches.claim(w.id, from, to, scope);
          if (!mine) claimEnded.abort(new Error("the watch's claim ended: removed, or evaluated elsewhere"));
          return mine;
        },
        onError: (err) => log.warn({ err }, "could not renew the claim on a watch's evaluation"),
      });
      try {
        return await evaluateClaimed(w, at, access, lease, log);
      } finally {
        await lease.end();
      }
    } catch (err) {
      log.warn({ err }, "claiming or recording a watch failed");
      return false;
    }
  }

  async function evaluateClaimed(
    w: Watch,
    at: number,
    access: Awaited<ReturnType<typeof edgeAccessFor>>,
    lease: Lease,
    log: Logger,
  ): Promise<boolean> {
    const d: AlertDelivery = {
      deps,
      watch: w,
      client: () => clientFor(w.teamId),
      logger: log,
      now: at,
      cooldownMs: config.watches.cooldownMs,
      lease,
    };
    if (w.kind === "config") return evaluateConfigClaimed(d, access, log);
    let result: EvaluationResult;
    try {
      result =
        w.kind === "zone"
          ? await evaluateZoneWatch(d, access.client, w.state as ZoneState | null)
          : await evaluateAppsWatch(
              d,
              access.client,
              w.state as AppsState | null,
              config.watches.stuckDeployingMs,
            );
    } catch (err) {
      const sentence = toUserSentence(err);
      log.warn({ err }, "evaluating a watch failed; its state is kept for the next one");
      spend(access.keyId, CALLS_PER_EVALUATION[w.kind]);
      await deps.store.watches.recordPoll(w.id, { at, error: sentence });
      options.onEvaluate?.(w, { error: sentence });
      return true;
    }
    spend(access.keyId, result.calls);
    if (w.kind === "zone") d.zoneState = result.state as ZoneState | null;
    const deliveries: DeliveryOutcome[] = [];
    for (const n of result.notices) deliveries.push(await deliverNotice(d, n));
    await deps.store.watches.recordPoll(w.id, { at, state: result.state, error: null });
    // Open alerts whose parent never arrived (a mute ended, the channel takes posts again), and parents
    // that no longer show what is true (a resolution Slack refused): post or update them now, unless a
    // delivery of this evaluation just failed.
    if (!deliveries.some((o) => o === "channel_failing" || o === "slack_error" || o === "superseded"))
      deliveries.push(...(await deliverPending(d)));
    if (w.kind === "zone") spend(access.keyId, await refreshEffects(w));
    options.onEvaluate?.(w, { ...result, deliveries });
    return true;
  }

  /**
   * While the zone's alert is open, the cards of the changes applied on it show their measured effect (each
   * measured at most once a minute, background work in the key's queue); the calls count in the key's share.
   */
  async function refreshEffects(w: Watch): Promise<number> {
    const redrawCard = options.redrawCard;
    if (!redrawCard) return 0;
    const episode = await deps.store.episodes.latest(w.id, w.target).catch(() => undefined);
    if (episode?.status !== "firing") return 0;
    return refreshEffectCards(
      deps,
      { teamId: w.teamId, zoneId: Number(w.target), openedAt: episode.openedAt },
      redrawCard,
    );
  }

  async function evaluateConfigClaimed(
    d: AlertDelivery,
    access: Awaited<ReturnType<typeof edgeAccessFor>>,
    log: Logger,
  ): Promise<boolean> {
    const w = d.watch;
    let result: PollResult;
    try {
      result = await evaluateConfig(d, access.client);
    } catch (err) {
      const sentence = toUserSentence(err);
      log.warn({ err }, "reading a watched zone's settings failed; its snapshot is kept for the next one");
      spend(access.keyId, CALLS_PER_EVALUATION.config);
      await deps.store.watches.recordPoll(w.id, { at: d.now, error: sentence });
      options.onEvaluate?.(w, { error: sentence });
      return true;
    }
    spend(access.keyId, result.calls);
    const latest = (await deps.store.watches.get(w.id))?.state as ConfigState | null | undefined;
    const state = withKeptMeanwhile(
      result.state as ConfigState,
      w.state as ConfigState | null,
      latest ?? null,
    );
    await deps.store.watches.recordPoll(w.id, { at: d.now, state, error: null });
    options.onEvaluate?.(w, { ...result, state });
    return true;
  }

  /** The due watches of a tick, each with its workspace's interval (counted once per workspace per tick). */
  async function listDue(): Promise<DueWatch[]> {
    const due = await deps.store.watches.listDue(now(), batchSize, scope);
    const teams = [...new Set(due.map((w) => w.teamId))];
    const intervals = new Map(
      await Promise.all(teams.map(async (teamId) => [teamId, await watchInterval(deps, teamId)] as const)),
    );
    return due.map((watch) => ({
      watch,
      interval: intervals.get(watch.teamId) ?? config.watches.intervalMs,
    }));
  }

  return createClaimWorker<DueWatch>({
    name: "alert poller",
    intervalMs: tickMs,
    clock,
    logger,
    startedFields: { budgetPerWindow },
    concurrency: options.concurrency ?? 8,
    perWorkspace: options.perWorkspaceConcurrency,
    id: (d) => d.watch.id,
    teamId: (d) => d.watch.teamId,
    run: evaluate,
    listDue,
  });
}
