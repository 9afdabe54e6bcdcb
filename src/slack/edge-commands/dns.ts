import { UserError } from "../../errors.js";
import { latestScan } from "../../services/dns.js";
import { edgeClientFor } from "../../services/edge-access.js";
import { dnsZoneKnown } from "../../services/pickers.js";
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
  usage: "dns <zoneId>",
  summary: "The latest DNS record scan of a DNS zone, with a Scan now button.",
  examples: [EXAMPLE],
  picker: pickerWhenEmpty("dns"),
  async run(ctx) {
    const zoneId = parseId(ctx.args[0], "DNS zone id", EXAMPLE);
    noMoreArgs(ctx.args, 1, EXAMPLE);
    const client = await edgeClientFor(ctx.env.deps, ctx.teamId);
    const scan = await latestScan(client, zoneId);
    if (scan) return dnsMessage(zoneId, scan);
    if ((await dnsZoneKnown(ctx.env.deps, ctx.teamId, zoneId)) === false) throw unknownDnsZone(zoneId);
    return noScanMessage(zoneId);
  },
};
