import type { ExternalSelect, KnownBlock, Option, PlainTextOption } from "@slack/types";
import { PICKER_NOUNS, type PickerMatches, type PickerSource } from "../../services/pickers.js";
import { ACTIONS } from "../ids.js";
import { context, section } from "./block-kit.js";
import { code, mrkdwn, plainText, truncate } from "./mrkdwn.js";
import { type Reply, reply } from "./reply.js";

/** Slack: at most 100 options in a menu, 75 characters an option label, 150 an option value. */
export const PICKER_MAX_OPTIONS = 100;
const OPTION_TEXT_MAX = 75;
const OPTION_VALUE_MAX = 150;
/** The value of an option that only tells something (still loading, no key): choosing it does nothing. */
export const PICKER_NOTICE_VALUE = "edgeops.notice";

const PLACEHOLDERS: Readonly<Record<PickerSource, string>> = {
  shield: "Type part of a domain or pull zone name",
  dns: "Type part of a domain",
  app: "Type part of an application name",
  pull: "Type part of a pull zone name or domain",
};

/**
 * The picker menu: an external_select searching the workspace's `source` by name as the user types
 * (answered by the options listener for `edge.pick.<source>`). Usable in a message's actions block or
 * in a modal's input block, e.g. a future `/edge watch zone` modal: `input(pickerSelect("shield"))`,
 * then read `state.values[block].<action_id>.selected_option.value` on submission.
 */
export function pickerSelect(source: PickerSource): ExternalSelect {
  return {
    type: "external_select",
    action_id: `${ACTIONS.pickerPrefix}${source}`,
    placeholder: plainText(PLACEHOLDERS[source], 150),
    min_query_length: 0,
  };
}

/** "Which shield zone?": the command as it will run and a picker whose choice runs it. */
export function pickerMessage(source: PickerSource, commandShape: string, blockId: string): Reply {
  const noun = PICKER_NOUNS[source];
  const blocks: KnownBlock[] = [
    section(mrkdwn`Which ${noun}? Pick it below and I'll run ${code(commandShape)}.`),
    { type: "actions", block_id: blockId, elements: [pickerSelect(source)] },
    context(mrkdwn`Type part of its name to search; or type the command again with the ${noun}'s id.`),
  ];
  return reply(mrkdwn`Which ${noun}? Pick it to run ${commandShape}`, blocks);
}

const option = (text: string, value: string): PlainTextOption => ({
  text: plainText(truncate(text, OPTION_TEXT_MAX), OPTION_TEXT_MAX),
  value: value.slice(0, OPTION_VALUE_MAX),
});

export type PickerOptions =
  | { options: Option[] }
  | { option_groups: { label: PlainTextOption["text"]; options: Option[] }[] };

/**
 * The answer to a block_suggestion: at most 100 options, grouped when the matches carry groups. When
 * more match than are shown, the last option says so (choosing it does nothing).
 */
export function pickerOptions(matches: PickerMatches): PickerOptions {
  const hidden = matches.total - matches.choices.length;
  const room = hidden > 0 ? PICKER_MAX_OPTIONS - 1 : PICKER_MAX_OPTIONS;
  const shown = matches.choices.filter((c) => c.value.length <= OPTION_VALUE_MAX).slice(0, room);
  const more = matches.total - shown.length;
  const moreOption = more > 0 ? [option(`…${more} more: type more of the name`, PICKER_NOTICE_VALUE)] : [];
  if (!shown.some((c) => c.group !== undefined))
    return { options: [...shown.map((c) => option(c.label, c.value)), ...moreOption] };
  const groups = new Map<string, Option[]>();
  for (const c of shown) {
    const label = c.group ?? "Other";
    groups.set(label, [...(groups.get(label) ?? []), option(c.label, c.value)]);
  }
  const option_groups = [...groups].map(([label, options]) => ({
    label: plainText(truncate(label, OPTION_TEXT_MAX), OPTION_TEXT_MAX),
    options,
  }));
  const last = option_groups.at(-1);
  if (last && moreOption.length > 0) last.options.push(...moreOption);
  return { option_groups };
}

/** A menu holding one sentence (still loading, no key, an API error): choosing it does nothing. */
export function pickerNotice(sentence: string): PickerOptions {
  return { options: [option(sentence, PICKER_NOTICE_VALUE)] };
}
