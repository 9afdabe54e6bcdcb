import { expect } from "vitest";
import { blocksText, type Harness } from "./harness.js";

/** `/edge incident <args>` typed (by `who`), answered: the card that replaced the placeholder, and its text. */
export async function incidentCard(h: Harness, args: string | number, who?: { userId?: string }) {
  const res = await h.command(`incident ${args}`, who);
  expect(res.status).toBe(200);
  const card = await h.slack.waitForResponse(res.responseId, (r) => r.body.replace_original === true, 15_000);
  return { card, text: blocksText(card.body.blocks) };
}
