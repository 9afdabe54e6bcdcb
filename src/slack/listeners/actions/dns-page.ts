import { z } from "zod";
import { dnsAnswer } from "../../edge-commands/dns.js";
import { withShareButton } from "../../edge-commands/run.js";
import type { SlackEnv } from "../../edge-commands/types.js";
import { onButton, replaceMessage, staleButton } from "./context.js";

const pageValue = z.object({
  z: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER),
  t: z.string().max(100),
  pg: z.number().int().min(1).max(100_000),
  p: z.boolean().optional(),
});

/** A record type or Previous / Next on a DNS answer: the same answer at that type and page, in place. */
export function dnsPage(env: SlackEnv) {
  return onButton(env, pageValue, staleButton("dns"), (args, ctx, value) =>
    replaceMessage(args, ctx.logger, async () => {
      const reply = await dnsAnswer(
        env,
        ctx.teamId,
        value.z,
        { type: value.t, page: value.pg },
        value.p === true,
      );
      // A private page keeps Share in channel, which shares this very page.
      return value.p ? reply : withShareButton(reply, `dns ${value.z} ${value.t} ${value.pg}`);
    }),
  );
}
