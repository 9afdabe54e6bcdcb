import type { KnownBlock } from "@slack/types";
import { botCategoryLabel } from "../../edge/schemas/shield.js";
import type { ImpactPreview, ImpactTarget, SettingMove } from "../../services/impact-preview.js";
import { context, section } from "./block-kit.js";
import { code, dateToken, joinMrkdwn, type Mrkdwn, mrkdwn } from "./mrkdwn.js";
import type { Reply } from "./reply.js";

/** The preview's section on a confirmation or an approval card: estimating, estimated, or why not. */
export type PreviewView = { state: "estimating" } | ImpactPreview;

export const ESTIMATING_LINE = "Impact in the last hour: estimating…";
export const SECURITY_EVENTS_ONLY =
  "Events are security events only; clean requests are not in the event log.";
const NO_EVENT_LOG = "This zone's plan has no event log, so edgeops cannot preview the impact.";

const n = (v: number) => v.toLocaleString("en-US");
const pct = (share: number) => {
  const p = share * 100;
  return `${p >= 10 || p === 0 ? Math.round(p) : p < 0.1 ? "<0.1" : p.toFixed(1)} %`;
};
const plural = (count: number, one: string) => `${n(count)} ${one}${count === 1 ? "" : "s"}`;

function whatMatched(t: ImpactTarget): string {
  switch (t.what) {
    case "entry":
      return `${t.value}`;
    case "waf_rule":
      return `WAF rule ${t.ruleId}`;
    case "threats":
      return t.feature === "ddos" ? "DDoS events" : "WAF events";
    case "bots":
      return "bot-detection events";
  }
}

type Estimated = Extract<ImpactPreview, { state: "estimated" }>;
type SettingTarget = Extract<ImpactTarget, { what: "threats" }> & { setting: SettingMove };

/** "DDoS protection … at Low", "the WAF … in Block mode": what handled the events the preview counts. */
function handledBy(t: SettingTarget): { who: string; at: string } {
  const level = t.setting.from;
  if (t.feature === "waf")
    return { who: "the WAF", at: level === null ? "in its current mode" : `in ${level} mode` };
  return { who: "DDoS protection", at: level === null ? "at its current level" : `at ${level}` };
}

const DIFFERENCE: Record<SettingMove["direction"], string> = {
  stricter: "A stricter level may act on more, which the event log cannot estimate.",
  looser: "A looser level may let some of these through, which the event log cannot estimate.",
  unknown: "The new level may act otherwise, which the event log cannot estimate.",
};

/**
 * The hour the numbers are from, to the minute they were read: a card keeps them, so "the last hour" would
 * stop being true as it waits for approval.
 */
const hourTo = (p: Estimated): Mrkdwn => mrkdwn`in the hour to ${dateToken(p.to)}`;

/** A setting's preview: what its current level handled (the event log can't tell what another would). */
function settingLines(p: Estimated, t: SettingTarget, actedWords: string, share: string): Mrkdwn[] {
  const { who, at } = handledBy(t);
  const unreadLevel = t.setting.from === null ? " (edgeops could not read it)" : "";
  if (p.matched === 0)
    return [
      mrkdwn`:bar_chart: ${who.charAt(0).toUpperCase()}${who.slice(1)} handled no events ${hourTo(p)} ${at}${unreadLevel}, so there is nothing to estimate the change from.`,
    ];
  const events = plural(p.matched, t.feature === "ddos" ? "DDoS event" : "WAF event");
  return [
    mrkdwn`:bar_chart: *What ${who} handled ${hourTo(p)} ${at}${unreadLevel}:* ${events}${actedWords}${share}.`,
    mrkdwn`${DIFFERENCE[t.setting.direction]}`,
  ];
}

const isSetting = (t: ImpactTarget): t is SettingTarget => t.what === "threats" && t.setting !== undefined;

