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

const requestIdOf = (e: AuditEntry) =>
  typeof e.details?.requestId === "string" ? e.details.requestId : undefined;
const step = (e: AuditEntry) => e.action.slice(e.action.lastIndexOf(".") + 1);

/** An entry as shown: a change applied without approval is one row, a reject carries its reason. */
interface AuditRow {
  entry: AuditEntry;
  withoutApproval: boolean;
  rejectReason: string | undefined;
}

/**
 * One row per thing that happened: a change applied at once (its request, "no approval needed" and apply
 * entries) shows as its apply, "without approval"; a reason added to a reject shows on the reject.
 */
function auditRows(entries: readonly AuditEntry[]): AuditRow[] {
  const byRequest = new Map<string, AuditEntry[]>();
  for (const e of entries) {
    const id = requestIdOf(e);
    if (id) byRequest.set(id, [...(byRequest.get(id) ?? []), e]);
  }
  const has = (id: string | undefined, name: string) =>
    id !== undefined && (byRequest.get(id) ?? []).some((e) => step(e) === name && e.outcome !== "reason");
  const rows: AuditRow[] = [];
  for (const e of entries) {
    const id = requestIdOf(e);
    const appliedAtOnce = has(id, "no_approval") && has(id, "apply");
    if (appliedAtOnce && (step(e) === "request" || step(e) === "no_approval")) continue;
    if (step(e) === "reject" && e.outcome === "reason" && has(id, "reject")) continue;
    const reason =
      step(e) === "reject"
        ? (byRequest.get(id ?? "") ?? [e]).find((x) => step(x) === "reject" && x.outcome === "reason")
            ?.details?.reason
        : undefined;
    rows.push({
      entry: e,
      withoutApproval: appliedAtOnce && step(e) === "apply",
      rejectReason: typeof reason === "string" ? reason : undefined,
    });
  }
  return rows;
}

/** A stored target names channels by id ("policy of channel C0123"): shown as channel mentions. */
function targetMrkdwn(target: string): MrkdwnInput {
  const parts = target.split(/\bchannel ([CG][A-Z0-9]{2,40})\b/);
  return joinMrkdwn(parts.map((part, i) => (i % 2 === 1 ? mrkdwn`channel ${channel(part)}` : part)));
}

/** An audit log, newest first: when, who, what, where, outcome and any HTTP status. */
export function auditMessage(entries: readonly AuditEntry[], scope: AuditScope): Reply {
  if (entries.length === 0)
    return reply("No audit entries yet", [
      header("Audit log"),
      context(scopeLine(scope)),
      context("Nothing has been recorded here yet."),
    ]);
  const rows = auditRows(entries);
  const lines = rows.map(({ entry: e, withoutApproval, rejectReason }) => {
    const where = typeof e.details?.channelId === "string" ? mrkdwn` in ${channel(e.details.channelId)}` : "";
    const status =
      typeof e.details?.status === "number"
        ? ` (HTTP ${e.details.status}${typeof e.details.apiError === "string" ? `, ${e.details.apiError}` : ""})`
        : "";
    const said =
      rejectReason ?? (e.outcome === "failed" || e.outcome === "reason" ? e.details?.reason : undefined);
    const reason = typeof said === "string" ? `: ${said.slice(0, 300)}` : "";
    const how = withoutApproval ? " without approval" : "";
    const who = e.userId === "system" ? "edgeops" : mention(e.userId);
    return mrkdwn`${dateToken(e.at)} · ${who} · ${code(e.action)} · ${targetMrkdwn(e.target)}${where} · *${e.outcome}*${how}${status}${reason}${beforeAfter(e)}`;
  });
  return reply(`Audit log: last ${rows.length} entries`, [
    header("Audit log"),
    context(scopeLine(scope)),
    ...packLines(lines, 44, "entries"),
  ]);
}
