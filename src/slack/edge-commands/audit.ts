import { usage } from "../../errors.js";
import { auditMessage } from "../blocks/audit.js";
import { userChannelIds } from "../user-channels.js";
import type { Subcommand } from "./types.js";

const EXAMPLE = "/edge audit 50";
const MAX = 200;

export const auditCommand: Subcommand = {
  name: "audit",
  usage: "audit [n]",
  summary:
    "The last n audit entries (default 20) of the channels you are in (admins: all): when, who, what, where, outcome; with public, this channel's.",
  examples: ["/edge audit", EXAMPLE],
  // What one reader may see is not what the channel may: `public` answers with this channel's entries.
  shareable: () => false,
  async run(ctx) {
    const [arg, extra] = ctx.args;
    if (
      extra !== undefined ||
      (arg !== undefined && (!/^\d+$/.test(arg) || Number(arg) < 1 || Number(arg) > MAX))
    ) {
      throw usage(`Give how many entries to show, from 1 to ${MAX}: ${EXAMPLE}`);
    }
    const limit = arg ? Number(arg) : 20;
    const { store } = ctx.env.deps;
    if (ctx.isPublic)
      return auditMessage(await store.audit.list(ctx.teamId, limit, { channelIds: [ctx.channelId] }), {
        kind: "channel",
        channelId: ctx.channelId,
      });
    if (await ctx.env.admins.isAdmin(ctx.client, ctx.teamId, ctx.userId))
      return auditMessage(await store.audit.list(ctx.teamId, limit), { kind: "workspace" });
    const channels = await userChannelIds(ctx.client, ctx.userId);
    return auditMessage(await store.audit.list(ctx.teamId, limit, { channelIds: [...channels] }), {
      kind: "yours",
    });
  },
};
