import { agentCommand } from "./agent.js";
import { appsCommand } from "./apps.js";
import { auditCommand } from "./audit.js";
import { blockCommand, unblockCommand } from "./block.js";
import { botCommand } from "./bot.js";
import { botsCommand } from "./bots.js";
import { dnsCommand } from "./dns.js";
import { helpCommand } from "./help.js";
import { incidentCommand } from "./incident.js";
import { keyCommand } from "./key.js";
import { policyCommand } from "./policy.js";
import { purgeCommand } from "./purge.js";
import { ratelimitCommand } from "./ratelimit.js";
import { restartCommand } from "./restart.js";
import { scheduleCommand } from "./schedule.js";
import { ddosCommand, learningCommand, wafModeCommand } from "./shield-settings.js";
import { statusCommand } from "./status.js";
import { timelineCommand } from "./timeline.js";
import type { Subcommand } from "./types.js";
import { wafCommand } from "./waf.js";
import { watchCommand } from "./watch.js";
import { zonesCommand } from "./zones.js";

/** Every /edge subcommand, in the order help lists them. */
export function subcommandList(): Subcommand[] {
  const list: Subcommand[] = [
    appsCommand,
    statusCommand,
    zonesCommand,
    incidentCommand,
    timelineCommand,
    botsCommand,
    botCommand,
    ratelimitCommand,
    wafCommand,
    ddosCommand,
    wafModeCommand,
    learningCommand,
    dnsCommand,
    restartCommand,
    purgeCommand,
    blockCommand,
    unblockCommand,
    scheduleCommand,
    watchCommand,
    policyCommand,
    auditCommand,
    keyCommand,
    agentCommand,
  ];
  list.push(helpCommand(() => list));
  return list;
}

export function subcommandTable(): ReadonlyMap<string, Subcommand> {
  return new Map(subcommandList().map((s) => [s.name, s]));
}
