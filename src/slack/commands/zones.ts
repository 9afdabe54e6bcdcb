import { usage } from "../../errors.js";
import { edgeClientFor } from "../../services/edge-access.js";
import { zonesMessage } from "../blocks/zones.js";
import type { Subcommand } from "./types.js";

export const ZONES_PER_PAGE = 10;

export const zonesCommand: Subcommand = {
  name: "zones",
  usage: "zones [page]",
  summary: "Shield zone (WAF and DDoS) configurations, ten to a page.",
  examples: ["/edge zones", "/edge zones 2"],
  async run(ctx) {
    const [pageArg, extra] = ctx.args;
    if (extra !== undefined || (pageArg !== undefined && !/^\d+$/.test(pageArg)) || pageArg === "0") {
      throw usage("The page is a number from 1: /edge zones 2");
    }
    const page = pageArg ? Number(pageArg) : 1;
    const client = await edgeClientFor(ctx.env.deps, ctx.teamId);
    return zonesMessage(await client.listShieldZones({ page, perPage: ZONES_PER_PAGE }), ctx.isPublic);
  },
};
