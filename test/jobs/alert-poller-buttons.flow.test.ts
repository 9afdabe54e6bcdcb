/**
 * The alert's buttons with the poller running, on one controlled clock (bot, store, simulator): the buttons clicked
 * are those of the parent the poller posted, and what they change (who acknowledged, the mute) survives the
 * poller's next updates, because both render from the rows. The App Home lists the alert while it is open.
 */
import { describe, expect, it } from "vitest";
import { SIM_IDS } from "../../tools/simulator/index.js";
import { openHome } from "../support/app-home.js";
import { answerTo, findButtons } from "../support/harness.js";
import { clickOn, MIN, parents, replies, T0, text, updatesOf, usePollerRig } from "./alert-poller-support.js";

const ZONE = SIM_IDS.zoneEnterprise;
const CHANNEL = "C0001";

const rig = usePollerRig();

async function setup() {
  const started = await rig.start({ budgetOnClock: true });
  started.h.slack.users.set("U0004", { id: "U0004", name: "dave" });
  return started;
}

describe("an attack alert's buttons with the poller running", () => {
  it("Acknowledge and Mute 1h hold through the poller's updates; Incident overview lands in the thread; the Home lists it while open", async () => {
    rig.now = T0;
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
    await rig.minutes(10, poller, () => parents(h).length > 0);
    const parent = parents(h)[0];
    const ts = (await h.store.episodes.listOpen("T0001"))[0]?.messageTs ?? "";
    expect(ts).not.toBe("");

    // The App Home of a member of the channel lists it.
    expect(await openHome(h, "U0002")).toContain(`Attack on shield zone ${ZONE}* in <#${CHANNEL}>`);

    // Bob acknowledges from the posted parent; the poller's next updates keep it.
    await clickOn(h, parent, "Acknowledge", "U0002", ts);
    await h.slack.waitForCall("chat.postMessage", (c) => c.args.thread_ts === ts);
    expect(text(replies(h, ts)[0])).toContain("<@U0002> acknowledged this alert");
    const before = updatesOf(h, ts).length;
    await rig.minutes(5, poller, () => updatesOf(h, ts).length > before);
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
    const mutedAt = rig.now;
    const quiet = { updates: updatesOf(h, ts).length, replies: replies(h, ts).length };
    await rig.minutes(30, poller);
    expect(updatesOf(h, ts).length).toBe(quiet.updates);
    expect(replies(h, ts).length).toBe(quiet.replies);
    sim.calm();
    rig.now = mutedAt + 60 * MIN;
    await rig.minutes(15, poller, () => replies(h, ts).some((r) => text(r).includes("Resolved")));
    expect(replies(h, ts).some((r) => text(r).includes("Resolved"))).toBe(true);
    expect(parents(h)).toHaveLength(1);

    // Resolved: no longer on the Home.
    const after = await openHome(h, "U0002");
    expect(after).toContain("Nothing is firing in the channels you are in.");
    expect(h.slack.violations).toEqual([]);
  });
});
