import {
  gatherIncident,
  INCIDENT_EXAMPLE,
  INCIDENT_WINDOWS,
  incidentRange,
  isIncidentWindow,
  parseIncidentWindow,
} from "../../services/incident.js";
import { resolveShieldZoneId } from "../../services/zone-lookup.js";
import { gatheringMessage, incidentCard } from "../blocks/incident.js";
import { cardChartInput, postIncidentChart } from "../incident-chart.js";
import { newRequestId } from "../request-ids.js";
import { noMoreArgs, parseZoneRef, pickerBeforeWord } from "./parse.js";
import type { Subcommand } from "./types.js";

const DOMAIN_EXAMPLE = "/edge incident shop.example.com 1h";

export const incidentCommand: Subcommand = {
  name: "incident",
  usage: `incident <shieldZoneId|domain> [${INCIDENT_WINDOWS.join("|")}]`,
  summary:
    "The picture of an attack on one shield zone, on one card: the zone, traffic and threats with sparklines against the window before, top offending IPs, ASNs, countries and JA4s, triggered WAF rules, rate-limit breaches and apps in trouble. Window 15m by default.",
  examples: ["/edge incident 1234", INCIDENT_EXAMPLE, DOMAIN_EXAMPLE],
  picker: pickerBeforeWord("shield", isIncidentWindow),
  async run(ctx) {
    const zone = parseZoneRef(ctx.args[0], INCIDENT_EXAMPLE, DOMAIN_EXAMPLE);
    const window = parseIncidentWindow(ctx.args[1]);
    noMoreArgs(ctx.args, 2, INCIDENT_EXAMPLE);
    // The placeholder goes first: resolving a domain may need the zone list.
    await ctx.placeholder?.(
      gatheringMessage(zone.kind === "id" ? zone.id : zone.name, incidentRange(window, 0)),
    );
    const zoneId = await resolveShieldZoneId(ctx.env.deps, ctx.teamId, zone, INCIDENT_EXAMPLE);
    const picture = await gatherIncident(ctx.env.deps, ctx.teamId, zoneId, window, ctx.channelId);
    // Drawn and uploaded after the placeholder went out: Slack's 3 s are long past the ack by now.
    const marks = await cardChartInput(
      ctx.env.deps,
      ctx.client,
      ctx.teamId,
      picture,
      ctx.channelId,
      ctx.logger,
    );
    const chart = await postIncidentChart(ctx.env.deps, ctx.client, picture, ctx.logger, marks);
    return incidentCard(picture, {
      isPublic: ctx.isPublic,
      newRequestId,
      chart: "posted" in chart ? chart.posted : null,
    });
  },
};
