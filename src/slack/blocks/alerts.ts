import type { Button, KnownBlock } from "@slack/types";
import { DEFAULT_ALERT_STATUSES } from "../../alerts/detect.js";
import {
  type AlertEvent,
  type AlertView,
  isMutedAt,
  SIGNAL_LABELS,
  type SignalNumbers,
} from "../../alerts/view.js";
import { type AccessBlockParams, accessBlockKind } from "../../changes/kinds/access-block.js";
import { restartAppKind } from "../../changes/kinds/restart-app.js";
import { DDOS_WORDS, ddosSensitivityKind } from "../../changes/kinds/shield-zone-setting.js";
import { ddosSensitivityLabel } from "../../edge/schemas/shield.js";
import { accessEntryOf } from "../../services/access-entries.js";
import type { Watch } from "../../store/index.js";
import { ACTIONS } from "../ids.js";
import { type ChangeButtonValue, durationWords } from "./approvals.js";
import { statusLook } from "./apps.js";
import { actions, button, confirmDialog, context, header, packLines, section } from "./block-kit.js";
import { notPostedIn } from "./channel-failing.js";
import { chartBlock } from "./incident.js";
import { channel, code, dateToken, joinMrkdwn, type Mrkdwn, mention, mrkdwn, truncate } from "./mrkdwn.js";
import { type Reply, reply, WITHOUT_PICTURE } from "./reply.js";

/**
 * Alerts: the parent message of an episode (firing, still firing with the latest numbers, resolved with
 * its duration), the short replies in its thread, and the /edge watch answers. Pure: data in, blocks out.
 */

const n = (v: number) => Math.round(v).toLocaleString("en-US");
/** Mitigations raise DDoS sensitivity to this for 30 minutes. */
export const DDOS_RAISE_TO = DDOS_WORDS.high ?? 3;
export const MITIGATION_MS = 30 * 60_000;
export const MUTE_BUTTON_MS = 3_600_000;

function zoneName(s: { shieldZoneId: number; label: string | null }): string {
  return s.label
    ? `${truncate(s.label, 80)} (shield zone ${s.shieldZoneId})`
    : `shield zone ${s.shieldZoneId}`;
}

function subjectName(v: AlertView): string {
  return v.subject.kind === "zone" ? zoneName(v.subject) : truncate(v.subject.appName, 80);
}

/** What the alert is about in a few words, e.g. "Attack on shop.example.com (shield zone 12)". */
export function alertTitle(v: AlertView): string {
  const s = v.subject;
  if (v.status === "resolved")
    return s.kind === "zone" ? `Attack on ${subjectName(v)} is over` : `${subjectName(v)} is back`;
  if (v.untracked) return `${s.kind === "zone" ? "Attack on " : ""}${subjectName(v)}: no longer watched`;
  if (s.kind === "zone") return `Attack on ${subjectName(v)}`;
  return s.transition === "stuck_deploying"
    ? `${subjectName(v)} is stuck deploying`
    : `${subjectName(v)} is failing`;
}

export function signalLine(r: SignalNumbers): Mrkdwn {
  const mark = r.over ? ":small_red_triangle:" : "·";
  return mrkdwn`${mark} *${SIGNAL_LABELS[r.signal]}* ${n(r.count)}/min (usually ${n(r.mean)}, z ${r.z.toFixed(1)})`;
}

/** The change-confirm value of one mitigation, its request id fixed per episode (one request per button). */
function changeValue(v: AlertView, suffix: string, k: string, p: unknown, t?: number): string {
  const value: ChangeButtonValue = { r: `${v.episodeId}-${suffix}`, k, p, ...(t ? { t } : {}) };
  return JSON.stringify(value);
}

