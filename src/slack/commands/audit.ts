import { usage } from "../../errors.js";
import { auditMessage } from "../blocks/audit.js";
import type { Subcommand } from "./types.js";

const EXAMPLE = "/edge audit 50";
const MAX = 200;

export const auditCommand: Subcommand = {
  name: "audit",
  usage: "audit [n]",
  summary: "The workspace's last n audit entries (default 20): when, who, what, where, outcome.",
  examples: ["/edge audit", EXAMPLE],
  async run(ctx) {
    const [arg, extra] = ctx.args;
    if (
      extra !== undefined ||
      (arg !== undefined && (!/^\d+$/.test(arg) || Number(arg) < 1 || Number(arg) > MAX))
    ) {
      throw usage(`Give how many entries to show, from 1 to ${MAX}: ${EXAMPLE}`);
    }
    return auditMessage(await ctx.env.deps.store.audit.list(ctx.teamId, arg ? Number(arg) : 20));
  },
};
