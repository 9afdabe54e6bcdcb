import type { Button, ContextBlock, HeaderBlock, KnownBlock, SectionBlock } from "@slack/types";

/** A finished answer: blocks plus the plain-text fallback Slack shows in notifications. */
export interface Reply {
  text: string;
  blocks: KnownBlock[];
}

export const LIMITS = {
  messageBlocks: 50,
  viewBlocks: 100,
  sectionText: 3000,
  headerText: 150,
  buttonText: 75,
  buttonValue: 2000,
  contextElements: 10,
  fields: 10,
  fieldText: 2000,
} as const;

/** Escape the three characters Slack's mrkdwn treats as control characters. */
export function escapeMrkdwn(s: string): string {
  return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

export function truncate(s: string, max: number): string {
  return s.length <= max ? s : `${s.slice(0, Math.max(0, max - 1))}…`;
}

export function header(text: string): HeaderBlock {
  return {
    type: "header",
    text: { type: "plain_text", text: truncate(text, LIMITS.headerText), emoji: true },
  };
}

export function section(mrkdwn: string, accessory?: Button): SectionBlock {
  const block: SectionBlock = {
    type: "section",
    text: { type: "mrkdwn", text: truncate(mrkdwn, LIMITS.sectionText) },
  };
  if (accessory) block.accessory = accessory;
  return block;
}

export function fields(items: string[]): SectionBlock {
  return {
    type: "section",
    fields: items
      .slice(0, LIMITS.fields)
      .map((t) => ({ type: "mrkdwn", text: truncate(t, LIMITS.fieldText) })),
  };
}

export function context(...texts: string[]): ContextBlock {
  return {
    type: "context",
    elements: texts
      .filter((t) => t.length > 0)
      .slice(0, LIMITS.contextElements)
      .map((t) => ({ type: "mrkdwn", text: truncate(t, LIMITS.sectionText) })),
  };
}

export const divider = (): KnownBlock => ({ type: "divider" });

export function button(text: string, actionId: string, value: string, style?: "primary" | "danger"): Button {
  const b: Button = {
    type: "button",
    text: { type: "plain_text", text: truncate(text, LIMITS.buttonText), emoji: true },
    action_id: actionId,
    value: value.slice(0, LIMITS.buttonValue),
  };
  if (style) b.style = style;
  return b;
}

export function actions(...elements: Button[]): KnownBlock {
  return { type: "actions", elements };
}

/**
 * Pack lines into as few sections as fit Slack's 3000-character limit, using at most `maxBlocks`
 * blocks in all; when they do not all fit, the last block says how many lines were left out.
 */
export function packLines(lines: string[], maxBlocks: number, moreNoun = "more"): KnownBlock[] {
  const budget = LIMITS.sectionText - 40;
  const sections: { text: string; count: number }[] = [];
  for (const line of lines) {
    const piece = truncate(line, budget);
    const last = sections[sections.length - 1];
    if (last && last.text.length + 1 + piece.length <= budget) {
      last.text = `${last.text}\n${piece}`;
      last.count++;
    } else {
      sections.push({ text: piece, count: 1 });
    }
  }
  if (sections.length <= maxBlocks) return sections.map((x) => section(x.text));
  const kept = sections.slice(0, Math.max(0, maxBlocks - 1));
  const hidden = lines.length - kept.reduce((n, x) => n + x.count, 0);
  return [...kept.map((x) => section(x.text)), context(`…and ${hidden} ${moreNoun} not shown.`)];
}

/** A one-sentence answer, used for every error and bad argument. */
export function sentenceReply(sentence: string, emoji = ":warning:"): Reply {
  return { text: sentence, blocks: [section(`${emoji} ${escapeMrkdwn(sentence)}`)] };
}
