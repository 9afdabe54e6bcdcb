import { z } from "zod";
import { dnsAnswer } from "../../commands/dns.js";
import { withShareButton } from "../../commands/run.js";
import type { SlackEnv } from "../../commands/types.js";
import {
  answerPrivately,
  type ButtonArgs,
  buttonContext,
  parseButtonValue,
  replaceMessage,
} from "./context.js";

const pageValue = z.object({
  z: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER),
  t: z.string().max(100),
  pg: z.number().int().min(1).max(100_000),
  p: z.boolean().optional(),
});

/** A record type or Previous / Next on a DNS answer: the same answer at that type and page, in place. */
export function dnsPage(env: SlackEnv) {
  return async (args: ButtonArgs) => {
    await args.ack();
    const ctx = buttonContext(env, args);
    const value = parseButtonValue(ctx.value, pageValue);
    if (!value) return answerPrivately(args, "That button is out of date: run /edge dns again.", ctx.logger);
    await replaceMessage(args, ctx.logger, async () => {
      const view = { type: value.t, page: value.pg };
      const reply = await dnsAnswer(env, ctx.teamId, value.z, view, value.p === true);
      // A private page keeps Share in channel, which shares this very page.
      return value.p ? reply : withShareButton(reply, `dns ${value.z} ${value.t} ${value.pg}`);
    });
  };
}
