import type { Deps } from "../../deps.js";
import type { AppStatus } from "../../edge/schemas/mc.js";
import { usage } from "../../errors.js";
import {
  APPS_DEFAULT_LIMIT,
  APPS_MAX_LIMIT,
  appsNamed,
  listAppsPage,
  MAX_PAGES_TO_FIND,
  parseAppStatus,
} from "../../services/apps.js";
import { type EdgeAccess, edgeAccessFor } from "../../services/edge-access.js";
import { appListIfLoaded } from "../../services/pickers.js";
import { appsMessage } from "../blocks/apps.js";
import { echo } from "./parse.js";
import type { Subcommand } from "./types.js";

const EXAMPLE = "/edge apps failing 50";
const NAME_EXAMPLE = "/edge apps checkout";

/**
 * Counts by status over every application the key sees, when the per-key list is loaded and fresh (a
 * minute at most; loading it would cost calls this answer does not need): each page then says the whole
 * list's totals. Undefined otherwise, and the page's own counts are shown, said to be the page's.
 */
export function wholeAppList(deps: Deps, keyId: EdgeAccess["keyId"]) {
  const apps = appListIfLoaded(deps, keyId);
  if (!apps) return undefined;
  const byStatus: Partial<Record<string, number>> = {};
  for (const a of apps) byStatus[a.status] = (byStatus[a.status] ?? 0) + 1;
  return { total: apps.length, byStatus, complete: apps.length < MAX_PAGES_TO_FIND * APPS_MAX_LIMIT };
}

/** `[status] [limit]`, or a word that is no status: a name to find (`/edge apps checkout`). */
export function parseAppsArgs(args: readonly string[]) {
  const statuses: AppStatus[] = [];
  let name: string | undefined;
  let limit = APPS_DEFAULT_LIMIT;
  for (const arg of args) {
    if (/^[-+]?\d+$/.test(arg)) {
      limit = Number(arg);
      if (!(limit >= 1 && limit <= APPS_MAX_LIMIT))
        throw usage(`The limit is a number from 1 to ${APPS_MAX_LIMIT}: ${EXAMPLE}`);
    } else if (parseAppStatus(arg)) {
      const status = parseAppStatus(arg)!;
      // Two statuses are both shown (`/edge apps failing deploying`), never one silently dropped.
      if (!statuses.includes(status)) statuses.push(status);
    } else if (name === undefined && arg.length <= 200 && /^[\w.-]+$/.test(arg)) {
      name = arg;
    } else {
      throw usage(
        `"${echo(arg)}" is not a status or an application name. Use active, deploying, failing, suspended, inactive or unknown, or part of a name: ${EXAMPLE}, ${NAME_EXAMPLE}`,
      );
    }
  }
  if (statuses.length > 0 && name)
    throw usage(`Give a status or part of a name, not both: ${EXAMPLE}, ${NAME_EXAMPLE}`);
  return { limit, ...(statuses.length > 0 ? { statuses } : {}), ...(name !== undefined ? { name } : {}) };
}

export const appsCommand: Subcommand = {
  name: "apps",
  usage: "apps [status …|name] [limit]",
  summary:
    "Magic Containers applications with their status and endpoint; a status word filters, any other word finds by name.",
  examples: ["/edge apps", EXAMPLE, "/edge apps failing deploying", NAME_EXAMPLE],
  async run(ctx) {
    const query = parseAppsArgs(ctx.args);
    const { client, keyId } = await edgeAccessFor(ctx.env.deps, ctx.teamId);
    if (query.name !== undefined) {
      const found = await appsNamed(client, query.name, query.limit);
      if (found.matched === 0)
        throw usage(
          `"${echo(query.name)}" is not a status, and no application's name contains it. Use active, deploying, failing, suspended, inactive or unknown, or part of a name: ${EXAMPLE}, ${NAME_EXAMPLE}`,
        );
      return appsMessage(found, { ...query, isPublic: ctx.isPublic });
    }
    return appsMessage(
      await listAppsPage(client, query),
      { ...query, isPublic: ctx.isPublic },
      wholeAppList(ctx.env.deps, keyId),
    );
  },
};
