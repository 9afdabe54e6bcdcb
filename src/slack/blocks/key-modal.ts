import type { KnownBlock, ModalView } from "@slack/types";
import type { ApiKeyInfo } from "../../store/index.js";
import { BLOCKS, KEY_ACTION_SELECT, KEY_INPUT_ACTION, VIEWS } from "../ids.js";
import { context, escapeMrkdwn, section } from "./common.js";
import { slackDateFromMs } from "./dates.js";

/** Which key answers this workspace: its own, the deployment's, or none (then nothing works yet). */
export function keyStatusText(info: ApiKeyInfo | undefined, usingDeploymentKey: boolean): string {
  if (info)
    return `:key: This workspace's own key answers: \`${info.fingerprint}\`, set by <@${info.setBy}> ${slackDateFromMs(info.setAt)}${info.rotatedAt ? `, re-encrypted ${slackDateFromMs(info.rotatedAt)}` : ""}.`;
  if (usingDeploymentKey)
    return ":key: No key stored for this workspace: this deployment's key answers (EDGE_API_KEY, or the local console's simulator).";
  return ":warning: No Edge API key for this workspace yet: nothing answers until an admin sets one.";
}

/** The modal that sets, replaces or removes the workspace's Edge API key. Never shows the key. */
export function keyModal(info: ApiKeyInfo | undefined, usingDeploymentKey: boolean): ModalView {
  const blocks: KnownBlock[] = [
    section(keyStatusText(info, usingDeploymentKey)),
    {
      type: "input",
      block_id: BLOCKS.keyInput,
      optional: true,
      label: { type: "plain_text", text: info ? "New Edge API key" : "Edge API key" },
      hint: {
        type: "plain_text",
        text: "Your bunny.net account API key. It is checked with the Edge API, then stored encrypted.",
      },
      element: {
        type: "plain_text_input",
        action_id: KEY_INPUT_ACTION,
        placeholder: { type: "plain_text", text: "Paste the key" },
        max_length: 200,
      },
    },
  ];
  if (info) {
    blocks.push({
      type: "input",
      block_id: BLOCKS.keyAction,
      optional: true,
      label: { type: "plain_text", text: "Or remove it" },
      element: {
        type: "checkboxes",
        action_id: KEY_ACTION_SELECT,
        options: [{ text: { type: "plain_text", text: "Remove the stored key" }, value: "remove" }],
      },
    });
  }
  blocks.push(context("Only its last four characters are ever shown. Admins only."));
  return {
    type: "modal",
    callback_id: VIEWS.keyModal,
    title: { type: "plain_text", text: "Edge API key" },
    submit: { type: "plain_text", text: "Save" },
    close: { type: "plain_text", text: "Cancel" },
    blocks,
  };
}

export function keyDoneModal(sentence: string): ModalView {
  return {
    type: "modal",
    title: { type: "plain_text", text: "Edge API key" },
    close: { type: "plain_text", text: "Done" },
    blocks: [section(escapeMrkdwn(sentence))],
  };
}
