import type {
  Button,
  ConfirmationDialog,
  ContextBlock,
  HeaderBlock,
  KnownBlock,
  SectionBlock,
} from "@slack/types";
import { LIMITS } from "./limits.js";
import { type MrkdwnInput, mrkdwnText, packMrkdwn, plainText } from "./mrkdwn.js";

/* Block Kit's blocks and elements, their text made by mrkdwn.ts and kept within Slack's limits. */

export function header(text: string): HeaderBlock {
  return { type: "header", text: plainText(text, LIMITS.headerText) };
}

export function section(text: MrkdwnInput, accessory?: Button): SectionBlock {
  const block: SectionBlock = { type: "section", text: mrkdwnText(text) };
  if (accessory) block.accessory = accessory;
  return block;
}

export function fields(items: readonly MrkdwnInput[]): SectionBlock {
  return {
    type: "section",
    fields: items.slice(0, LIMITS.fields).map((t) => mrkdwnText(t, LIMITS.fieldText)),
  };
}

export function context(...texts: MrkdwnInput[]): ContextBlock {
  return {
    type: "context",
    elements: texts
      .map((t) => mrkdwnText(t))
      .filter((t) => t.text.length > 0)
      .slice(0, LIMITS.contextElements),
  };
}

export const divider = (): KnownBlock => ({ type: "divider" });

export function button(text: string, actionId: string, value: string, style?: "primary" | "danger"): Button {
  const b: Button = {
    type: "button",
    text: plainText(text, LIMITS.buttonText),
    action_id: actionId,
    value: value.slice(0, LIMITS.buttonValue),
  };
  if (style) b.style = style;
  return b;
}

export function actions(...elements: Button[]): KnownBlock {
  return { type: "actions", elements };
}

/** The "Are you sure?" dialog a button opens before it is sent. */
export function confirmDialog(
  title: string,
  text: MrkdwnInput,
  confirm: string,
  style?: "danger" | "primary",
): ConfirmationDialog {
  const d: ConfirmationDialog = {
    title: plainText(title, LIMITS.confirmTitle),
    text: mrkdwnText(text, LIMITS.confirmText),
    confirm: plainText(confirm, LIMITS.confirmButton),
    deny: plainText("Cancel"),
  };
  if (style) d.style = style;
  return d;
}

/**
 * Pack lines into as few sections as fit Slack's 3000-character limit, using at most `maxBlocks`
 * blocks in all; when they do not all fit, the last block says how many lines were left out.
 */
export function packLines(lines: readonly MrkdwnInput[], maxBlocks: number, moreNoun = "more"): KnownBlock[] {
  const packs = packMrkdwn(lines, LIMITS.sectionText - 40);
  if (packs.length <= maxBlocks) return packs.map((p) => section(p.text));
  const kept = packs.slice(0, Math.max(0, maxBlocks - 1));
  const hidden = lines.length - kept.reduce((n, p) => n + p.lines, 0);
  return [...kept.map((p) => section(p.text)), context(`…and ${hidden} ${moreNoun} not shown.`)];
}
