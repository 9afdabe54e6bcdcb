import { z } from "zod";
import { APP_STATUSES } from "../../../edge/schemas/mc.js";
import { listAppsPage } from "../../../services/apps.js";
import { edgeClientFor } from "../../../services/edge-access.js";
import { appsMessage } from "../../blocks/apps.js";
import { wholeAppList } from "../../edge-commands/apps.js";
import type { SlackEnv } from "../../edge-commands/types.js";
import { onButton, replaceMessage, staleButton } from "./context.js";

const nextValue = z.object({
  c: z.string(),
  l: z.number().int().min(1),
  s: z.enum(APP_STATUSES).optional(),
  p: z.boolean().optional(),
  n: z.number().int().min(1).optional(),
  b: z.array(z.string()).max(1000).optional(),
});

/** Next page / Previous page: read the page at the cursor ("" the first) and replace the message with it. */
export function appsNextPage(env: SlackEnv) {
  return onButton(env, nextValue, staleButton("apps"), (args, ctx, value) =>
    replaceMessage(args, ctx.logger, async () => {
      const client = await edgeClientFor(env.deps, ctx.teamId);
      const query = { limit: value.l, cursor: value.c, ...(value.s ? { status: value.s } : {}) };
      const page = await listAppsPage(client, query);
      const at = { page: value.n ?? 2, cursor: value.c, before: value.b ?? [] };
      return appsMessage(
        page,
        { ...query, isPublic: value.p === true },
        await wholeAppList(env.deps, ctx.teamId),
        at,
      );
    }),
  );
}
