import { toUserSentence } from "../../../errors.js";
import { openKeyModal } from "../../edge-commands/key.js";
import type { SlackEnv } from "../../edge-commands/types.js";
import type { ButtonArgs } from "./context.js";
import { buttonContext } from "./context.js";

/** The App Home's Set API key button. There is no response_url on the Home tab, so errors go by DM-less ephemeral-free log. */
export function openKeyModalFromHome(env: SlackEnv) {
  return async (args: ButtonArgs) => {
    await args.ack();
    const ctx = buttonContext(env, args);
    try {
      await openKeyModal({ env, client: args.client, teamId: ctx.teamId, userId: ctx.userId }, ctx.triggerId);
    } catch (err) {
      ctx.logger.warn({ err, sentence: toUserSentence(err) }, "could not open the key modal from App Home");
    }
  };
}
