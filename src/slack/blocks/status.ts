import type { KnownBlock } from "@slack/types";
import type { ZoneCheck, ZoneRanking } from "../../services/unusual-zones.js";
import { ACTIONS } from "../ids.js";
import { actions, button, context, header, packLines, section } from "./block-kit.js";
import { code, dateToken, type Mrkdwn, mrkdwn } from "./mrkdwn.js";
import { type Reply, reply } from "./reply.js";
import { seriesText, slotWords } from "./zones.js";

/** What a ranked zone's buttons carry. */
export interface StatusZoneValue {
  zoneId: number;
}

/** Ranked zones shown with their buttons (two blocks each); the rest are listed in lines. */
export const STATUS_ZONES_WITH_BUTTONS = 10;

const sigma = (z: number) => `${z >= 0 ? "+" : "−"}${Math.abs(z).toFixed(1)} σ`;

/** One known zone: how far its last whole slot is from its usual, in words and as a sparkline. */
export function rankedZoneLine(c: Exclude<ZoneCheck, { state: "unknown" }>, place: number): Mrkdwn {
  const mark = c.state === "unusual" ? ":rotating_light:" : ":white_circle:";
  const verdict =
    c.state === "unusual"
      ? c.watched
        ? "unusual (a zone watch already alerts on it)"
        : "unusual, without a watch"
      : "within its usual";
  return mrkdwn`${place}. ${mark} *Zone ${c.zoneId}* · ${sigma(c.reading.z)} · ${verdict}: ${slotWords(c.reading)} ${seriesText(c.series)}`;
}

function zoneButtons(c: Exclude<ZoneCheck, { state: "unknown" }>): KnownBlock {
  const value = JSON.stringify({ zoneId: c.zoneId } satisfies StatusZoneValue);
  const watched = c.state === "unusual" && c.watched;
  return actions(
    button(
      `Incident card: zone ${c.zoneId}`,
      ACTIONS.statusIncident,
      value,
      c.state === "unusual" ? "primary" : undefined,
    ),
    ...(watched ? [] : [button(`Watch zone ${c.zoneId}`, ACTIONS.statusWatch, value)]),
  );
}

/** What "ranked" covers: how many zones, of how many, and why the others were not. */
export function rankedCountText(r: Pick<ZoneRanking, "checks" | "totalCount" | "more">): string {
  const n = r.checks.length;
  if (!r.more) return `Ranked all ${n} shield zone${n === 1 ? "" : "s"}`;
  const of =
    r.totalCount !== undefined && r.totalCount > n
      ? `${n} of ${r.totalCount} zones`
      : `${n} zones; the account has more (the Edge API did not say how many)`;
  return `Ranked ${of}; the first ${n} the Edge API lists (one metrics read per zone per minute at most). \`/edge zones <page>\` checks the others a page at a time`;
}

/**
 * `/edge status`: the account's first zones ranked by how far their last whole 2-minute slot is from their last
 * hour, as a zone watch judges it; the furthest with buttons to their incident card and to watch them, the
 * others in lines, what is unknown and why; while zones are still being read, says so (the answer replaces it).
 */
export function statusMessage(r: ZoneRanking): Reply {
  const known = r.checks.filter((c): c is Exclude<ZoneCheck, { state: "unknown" }> => c.state !== "unknown");
  const unknown = r.checks.filter(
    (c): c is Extract<ZoneCheck, { state: "unknown" }> => c.state === "unknown",
  );
  const unusual = known.filter((c) => c.state === "unusual").length;
  const blocks: KnownBlock[] = [
    header("Hottest shield zones"),
    context(
      mrkdwn`${rankedCountText(r)}. Each zone's last whole 2-minute slot against its last hour, as a zone watch judges it (normal sensitivity) · as of ${dateToken(r.at)}`,
    ),
  ];
  if (r.pending > 0)
    blocks.push(
      context(
        `:hourglass_flowing_sand: Reading ${r.pending} zone${r.pending === 1 ? "'s" : "s'"} metrics…; this message is replaced when they are in.`,
      ),
    );
  if (known.length === 0 && r.pending === 0)
    blocks.push(section("No zone could be judged: every one is unknown (below)."));
  const withButtons = known.slice(0, STATUS_ZONES_WITH_BUTTONS);
  withButtons.forEach((c, i) => {
    blocks.push(section(rankedZoneLine(c, i + 1)), zoneButtons(c));
  });
  const rest = known.slice(STATUS_ZONES_WITH_BUTTONS);
  if (rest.length > 0)
    blocks.push(
      ...packLines(
        rest.map((c, i) => rankedZoneLine(c, STATUS_ZONES_WITH_BUTTONS + i + 1)),
        3,
        "zones",
      ),
    );
  if (unknown.length > 0)
    blocks.push(
      context(
        `Unknown (never "usual"): ${unknown
          .slice(0, 8)
          .map((c) => `zone ${c.zoneId} (${c.why.replace(/\.$/, "")})`)
          .join("; ")}${unknown.length > 8 ? ` and ${unknown.length - 8} more` : ""}.`,
      ),
    );
  const summary =
    r.pending > 0
      ? `Reading ${r.pending} zones' metrics…`
      : unusual > 0
        ? `${unusual} of ${r.checks.length} zones look unusual now`
        : `No zone of ${r.checks.length} looks unusual now`;
  blocks.push(
    context(
      mrkdwn`One zone closer: ${code("/edge incident <zone>")} · alerts on one: ${code("/edge watch zone <zone>")}`,
    ),
  );
  return reply(`Hottest shield zones: ${summary}`, blocks);
}
