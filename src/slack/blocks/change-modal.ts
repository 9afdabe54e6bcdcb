import type { KnownBlock, ModalView, PlainTextOption } from "@slack/types";
import type { ChangeForm } from "../change-forms.js";
import { ACTIONS, CHANGE_MODAL, VIEWS } from "../ids.js";
import { context, section } from "./block-kit.js";
import { LIMITS } from "./limits.js";
import { plainText } from "./mrkdwn.js";
import { pickerSelect } from "./pickers.js";

const option = (label: string, value: string): PlainTextOption => ({ text: plainText(label, 75), value });

/**
 * The "Request a change" modal: the kind first (choosing one redraws the modal with its fields), then
 * the target through the same picker as the commands, the kind's fields, an optional duration and the
 * channel where the request is confirmed and approved.
 */
export function changeModal(forms: Readonly<Record<string, ChangeForm>>, chosen?: string): ModalView {
  const form = chosen !== undefined ? forms[chosen] : undefined;
  const kinds = Object.entries(forms).map(([k, f]) => option(f.label, k));
  const kindSelect = {
    type: "static_select" as const,
    action_id: ACTIONS.changeModalKind,
    placeholder: plainText("Choose what to change"),
    options: kinds,
    ...(form && chosen !== undefined ? { initial_option: option(form.label, chosen) } : {}),
  };
  const blocks: KnownBlock[] = [
    {
      type: "section",
      block_id: CHANGE_MODAL.kind,
      text: { ...plainText("What do you want to change?") },
      accessory: kindSelect,
    },
  ];
  if (form) {
    blocks.push({
      type: "input",
      block_id: CHANGE_MODAL.target,
      label: plainText(
        form.source === "app" ? "Application" : form.source === "pull" ? "Pull zone" : "Shield zone",
      ),
      element: pickerSelect(form.source),
    });
    for (const field of form.fields) {
      blocks.push({
        type: "input",
        block_id: `${CHANGE_MODAL.fieldPrefix}${field.id}`,
        optional: field.optional === true,
        label: plainText(field.label),
        element: field.choices
          ? {
              type: "static_select",
              action_id: CHANGE_MODAL.value,
              options: field.choices.map((c) => option(c, c)),
            }
          : {
              type: "plain_text_input",
              action_id: CHANGE_MODAL.value,
              max_length: 200,
              ...(field.placeholder ? { placeholder: plainText(field.placeholder) } : {}),
            },
      });
    }
    if (form.temporary)
      blocks.push({
        type: "input",
        block_id: CHANGE_MODAL.duration,
        optional: true,
        label: plainText("For how long (empty: until changed again)"),
        hint: plainText("1m to 24h, like 30m, 2h or 1h30m; it is undone at the end."),
        element: {
          type: "plain_text_input",
          action_id: CHANGE_MODAL.value,
          max_length: 10,
          placeholder: plainText("30m"),
        },
      });
    blocks.push({
      type: "input",
      block_id: CHANGE_MODAL.channel,
      label: plainText("Confirm and approve in"),
      element: {
        type: "conversations_select",
        action_id: CHANGE_MODAL.value,
        default_to_current_conversation: true,
        response_url_enabled: true,
        filter: { include: ["public", "private"], exclude_bot_users: true },
      },
    });
    blocks.push(
      context(
        "You confirm it in that channel next; the channel's approval policy applies as to a typed command.",
      ),
    );
  } else blocks.push(section("Choose a kind of change to see its fields."));
  return {
    type: "modal",
    callback_id: VIEWS.changeModal,
    title: plainText("Request a change", LIMITS.modalTitle),
    ...(form ? { submit: plainText("Continue", 24) } : {}),
    close: plainText("Cancel", 24),
    blocks,
  };
}
