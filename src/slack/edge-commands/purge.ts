import { purgeKind, purgeParams } from "../../changes/kinds/purge.js";
import { UserError, usage } from "../../errors.js";
import { pullZoneKnown } from "../../services/pickers.js";
import { confirmChangeMessage } from "../blocks/approvals.js";
import { context } from "../blocks/block-kit.js";
import { newChangeRequest } from "../request-ids.js";
import { noMoreArgs, parseId, pickerWhenEmpty } from "./parse.js";
import type { Subcommand } from "./types.js";

export const PURGE_EXAMPLE = "/edge purge 2310001";
const PURGE_URL_EXAMPLE = "/edge purge url https://www.example.com/assets/app.css";

/** Slack wraps links it recognised as <https://…> or <https://…|label>. */
const unwrapLink = (s: string) => s.replace(/^<([^|>]+)(\|[^>]*)?>$/, "$1");

export const purgeCommand: Subcommand = {
  name: "purge",
  usage: "purge <pullZoneId> [cacheTag] | purge url <url>",
  summary: "Ask to purge a pull zone's cache (or one cache tag), or one URL (approval may be required).",
  examples: [PURGE_EXAMPLE, `${PURGE_EXAMPLE} product-images`, PURGE_URL_EXAMPLE],
  shareable: () => false,
  picker: pickerWhenEmpty("pull"),
  async run(ctx) {
    let params: unknown;
    if (ctx.args[0]?.toLowerCase() === "url") {
      const raw = ctx.args[1];
      if (!raw) throw usage(`Which URL? For example: ${PURGE_URL_EXAMPLE}`);
      noMoreArgs(ctx.args, 2, PURGE_URL_EXAMPLE);
      params = { url: unwrapLink(raw) };
      if (!/^https?:\/\//i.test(unwrapLink(raw)))
        throw usage(`The URL must start with https:// or http://. For example: ${PURGE_URL_EXAMPLE}`);
    } else {
      const pullZoneId = parseId(ctx.args[0], "pull zone id", PURGE_EXAMPLE);
      const cacheTag = ctx.args[1];
      noMoreArgs(ctx.args, 2, `${PURGE_EXAMPLE} product-images`);
      params = { pullZoneId, ...(cacheTag !== undefined ? { cacheTag } : {}) };
    }
    const checked = purgeParams.safeParse(params);
    if (!checked.success)
      throw usage(
        `That is not something edgeops can purge: a cache tag is up to 200 letters, digits and . : / - _, and a URL up to 1500 characters. For example: ${PURGE_EXAMPLE} product-images or ${PURGE_URL_EXAMPLE}`,
      );
    const confirm = confirmChangeMessage(newChangeRequest(purgeKind, checked.data));
    if (!("pullZoneId" in checked.data)) return confirm;
    const id = checked.data.pullZoneId;
    const zone = await pullZoneKnown(ctx.env.deps, ctx.teamId, id);
    if (zone === false)
      throw new UserError(
        "not_found",
        `There is no pull zone ${id} in this account: check the id, or type /edge purge alone to pick one of your pull zones.`,
      );
    if (zone === undefined) return confirm;
    const names = [...(zone.name ? [zone.name] : []), ...zone.hostnames.slice(0, 3)];
    const [title, ...rest] = confirm.blocks;
    const which = context(
      `Pull zone ${id} is ${names.length > 0 ? names.join(", ") : "a pull zone without a name or hostname"}.`,
    );
    return { ...confirm, blocks: [...(title ? [title] : []), which, ...rest] };
  },
};
