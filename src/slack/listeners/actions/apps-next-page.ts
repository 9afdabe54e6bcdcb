import { APP_STATUSES, type AppStatus } from "../../../edge/schemas/mc.js";
import { listAppsPage } from "../../../services/apps.js";
import { edgeClientFor } from "../../../services/edge-access.js";
import { type AppsNextValue, appsMessage } from "../../blocks/apps.js";
import type { SlackEnv } from "../../commands/types.js";
import {
  answerPrivately,
  type ButtonArgs,
  buttonContext,
  parseButtonValue,
  replaceMessage,
} from "./context.js";

const isNextValue = (v: unknown): v is AppsNextValue => {
  const o = v as Partial<AppsNextValue> | null;
  return (
    typeof o === "object" &&
    o !== null &&
    typeof o.c === "string" &&
    typeof o.l === "number" &&
    (o.s === undefined || (APP_STATUSES as readonly string[]).includes(o.s))
  );
};

/** Next page: read the page after the cursor and replace the message with it. */
export function appsNextPage(env: SlackEnv) {
  return async (args: ButtonArgs) => {
    await args.ack();
    const ctx = buttonContext(env, args);
    const value = parseButtonValue(ctx.value, isNextValue);
    if (!value) return answerPrivately(args, "That button is out of date: run /edge apps again.", ctx.logger);
    await replaceMessage(args, ctx.logger, async () => {
      const client = await edgeClientFor(env.deps, ctx.teamId);
      const query = { limit: value.l, cursor: value.c, ...(value.s ? { status: value.s as AppStatus } : {}) };
      return appsMessage(await listAppsPage(client, query), { ...query, isPublic: value.p === true });
    });
  };
}
