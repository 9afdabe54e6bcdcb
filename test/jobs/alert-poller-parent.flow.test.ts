/**
 * What an alert's parent says is what is true, on one controlled clock shared by
 * the bot, its store and the Edge API simulator, through the real receiver and the fake Slack Web API; on
 * SQLite and on PostgreSQL where the store keeps what Slack was last shown.
 */
import { describe, expect, it } from "vitest";
import { BUCKET_MS, type ZoneState } from "../../src/alerts/evaluate.js";
import { actedOnCount, METRICS_RESOLUTION } from "../../src/edge/schemas/shield.js";
import type { Poller } from "../../src/jobs/alerts.js";
import { SIM_IDS } from "../../tools/simulator/index.js";
import { answerTo, findButtons, type Harness, TEST_EDGE_KEY } from "../support/harness.js";
import { pgReachable } from "../support/helpers.js";
import { clickOn, MIN, parents, replies, T0, text, updatesOf, usePollerRig } from "./alert-poller-support.js";

const ZONE = SIM_IDS.zoneEnterprise;
const CHANNEL = "C0001";
const reachable = await pgReachable();

const rig = usePollerRig();
const setup = (engine: "sqlite" | "postgres" = "sqlite", env?: Record<string, string>) =>
  rig.start({ budgetOnClock: true, postgres: engine === "postgres", ...(env ? { env } : {}) });

/** A zone watch in C0001 by U0001, an attack staged on the zone, and the alert it posted. */
async function alertedZone(engine: "sqlite" | "postgres" = "sqlite") {
  rig.now = T0;
  const s = await setup(engine);
  await answerTo(s.h, `watch zone ${ZONE}`, "U0001");
  await s.poller.tick();
  s.sim.stageAttack(ZONE, { startsAt: T0 + 90_000, rampMinutes: 0, durationMinutes: 60, peakPerMinute: 800 });
  await rig.minutes(8, s.poller, () => parents(s.h).length > 0);
  const parent = parents(s.h)[0];
  const ts = (await s.h.store.episodes.listOpen("T0001"))[0]?.messageTs ?? "";
  expect(ts).not.toBe("");
  return { ...s, parent, ts };
}

describe("a zone alert's numbers", () => {
  it("shows events per minute: the two-minute bucket's count halved, not labelled /min as it is", async () => {
    const { h, parent } = await alertedZone();
    const [watch] = await h.store.watches.list("T0001", CHANNEL);
    const bucketAt = (watch?.state as ZoneState | undefined)?.lastBucketAt ?? 0;
    const detailed = await h.deps.edge.forKey(TEST_EDGE_KEY).getMetricsOverviewDetailed(ZONE, {
      from: bucketAt,
      to: bucketAt + BUCKET_MS,
      resolution: METRICS_RESOLUTION.twoMinutes,
    });
    const point = detailed.features.ddos.points.find((p) => p.at === bucketAt);
    const inBucket = actedOnCount(point?.values ?? {});
    expect(inBucket).toBeGreaterThan(500);
    const perMinute = Math.round(inBucket / 2).toLocaleString("en-US");
    expect(text(parent)).toContain(`*DDoS* ${perMinute}/min`);
  });
});

/** The zone watch's state: how many calm samples its open episode has seen (null: none open). */
async function calmSamples(h: Harness): Promise<number | null> {
  const [watch] = await h.store.watches.list("T0001", CHANNEL);
  return (watch?.state as ZoneState | undefined)?.episode?.calmSamples ?? null;
}

/** Minutes until the open episode has seen a calm sample: the next change to its parent is the resolution. */
async function untilCalming(h: Harness, poller: Poller): Promise<void> {
  for (let i = 0; i < 10; i++) {
    await rig.minutes(1, poller);
    if (((await calmSamples(h)) ?? 0) >= 1) return;
  }
  throw new Error("the attack did not calm down");
}

