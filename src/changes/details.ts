/**
 * How a change kind describes itself on its card, as data: rows of a label and a value. The Slack side
 * (slack/blocks/change-details.ts) renders them and escapes every string there, so a kind never writes
 * Slack markup and a value from outside (a zone's setting, a URL) can't carry any.
 */
export type DetailValue =
  /** Plain text. */
  | string
  /** What a value was and what the change makes it: "Low → *High*". */
  | { readonly type: "move"; readonly from: string; readonly to: string }
  | { readonly type: "emphasis"; readonly text: string }
  | { readonly type: "code"; readonly text: string }
  /** A Slack user, channel or user group by id (anything that is not one is shown as text). */
  | { readonly type: "user" | "channel" | "usergroup"; readonly id: string }
  /** Parts one after another, with a separator between them. */
  | { readonly type: "join"; readonly parts: readonly DetailValue[]; readonly separator: string };

export interface DetailRow {
  readonly label: string;
  readonly value: DetailValue;
}

export const moved = (from: string, to: string): DetailValue => ({ type: "move", from, to });
export const userRef = (id: string): DetailValue => ({ type: "user", id });
export const channelRef = (id: string): DetailValue => ({ type: "channel", id });
export const usergroupRef = (id: string): DetailValue => ({ type: "usergroup", id });
export const joined = (parts: readonly DetailValue[], separator = ""): DetailValue => ({
  type: "join",
  parts,
  separator,
});
