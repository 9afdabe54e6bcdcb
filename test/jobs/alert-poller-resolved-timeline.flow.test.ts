/**
 * When a zone's alert resolves, its timeline is posted in the alert's thread (after the
 * "Resolved" note): read from the store, only the watch's channel's entries, with Export and no paging.
 */
import { describe, expect, it } from "vitest";
import { ACTIONS } from "../../src/slack/ids.js";
import { SIM_IDS } from "../../tools/simulator/index.js";
import { answerTo, blocksText, findButtons, type Harness } from "../support/harness.js";
import { MIN, T0, usePollerRig } from "./alert-poller-support.js";

const ZONE = SIM_IDS.zoneEnterprise;

const rig = usePollerRig();

const replies = (h: Harness, ts: string) =>
  h.slack.callsTo("chat.postMessage").filter((c) => c.args.channel === "C0001" && c.args.thread_ts === ts);

/** A zone watch in #C0001 and an attack on its zone from 90 s on: once the alert's parent is posted, its ts. */
async function alertFiring() {
  rig.now = T0;
  const { sim, h, poller } = await rig.start();
  const minutes = (n: number, done: () => boolean) => rig.minutes(n, poller, done);
  await answerTo(h, `watch zone ${ZONE} sensitivity normal`, "U0001");
  await poller.tick();
  sim.stageAttack(ZONE, { startsAt: T0 + 90_000, rampMinutes: 1, durationMinutes: 60, peakPerMinute: 800 });
  await minutes(10, () => h.slack.callsTo("chat.postMessage").some((c) => !c.args.thread_ts));
  const ts = (await h.store.episodes.listOpen("T0001"))[0]?.messageTs as string;
  return { sim, h, minutes, ts };
}

describe("a resolved zone alert tells its story in its thread", () => {
  it("posts the timeline after the Resolved note, with Export only and without other channels' entries", async () => {
    const { sim, h, minutes, ts } = await alertFiring();
    expect(ts).toBeTruthy();

    // A request made in a private channel about the same zone: not for #C0001's thread.
    await h.store.changeRequests.create({
      kind: "access_block",
      teamId: "T0001",
      channelId: "GSECRET",
      requesterId: "U0003",
      params: { shieldZoneId: ZONE, type: "country", value: "CN", state: "block" },
      expiresAt: rig.now + 60 * MIN,
    });

    sim.calm();
    await minutes(15, () =>
      replies(h, ts as string).some((r) => blocksText(r.args.blocks).includes("Timeline of")),
    );
    const thread = replies(h, ts as string).map((r) => blocksText(r.args.blocks));
    const resolvedAt = thread.findIndex((t) => t.includes("Resolved after"));
    const storyAt = thread.findIndex((t) => t.includes(`Timeline of shield zone ${ZONE}`));
    expect(resolvedAt).toBeGreaterThanOrEqual(0);
    expect(storyAt).toBeGreaterThan(resolvedAt);
    const story = thread[storyAt] ?? "";
    expect(story).toContain("Alert opened in <#C0001>");
    expect(story).toMatch(/Alert resolved after \d+ min/);
    expect(story).toContain("Only what happened in this channel.");
    expect(story).toContain("1 entry from other channels is left out.");
    expect(story).not.toContain("country CN");
    // No Edge call for peaks from the watches' budget: the reply has none.
    expect(story).not.toContain("Peaks");
    const posted = replies(h, ts as string)[storyAt];
    expect(findButtons(posted?.args.blocks).map((b) => b.action_id)).toEqual([ACTIONS.timelineExport]);
    expect(thread.filter((t) => t.includes("Timeline of"))).toHaveLength(1);
    expect(h.slack.violations).toEqual([]);
  }, 60_000);

  it("says what the alert said when it opened, not the readings it was last updated with", async () => {
    rig.now = T0;
    const { sim, h, poller } = await rig.start();
    await answerTo(h, `watch zone ${ZONE} sensitivity normal`, "U0001");
    await poller.tick();
    // A slow ramp: the numbers at opening are well below those the parent shows later.
    sim.stageAttack(ZONE, {
      startsAt: T0 + 90_000,
      rampMinutes: 8,
      durationMinutes: 40,
      peakPerMinute: 2_000,
    });
    const parentsNow = () => h.slack.callsTo("chat.postMessage").filter((c) => !c.args.thread_ts);
    await rig.minutes(10, poller, () => parentsNow().length > 0);
    const opening = blocksText(parentsNow()[0]?.args.blocks).match(/\*DDoS\* ([\d,]+)\/min/)?.[1];
    expect(opening).toBeTruthy();
    const ts = (await h.store.episodes.listOpen("T0001"))[0]?.messageTs as string;
    await rig.minutes(12, poller);
    const later = blocksText(
      h.slack
        .callsTo("chat.update")
        .filter((c) => c.args.ts === ts)
        .at(-1)?.args.blocks,
    );
    expect(later).not.toContain(`*DDoS* ${opening}/min`);

    sim.calm();
    await rig.minutes(15, poller, () =>
      replies(h, ts).some((r) => blocksText(r.args.blocks).includes("Timeline of")),
    );
    const story = replies(h, ts)
      .map((r) => blocksText(r.args.blocks))
      .find((t) => t.includes("Timeline of"));
    expect(story).toMatch(new RegExp(`Alert opened in <#C0001>: DDoS ${opening}/min \\(usually`));
  }, 60_000);
});

