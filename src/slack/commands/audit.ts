import { usage } from "../../errors.js";
import type { AuditEntry } from "../../store/index.js";
import { context, escapeMrkdwn, header, packLines, type Reply } from "../blocks/common.js";
import { slackDateFromMs } from "../blocks/dates.js";
import type { Subcommand } from "./types.js";

const EXAMPLE = "/edge audit 50";
const MAX = 200;

export function auditMessage(entries: readonly AuditEntry[]): Reply {
  if (entries.length === 0)
    return {
      text: "No audit entries yet",
      blocks: [header("Audit log"), context("Nothing has been recorded for this workspace yet.")],
    };
  const lines = entries.map((e) => {
    const where = typeof e.details?.channelId === "string" ? ` in <#${e.details.channelId}>` : "";
    const status =
      typeof e.details?.status === "number"
        ? ` (HTTP ${e.details.status}${typeof e.details.errorKey === "string" ? `, ${escapeMrkdwn(e.details.errorKey)}` : ""})`
        : "";
    const who = e.userId === "system" ? "edgeops" : `<@${e.userId}>`;
    return `${slackDateFromMs(e.at)} · ${who} · \`${escapeMrkdwn(e.action)}\` · ${escapeMrkdwn(e.target)}${where} · *${escapeMrkdwn(e.outcome)}*${status}`;
  });
  return {
    text: `Audit log: last ${entries.length} entries`,
    blocks: [header("Audit log"), ...packLines(lines, 45, "entries")],
  };
}

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
