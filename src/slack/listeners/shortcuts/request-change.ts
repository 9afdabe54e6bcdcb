import type {
  AllMiddlewareArgs,
  BlockAction,
  GlobalShortcut,
  SlackActionMiddlewareArgs,
  SlackShortcutMiddlewareArgs,
  StaticSelectAction,
} from "@slack/bolt";
import { changeModal } from "../../blocks/change-modal.js";
import { CHANGE_FORMS, formFor } from "../../change-forms.js";
import type { SlackEnv } from "../../edge-commands/types.js";

/** "Request a change" (global shortcut): open the change modal. */
export function requestChangeShortcut(env: SlackEnv) {
  return async ({
    shortcut,
    ack,
    client,
  }: SlackShortcutMiddlewareArgs<GlobalShortcut> & AllMiddlewareArgs) => {
    await ack();
    const logger = env.deps.logger.child({
      teamId: shortcut.team?.id,
      userId: shortcut.user.id,
      shortcut: shortcut.callback_id,
    });
    await client.views
      .open({ trigger_id: shortcut.trigger_id, view: changeModal(CHANGE_FORMS) })
      .catch((err: unknown) => logger.warn({ err }, "could not open the change modal"));
  };
}

/** The kind chosen in the change modal: redraw it with that kind's target picker and fields. */
export function changeModalKind(env: SlackEnv) {
  return async ({
    ack,
    body,
    action,
    client,
  }: SlackActionMiddlewareArgs<BlockAction<StaticSelectAction>> & AllMiddlewareArgs) => {
    await ack();
    const kind = action.selected_option?.value;
    const view = body.view;
    if (!view || !formFor(kind)) return;
    await client.views
      .update({ view_id: view.id, hash: view.hash, view: changeModal(CHANGE_FORMS, kind) })
      .catch((err: unknown) =>
        env.deps.logger.warn(
          { err, teamId: body.team?.id, userId: body.user.id },
          "could not update the change modal",
        ),
      );
  };
}
