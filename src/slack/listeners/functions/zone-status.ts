import { z } from "zod";
import { planTypeLabel, wafExecutionModeLabel } from "../../../edge/schemas/shield.js";
import { toUserSentence, UserError } from "../../../errors.js";
import {
  gatherIncident,
  INCIDENT_WINDOWS,
  type IncidentPicture,
  type TrafficMetric,
} from "../../../services/incident.js";
import { resolveShieldZoneId } from "../../../services/zone-lookup.js";
import { parseZoneRef } from "../../edge-commands/parse.js";
import type { SlackEnv } from "../../edge-commands/types.js";
import { type FunctionArgs, finishNow, parseStepInputs, stepContext } from "./context.js";

export const ZONE_STATUS_DEFAULT_WINDOW = "1h";
const EXAMPLE = "1234";
const DOMAIN_EXAMPLE = "shop.example.com";

const zoneStatusInputs = z.object({
  zone: z.string().trim().min(1).max(300),
  window: z.enum(INCIDENT_WINDOWS).optional(),
});

const HELP = {
  zone: `Give the step a shield zone: its id (e.g. ${EXAMPLE}) or its domain (e.g. ${DOMAIN_EXAMPLE}).`,
  window: `The window is one of ${INCIDENT_WINDOWS.join(", ")} (or leave it empty for ${ZONE_STATUS_DEFAULT_WINDOW}).`,
};

/** The step's outputs (names as in manifest.yml) from the incident picture. */
export function zoneStatusOutputs(p: IncidentPicture, window: string): Record<string, unknown> {
  if ("error" in p.zone) throw new UserError("unavailable", p.zone.error);
  if ("error" in p.traffic) throw new UserError("unavailable", p.traffic.error);
  const { zone, hostnames, pullZoneName } = p.zone.ok;
  const { rows } = p.traffic.ok;
  const count = (m: TrafficMetric) => rows.find((r) => r.metric === m)?.count ?? 0;
  const wafMode = zone.wafEnabled === false ? "Off" : wafExecutionModeLabel(zone.wafExecutionMode);
  const domain = hostnames[0] ?? pullZoneName ?? "";
  const outputs = {
    zone_id: p.zoneId,
    domain,
    plan: planTypeLabel(zone.planType),
    waf_mode: wafMode,
    window,
    blocked: count("blocked"),
    challenged: count("challenged"),
    waf: count("waf"),
    ddos: count("ddos"),
    rate_limit: count("rateLimit"),
    bot_detection: count("botDetection"),
  };
  return {
    ...outputs,
    summary:
      `Shield zone ${p.zoneId}${domain ? ` (${domain})` : ""}: plan ${outputs.plan}, WAF ${wafMode}; ` +
      `last ${window}: ${outputs.blocked} blocked, ${outputs.challenged} challenged, ${outputs.waf} WAF, ` +
      `${outputs.ddos} DDoS, ${outputs.rate_limit} rate limit, ${outputs.bot_detection} bot detection.`,
  };
}

/** "Get zone status": plan, WAF mode and attack counts of a shield zone, completed at once. */
export function zoneStatusStep(env: SlackEnv) {
  return async (args: FunctionArgs) => {
    const ctx = stepContext(env, args);
    try {
      const inputs = parseStepInputs(zoneStatusInputs, args.inputs, HELP);
      const window = inputs.window ?? ZONE_STATUS_DEFAULT_WINDOW;
      const ref = parseZoneRef(inputs.zone, EXAMPLE, DOMAIN_EXAMPLE);
      const zoneId = await resolveShieldZoneId(env.deps, ctx.teamId, ref, EXAMPLE);
      const picture = await gatherIncident(env.deps, ctx.teamId, zoneId, window, null);
      await finishNow(args, ctx, { outputs: zoneStatusOutputs(picture, window) });
    } catch (err) {
      ctx.logger.info({ err }, "zone status step failed");
      await finishNow(args, ctx, { error: toUserSentence(err) });
    }
  };
}
