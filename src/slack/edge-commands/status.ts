import { usage } from "../../errors.js";
import { rankZones } from "../../services/unusual-zones.js";
import { statusMessage } from "../blocks/status.js";
import type { Subcommand } from "./types.js";

export const statusCommand: Subcommand = {
  name: "status",
  usage: "status",
  summary:
    "The account's hottest shield zones: the first 25 ranked by how far their last whole 2-minute slot is from their last hour (as a zone watch judges it), each with a sparkline and buttons to its incident card and to watch it.",
  examples: ["/edge status"],
  async run(ctx) {
    if (ctx.args.length > 0)
      throw usage(
        "`/edge status` takes no words: it ranks the account's zones. For one zone: /edge incident 1234; to be alerted: /edge watch zone 1234",
      );
    const { deps } = ctx.env;
    // What this minute's readings already say goes out at once; the answer replaces it once the rest are read.
    const known = await rankZones(deps, ctx.teamId, { read: false });
    if (known.pending === 0) return statusMessage(known);
    await ctx.placeholder?.(statusMessage(known));
    return statusMessage(await rankZones(deps, ctx.teamId));
  },
};
