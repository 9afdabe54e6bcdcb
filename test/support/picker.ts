import { expect } from "vitest";
import type { Harness } from "./harness.js";

export interface Picker {
  blockId: string;
  actionId: string;
}

/** The picker in an answer: its external_select and block. */
export function pickerIn(blocks: unknown): Picker | undefined {
  for (const b of blocks as { type: string; block_id?: string; elements?: Record<string, unknown>[] }[]) {
    const select = b.elements?.find((e) => e.type === "external_select");
    if (select) return { blockId: String(b.block_id), actionId: String(select.action_id) };
  }
  return undefined;
}

/** Picks `value` in the picker as bob would (a signed block_actions); returns the response_url's id. */
export async function pick(
  h: Harness,
  picker: Picker,
  value: string,
  who: { userId?: string; teamId?: string } = {},
): Promise<string> {
  const teamId = who.teamId ?? "T0001";
  const responseId = `pick-${Math.random().toString(36).slice(2)}`;
  const res = await h.interact({
    type: "block_actions",
    user: { id: who.userId ?? "U0002", username: "bob", name: "bob", team_id: teamId },
    api_app_id: "A0001",
    token: "legacy",
    container: { type: "message", message_ts: "1700000000.000100", channel_id: "C0001", is_ephemeral: true },
    trigger_id: "trigger-pick",
    team: { id: teamId, domain: "acme" },
    channel: { id: "C0001", name: "incident-42" },
    message: { ts: "1700000000.000100", type: "message", text: "", blocks: [] },
    response_url: h.slack.responseUrl(responseId),
    actions: [
      {
        type: "external_select",
        action_id: picker.actionId,
        block_id: picker.blockId,
        selected_option: { text: { type: "plain_text", text: "x" }, value },
        action_ts: String(Date.now() / 1000),
      },
    ],
  });
  expect(res.status).toBe(200);
  return responseId;
}

/** Picks `value` and returns the answer that replaces the picker. */
export async function choose(h: Harness, picker: Picker, value: string, teamId = "T0001") {
  return h.slack.waitForResponse(await pick(h, picker, value, { teamId }));
}
