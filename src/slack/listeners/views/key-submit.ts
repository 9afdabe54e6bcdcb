import type { AllMiddlewareArgs, SlackViewMiddlewareArgs, ViewSubmitAction } from "@slack/bolt";
import { toUserSentence } from "../../../errors.js";
import { checkKey, keyShapeProblem, removeKey, saveKey } from "../../../services/keys.js";
import { keyDoneModal } from "../../blocks/key-modal.js";
import { NOT_ADMIN_KEY } from "../../edge-commands/key.js";
import type { SlackEnv } from "../../edge-commands/types.js";
import { BLOCKS, KEY_ACTION_SELECT, KEY_INPUT_ACTION } from "../../ids.js";

type ViewArgs = SlackViewMiddlewareArgs<ViewSubmitAction> & AllMiddlewareArgs;

/**
 * The key modal's Save: check the key with the Edge API before storing it. A rejected key is shown
 * as an error on the field; the answer always comes within Slack's 3 seconds.
 */
export function keySubmit(env: SlackEnv) {
  return async ({ ack, body, view, client }: ViewArgs) => {
    const teamId = body.team?.id ?? view.team_id;
    const userId = body.user.id;
    const logger = env.deps.logger.child({ teamId, userId, view: "key" });
    const fieldError = (message: string) =>
      ack({ response_action: "errors", errors: { [BLOCKS.keyInput]: message } });
    try {
      if (!(await env.admins.isAdmin(client, teamId, userId))) return await fieldError(NOT_ADMIN_KEY);
      const values = view.state.values;
      const key = values[BLOCKS.keyInput]?.[KEY_INPUT_ACTION]?.value?.trim() ?? "";
      const remove = (values[BLOCKS.keyAction]?.[KEY_ACTION_SELECT]?.selected_options ?? []).some(
        (o) => o.value === "remove",
      );
      if (remove && key) return await fieldError("Either paste a new key or tick Remove, not both.");
      if (remove) {
        const removed = await removeKey(env.deps, teamId, userId);
        logger.info({ removed }, "edge api key removed");
        return await ack({
          response_action: "update",
          view: keyDoneModal(
            removed ? "The Edge API key was removed." : "There was no stored key to remove.",
          ),
        });
      }
      if (!key) return await fieldError("Paste the Edge API key, or press Cancel.");
      const shape = keyShapeProblem(key);
      if (shape) return await fieldError(shape);
      const check = await checkKey(env.deps, key);
      if (!check.ok) return await fieldError(check.reason);
      const info = await saveKey(env.deps, teamId, userId, key);
      logger.info({ fingerprint: info.fingerprint }, "edge api key stored");
      return await ack({
        response_action: "update",
        view: keyDoneModal(`Saved. The workspace now uses the key ending ${info.fingerprint}.`),
      });
    } catch (err) {
      logger.warn({ err }, "key modal failed");
      return await fieldError(toUserSentence(err));
    }
  };
}
