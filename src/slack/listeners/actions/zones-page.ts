import { edgeClientFor } from "../../../services/edge-access.js";
import { type ZonesPageValue, zonesMessage } from "../../blocks/zones.js";
import type { SlackEnv } from "../../commands/types.js";
import {
  answerPrivately,
  type ButtonArgs,
  buttonContext,
  parseButtonValue,
  replaceMessage,
} from "./context.js";

const isPageValue = (v: unknown): v is ZonesPageValue => {
  const o = v as Partial<ZonesPageValue> | null;
  return (
    typeof o === "object" &&
    o !== null &&
    Number.isInteger(o.page) &&
    (o.page ?? 0) >= 1 &&
    Number.isInteger(o.perPage)
  );
};

/** Previous page / Next page on a zones message: replace the message with that page. */
export function zonesPage(env: SlackEnv) {
  return async (args: ButtonArgs) => {
    await args.ack();
    const ctx = buttonContext(env, args);
    const value = parseButtonValue(ctx.value, isPageValue);
    if (!value)
      return answerPrivately(args, "That button is out of date: run /edge zones again.", ctx.logger);
    await replaceMessage(args, ctx.logger, async () => {
      const client = await edgeClientFor(env.deps, ctx.teamId);
      return zonesMessage(
        await client.listShieldZones({ page: value.page, perPage: value.perPage }),
        value.p === true,
      );
    });
  };
}
