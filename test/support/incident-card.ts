import { expect } from "vitest";
import { blocksText, type Harness } from "./harness.js";

/** `/edge incident <args>` typed (by `who`), answered: the card that replaced the placeholder, and its text. */
export async function incidentCard(
  h: Harness,
  args: string | number,
  who?: { userId?: string; channelId?: string },
) {
  const res = await h.command(`incident ${args}`, who);
  expect(res.status).toBe(200);
  const card = await h.slack.waitForResponse(res.responseId, (r) => r.body.replace_original === true, 15_000);
  return { card, text: blocksText(card.body.blocks) };
}

/**
 * The card's text rows (sparkline, total, change), as shown without its picture: the workspace has not
 * granted files:write, so no chart is uploaded.
 */
export function textRowsOnly(h: Harness): void {
  h.slack.addFault({ method: "files.getUploadURLExternal", error: "missing_scope" });
}
