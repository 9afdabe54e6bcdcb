import type { AllMiddlewareArgs, BlockSuggestion, SlackOptionsMiddlewareArgs } from "@slack/bolt";
import { withDeadline } from "../../../deadline.js";
import { UserError } from "../../../errors.js";
import { PICKER_SOURCES, type PickerSource, searchPicker } from "../../../services/pickers.js";
import { PICKER_MAX_OPTIONS, type PickerOptions, pickerNotice, pickerOptions } from "../../blocks/pickers.js";
import type { SlackEnv } from "../../edge-commands/types.js";

export type SuggestionArgs = SlackOptionsMiddlewareArgs<"block_suggestion"> & AllMiddlewareArgs;

/**
 * How long a suggestion may wait for a list still loading: Slack drops an options answer after 3 s,
 * so past this the menu says it is still loading (the load goes on, and the next keystroke finds it).
 */
export const SUGGESTION_BUDGET_MS = 1500;

const sourceOf = (actionId: string): PickerSource | undefined =>
  PICKER_SOURCES.find((s) => actionId.endsWith(`.${s}`));

/** block_suggestion for `edge.pick.<source>`: the requesting workspace's matches, from its key's cache. */
export function pickerSuggestions(env: SlackEnv) {
  return async ({ body, ack }: SuggestionArgs) => {
    const suggestion = body as BlockSuggestion;
    const teamId = suggestion.team?.id ?? suggestion.user.team_id ?? "";
    const logger = env.deps.logger.child({
      teamId,
      userId: suggestion.user.id,
      actionId: suggestion.action_id,
    });
    const source = sourceOf(suggestion.action_id);
    let answer: PickerOptions;
    if (!source || teamId === "") answer = pickerNotice("This menu is out of date: type the command again.");
    else {
      const text = String(suggestion.value ?? "").slice(0, 200);
      answer = await withDeadline(
        env.deps.clock,
        searchPicker(env.deps, teamId, source, text, PICKER_MAX_OPTIONS).then(
          pickerOptions,
          (err: unknown) => {
            if (err instanceof UserError && err.kind === "no_key")
              return pickerNotice("No Edge API key here yet: an admin can run /edge key.");
            logger.warn({ err, source }, "picker suggestions failed");
            return pickerNotice("The Edge API did not answer: try again in a moment.");
          },
        ),
        SUGGESTION_BUDGET_MS,
        () => {
          logger.info({ source }, "picker list still loading");
          return pickerNotice("Still loading the list: type another letter in a moment.");
        },
      );
    }
    await ack(answer as Parameters<typeof ack>[0]);
  };
}
