import { expect } from "vitest";
import { blocksText, type Harness, SIGNING_SECRET } from "./harness.js";
import { postSigned } from "./slack-signer.js";

/**
 * `userId` opens the bot's Home tab (app_home_opened, signed as Slack sends it): the text of the view
 * published for them in answer. The bot must ack, and nothing it sent Slack may break Slack's rules.
 */
export async function openHome(h: Harness, userId: string): Promise<string> {
  const before = h.slack.callsTo("views.publish").length;
  const event = {
    token: "legacy",
    team_id: "T0001",
    api_app_id: "A0001",
    type: "event_callback",
    event_id: `Ev${Math.random().toString(36).slice(2)}`,
    event_time: Math.floor(Date.now() / 1000),
    event: { type: "app_home_opened", user: userId, channel: `D${userId}`, tab: "home", event_ts: "1.1" },
    authorizations: [{ team_id: "T0001", user_id: "UBOT", is_bot: true }],
  };
  const ack = await postSigned(h.eventsUrl, JSON.stringify(event), SIGNING_SECRET, {
    contentType: "application/json",
  });
  expect(ack.status).toBe(200);
  const publish = await h.slack.waitForCall(
    "views.publish",
    (c) => c.args.user_id === userId && h.slack.callsTo("views.publish").indexOf(c) >= before,
  );
  expect(h.slack.violations).toEqual([]);
  return blocksText((publish.args.view as { blocks: unknown }).blocks);
}
