import type { AuditEntry } from "../../store/index.js";
import {
  channel,
  code,
  context,
  dateToken,
  header,
  mention,
  mrkdwn,
  packLines,
  type Reply,
  reply,
} from "./common.js";

/** The workspace's audit log, newest first: when, who, what, where, outcome and any HTTP status. */
export function auditMessage(entries: readonly AuditEntry[]): Reply {
  if (entries.length === 0)
    return reply("No audit entries yet", [
      header("Audit log"),
      context("Nothing has been recorded for this workspace yet."),
    ]);
  const lines = entries.map((e) => {
    const where = typeof e.details?.channelId === "string" ? mrkdwn` in ${channel(e.details.channelId)}` : "";
    const status =
      typeof e.details?.status === "number"
        ? ` (HTTP ${e.details.status}${typeof e.details.errorKey === "string" ? `, ${e.details.errorKey}` : ""})`
        : "";
    const who = e.userId === "system" ? "edgeops" : mention(e.userId);
    return mrkdwn`${dateToken(e.at)} · ${who} · ${code(e.action)} · ${e.target}${where} · *${e.outcome}*${status}`;
  });
  return reply(`Audit log: last ${entries.length} entries`, [
    header("Audit log"),
    ...packLines(lines, 45, "entries"),
  ]);
}
