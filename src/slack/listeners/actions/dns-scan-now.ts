import { toUserSentence } from "../../../errors.js";
import { waitForScan } from "../../../services/dns.js";
import { edgeClientFor } from "../../../services/edge-access.js";
import { section } from "../../blocks/block-kit.js";
import { dnsMessage, noScanMessage, scanStartedMessage } from "../../blocks/dns.js";
import type { SlackEnv } from "../../edge-commands/types.js";
import { answerPrivately, type ButtonArgs, buttonContext, replaceClicked } from "./context.js";

export const SCAN_WAIT_MS = 60_000;

/** Scan now: trigger a scan, say so at once, then replace the message with the finished scan. */
export function dnsScanNow(env: SlackEnv, waitMs = SCAN_WAIT_MS) {
  return async (args: ButtonArgs) => {
    await args.ack();
    const ctx = buttonContext(env, args);
    const zoneId = Number(ctx.value);
    if (!Number.isInteger(zoneId) || zoneId < 1)
      return answerPrivately(args, "That button is out of date: run /edge dns again.", ctx.logger);
    try {
      const client = await edgeClientFor(env.deps, ctx.teamId);
      await client.triggerDnsScan(zoneId);
      await replaceClicked(args, scanStartedMessage(zoneId), ctx.logger);
      const { scan, finished } = await waitForScan(client, zoneId, {
        maxWaitMs: waitMs,
        firstDelayMs: 250,
        clock: env.deps.clock,
      });
      const reply = scan ? dnsMessage(zoneId, scan) : noScanMessage(zoneId);
      if (!finished)
        reply.blocks.unshift(
          section(
            ":hourglass: The scan is still running; this is what exists so far. Press Scan now again later.",
          ),
        );
      await replaceClicked(args, reply, ctx.logger);
    } catch (err) {
      ctx.logger.warn({ err, zoneId }, "scan now failed");
      await answerPrivately(args, toUserSentence(err), ctx.logger);
    }
  };
}