function mitigationButtons(v: AlertView): Button[] {
  const s = v.subject;
  const out: Button[] = [];
  if (s.kind === "zone") {
    const entry = s.topOffender ? accessEntryOf(s.topOffender) : undefined;
    if (entry && !s.topOffenderBlocked) {
      const p: AccessBlockParams = { shieldZoneId: s.shieldZoneId, ...entry, state: "block" };
      const b = button(
        `Block ${entry.value}`,
        ACTIONS.alertMitigateBlock,
        changeValue(v, "block", accessBlockKind.name, p),
        "danger",
      );
      const partial =
        s.topOffenderOfGroups === undefined
          ? ""
          : ` It is the busiest of the first ${n(s.topOffenderOfGroups)} groups read, not necessarily of all.`;
      b.confirm = confirmDialog(
        "Block the top offender?",
        mrkdwn`*${accessBlockKind.describe(p)}*: its requests are refused, through edgeops' own access list. This channel's approval policy applies.${partial}`,
        "Block",
        "danger",
      );
      out.push(b);
    }
    if (s.ddosSensitivity !== null && s.ddosSensitivity < DDOS_RAISE_TO) {
      const p = {
        shieldZoneId: s.shieldZoneId,
        value: DDOS_RAISE_TO,
        seen: s.ddosSensitivity as typeof DDOS_RAISE_TO,
      };
      const b = button(
        `DDoS ${ddosSensitivityLabel(DDOS_RAISE_TO).toLowerCase()} for 30 min`,
        ACTIONS.alertMitigateDdos,
        changeValue(v, "ddos", ddosSensitivityKind.name, p, MITIGATION_MS),
      );
      b.confirm = confirmDialog(
        "Raise DDoS sensitivity?",
        mrkdwn`*${ddosSensitivityKind.describe(p)}* for ${durationWords(MITIGATION_MS)}, then undone. This channel's approval policy applies.`,
        "Raise",
      );
      out.push(b);
    }
  } else {
    const p = { appId: s.appId, appName: truncate(s.appName, 200) };
    const b = button(
      "Restart app",
      ACTIONS.alertMitigateRestart,
      changeValue(v, "restart", restartAppKind.name, p),
      "danger",
    );
    b.confirm = confirmDialog(
      `Restart ${truncate(s.appName, 60)}?`,
      mrkdwn`*${restartAppKind.describe(p)}*: every pod restarts. This channel's approval policy applies.`,
      "Restart",
      "danger",
    );
    out.push(b);
  }
  return out;
}

/** The mitigations the zone already has, said instead of offering their buttons. */
function alreadyInForce(s: Extract<AlertView["subject"], { kind: "zone" }>): Mrkdwn[] {
  const out: Mrkdwn[] = [];
  if (s.topOffender && s.topOffenderBlocked)
    out.push(mrkdwn`${code(s.topOffender, 60)} is blocked by edgeops' access list`);
  if (s.ddosSensitivity !== null && s.ddosSensitivity >= DDOS_RAISE_TO)
    out.push(mrkdwn`DDoS sensitivity is ${ddosSensitivityLabel(s.ddosSensitivity)}`);
  return out;
}

function stateLine(v: AlertView, now: number): Mrkdwn {
  const parts: Mrkdwn[] = [];
  if (v.status === "resolved" && v.resolvedAt !== null)
    parts.push(
      mrkdwn`:white_check_mark: Resolved ${dateToken(v.resolvedAt)} after ${durationWords(v.resolvedAt - v.openedAt)}`,
    );
  else if (v.untracked)
    parts.push(
      mrkdwn`:wastebasket: No longer tracked: ${mention(v.untracked.by)} removed its watch ${dateToken(v.untracked.at)}, while it had been firing since ${dateToken(v.openedAt)}`,
    );
  else parts.push(mrkdwn`:rotating_light: Firing since ${dateToken(v.openedAt)}`);
  if (v.reopened > 0) parts.push(mrkdwn`fired again ${v.reopened}× within the cool-down`);
  if (v.acknowledgedBy) parts.push(mrkdwn`acknowledged by ${mention(v.acknowledgedBy)}`);
  if (v.mutedUntil !== null && v.mutedUntil > now) parts.push(mrkdwn`muted until ${dateToken(v.mutedUntil)}`);
  return joinMrkdwn(parts, " · ");
}

/**
 * The parent message of an alert episode, in every state; `now` decides whether a mute still shows. With a chart,
 * the same message without it rides along (WITHOUT_PICTURE), sent when Slack refuses the picture.
 */
