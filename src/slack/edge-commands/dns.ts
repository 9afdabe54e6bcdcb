import { UserError, usage } from "../../errors.js";
import { latestScan, recordsByType } from "../../services/dns.js";
import { edgeClientFor } from "../../services/edge-access.js";
import { dnsZoneKnown, resolveDnsZoneByDomain } from "../../services/pickers.js";
import { type DnsView, dnsMessage, noScanMessage } from "../blocks/dns.js";
import type { Reply } from "../blocks/reply.js";
import { type DnsZoneRef, echo, noMoreArgs, parseDnsZoneRef, parseId, pickerWhenEmpty } from "./parse.js";
import type { SlackEnv, Subcommand } from "./types.js";

const EXAMPLE = "/edge dns 5678";

/** A DNS zone id this workspace's key does not see. */
export const unknownDnsZone = (zoneId: number) =>
  new UserError(
    "not_found",
    `There is no DNS zone ${zoneId} in this account: check the id, or type /edge dns alone to pick one of your DNS zones.`,
  );

/** The id of a DNS zone given by id or by domain (from the workspace's DNS zone list). */
export async function dnsZoneIdOf(
  env: SlackEnv,
  teamId: string,
  ref: DnsZoneRef,
  example: string,
): Promise<number> {
  return ref.kind === "id" ? ref.id : resolveDnsZoneByDomain(env.deps, teamId, ref.name, example);
}

/**
 * The latest scan of a DNS zone at one record type and page (the first type when none is asked), or
 * that it has not been scanned; a type the scan does not have is refused with the types it has.
 */
export async function dnsAnswer(
  env: SlackEnv,
  teamId: string,
  zoneId: number,
  view: DnsView,
  isPublic: boolean,
): Promise<Reply> {
  const client = await edgeClientFor(env.deps, teamId);
  const scan = await latestScan(client, zoneId);
  if (!scan) {
    if ((await dnsZoneKnown(env.deps, teamId, zoneId)) === false) throw unknownDnsZone(zoneId);
    return noScanMessage(zoneId);
  }
  const types = recordsByType(scan.records).map(([t]) => t);
  const type = view.type === "" ? "" : types.find((t) => t.toLowerCase() === view.type.toLowerCase());
  if (type === undefined)
    throw usage(
      `The latest scan of DNS zone ${zoneId} has no ${echo(view.type)} records; it has ${types.join(", ") || "none"}. For example: /edge dns ${zoneId} ${types[0] ?? "TXT"}`,
    );
  return dnsMessage(zoneId, scan, { type, page: view.page }, isPublic);
}

export const dnsCommand: Subcommand = {
  name: "dns",
  usage: "dns <zoneId|domain> [record type] [page]",
  summary:
    "The latest DNS record scan of a DNS zone, a record type at a time (buttons for every type), with a Scan now button.",
  examples: [EXAMPLE, "/edge dns example.com", `${EXAMPLE} TXT`, `${EXAMPLE} A 2`],
  picker: pickerWhenEmpty("dns"),
  async run(ctx) {
    const zoneId = await dnsZoneIdOf(ctx.env, ctx.teamId, parseDnsZoneRef(ctx.args[0], EXAMPLE), EXAMPLE);
    const [, typeWord, pageWord] = ctx.args;
    const type = typeWord !== undefined && !/^\d+$/.test(typeWord) ? typeWord : "";
    const pageArg = type === "" ? typeWord : pageWord;
    const page = pageArg === undefined ? 1 : parseId(pageArg, "page number", `${EXAMPLE} TXT 2`);
    noMoreArgs(ctx.args, type === "" ? 2 : 3, EXAMPLE);
    return dnsAnswer(ctx.env, ctx.teamId, zoneId, { type, page }, ctx.isPublic);
  },
};
