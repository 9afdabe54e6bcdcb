import type { WebClient } from "@slack/web-api";
import type { Deps } from "../deps.js";
import type { EdgeClient } from "../edge/client.js";
import { toUserSentence } from "../errors.js";
import type { Lease } from "../lease.js";
import type { Logger } from "../log.js";
import type { ScanWaitOptions } from "../services/dns.js";
import { collectDnsSummary, type SummarySnapshot } from "../services/dns-summary.js";
import { edgeAccessFor } from "../services/edge-access.js";
import { periodMs } from "../services/schedules.js";
import type { Schedule } from "../store/index.js";
import { dnsSummaryFailedMessage, dnsSummaryMessage } from "./blocks/dns-summary.js";
import type { Reply } from "./blocks/reply.js";
import { channelFailingDm, scheduleLabel } from "./blocks/schedules.js";
import { deliverTo, type PostingOwner } from "./deliver.js";

/**
 * One run of one schedule: build the DNS summary, post it with chat.postMessage, record the run.
 * Used by the scheduler (after it claimed the occurrence) and by `/edge schedule run <id>`.
 */

/** Small fixed set: also the `outcome` label of edgeops_scheduler_runs_total. */
export type RunOutcome =
  | "ok"
  | "partial"
  | "edge_error"
  | "channel_failing"
  | "slack_error"
  | "error"
  /** The lease ended before the post (this replica was too slow or cut off): another replica runs it. */
  | "superseded";

export interface RunResult {
  outcome: RunOutcome;
  /** Whether a message reached the channel. */
  posted: boolean;
  /** The sentence recorded as the run's error, if any. */
  error: string | null;
  /** The Slack error code when posting failed. */
  slackError?: string;
}

export interface RunOptions {
  deps: Deps;
  /** The workspace's Web API client (may throw: e.g. the app was uninstalled). */
  client: () => Promise<WebClient>;
  logger: Logger;
  /** The run's time (the scheduler's injected clock). */
  now: number;
  wait: ScanWaitOptions;
  /** Aborted when the scheduler stops: scans are read once rather than waited for. */
  signal?: AbortSignal;
  /** Aborted when the scheduler's claim on the run ended (the schedule removed): its Edge calls stop. */
  claimEnded?: AbortSignal;
  /** Start a DNS scan; the scheduler passes one that starts one scan per zone per tick. */
  trigger?: (teamId: string, zoneId: number, edge: EdgeClient) => Promise<unknown>;
  /** The scheduler's claim on this occurrence; absent for `/edge schedule run <id>`. */
  lease?: RunLease;
}

/**
 * The scheduler's lease on the occurrence being run (see SchedulesRepo.claim and holdLease): `end()`
 * gives the lease time held, and recordRun releases the lease only if it still matches.
 */
export type RunLease = Lease;

async function buildReply(
  s: Schedule,
  o: RunOptions,
): Promise<{ reply: Reply; outcome: RunOutcome; error: string | null; snapshot: SummarySnapshot | null }> {
  const zoneId = Number(s.target);
  const schedule = { id: s.id, label: scheduleLabel(s) };
  try {
    const { client: edge } = await edgeAccessFor(
      o.deps,
      s.teamId,
      o.claimEnded ? { signal: o.claimEnded } : {},
    );
    const { summary, snapshot } = await collectDnsSummary({
      client: edge,
      zoneId,
      now: o.now,
      periodMs: periodMs(s, o.now),
      previous: s.snapshot,
      wait: o.wait,
      ...(o.signal ? { signal: o.signal } : {}),
      ...(o.trigger ? { trigger: (id: number) => o.trigger!(s.teamId, id, edge) } : {}),
    });
    return {
      reply: dnsSummaryMessage(summary, schedule),
      outcome: summary.incomplete ? "partial" : "ok",
      error: summary.incomplete ? "The scan had not finished in time." : null,
      snapshot,
    };
  } catch (err) {
    o.logger.warn({ err, zoneId }, "scheduled DNS summary: reading the zone failed");
    const sentence = toUserSentence(err);
    return {
      reply: dnsSummaryFailedMessage(zoneId, sentence, schedule),
      outcome: "edge_error",
      error: sentence,
      snapshot: null,
    };
  }
}

/** Run a schedule once. Never throws: every failure is a recorded outcome. */
export async function runSchedule(s: Schedule, o: RunOptions): Promise<RunResult> {
  const { deps } = o;
  const logger = o.logger.child({ jobId: s.id, teamId: s.teamId, channelId: s.channelId });
  const finish = async (result: RunResult, snapshot?: SummarySnapshot | null): Promise<RunResult> => {
    try {
      const run = {
        at: o.now,
        outcome: result.outcome,
        error: result.error,
        ...(snapshot ? { snapshot } : {}),
      };
      const recorded = await deps.store.schedules.recordRun(s.id, run, await o.lease?.end());
      if (!recorded && o.lease)
        logger.warn("the schedule's lease had been taken over when its run was recorded");
    } catch (err) {
      logger.error({ err }, "could not record the schedule's run");
    }
    deps.metrics.schedulerRuns.inc({ outcome: result.outcome });
    logger.info({ outcome: result.outcome, posted: result.posted }, "scheduled DNS summary run");
    return result;
  };

  try {
    const built = await buildReply(s, o);
    const owner: PostingOwner = {
      what: "schedule",
      channelId: s.channelId,
      createdBy: s.createdBy,
      failing: s.failing,
      markFailing: (_code, err) => deps.store.schedules.markFailing(s.id, toUserSentence(err)),
      clearFailing: () => deps.store.schedules.clearFailing(s.id),
      failingDm: (code) => channelFailingDm(s, code),
    };
    const lease = o.lease;
    const delivered = await deliverTo(
      {
        client: o.client,
        metrics: deps.metrics,
        logger,
        // The fence: a replica whose lease ended (another one took the occurrence over) does not post.
        fence: lease ? () => lease.stillMine() : undefined,
      },
      owner,
      (to) => to.post(built.reply),
    );
    switch (delivered.outcome) {
      case "sent":
        break;
      case "no_client":
        return finish({ outcome: "slack_error", posted: false, error: toUserSentence(delivered.error) });
      case "superseded":
        deps.metrics.schedulerRuns.inc({ outcome: "superseded" });
        logger.warn("the schedule's lease ended before posting; another replica runs this occurrence");
        return { outcome: "superseded", posted: false, error: null };
      case "channel_failing":
      case "slack_error": {
        const { slackError, error } = delivered;
        if (delivered.outcome === "slack_error")
          logger.warn({ err: error, slackError }, "posting the scheduled DNS summary failed");
        return finish({
          outcome: delivered.outcome,
          posted: false,
          error: toUserSentence(error),
          slackError,
        });
      }
    }
    return finish({ outcome: built.outcome, posted: true, error: built.error }, built.snapshot);
  } catch (err) {
    logger.error({ err }, "scheduled DNS summary failed");
    return finish({ outcome: "error", posted: false, error: toUserSentence(err) });
  }
}
