import type { KnownBlock, ModalView } from "@slack/types";
import type { ApiKeyInfo } from "../../store/index.js";
import { BLOCKS, KEY_ACTION_SELECT, KEY_INPUT_ACTION, VIEWS } from "../ids.js";
import { context, section } from "./block-kit.js";
import { LIMITS } from "./limits.js";
import { code, dateToken, type MrkdwnInput, mention, mrkdwn, plainText } from "./mrkdwn.js";

/** Which key answers this workspace: its own, the deployment's, or none (then nothing works yet). */
export function keyStatusText(info: ApiKeyInfo | undefined, usingDeploymentKey: boolean): MrkdwnInput {
  if (info)
    return mrkdwn`:key: This workspace's own key answers: ${code(info.fingerprint)}, set by ${mention(info.setBy)} ${dateToken(info.setAt)}${info.rotatedAt ? mrkdwn`, re-encrypted ${dateToken(info.rotatedAt)}` : ""}.`;
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
      // Empty is only right when removing the stored key below, so without one it is required.
      optional: info !== undefined,
      label: plainText(info ? "New Edge API key" : "Edge API key"),
      hint: plainText(
        info
          ? "Your bunny.net account API key, checked with the Edge API, then stored encrypted. Leave it empty only to remove the stored key below."
          : "Your bunny.net account API key. It is checked with the Edge API, then stored encrypted.",
      ),
      element: {
        type: "plain_text_input",
        action_id: KEY_INPUT_ACTION,
        placeholder: plainText("Paste the key"),
        max_length: 200,
      },
    },
  ];
  if (info) {
    blocks.push({
      type: "input",
      block_id: BLOCKS.keyAction,
      optional: true,
      label: plainText("Or remove it"),
      element: {
        type: "checkboxes",
        action_id: KEY_ACTION_SELECT,
        options: [{ text: plainText("Remove the stored key"), value: "remove" }],
      },
    });
  }
  blocks.push(context("Only its last four characters are ever shown. Admins only."));
  return {
    type: "modal",
    callback_id: VIEWS.keyModal,
    title: plainText("Edge API key", LIMITS.modalTitle),
    submit: plainText("Save"),
    close: plainText("Cancel"),
    blocks,
  };
}

export function keyDoneModal(sentence: string): ModalView {
  return {
    type: "modal",
    title: plainText("Edge API key", LIMITS.modalTitle),
    close: plainText("Done"),
    blocks: [section(sentence)],
  };
}
