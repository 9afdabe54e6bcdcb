import type { HomeView, KnownBlock } from "@slack/types";
import { describeRequest } from "../../changes/index.js";
import type { OpenAlert } from "../../services/alerts.js";
import type { ZoneRanking } from "../../services/unusual-zones.js";
import type { AgentToken, ApiKeyInfo, ChangeRequest, Schedule } from "../../store/index.js";
import { ACTIONS } from "../ids.js";
import { agentTokenLine } from "./agents.js";
import { alertTitle } from "./alerts.js";
import { totalsLine } from "./apps.js";
import { actions, button, context, divider, header, packLines, section } from "./block-kit.js";
import { keyStatusText } from "./key-modal.js";
import { channel, code, dateToken, link, mention, mrkdwn } from "./mrkdwn.js";
import { rankedCountText } from "./status.js";
import { unusualZoneLine } from "./zones.js";

export interface HomeData {
  key: ApiKeyInfo | undefined;
  usingDeploymentKey: boolean;
  isAdmin: boolean;
  apps: { total: number; byStatus: Record<string, number>; complete: boolean } | { error: string } | null;
  /**
   * The newest pending approvals of the user's channels and how many there are in all; `cardLinks`: the
   * permalink of each one's approval card, by request id, where Slack gave it.
   */
  pendingApprovals:
    | { requests: ChangeRequest[]; total: number; cardLinks?: Readonly<Record<string, string>> }
    | { error: string };
  /** The schedules of the user's channels. */
  schedules: Schedule[] | { error: string };
  /** Firing alerts of the user's channels; an error sentence when they could not be read. */
  openAlerts: { alerts: OpenAlert[]; more: boolean } | { error: string };
  /** The viewer's own active agent tokens (never the tokens themselves). */
  agentTokens?: AgentToken[];
  /** The workspace's first zones ranked as `/edge status` ranks them (services/unusual-zones.ts); null without a key. */
  unusualZones: ZoneRanking | { error: string } | null;
}

function openAlertLine(a: OpenAlert) {
  const v = a.view;
  const taken = v.acknowledgedBy ? mrkdwn` · acknowledged by ${mention(v.acknowledgedBy)}` : "";
  return mrkdwn`• :rotating_light: *${alertTitle(v)}* in ${channel(a.channelId)}, since ${dateToken(v.openedAt)}${taken}`;
}

function openAlertsBlocks(d: HomeData["openAlerts"]): KnownBlock[] {
  if ("error" in d) return [section("*Open alerts in your channels*"), context(`:warning: ${d.error}`)];
  const count = `${d.alerts.length}${d.more ? "+" : ""}`;
  const blocks: KnownBlock[] = [section(`*Open alerts in your channels* (${count})`)];
  if (d.alerts.length === 0) blocks.push(context("Nothing is firing in the channels you are in."));
  else blocks.push(...packLines(d.alerts.map(openAlertLine), 10, "alerts"));
  if (d.more) blocks.push(context("Only the newest are shown; each channel's alerts are in the channel."));
  return blocks;
}

/**
 * The ranking `/edge status` shows, as far as it concerns the Home: zones that look under attack now and that no
 * zone watch alerts on (those that do are in the alerts), furthest from their usual first, with sparklines; what
 * could not be judged, and how many zones were ranked of how many.
 */
function unusualZonesBlocks(d: ZoneRanking | { error: string }): KnownBlock[] {
  const title = "*Zones that look unusual now, without a watch*";
  if ("error" in d) return [section(title), context(`:warning: ${d.error}`)];
  const unusual = d.checks.filter((c) => c.state === "unusual");
  const unwatched = unusual.filter((c) => !c.watched);
  const watched = unusual.length - unwatched.length;
  const unknown = d.checks.filter((c) => c.state === "unknown");
  const blocks: KnownBlock[] = [section(`${title} (${unwatched.length})`)];
  if (unwatched.length > 0) blocks.push(...packLines(unwatched.map(unusualZoneLine), 5, "unusual zones"));
  const notes: string[] = [
    unwatched.length === 0
      ? `No unwatched zone of the ${d.checks.length} ranked looks unusual in its last whole 2-minute slot, judged against its last hour as a zone watch would.`
      : "Furthest from their usual first, judged against each zone's last hour as a zone watch would (normal sensitivity).",
  ];
  if (watched > 0)
    notes.push(
      `${watched} more ${watched === 1 ? "looks" : "look"} unusual; a zone watch already alerts on ${watched === 1 ? "it" : "them"}.`,
    );
  if (unknown.length > 0)
    notes.push(
      `Unknown for ${unknown
        .slice(0, 5)
        .map((c) => `zone ${c.zoneId} (${c.why.replace(/\.$/, "")})`)
        .join("; ")}${unknown.length > 5 ? ` and ${unknown.length - 5} more` : ""}.`,
    );
  notes.push(`${rankedCountText(d)}. \`/edge status\` shows the whole ranking with buttons.`);
  blocks.push(context(notes.join(" ")));
  return blocks;
}

