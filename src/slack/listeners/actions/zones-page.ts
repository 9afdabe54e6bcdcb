import { z } from "zod";
import { namedShieldZonesPage } from "../../../services/zone-lookup.js";
import { zonesMessage } from "../../blocks/zones.js";
import { withShareButton } from "../../edge-commands/run.js";
import type { SlackEnv } from "../../edge-commands/types.js";
import { onButton, replaceMessage, staleButton } from "./context.js";

const pageValue = z.object({
  page: z.number().int().min(1),
  perPage: z.number().int().min(1),
  p: z.boolean().optional(),
});

/** Previous page / Next page on a zones message: replace the message with that page. */
export function zonesPage(env: SlackEnv) {
  return onButton(env, pageValue, staleButton("zones"), (args, ctx, value) =>
    replaceMessage(args, ctx.logger, async () => {
      const { page, named } = await namedShieldZonesPage(env.deps, ctx.teamId, value.page, value.perPage);
      const reply = zonesMessage(page, value.p === true, named, env.deps.clock.now());
      // Every private page keeps Share in channel, as the first one has: it shares this page.
      return value.p ? reply : withShareButton(reply, `zones ${value.page}`);
    }),
  );
}
