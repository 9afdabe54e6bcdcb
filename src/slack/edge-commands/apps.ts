import { usage } from "../../errors.js";
import { APPS_DEFAULT_LIMIT, APPS_MAX_LIMIT, listAppsPage, parseAppStatus } from "../../services/apps.js";
import { edgeClientFor } from "../../services/edge-access.js";
import { appsMessage } from "../blocks/apps.js";
import { echo } from "./parse.js";
import type { Subcommand } from "./types.js";

const EXAMPLE = "/edge apps failing 50";

export function parseAppsArgs(args: readonly string[]) {
  let status: ReturnType<typeof parseAppStatus>;
  let limit = APPS_DEFAULT_LIMIT;
  for (const arg of args) {
    if (/^[-+]?\d+$/.test(arg)) {
      limit = Number(arg);
      if (!(limit >= 1 && limit <= APPS_MAX_LIMIT))
        throw usage(`The limit is a number from 1 to ${APPS_MAX_LIMIT}: ${EXAMPLE}`);
    } else {
      status = parseAppStatus(arg);
      if (!status) {
        throw usage(
          `"${echo(arg)}" is not a status. Use active, deploying, failing, suspended, inactive or unknown: ${EXAMPLE}`,
        );
      }
    }
  }
  return { limit, ...(status ? { status } : {}) };
}

export const appsCommand: Subcommand = {
  name: "apps",
  usage: "apps [status] [limit]",
  summary: "Magic Containers applications with their status and endpoint; a status word filters.",
  examples: ["/edge apps", EXAMPLE],
  async run(ctx) {
    const query = parseAppsArgs(ctx.args);
    const client = await edgeClientFor(ctx.env.deps, ctx.teamId);
    const page = await listAppsPage(client, query);
    return appsMessage(page, { ...query, isPublic: ctx.isPublic });
  },
};