export function homeView(d: HomeData): HomeView {
  const blocks: KnownBlock[] = [header("edgeops"), section(keyStatusText(d.key, d.usingDeploymentKey))];
  if (d.isAdmin)
    blocks.push(actions(button(d.key ? "Change API key" : "Set API key", ACTIONS.openKeyModal, "home")));
  blocks.push(divider(), ...openAlertsBlocks(d.openAlerts));
  if (d.unusualZones) blocks.push(divider(), ...unusualZonesBlocks(d.unusualZones));
  blocks.push(divider(), section("*Magic Containers applications*"));
  if (d.apps === null) blocks.push(context("Set an Edge API key to see your applications here."));
  else if ("error" in d.apps) blocks.push(context(`:warning: ${d.apps.error}`));
  else
    blocks.push(
      context(
        `${d.apps.total}${d.apps.complete ? "" : "+"} applications · ${totalsLine(d.apps.byStatus) || "none"}`,
      ),
    );

  blocks.push(divider(), ...pendingBlocks(d.pendingApprovals));
  blocks.push(divider(), ...scheduleBlocks(d.schedules));
  if (d.agentTokens && d.agentTokens.length > 0)
    blocks.push(
      divider(),
      section(`*Your agent tokens* (${d.agentTokens.length})`),
      ...packLines(d.agentTokens.map(agentTokenLine), 5, "tokens"),
      context("`/edge agent revoke <name>` revokes one at once."),
    );
  blocks.push(context("Type `/edge help` in any channel for the commands."));
  return { type: "home", blocks: blocks.slice(0, 100) };
}

function pendingBlocks(d: HomeData["pendingApprovals"]): KnownBlock[] {
  if ("error" in d) return [section("*Pending approvals in your channels*"), context(`:warning: ${d.error}`)];
  const blocks: KnownBlock[] = [section(`*Pending approvals in your channels* (${d.total})`)];
  if (d.total === 0) blocks.push(context("Nothing waits for a decision in the channels you are in."));
  else
    blocks.push(
      ...packLines(
        d.requests.map((a) => {
          const permalink = d.cardLinks?.[a.id];
          const what = permalink ? link(permalink, describeRequest(a)) : describeRequest(a);
          return mrkdwn`• ${mention(a.requesterId)}: *${what}* in ${channel(a.channelId)}, expires ${dateToken(a.expiresAt)}`;
        }),
        20,
        "approvals",
      ),
    );
  if (d.total > d.requests.length)
    blocks.push(context(`The newest ${d.requests.length} are shown; each waits on its card in its channel.`));
  return blocks;
}

function scheduleBlocks(d: HomeData["schedules"]): KnownBlock[] {
  if ("error" in d) return [section("*Schedules in your channels*"), context(`:warning: ${d.error}`)];
  const blocks: KnownBlock[] = [section(`*Schedules in your channels* (${d.length})`)];
  if (d.length === 0) blocks.push(context("No scheduled DNS summaries in the channels you are in."));
  else
    blocks.push(
      ...packLines(
        d.map(
          (s) =>
            mrkdwn`• ${code(s.id)} DNS zone ${s.target} in ${channel(s.channelId)}, ${s.spec} (${s.timezone}), next ${dateToken(s.nextRunAt)}${s.failing ? " :warning: failing" : ""}`,
        ),
        20,
        "schedules",
      ),
    );
  return blocks;
}
