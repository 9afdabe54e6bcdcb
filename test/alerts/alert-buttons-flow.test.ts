/**
 * The alert's buttons with the poller running, on one controlled clock (bot, store, simulator): the buttons clicked
 * are those of the parent the poller posted, and what they change (who acknowledged, the mute) survives the
 * poller's next updates, because both render from the rows. The App Home lists the alert while it is open.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createPoller, type Poller } from "../../src/jobs/alerts.js";
import { SIM_IDS, startSimulator } from "../../tools/simulator/index.js";
import type { SlackCall } from "../support/fake-slack.js";
import {
  answerTo,
  blocksText,
  findButtons,
  type Harness,
  SIGNING_SECRET,
  startHarness,
  TEST_EDGE_KEY,
} from "../support/harness.js";
import { postSigned } from "../support/slack-signer.js";

const MIN = 60_000;
const T0 = Date.UTC(2026, 7, 20, 10, 0, 30);
const ZONE = SIM_IDS.zoneEnterprise;
const CHANNEL = "C0001";

let clock = T0;
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function setup() {
  const sim = await startSimulator({ scanDurationMs: 50, apiKeys: [TEST_EDGE_KEY], now: () => clock });
  cleanups.push(() => sim.close());
  const h = await startHarness({ sim, now: () => clock });
  cleanups.push(() => h.close());
  h.slack.users.set("U0004", { id: "U0004", name: "dave" });
  // The key's polling budget follows the same clock: minutes pass in milliseconds here.
  const poller = createPoller({
    deps: h.deps,
    clientFor: h.app.env.clientFor,
    now: () => clock,
    budgetClock: () => clock,
  });
  cleanups.push(() => poller.stop());
  return { sim, h, poller };
}

async function minutes(n: number, poller: Poller, until?: () => boolean): Promise<void> {
  for (let i = 0; i < n; i++) {
    clock += MIN;
    await poller.tick();
    if (until?.()) return;
  }
}

const parents = (h: Harness) =>
  h.slack.callsTo("chat.postMessage").filter((c) => c.args.channel === CHANNEL && !c.args.thread_ts);
const replies = (h: Harness, ts: string) =>
  h.slack.callsTo("chat.postMessage").filter((c) => c.args.thread_ts === ts);
const updatesOf = (h: Harness, ts: string) => h.slack.callsTo("chat.update").filter((c) => c.args.ts === ts);
const text = (c: SlackCall | undefined) => blocksText(c?.args.blocks);

async function clickOn(
  h: Harness,
  message: SlackCall | undefined,
  label: string,
  userId: string,
  ts: string,
) {
  const button = findButtons(message?.args.blocks).find((b) => b.text === label);
  if (!button) throw new Error(`no ${label} on ${text(message)}`);
  const res = await h.click(button, { userId, channelId: CHANNEL, messageTs: ts });
  expect(res.status).toBe(200);
  return res;
}

async function home(h: Harness, userId: string): Promise<string> {
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
  await postSigned(h.eventsUrl, JSON.stringify(event), SIGNING_SECRET, { contentType: "application/json" });
  const publish = await h.slack.waitForCall(
    "views.publish",
    (c) => c.args.user_id === userId && h.slack.callsTo("views.publish").indexOf(c) >= before,
  );
  return blocksText((publish.args.view as { blocks: unknown }).blocks);
}

describe("an attack alert's buttons with the poller running", () => {
  it("Acknowledge and Mute 1h hold through the poller's updates; Incident overview lands in the thread; the Home lists it while open", async () => {
    clock = T0;
    const { sim, h, poller } = await setup();
    h.slack.memberships.set("U0002", [CHANNEL]);
    expect((await answerTo(h, `watch zone ${ZONE}`, "U0004")).text).toContain(`Watching shield zone ${ZONE}`);
    await poller.tick();
    sim.stageAttack(ZONE, {
      startsAt: T0 + 90_000,
      rampMinutes: 1,
      durationMinutes: 120,
      peakPerMinute: 800,
    });
    await minutes(10, poller, () => parents(h).length > 0);
    const parent = parents(h)[0];
    const ts = (await h.store.episodes.listOpen("T0001"))[0]?.messageTs ?? "";
    expect(ts).not.toBe("");

    // The App Home of a member of the channel lists it.
    expect(await home(h, "U0002")).toContain(`Attack on shield zone ${ZONE}* in <#${CHANNEL}>`);

    // Bob acknowledges from the posted parent; the poller's next updates keep it.
    await clickOn(h, parent, "Acknowledge", "U0002", ts);
    await h.slack.waitForCall("chat.postMessage", (c) => c.args.thread_ts === ts);
    expect(text(replies(h, ts)[0])).toContain("<@U0002> acknowledged this alert");
    const before = updatesOf(h, ts).length;
    await minutes(5, poller, () => updatesOf(h, ts).length > before);
    const latest = updatesOf(h, ts).at(-1);
    // The poller's own update, with the latest numbers.
    expect(updatesOf(h, ts).length).toBeGreaterThan(before);
    expect(text(latest)).toContain("acknowledged by <@U0002>");
    expect(findButtons(latest?.args.blocks).map((b) => b.text)).not.toContain("Acknowledge");

    // Incident overview from the latest parent: the card in the thread.
    await clickOn(h, latest, "Incident overview", "U0002", ts);
    await h.slack.waitForCall(
      "chat.update",
      (c) => c.args.ts !== ts && text(c).includes(`Incident picture · shield zone ${ZONE}`),
      15_000,
    );

    // Dave (the watch's creator) mutes it: the poller stops posting for the hour, then resumes.
    await clickOn(h, latest, "Mute 1h", "U0004", ts);
    await h.slack.waitForCall(
      "chat.postMessage",
      (c) => c.args.thread_ts === ts && text(c).includes("muted"),
    );
    const mutedAt = clock;
    const quiet = { updates: updatesOf(h, ts).length, replies: replies(h, ts).length };
    await minutes(30, poller);
    expect(updatesOf(h, ts).length).toBe(quiet.updates);
    expect(replies(h, ts).length).toBe(quiet.replies);
    sim.calm();
    clock = mutedAt + 60 * MIN;
    await minutes(15, poller, () => replies(h, ts).some((r) => text(r).includes("Resolved")));
    expect(replies(h, ts).some((r) => text(r).includes("Resolved"))).toBe(true);
    expect(parents(h)).toHaveLength(1);

    // Resolved: no longer on the Home.
    const after = await home(h, "U0002");
    expect(after).toContain("Nothing is firing in the channels you are in.");
    expect(h.slack.violations).toEqual([]);
  });
});