function headline(p: Estimated): Mrkdwn[] {
  const a = p.actions;
  const acted = a
    ? [
        a.blocked > 0 ? `${n(a.blocked)} blocked` : "",
        a.challenged > 0 ? `${n(a.challenged)} challenged` : "",
        // The edge's Log action: recorded and let through. Every event counted here is in the event log.
        a.logged > 0 ? `${n(a.logged)} logged only` : "",
      ].filter((s) => s !== "")
    : [];
  const actedWords = acted.length > 0 ? ` (${acted.join(", ")})` : "";
  const share =
    p.share === null
      ? ""
      : `, ${pct(p.share)} of this zone's ${plural(p.zoneTotal, "event")} in the event log`;
  const t = p.target;
  if (isSetting(t)) return settingLines(p, t, actedWords, share);
  const subject =
    t.what === "entry"
      ? mrkdwn`${code(t.value)} matched ${plural(p.matched, "event")}`
      : t.what === "waf_rule"
        ? mrkdwn`WAF rule ${code(t.ruleId)} triggered ${plural(p.matched, "time")}`
        : mrkdwn`${plural(p.matched, t.what === "threats" ? (t.feature === "ddos" ? "DDoS event" : "WAF event") : "bot-detection event")}`;
  return [mrkdwn`:bar_chart: *Impact ${hourTo(p)}:* ${subject}${actedWords}${share}.`];
}

/** The preview's blocks (a section and a context line), plain data in, escaped at this boundary. */
export function impactPreviewBlocks(view: PreviewView): KnownBlock[] {
  switch (view.state) {
    case "estimating":
      return [context(mrkdwn`:hourglass_flowing_sand: ${ESTIMATING_LINE}`)];
    case "no_event_log":
      return [context(mrkdwn`:information_source: ${NO_EVENT_LOG}`)];
    case "unknown":
      return [
        context(
          mrkdwn`:grey_question: Impact in the last hour: unknown. ${view.reason} No estimate is shown rather than a guess.`,
        ),
      ];
    case "estimated": {
      const lines: Mrkdwn[] = headline(view);
      const t = view.target;
      if (view.largeShare && view.share !== null && t.what === "entry")
        lines.push(
          mrkdwn`:warning: ${t.value} is ${pct(view.share)} of this zone's events in the event log over that hour: blocking it also blocks everyone there.`,
        );
      if (view.topPaths.length > 0)
        lines.push(
          mrkdwn`Top paths${view.pathsPartial ? " (of those read)" : ""}: ${joinMrkdwn(
            view.topPaths.map((p) => mrkdwn`${code(p.path, 80)} ${n(p.count)}`),
            ", ",
          )}`,
        );
      const notes: string[] = [SECURITY_EVENTS_ONLY];
      if (view.matchedOfGroups !== undefined)
        notes.push(
          `Counted from the first ${n(view.matchedOfGroups)} groups the event log gave; it has more, so the number is a lower bound.`,
        );
      if (view.actions === null && view.matched > 0)
        notes.push(
          "The event log did not say what was done with every one of them, so no breakdown is shown.",
        );
      if (t.what === "bots")
        notes.push(
          `The event log does not name bot categories: these are all of the zone's bot-detection events, of which ${botCategoryLabel(t.category)} is a part.`,
        );
      if (t.what === "entry" && view.matched === 0)
        notes.push(`Nothing from ${whatMatched(t)} is in the event log over that hour.`);
      return [section(joinMrkdwn(lines, "\n")), context(notes.join(" "))];
    }
  }
}

/**
 * `r` with the preview's blocks in place of an earlier preview, or before its buttons (the last
 * actions block), else at the end. Marked by block ids so a fill replaces the "estimating" line.
 */
export function withImpactPreview(r: Reply, view: PreviewView): Reply {
  const added = impactPreviewBlocks(view).map((b, i) => ({ ...b, block_id: `${PREVIEW_BLOCK_PREFIX}${i}` }));
  const blocks = r.blocks.filter((b) => !b.block_id?.startsWith(PREVIEW_BLOCK_PREFIX));
  const at = blocks.map((b) => b.type).lastIndexOf("actions");
  blocks.splice(at === -1 ? blocks.length : at, 0, ...(added as KnownBlock[]));
  return { ...r, blocks };
}

const PREVIEW_BLOCK_PREFIX = "impact_preview_";
