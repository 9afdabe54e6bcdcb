import { appsCommand } from "./apps.js";
import { botsCommand } from "./bots.js";
import { dnsCommand } from "./dns.js";
import { helpCommand } from "./help.js";
import { keyCommand } from "./key.js";
import { ratelimitCommand } from "./ratelimit.js";
import type { Subcommand } from "./types.js";
import { wafCommand } from "./waf.js";
import { zonesCommand } from "./zones.js";

/** Every /edge subcommand, in the order help lists them. */
export function subcommandList(): Subcommand[] {
  const list: Subcommand[] = [
    appsCommand,
    zonesCommand,
    botsCommand,
    ratelimitCommand,
    wafCommand,
    dnsCommand,
    keyCommand,
  ];
  list.push(helpCommand(() => list));
  return list;
}

export function subcommandTable(): ReadonlyMap<string, Subcommand> {
  return new Map(subcommandList().map((s) => [s.name, s]));
}
