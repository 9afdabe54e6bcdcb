import type { KnownBlock } from "@slack/types";
import type { Drift, SettingValue } from "../../alerts/drift.js";
import type { Watch } from "../../store/index.js";
import { ACTIONS } from "../ids.js";
import type { ChangeButtonValue } from "./approvals.js";
import { actions, button, confirmDialog, context, section } from "./block-kit.js";
import { code, dateToken, mention, mrkdwn, truncate } from "./mrkdwn.js";
import { type Reply, reply } from "./reply.js";

/** What a drift post's Keep carries: the watch, the setting and the value to keep. */
export interface DriftKeepValue {
  w: string;
  s: string;
  v: SettingValue;
  /** What moved, in words ("WAF execution mode Block → Log"), and when it was noticed: the kept post says it again. */
  c: string;
  n: number;
}

function zoneName(w: Pick<Watch, "target" | "options">): string {
  return w.options.label
    ? `${truncate(w.options.label, 80)} (shield zone ${w.target})`
    : `shield zone ${w.target}`;
}

/** "WAF execution mode Block → Log" */
const changeWords = (d: Drift) => `${d.title} ${d.fromLabel} → ${d.toLabel}`;

function driftLine(w: Pick<Watch, "target" | "options">, change: string, noticedAt: number) {
  return mrkdwn`:mag: *${zoneName(w)}*: ${change}, not through edgeops, noticed ${dateToken(noticedAt, "{time}")}`;
}

/**
 * A setting changed outside edgeops, in the watch's channel: what moved and when it was noticed, with Put it
 * back (the usual change flow: Slack's confirmation, then policy and approval) where edgeops can change
 * that setting, and Keep. Pure; `newId` gives the Put it back request its id (one click, one request).
 */
export function driftMessage(w: Watch, d: Drift, newId: () => string): Reply {
  const { noticedAt } = d;
  const text = driftLine(w, changeWords(d), noticedAt);
  const keep: DriftKeepValue = { w: w.id, s: d.key, v: d.to, c: truncate(changeWords(d), 300), n: noticedAt };
  const keepButton = button("Keep", ACTIONS.driftKeep, JSON.stringify(keep));
  const blocks: KnownBlock[] = [section(text)];
  if (d.putBack) {
    const value: ChangeButtonValue = { r: newId(), k: d.putBack.k, p: d.putBack.p };
    const putBack = button("Put it back", ACTIONS.driftPutBack, JSON.stringify(value), "primary");
    putBack.confirm = confirmDialog(
      "Put it back?",
      mrkdwn`Ask to set ${d.title} of ${zoneName(w)} back to *${d.fromLabel}*. The channel's approval policy applies.`,
      "Put it back",
      "primary",
    );
    blocks.push(actions(putBack, keepButton));
  } else {
    blocks.push(
      context(mrkdwn`edgeops can't change this setting: put it back in the bunny.net dashboard, or Keep it.`),
      actions(keepButton),
    );
  }
  blocks.push(
    context(mrkdwn`Watch ${code(w.id)} · Keep makes ${d.toLabel} the value this watch compares with`),
  );
  return reply(text, blocks);
}

/** The drift post once someone kept the new value (no buttons). */
export function driftKeptMessage(w: Watch, kept: DriftKeepValue, userId: string, at: number): Reply {
  const line = driftLine(w, kept.c, kept.n);
  const text = mrkdwn`:white_check_mark: ${mention(userId)} kept it ${dateToken(at, "{time}")}: the watch compares with the new value from now on.`;
  return reply(line, [section(line), context(text)]);
}

/**
 * The drift post once someone asked to put it back (no buttons: Keep would record the value being put back,
 * and a second Put it back would ask twice). The request's own card and the thread say where it stands.
 */
export function driftPutBackAskedMessage(
  w: Pick<Watch, "target" | "options">,
  drift: Pick<DriftKeepValue, "c" | "n">,
  userId: string,
  at: number,
  outcome: "pending" | "applied" | "other",
): Reply {
  const line = driftLine(w, drift.c, drift.n);
  const when = dateToken(at, "{time}");
  const text =
    outcome === "applied"
      ? mrkdwn`:leftwards_arrow_with_hook: ${mention(userId)} put it back ${when} (this channel needs no approval).`
      : outcome === "pending"
        ? mrkdwn`:leftwards_arrow_with_hook: ${mention(userId)} asked ${when} to put it back: waiting for approval on its card.`
        : mrkdwn`:leftwards_arrow_with_hook: ${mention(userId)} asked ${when} to put it back: the thread says how it went.`;
  return reply(line, [section(line), context(text)]);
}

/** The drift post once the watch it belongs to is gone. */
export function driftWatchGoneText(): string {
  return "This watch was removed, so there is nothing to keep: watch the zone's settings again with /edge watch config <zone>.";
}