for (const [name, engine] of [
  ["SQLite", "sqlite"],
  ["PostgreSQL", "postgres"],
] as const) {
  describe(`a resolution Slack refused, on ${name}`, () => {
    it.skipIf(engine === "postgres" && !reachable)(
      "is shown at the next evaluation once Slack takes updates again: the parent says it is over, without buttons, and the thread says Resolved",
      async () => {
        const { sim, h, poller, ts } = await alertedZone(engine);
        sim.calm();
        await untilCalming(h, poller);
        // While it calms down the parent is still redrawn (its chart takes each new bucket): the resolution's
        // updates are the ones saying it is over.
        const resolution = () => updatesOf(h, ts).filter((c) => String(c.args.text).includes("is over"));
        // Slack answers 429 to every attempt of the resolution's update (the client tries three times).
        h.slack.addFault({
          method: "chat.update",
          retryAfterSec: 0,
          times: 3,
          when: (args) => String(args.text).includes("is over"),
        });
        for (let i = 0; i < 10 && (await h.store.episodes.listOpen("T0001")).length > 0; i++)
          await rig.minutes(1, poller);
        expect(await h.store.episodes.listOpen("T0001")).toEqual([]);
        expect(resolution()).toHaveLength(3);
        expect(replies(h, ts).some((r) => text(r).includes("Resolved"))).toBe(false);

        // Slack is healthy again: the next evaluation brings the parent up to date, once.
        await rig.minutes(1, poller);
        const latest = updatesOf(h, ts).at(-1);
        expect(resolution()).toHaveLength(4);
        expect(text(latest)).toMatch(/is over[\s\S]*Resolved .* after \d+ min/);
        expect(findButtons(latest?.args.blocks).map((b) => b.text)).toEqual(["Timeline"]);
        expect(replies(h, ts).filter((r) => text(r).includes("Resolved after"))).toHaveLength(1);
        const shown = updatesOf(h, ts).length;
        await rig.minutes(3, poller);
        expect(updatesOf(h, ts).length).toBe(shown);
        expect(replies(h, ts).filter((r) => text(r).includes("Resolved after"))).toHaveLength(1);
      },
    );
  });
}

describe("a muted alert", () => {
  it("offers Unmute instead of Mute 1h, and Unmute gives Mute 1h back", async () => {
    const { h, parent, ts } = await alertedZone();
    await clickOn(h, parent, "Mute 1h", "U0001", ts);
    const muted = await h.slack.waitForCall(
      "chat.update",
      (c) => c.args.ts === ts && text(c).includes("muted until"),
    );
    const labels = findButtons(muted.args.blocks).map((b) => b.text);
    expect(labels).toContain("Unmute");
    expect(labels).not.toContain("Mute 1h");

    await clickOn(h, muted, "Unmute", "U0001", ts);
    await h.slack.waitForCall(
      "chat.postMessage",
      (c) => c.args.thread_ts === ts && text(c).includes("unmuted"),
    );
    const after = updatesOf(h, ts).at(-1);
    expect(text(after)).not.toContain("muted until");
    expect(findButtons(after?.args.blocks).map((b) => b.text)).toContain("Mute 1h");
    const [watch] = await h.store.watches.list("T0001", CHANNEL);
    expect(watch?.mutedUntil).toBeNull();
  });

  /** The alert muted with its Mute 1h button, then the attack calms until the episode resolves. */
  async function resolvedWhileMuted() {
    const a = await alertedZone();
    const { sim, h, poller, parent, ts } = a;
    await clickOn(h, parent, "Mute 1h", "U0001", ts);
    await h.slack.waitForCall("chat.update", (c) => c.args.ts === ts && text(c).includes("muted until"));
    sim.calm();
    for (let i = 0; i < 15 && (await h.store.episodes.listOpen("T0001")).length > 0; i++)
      await rig.minutes(1, poller);
    expect(await h.store.episodes.listOpen("T0001")).toEqual([]);
    return a;
  }
  const resolvedReplies = (h: Harness, ts: string) =>
    replies(h, ts).filter((r) => text(r).includes("Resolved after"));

  it("that resolves during the mute stops saying Firing at once, quietly, and its thread is told when the mute is lifted", async () => {
    const { h, poller, ts } = await resolvedWhileMuted();
    // The parent says it is over (no Firing for the rest of the hour), and nothing is posted while muted.
    const quiet = updatesOf(h, ts).at(-1);
    expect(text(quiet)).toMatch(/is over[\s\S]*Resolved .* after \d+ min/);
    expect(text(quiet)).not.toContain("Firing since");
    expect(resolvedReplies(h, ts)).toHaveLength(0);
    const quietUpdates = updatesOf(h, ts).length;
    await rig.minutes(3, poller);
    expect(updatesOf(h, ts).length).toBe(quietUpdates);

    const [watch] = await h.store.watches.list("T0001", CHANNEL);
    expect((await answerTo(h, `watch mute ${watch?.id} off`, "U0001")).text).toContain("no longer muted");
    await rig.minutes(1, poller);
    const latest = updatesOf(h, ts).at(-1);
    expect(text(latest)).toMatch(/is over[\s\S]*Resolved .* after \d+ min/);
    expect(text(latest)).not.toContain("muted until");
    expect(findButtons(latest?.args.blocks).map((b) => b.text)).toEqual(["Timeline"]);
    expect(resolvedReplies(h, ts)).toHaveLength(1);
    await rig.minutes(3, poller);
    expect(resolvedReplies(h, ts)).toHaveLength(1);
  });

  it("that resolves during the mute gets its Resolved reply when the Unmute button lifts the mute", async () => {
    const { h, poller, ts } = await resolvedWhileMuted();
    const withUnmute = [...updatesOf(h, ts)]
      .reverse()
      .find((c) => findButtons(c.args.blocks).some((b) => b.text === "Unmute"));
    await clickOn(h, withUnmute, "Unmute", "U0001", ts);
    await h.slack.waitForCall(
      "chat.postMessage",
      (c) => c.args.thread_ts === ts && text(c).includes("unmuted"),
    );
    await rig.minutes(1, poller);
    expect(text(updatesOf(h, ts).at(-1))).toMatch(/is over/);
    expect(resolvedReplies(h, ts)).toHaveLength(1);
    await rig.minutes(3, poller);
    expect(resolvedReplies(h, ts)).toHaveLength(1);
  });
});

