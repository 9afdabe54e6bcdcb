import type { DetailRow, DetailValue } from "../../changes/details.js";
import { channel, code, joinMrkdwn, type Mrkdwn, mention, mrkdwn, usergroup } from "./mrkdwn.js";

/** A change kind's value (changes/details.ts) as mrkdwn: the one place its strings are escaped. */
export function detailMrkdwn(value: DetailValue): Mrkdwn {
  if (typeof value === "string") return mrkdwn`${value}`;
  switch (value.type) {
    case "move":
      return mrkdwn`${value.from} → *${value.to}*`;
    case "emphasis":
      return mrkdwn`*${value.text}*`;
    case "code":
      return code(value.text);
    case "user":
      return mention(value.id);
    case "channel":
      return channel(value.id);
    case "usergroup":
      return usergroup(value.id);
    case "join":
      return joinMrkdwn(value.parts.map(detailMrkdwn), value.separator);
  }
}

/** A row as a card field: "*Label*\nvalue". */
export function detailField(row: DetailRow): Mrkdwn {
  return mrkdwn`*${row.label}*\n${detailMrkdwn(row.value)}`;
}
