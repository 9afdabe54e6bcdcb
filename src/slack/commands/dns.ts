import { UserError } from "../../errors.js";
import { latestScan } from "../../services/dns.js";
import { edgeClientFor } from "../../services/edge-access.js";
import { dnsZoneKnown, resolveDnsZoneByDomain } from "../../services/pickers.js";
import { dnsMessage, noScanMessage } from "../blocks/dns.js";
import { noMoreArgs, parseId, pickerWhenEmpty } from "./parse.js";
import type { Subcommand } from "./types.js";

const EXAMPLE = "/edge dns 5678";

/** A DNS zone id this workspace's key does not see. */
export const unknownDnsZone = (zoneId: number) =>
  new UserError(
    "not_found",
    `There is no DNS zone ${zoneId} in this account: check the id, or type /edge dns alone to pick one of your DNS zones.`,
  );

export const dnsCommand: Subcommand = {
  name: "dns",
  usage: "dns <zoneId|domain>",
  summary: "The latest DNS record scan of a DNS zone, with a Scan now button.",
  examples: [EXAMPLE, "/edge dns example.com"],
  picker: pickerWhenEmpty("dns"),
  async run(ctx) {
    const typed = ctx.args[0];
    // A domain (`/edge dns shop.example.com`) is looked up; anything else is read as an id.
    const zoneId =
      typed !== undefined && /[a-z]/i.test(typed) && /^[a-z0-9.-]{1,253}$/i.test(typed) && typed.includes(".")
        ? await resolveDnsZoneByDomain(ctx.env.deps, ctx.teamId, typed, EXAMPLE)
        : parseId(typed, "DNS zone id", EXAMPLE);
    noMoreArgs(ctx.args, 1, EXAMPLE);
    const client = await edgeClientFor(ctx.env.deps, ctx.teamId);
    const scan = await latestScan(client, zoneId);
    if (scan) return dnsMessage(zoneId, scan);
    if ((await dnsZoneKnown(ctx.env.deps, ctx.teamId, zoneId)) === false) throw unknownDnsZone(zoneId);
    return noScanMessage(zoneId);
  },
};
