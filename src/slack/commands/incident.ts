import {
  gatherIncident,
  INCIDENT_EXAMPLE,
  INCIDENT_WINDOWS,
  incidentRange,
  parseIncidentWindow,
} from "../../services/incident.js";
import { gatheringMessage, incidentCard } from "../blocks/incident.js";
import { noMoreArgs, parseId } from "./parse.js";
import type { Subcommand } from "./types.js";

export const incidentCommand: Subcommand = {
  name: "incident",
  usage: `incident <shieldZoneId> [${INCIDENT_WINDOWS.join("|")}]`,
  summary:
    "The picture of an attack on one shield zone, on one card: the zone, traffic and threats with sparklines against the window before, top offending IPs, ASNs, countries and JA4s, triggered WAF rules, rate-limit breaches and apps in trouble. Window 15m by default.",
  examples: ["/edge incident 1234", INCIDENT_EXAMPLE],
  async run(ctx) {
    const zoneId = parseId(ctx.args[0], "shield zone id", INCIDENT_EXAMPLE);
    const window = parseIncidentWindow(ctx.args[1]);
    noMoreArgs(ctx.args, 2, INCIDENT_EXAMPLE);
    await ctx.placeholder?.(gatheringMessage(zoneId, incidentRange(window, 0)));
    const picture = await gatherIncident(ctx.env.deps, ctx.teamId, zoneId, window);
    return incidentCard(picture, { isPublic: ctx.isPublic });
  },
};
