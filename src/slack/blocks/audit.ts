import { resolveChange } from "../../changes/index.js";
import type { AuditEntry } from "../../store/index.js";
import {
  channel,
  code,
  context,
  dateToken,
  header,
  joinMrkdwn,
  type MrkdwnInput,
  mention,
  mrkdwn,
  packLines,
  type Reply,
  reply,
} from "./common.js";

/** A change's entry: what it found and what it asked for ("Low → High", a policy's change and before). */
function beforeAfter(e: AuditEntry): MrkdwnInput {
  const kind = e.action.slice(0, e.action.lastIndexOf("."));
  if (!e.details || !("params" in e.details)) return "";
  const c = resolveChange({ kind, params: e.details.params });
  if (!c) return "";
  const rows = c.kind.details(c.params, e.details.observed ?? null);
  return mrkdwn`\n      ${joinMrkdwn(
    rows.map(([label, v]) => mrkdwn`${label}: ${v}`),
    " · ",
  )}`;
}

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
    return mrkdwn`${dateToken(e.at)} · ${who} · ${code(e.action)} · ${e.target}${where} · *${e.outcome}*${status}${beforeAfter(e)}`;
  });
  return reply(`Audit log: last ${entries.length} entries`, [
    header("Audit log"),
    ...packLines(lines, 45, "entries"),
  ]);
}
