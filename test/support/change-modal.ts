import { CHANGE_MODAL } from "../../src/slack/ids.js";
import type { Harness } from "./harness.js";

/** Bob (U0002) of the acme workspace (T0001), as interaction payloads name the user and the team. */
export const BOB_OF_ACME = {
  user: { id: "U0002", username: "bob", name: "bob", team_id: "T0001" },
  team: { id: "T0001", domain: "acme" },
};

/** A static_select's value in a view's state. */
export const selected = (value: string) => ({
  type: "static_select",
  selected_option: { value, text: { type: "plain_text", text: value } },
});

const rid = () => Math.random().toString(36).slice(2);

export type ChangeModalView = {
  id: string;
  hash: string;
  blocks: Record<string, unknown>[];
  callback_id: string;
};

/**
 * Bob submits the change modal `view` with these values (block id → the value of its one element); its
 * channel picker's response_url, for `channelId`, answers at the fake Slack under `responseId`.
 */
export async function submitChangeModal(
  h: Harness,
  view: ChangeModalView,
  values: Record<string, Record<string, unknown>>,
  channelId = "C0001",
) {
  const responseId = `modal-${rid()}`;
  const res = await h.interact({
    type: "view_submission",
    trigger_id: `trigger-${rid()}`,
    api_app_id: "A0001",
    token: "legacy",
    ...BOB_OF_ACME,
    view: { ...view, type: "modal", state: { values }, private_metadata: "" },
    response_urls: [
      {
        block_id: CHANGE_MODAL.channel,
        action_id: CHANGE_MODAL.value,
        channel_id: channelId,
        response_url: h.slack.responseUrl(responseId),
      },
    ],
  });
  return { res, responseId };
}
