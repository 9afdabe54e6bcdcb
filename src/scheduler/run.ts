import type { WebClient } from "@slack/web-api";
import type { Deps } from "../deps.js";
import type { EdgeClient } from "../edge/client.js";
import { slackErrorCode, toUserSentence } from "../errors.js";
import type { Logger } from "../log.js";
import type { ScanWaitOptions } from "../services/dns.js";
import { collectDnsSummary, type SummarySnapshot } from "../services/dns-summary.js";
import { edgeClientFor } from "../services/edge-access.js";
import { periodMs } from "../services/schedules.js";
import type { Reply } from "../slack/blocks/common.js";
import { dnsSummaryFailedMessage, dnsSummaryMessage } from "../slack/blocks/dns-summary.js";
import { channelFailingDm, scheduleLabel } from "../slack/blocks/schedules.js";
import type { Schedule } from "../store/index.js";
import type { Lease } from "./pool.js";

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

/** Slack errors that mean "this channel does not take our posts": mark failing, tell the creator once. */
export const CHANNEL_ERRORS = new Set(["not_in_channel", "channel_not_found", "is_archived"]);

async function buildReply(
  s: Schedule,
  o: RunOptions,
): Promise<{ reply: Reply; outcome: RunOutcome; error: string | null; snapshot: SummarySnapshot | null }> {
  const zoneId = Number(s.target);
  const schedule = { id: s.id, label: scheduleLabel(s) };
  try {
    const edge = await edgeClientFor(o.deps, s.teamId);
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

/** A direct message to whoever created `what` (a schedule, a watch) that its channel refuses posts. */
export async function tellCreator(
  client: WebClient,
  userId: string,
  message: Reply,
  what: "schedule" | "watch",
  logger: Logger,
): Promise<void> {
  try {
    const dm = await client.conversations.open({ users: userId });
    const channel = dm.channel?.id;
    if (!channel) throw new Error("conversations.open returned no channel");
    await client.chat.postMessage({ channel, text: message.text, blocks: message.blocks });
  } catch (err) {
    logger.warn({ err, userId }, `could not tell the ${what}'s creator that it is failing`);
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
    let client: WebClient;
    try {
      client = await o.client();
    } catch (err) {
      logger.warn({ err }, "no Slack client for the schedule's workspace");
      return finish({ outcome: "slack_error", posted: false, error: toUserSentence(err) });
    }
    // The fence: a replica whose lease ended (another one took the occurrence over) does not post.
    if (o.lease && !(await o.lease.stillMine())) {
      deps.metrics.schedulerRuns.inc({ outcome: "superseded" });
      logger.warn("the schedule's lease ended before posting; another replica runs this occurrence");
      return { outcome: "superseded", posted: false, error: null };
    }
    try {
      await client.chat.postMessage({
        channel: s.channelId,
        text: built.reply.text,
        blocks: built.reply.blocks,
        unfurl_links: false,
        unfurl_media: false,
      });
    } catch (err) {
      const code = slackErrorCode(err) ?? "unknown";
      deps.metrics.slackApiErrors.inc({ method: "chat.postMessage", error: code });
      const sentence = toUserSentence(err);
      if (CHANNEL_ERRORS.has(code)) {
        logger.warn({ slackError: code, alreadyFailing: s.failing }, "schedule's channel refuses posts");
        await deps.store.schedules.markFailing(s.id, sentence);
        // One direct message when a schedule starts failing; none while it stays failing.
        if (!s.failing) await tellCreator(client, s.createdBy, channelFailingDm(s, code), "schedule", logger);
        return finish({ outcome: "channel_failing", posted: false, error: sentence, slackError: code });
      }
      logger.warn({ err, slackError: code }, "posting the scheduled DNS summary failed");
      return finish({ outcome: "slack_error", posted: false, error: sentence, slackError: code });
    }
    if (s.failing) await deps.store.schedules.clearFailing(s.id);
    return finish({ outcome: built.outcome, posted: true, error: built.error }, built.snapshot);
  } catch (err) {
    logger.error({ err }, "scheduled DNS summary failed");
    return finish({ outcome: "error", posted: false, error: toUserSentence(err) });
  }
}