export function alertParentMessage(v: AlertView, now: number): Reply {
  const s = v.subject;
  const emoji = v.status === "resolved" ? ":white_check_mark:" : ":rotating_light:";
  const blocks: KnownBlock[] = [header(`${v.status === "resolved" ? "✅" : "🚨"} ${alertTitle(v)}`)];
  if (s.kind === "zone") {
    const shown = s.readings.filter((r) => r.over || r.count > 0);
    blocks.push(
      section(
        shown.length > 0
          ? joinMrkdwn(shown.map(signalLine), "\n")
          : mrkdwn`No threat counts in the latest window.`,
      ),
    );
    if (v.chart) blocks.push(chartBlock(v.chart));
    if (s.topOffender) {
      const of =
        s.topOffenderOfGroups === undefined ? "" : ` · top of the first ${n(s.topOffenderOfGroups)} groups`;
      blocks.push(context(mrkdwn`Top offender when it fired: ${code(s.topOffender, 60)}${of}`));
    }
    if (v.status === "firing" && !v.untracked) {
      const inForce = alreadyInForce(s);
      if (inForce.length > 0) blocks.push(context(mrkdwn`Already in force: ${joinMrkdwn(inForce, " · ")}`));
    }
  } else {
    const look = statusLook(s.status);
    blocks.push(
      section(
        s.sinceAtLeast
          ? mrkdwn`${look.emoji} *${truncate(s.appName, 80)}* (${code(s.appId, 60)}) is *${look.label}*, at least since ${dateToken(s.since)} (it was already when this watch started; the Edge API does not say since when)`
          : mrkdwn`${look.emoji} *${truncate(s.appName, 80)}* (${code(s.appId, 60)}) is *${look.label}* since ${dateToken(s.since)}`,
      ),
    );
  }
  blocks.push(context(stateLine(v, now)));
  const timeline = button("Timeline", ACTIONS.alertTimeline, v.episodeId);
  if (v.status === "resolved" && s.kind === "zone") blocks.push(actions(timeline));
  if (v.status === "firing" && !v.untracked) {
    const buttons: Button[] = [];
    if (s.kind === "zone")
      buttons.push(button("Incident overview", ACTIONS.alertIncident, v.episodeId, "primary"), timeline);
    buttons.push(...mitigationButtons(v));
    buttons.push(
      isMutedAt(v, now)
        ? button("Unmute", ACTIONS.alertUnmute, v.episodeId)
        : button("Mute 1h", ACTIONS.alertMute, v.episodeId),
    );
    if (!v.acknowledgedBy) buttons.push(button("Acknowledge", ACTIONS.alertAcknowledge, v.episodeId));
    blocks.push(actions(...buttons));
  }
  const message = reply(mrkdwn`${emoji} ${alertTitle(v)}`, blocks);
  return v.chart
    ? { ...message, [WITHOUT_PICTURE]: alertParentMessage({ ...v, chart: null }, now) }
    : message;
}

export function alertThreadReply(e: AlertEvent): Reply {
  let text: Mrkdwn;
  switch (e.kind) {
    case "worse": {
      const names = e.signals.map((s) => SIGNAL_LABELS[s]).join(", ");
      const lines = e.readings.filter((r) => r.over).map(signalLine);
      text = mrkdwn`:chart_with_upwards_trend: Now also over its baseline: *${names}*\n${joinMrkdwn(lines, "\n")}`;
      break;
    }
    case "status": {
      const look = statusLook(e.status);
      text = mrkdwn`${look.emoji} ${truncate(e.appName, 80)} is now *${look.label}*`;
      break;
    }
    case "resolved":
      text = mrkdwn`:white_check_mark: Resolved after ${durationWords(e.durationMs)}.`;
      break;
    case "fired_again":
      text = mrkdwn`:rotating_light: Firing again, ${durationWords(e.afterMs)} after it resolved (within the cool-down, so it stays in this thread).`;
      break;
  }
  return reply(text, [section(text)]);
}

// ---- /edge watch answers -----------------------------------------------------------------------------

export function watchLabel(w: Pick<Watch, "kind" | "target" | "options">): string {
  if (w.kind === "config") {
    const name = w.options.label
      ? `${truncate(w.options.label, 80)} (shield zone ${w.target})`
      : `shield zone ${w.target}`;
    return `the settings of ${name}`;
  }
  if (w.kind === "zone") {
    const name = w.options.label
      ? `${truncate(w.options.label, 80)} (shield zone ${w.target})`
      : `shield zone ${w.target}`;
    return `${name}, sensitivity ${w.options.sensitivity ?? "normal"}`;
  }
  const statuses = w.options.statuses;
  return statuses && statuses.length > 0
    ? `apps (${statuses.join(", ")})`
    : `apps (${DEFAULT_ALERT_STATUSES.join(", ")}, or deploying for too long)`;
}

const WATCH_PROMISE: Record<Watch["kind"], string> = {
  zone: "it comes under attack and when it calms down",
  apps: "it changes status and when it recovers",
  config: "one of them changes outside edgeops (someone in the bunny.net dashboard, another tool)",
};

export function watchCreatedMessage(
  w: Watch,
  existed: boolean,
  intervalMs: number,
  /** Apps watch: the apps already in a watched status, which it takes as they are (no alert for them). */
  already?: { apps: readonly { name: string; status: string }[]; complete: boolean },
): Reply {
  const what = watchLabel(w);
  const lead = existed
    ? mrkdwn`:eyes: This channel already watches ${what}.`
    : mrkdwn`:eyes: Watching ${what} in this channel: I'll post here when ${WATCH_PROMISE[w.kind]}.`;
  const blocks = [section(lead)];
  if (already && already.apps.length > 0) {
    const n = already.apps.length;
    const names = already.apps
      .slice(0, 10)
      .map((a) => mrkdwn`${a.name} (${statusLook(a.status).label.toLowerCase()})`);
    const more = n > 10 ? ` and ${n - 10} more` : "";
    blocks.push(
      section(
        mrkdwn`:warning: ${already.complete ? "" : "At least "}${n} ${n === 1 ? "app is" : "apps are"} already in a watched status: ${joinMrkdwn(names, ", ")}${more}. This watch starts from them as they are and posts only what changes from now on: ${code("/edge apps failing")} lists them.`,
      ),
    );
  }
  return reply(lead, [
    ...blocks,
    context(
      mrkdwn`Id ${code(w.id)} · checked about every ${durationWords(intervalMs)} · mute with ${code(`/edge watch mute ${w.id} 2h`)} · stop with ${code(`/edge watch remove ${w.id}`)}`,
    ),
  ]);
}