describe("a stuck-deploying app", () => {
  it("is posted once and not sent again while nothing changes; its since says the watch could not see further back", async () => {
    rig.now = T0;
    const { sim, h, poller } = await setup("sqlite", { WATCH_STUCK_DEPLOYING_MS: "120000" });
    const apps = await h.deps.edge.forKey(TEST_EDGE_KEY).listApps({ limit: 1000 });
    const app = apps.items.find((a) => a.status === "active");
    if (!app) throw new Error("the simulator has no active app");
    // Deploying since long before the watch was created.
    sim.stageAppStatus(app.id, [{ at: T0 - 60 * MIN, status: "progressing" }]);
    await answerTo(h, "watch apps", "U0001");
    await poller.tick();
    const ofApp = () => parents(h).filter((c) => text(c).includes(app.name));
    await rig.minutes(4, poller, () => ofApp().length > 0);
    expect(ofApp()).toHaveLength(1);
    const parent = ofApp()[0];
    expect(text(parent)).toContain(`${app.name} is stuck deploying`);
    expect(text(parent)).toContain("at least since");
    expect(text(parent)).toContain("it was already when this watch started");
    const ts = (await h.store.episodes.listOpen("T0001")).find((e) => e.subject === app.id)?.messageTs ?? "";
    expect(ts).not.toBe("");
    await rig.minutes(6, poller);
    expect(updatesOf(h, ts)).toEqual([]);
    expect(ofApp()).toHaveLength(1);
  });
});

describe("removing a watch with an open alert", () => {
  it("marks the parent as no longer watched, without buttons, and tells the channel", async () => {
    const { h, poller, ts } = await alertedZone();
    const [watch] = await h.store.watches.list("T0001", CHANNEL);
    const answer = await answerTo(h, `watch remove ${watch?.id}`, "U0001");
    expect(answer.text).toContain("Removed");
    const marked = await h.slack.waitForCall(
      "chat.update",
      (c) => c.args.ts === ts && text(c).includes("no longer watched"),
    );
    expect(text(marked)).toContain("No longer tracked: <@U0001> removed its watch");
    expect(findButtons(marked.args.blocks)).toEqual([]);
    const notice = parents(h).find((c) => text(c).includes("removed the watch"));
    expect(text(notice)).toContain("its open alert is no longer tracked");
    // Nothing more arrives about it.
    const calls = h.slack.callsTo("chat.update").length + h.slack.callsTo("chat.postMessage").length;
    await rig.minutes(3, poller);
    expect(h.slack.callsTo("chat.update").length + h.slack.callsTo("chat.postMessage").length).toBe(calls);
  });
});
