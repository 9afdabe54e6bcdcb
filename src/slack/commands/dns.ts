import { latestScan } from "../../services/dns.js";
import { edgeClientFor } from "../../services/edge-access.js";
import { dnsMessage, noScanMessage } from "../blocks/dns.js";
import { noMoreArgs, parseId, pickerWhenEmpty } from "./parse.js";
import type { Subcommand } from "./types.js";

const EXAMPLE = "/edge dns 5678";

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
    return scan ? dnsMessage(zoneId, scan) : noScanMessage(zoneId);
  },
};