/** `/edge watch zone <id> sensitivity <s>` on a zone the channel already watches: the watch now alerts at `s`. */
export function watchSensitivityChangedMessage(w: Watch, was: string): Reply {
  const name = w.options.label
    ? `${truncate(w.options.label, 80)} (shield zone ${w.target})`
    : `shield zone ${w.target}`;
  const text = mrkdwn`:control_knobs: The watch ${code(w.id)} of ${name} is now at sensitivity *${w.options.sensitivity ?? "normal"}* (was ${was}), from its next check. It keeps what it has learnt of the zone's usual traffic.`;
  return reply(text, [section(text)]);
}

function watchLine(w: Watch, now: number): Mrkdwn {
  const muted =
    w.mutedUntil !== null && w.mutedUntil > now
      ? mrkdwn` · :no_bell: muted until ${dateToken(w.mutedUntil)}`
      : "";
  const last = w.lastPolledAt === null ? "not checked yet" : mrkdwn`checked ${dateToken(w.lastPolledAt)}`;
  const problem = w.failing
    ? mrkdwn`\n:rotating_light: Failing: ${w.lastError ?? "the last alert did not arrive"}`
    : w.lastError
      ? mrkdwn`\n:warning: ${w.lastError}`
      : "";
  return mrkdwn`${code(w.id)} · ${watchLabel(w)} · by ${mention(w.createdBy)} · ${last}${muted}${problem}`;
}

export function watchListMessage(watches: readonly Watch[], now: number): Reply {
  if (watches.length === 0)
    return reply("No watches in this channel", [
      section(
        mrkdwn`:eyes: Nothing is watched in this channel. Add a watch with ${code("/edge watch zone shop.example.com")} or ${code("/edge watch apps")}.`,
      ),
    ]);
  return reply(`${watches.length} watches in this channel`, [
    header(`Watches in this channel (${watches.length})`),
    ...packLines(
      watches.map((w) => watchLine(w, now)),
      45,
      "watches",
    ),
    context(
      mrkdwn`Mute one with ${code("/edge watch mute <id> 2h")}; stop one with ${code("/edge watch remove <id>")}.`,
    ),
  ]);
}

export function watchRemovedMessage(w: Watch): Reply {
  const text = mrkdwn`:wastebasket: Removed ${code(w.id)}: ${channel(w.channelId)} no longer watches ${watchLabel(w)}.`;
  return reply(text, [section(text)]);
}

/** In the channel, when a watch with open alerts is removed: they are no longer tracked. */
export function watchRemovedChannelNotice(w: Watch, by: string, openAlerts: number): Reply {
  const alerts = openAlerts === 1 ? "its open alert is" : `its ${openAlerts} open alerts are`;
  const text = mrkdwn`:wastebasket: ${mention(by)} removed the watch of ${watchLabel(w)} (${code(w.id)}): ${alerts} no longer tracked, and nothing more is posted about ${w.kind === "apps" ? "these apps" : "this zone"} here. Watch again with ${code(w.kind === "apps" ? "/edge watch apps" : `/edge watch ${w.kind} ${w.target}`)}.`;
  return reply(text, [section(text)]);
}

export function watchMutedMessage(w: Watch, until: number | null): Reply {
  const text =
    until === null
      ? mrkdwn`:bell: ${watchLabel(w)} (${code(w.id)}) is no longer muted.`
      : mrkdwn`:no_bell: ${watchLabel(w)} (${code(w.id)}) is muted until ${dateToken(until)}: alerts are still tracked, and an alert still open then is posted.`;
  return reply(text, [section(text)]);
}

/** The one direct message a watch's creator gets when its channel stops taking alerts. */
export function watchChannelFailingDm(w: Watch, slackError: string): Reply {
  const problem = notPostedIn(slackError, w.channelId, { kind: "watch", id: w.id });
  const text = mrkdwn`:rotating_light: An alert of your watch of ${watchLabel(w)} (${code(w.id)}) ${problem} I keep tracking it and post the open alert once I can; I won't message you again about it until it works.`;
  return reply(text, [section(text)]);
}
