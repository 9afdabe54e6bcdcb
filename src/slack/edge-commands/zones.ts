import { usage } from "../../errors.js";
import { awaitingRead, checkZones, type ZoneCheck } from "../../services/unusual-zones.js";
import { findShieldZones, namedShieldZonesPage } from "../../services/zone-lookup.js";
import { zoneSearchMessage, zonesMessage } from "../blocks/zones.js";
import { MAX_INT32, parseId, parseZoneName } from "./parse.js";
import type { Subcommand } from "./types.js";

export const ZONES_PER_PAGE = 10;
const SEARCH_EXAMPLE = "/edge zones acme-example.com";

export const zonesCommand: Subcommand = {
  name: "zones",
  usage: "zones [page | domain or pull zone name]",
  summary:
    "Shield zone (WAF and DDoS) configurations, ten to a page; with text, the zones whose domain or pull zone name contains it.",
  examples: ["/edge zones", "/edge zones 2", SEARCH_EXAMPLE],
  async run(ctx) {
    const [arg, extra] = ctx.args;
    if (extra !== undefined)
      throw usage(`Give one page number or one word to search for: /edge zones 2 or ${SEARCH_EXAMPLE}`);
    if (arg !== undefined && !/^\d+$/.test(arg)) {
      const text = parseZoneName(arg);
      if (text === undefined && arg.length > 253)
        throw usage(
          `That is too long to search for (${arg.length} characters; a domain has at most 253): give part of a domain or pull zone name, like ${SEARCH_EXAMPLE}`,
        );
      if (text === undefined)
        throw usage(
          `Search for part of a domain or pull zone name (letters, digits, dots, hyphens): ${SEARCH_EXAMPLE}`,
        );
      return zoneSearchMessage(
        await findShieldZones(ctx.env.deps, ctx.teamId, text),
        ctx.env.deps.clock.now(),
      );
    }
    if (arg !== undefined && Number(arg) < 1) throw usage("The page is a number from 1: /edge zones 2");
    const page = arg === undefined ? 1 : parseId(arg, "page number", "/edge zones 2", MAX_INT32);
    const { page: read, named } = await namedShieldZonesPage(ctx.env.deps, ctx.teamId, page, ZONES_PER_PAGE);
    const last = read.totalPages;
    if (last !== undefined && last > 0 && page > last)
      throw usage(
        `There ${last === 1 ? "is 1 page" : `are ${last} pages`} of shield zones${read.totalCount !== undefined ? ` (${read.totalCount} zones)` : ""}: /edge zones ${last} shows the last.`,
      );
    // Nothing else says what is on fire before any watch exists: this page's zones are checked (bounded). What
    // this minute's readings already say goes out with the page at once; the answer replaces it once the rest
    // are read (a zone's metrics are read at most once a minute per key, so most answers need no replacing).
    const { deps } = ctx.env;
    const ids = read.items.map((z) => z.shieldZoneId);
    const answer = (checks: readonly ZoneCheck[]) =>
      zonesMessage(
        read,
        ctx.isPublic,
        named,
        deps.clock.now(),
        checks.filter((c) => !awaitingRead(c)),
        {
          reading: checks.filter(awaitingRead).length,
        },
      );
    const known = await checkZones(deps, ctx.teamId, ids, { read: false });
    if (!known.some(awaitingRead)) return answer(known);
    await ctx.placeholder?.(answer(known));
    return answer(await checkZones(deps, ctx.teamId, ids));
  },
};
