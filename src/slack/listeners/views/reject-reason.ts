import type { AllMiddlewareArgs, SlackViewMiddlewareArgs, ViewSubmitAction } from "@slack/bolt";
import { setRejectReason } from "../../../changes/engine.js";
import { tellRequester } from "../../change-requests.js";
import type { SlackEnv } from "../../edge-commands/types.js";
import { VIEWS } from "../../ids.js";

type Args = SlackViewMiddlewareArgs<ViewSubmitAction> & AllMiddlewareArgs;

/** The reject reason submitted: shown on the card, and told to the requester in its thread. */
export function rejectReasonSubmit(env: SlackEnv) {
  return async ({ ack, body, view, client }: Args) => {
    const teamId = body.team?.id ?? view.team_id;
    const userId = body.user.id;
    const text = view.state.values[VIEWS.rejectReason]?.[VIEWS.rejectReason]?.value?.trim() ?? "";
    if (!text) {
      await ack({
        response_action: "errors",
        errors: { [VIEWS.rejectReason]: "Type the reason, or press Cancel." },
      });
      return;
    }
    await ack();
    const request = await setRejectReason(env.deps, {
      requestId: view.private_metadata,
      teamId,
      userId,
      text,
    });
    // The card is redrawn by the engine's note (redrawCardsOnChange); the requester hears the reason.
    if (request) await tellRequester(env, request, client);
  };
}
