import { resolveChange } from "../../changes/index.js";
import type { AuditEntry } from "../../store/index.js";
import { context, header, packLines } from "./block-kit.js";
import { detailMrkdwn } from "./change-details.js";
import { channel, code, dateToken, joinMrkdwn, type MrkdwnInput, mention, mrkdwn } from "./mrkdwn.js";
import { type Reply, reply } from "./reply.js";

/** Whose entries an answer holds: one channel's, the reader's channels', or (admins) the workspace's. */
export type AuditScope = { kind: "channel"; channelId: string } | { kind: "yours" } | { kind: "workspace" };

function scopeLine(scope: AuditScope): MrkdwnInput {
  switch (scope.kind) {
    case "channel":
      return mrkdwn`What happened in ${channel(scope.channelId)}.`;
    case "yours":
      return "What happened in the channels you are in (and that edgeops is in). `/edge audit public` shows this channel's in the channel.";
    case "workspace":
      return "Every entry of the workspace, as you are an admin: this answer is for you alone. `/edge audit public` shows this channel's in the channel.";
  }
}

/** A change's entry: what it found and what it asked for ("Low → High", a policy's change and before). */
function beforeAfter(e: AuditEntry): MrkdwnInput {
  const kind = e.action.slice(0, e.action.lastIndexOf("."));
  if (!e.details || !("params" in e.details)) return "";
  const c = resolveChange({ kind, params: e.details.params });
  if (!c) return "";
  const rows = c.kind.details(c.params, e.details.observed ?? null);
  return mrkdwn`\n      ${joinMrkdwn(
    rows.map((row) => mrkdwn`${row.label}: ${detailMrkdwn(row.value)}`),
    " · ",
  )}`;
}

/** An audit log, newest first: when, who, what, where, outcome and any HTTP status. */
export function auditMessage(entries: readonly AuditEntry[], scope: AuditScope): Reply {
  if (entries.length === 0)
    return reply("No audit entries yet", [
      header("Audit log"),
      context(scopeLine(scope)),
      context("Nothing has been recorded here yet."),
    ]);
  const lines = entries.map((e) => {
    const where = typeof e.details?.channelId === "string" ? mrkdwn` in ${channel(e.details.channelId)}` : "";
    const status =
      typeof e.details?.status === "number"
        ? ` (HTTP ${e.details.status}${typeof e.details.apiError === "string" ? `, ${e.details.apiError}` : ""})`
        : "";
    const reason =
      typeof e.details?.reason === "string" && e.outcome === "failed"
        ? `: ${e.details.reason.slice(0, 300)}`
        : "";
    const who = e.userId === "system" ? "edgeops" : mention(e.userId);
    return mrkdwn`${dateToken(e.at)} · ${who} · ${code(e.action)} · ${e.target}${where} · *${e.outcome}*${status}${reason}${beforeAfter(e)}`;
  });
  return reply(`Audit log: last ${entries.length} entries`, [
    header("Audit log"),
    context(scopeLine(scope)),
    ...packLines(lines, 44, "entries"),
  ]);
}
