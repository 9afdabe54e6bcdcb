import { z } from "zod";
import { APP_STATUSES } from "../../../edge/schemas/mc.js";
import { listAppsPage } from "../../../services/apps.js";
import { edgeAccessFor } from "../../../services/edge-access.js";
import { appsMessage } from "../../blocks/apps.js";
import type { Reply } from "../../blocks/reply.js";
import { wholeAppList } from "../../edge-commands/apps.js";
import { withShareButton } from "../../edge-commands/run.js";
import type { SlackEnv } from "../../edge-commands/types.js";
import { onButton, replaceMessage, staleButton } from "./context.js";

export const appsPageValue = z.object({
  c: z.string(),
  l: z.number().int().min(1),
  /** One status, or several (`/edge apps failing deploying`). */
  s: z
    .union([z.enum(APP_STATUSES), z.array(z.enum(APP_STATUSES)).min(1).max(APP_STATUSES.length)])
    .optional(),
  p: z.boolean().optional(),
  n: z.number().int().min(1).optional(),
  b: z.array(z.string()).max(1000).optional(),
});

type AppsPageValue = z.output<typeof appsPageValue>;

/**
 * The apps page at the cursor ("" the first). A private page offers to share itself: the cursor can't be
 * typed, so Share reads this page again, and the shared copy says its page number as this one does.
 */
export async function appsPageAt(env: SlackEnv, teamId: string, value: AppsPageValue): Promise<Reply> {
  const { client, keyId } = await edgeAccessFor(env.deps, teamId);
  const statuses = value.s === undefined ? [] : typeof value.s === "string" ? [value.s] : value.s;
  const query = { limit: value.l, cursor: value.c, ...(statuses.length > 0 ? { statuses } : {}) };
  const page = await listAppsPage(client, query);
  const at = { page: value.n ?? 2, cursor: value.c, before: value.b ?? [] };
  const reply = appsMessage(
    page,
    { ...query, isPublic: value.p === true },
    wholeAppList(env.deps, keyId),
    at,
  );
  return value.p ? reply : withShareButton(reply, { apps: { ...value, p: true } });
}

/** Next page / Previous page: replace the message with the page at the button's cursor. */
export function appsNextPage(env: SlackEnv) {
  return onButton(env, appsPageValue, staleButton("apps"), (args, ctx, value) =>
    replaceMessage(args, ctx.logger, () => appsPageAt(env, ctx.teamId, value)),
  );
}
