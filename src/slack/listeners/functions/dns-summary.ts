import { z } from "zod";
import { dnsScanStatusLabel } from "../../../edge/schemas/core.js";
import { toUserSentence } from "../../../errors.js";
import { collectDnsSummary } from "../../../services/dns-summary.js";
import { edgeClientFor } from "../../../services/edge-access.js";
import { dnsSummaryMessage } from "../../blocks/dns-summary.js";
import { RUN_NOW_SCAN_WAIT_MS } from "../../edge-commands/schedule.js";
import type { SlackEnv } from "../../edge-commands/types.js";
import {
  CHANNEL_ID,
  clientIfMember,
  type FunctionArgs,
  finishNow,
  parseStepInputs,
  stepContext,
  userContext,
} from "./context.js";

/** A DNS scan older than this is replaced by a fresh one before the summary is posted. */
export const DNS_STEP_SCAN_MAX_AGE_MS = 60 * 60_000;

const dnsSummaryInputs = z.object({
  dns_zone_id: z.coerce.number().int().min(1).max(Number.MAX_SAFE_INTEGER),
  channel: z.string().regex(CHANNEL_ID),
  requester: userContext,
});
const HELP = {
  dns_zone_id: "Give the DNS zone's id, a number (find it with /edge dns or in the bunny.net dashboard).",
  channel:
    "Choose the channel to post the summary in (edgeops and the person who runs the workflow must be members of it).",
  requester:
    "The step did not get the person who ran the workflow from Slack: start the workflow from a person's action (a link trigger, a shortcut or a button in a message), then edit the step and publish the workflow again. For summaries on a schedule, use /edge schedule dns in the channel.",
};

const NOT_A_MEMBER =
  "The person who ran the workflow is not a member of the channel this step posts its summary in, so nothing was posted: pick a channel they are in, or have them join it.";

/**
 * "Post a DNS summary": the same summary the scheduler posts (services/dns-summary.ts, a fresh scan
 * when the last is over an hour old), posted in the channel, only for a person who ran the workflow
 * from inside that channel; outputs what it found.
 */
export function dnsSummaryStep(env: SlackEnv) {
  return async (args: FunctionArgs) => {
    const ctx = stepContext(env, args);
    let inputs: z.output<typeof dnsSummaryInputs>;
    try {
      inputs = parseStepInputs(dnsSummaryInputs, args.inputs, HELP);
    } catch (err) {
      ctx.logger.info({ err }, "workflow step refused its inputs");
      return finishNow(args, ctx, { error: toUserSentence(err) });
    }
    const where = { channel: inputs.channel, userId: inputs.requester.id };
    const client = await clientIfMember(env, args, ctx, where, NOT_A_MEMBER);
    if (!client) return;
    try {
      const { summary } = await collectDnsSummary({
        client: await edgeClientFor(env.deps, ctx.teamId),
        zoneId: inputs.dns_zone_id,
        now: env.deps.clock.now(),
        periodMs: DNS_STEP_SCAN_MAX_AGE_MS,
        previous: null,
        wait: { maxWaitMs: RUN_NOW_SCAN_WAIT_MS, firstDelayMs: 500, clock: env.deps.clock },
      });
      const message = dnsSummaryMessage(summary, null);
      const posted = await client.chat.postMessage({
        channel: inputs.channel,
        text: message.text,
        blocks: message.blocks,
        unfurl_links: false,
        unfurl_media: false,
      });
      await finishNow(args, ctx, {
        outputs: {
          dns_zone_id: inputs.dns_zone_id,
          domain: summary.domain ?? "",
          records: summary.total,
          scan_status: summary.scan ? dnsScanStatusLabel(summary.scan.status) : "No scan",
          complete: !summary.incomplete,
          message_ts: posted.ts ?? "",
        },
      });
    } catch (err) {
      ctx.logger.info({ err }, "DNS summary step failed");
      await finishNow(args, ctx, { error: toUserSentence(err) });
    }
  };
}