describe("the resolution reply and its export list every edgeops mitigation in force on the zone", () => {
  it("names another channel's mitigation by what it does only, and does not count it among the entries left out", async () => {
    const { sim, h, minutes, ts } = await alertFiring();
    expect(ts).toBeTruthy();

    // A country block asked in a private channel, approved and in force on the zone (as the engine leaves one).
    const params = { shieldZoneId: ZONE, type: "country", value: "CN", state: "block" };
    const r = await h.store.changeRequests.create({
      kind: "access_block",
      teamId: "T0001",
      channelId: "GSECRET",
      requesterId: "U0003",
      params,
      observed: "none",
      expiresAt: rig.now + 60 * MIN,
    });
    await h.store.changeRequests.transition(r.id, "pending", "approved", {
      decidedBy: "U0001",
      decidedAt: rig.now,
      approvedBy: ["U0001"],
    });
    await h.store.changeRequests.transition(r.id, "approved", "applied", {});
    await h.store.changeRequests.setTargetOwner("T0001", `T0001/shield zone ${ZONE}/access country CN`, r.id);

    sim.calm();
    await minutes(15, () => replies(h, ts).some((m) => blocksText(m.args.blocks).includes("Timeline of")));
    const posted = replies(h, ts).find((m) => blocksText(m.args.blocks).includes("Timeline of"));
    const story = blocksText(posted?.args.blocks);
    expect(story).toContain("*Still in force:*");
    expect(story).toContain(`Block country CN on shield zone ${ZONE}`);
    // What, not who or where: the private channel's requester and channel stay out.
    expect(story).not.toContain("U0003");
    expect(story).not.toContain("GSECRET");
    expect(story).toContain("asked in another channel");
    // Only its request's own steps (asked, approved) are left out; the mitigation is not.
    expect(story).toContain("2 entries from other channels are left out.");

    const exportButton = findButtons(posted?.args.blocks).find((b) => b.action_id === ACTIONS.timelineExport);
    const clicked = await h.click(exportButton!, { userId: "U0001", channelId: "C0001", messageTs: ts });
    await h.slack.waitForResponse(clicked.responseId, () => true, 10_000);
    // The draft (its chart, a PNG, goes beside it).
    const md = [...h.slack.uploads.values()].find((u) => u.filename.endsWith(".md"))?.body ?? "";
    const inForce = md.slice(md.indexOf("## Mitigations still in force"));
    expect(inForce).toContain(`Block country CN on shield zone ${ZONE}`);
    expect(inForce).toContain("asked in another channel");
    expect(md).not.toContain("U0003");
    expect(md).not.toContain("GSECRET");
    expect(md).toContain("2 entries from other channels are left out of this channel's draft.");
    expect(h.slack.violations).toEqual([]);
  }, 60_000);
});
