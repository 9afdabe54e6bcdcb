/**
 * Alerts end to end, on one controlled clock shared by the bot, its store and the Edge API simulator:
 * `/edge watch …` through the real receiver, the poller's evaluations against the simulator's fault plan
 * (sim.stageAttack / stageAppStatus / calm), and the messages the fake Slack Web API received.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { accessEntryOf } from "../../src/services/access-entries.js";
import { setEntryState } from "../../src/services/access-lists.js";
import { runSimCommand } from "../../tools/console/sim-commands.js";
import { SIM_IDS, type Simulator } from "../../tools/simulator/index.js";
import type { SlackCall } from "../support/fake-slack.js";
import { answerTo, findButtons, type Harness, TEST_EDGE_KEY } from "../support/harness.js";
import { MIN, T0, text, updatesOf, usePollerRig } from "./alert-poller-support.js";

const ZONE = SIM_IDS.zoneEnterprise;

const rig = usePollerRig();
const setup = (o: { env?: Record<string, string>; sim?: Simulator; dataDir?: string } = {}) => rig.start(o);

/** From T0: the bot and its poller, and an app the simulator has active. */
async function setupWithAnActiveApp() {
  rig.now = T0;
  const started = await setup();
  const apps = await started.h.deps.edge.forKey(TEST_EDGE_KEY).listApps({ limit: 1000 });
  const app = apps.items.find((a) => a.status === "active");
  if (!app) throw new Error("the simulator has no active app");
  return { ...started, app };
}

const inChannel = (h: Harness, channel: string) =>
  h.slack.callsTo("chat.postMessage").filter((c) => c.args.channel === channel);
const parents = (h: Harness, channel = "C0001") => inChannel(h, channel).filter((c) => !c.args.thread_ts);
const replies = (h: Harness, ts: string) => inChannel(h, "C0001").filter((c) => c.args.thread_ts === ts);

async function tsOf(call: SlackCall | undefined, h: Harness): Promise<string> {
  // The fake answers chat.postMessage with increasing ts; the episode records the one it got.
  const episodes = await h.store.episodes.listOpen("T0001");
  const ts = episodes.find((e) => e.messageTs !== null)?.messageTs;
  expect(call, "a parent was posted").toBeDefined();
  expect(ts).toBeTruthy();
  return ts as string;
}

describe("/edge watch zone: an attack is one parent, updated in place, with its story in the thread", () => {
  it("detects within minutes, updates, resolves with the duration, and a flap within the cool-down stays in the thread", async () => {
    rig.now = T0;
    const { sim, h, poller } = await setup();
    const created = await answerTo(h, `watch zone ${ZONE} sensitivity normal`, "U0001");
    expect(created.text).toContain(`Watching shield zone ${ZONE}`);
    // The first evaluation learns the zone's last hour as its baseline and says nothing.
    await poller.tick();
    expect(parents(h)).toHaveLength(0);

    const attackAt = T0 + 90_000; // 10:02:00
    sim.stageAttack(ZONE, { startsAt: attackAt, rampMinutes: 1, durationMinutes: 60, peakPerMinute: 800 });
    await rig.minutes(10, [poller], () => parents(h).length > 0);
    const first = parents(h)[0];
    expect(text(first)).toContain(`Attack on shield zone ${ZONE}`);
    const detectedAfter = rig.now - attackAt;
    expect(detectedAfter).toBeGreaterThan(0);
    // Two-minute buckets are read once they have ended: detected within 2–5 minutes of the start.
    expect(detectedAfter).toBeLessThanOrEqual(5 * MIN);
    const buttons = findButtons(first?.args.blocks).map((b) => b.text);
    expect(buttons).toEqual(expect.arrayContaining(["Incident overview", "Mute 1h", "Acknowledge"]));
    expect(buttons.some((b) => b.startsWith("Block "))).toBe(true);
    expect(buttons.some((b) => b.startsWith("DDoS "))).toBe(true);
    const ts = await tsOf(first, h);

    // Still under attack: the same parent is updated with the latest numbers; no second parent.
    await rig.minutes(4, [poller]);
    expect(parents(h)).toHaveLength(1);
    expect(updatesOf(h, ts).length).toBeGreaterThanOrEqual(1);
    expect(text(updatesOf(h, ts).at(-1))).toMatch(/Firing since/);

    // It calms down: resolved after enough quiet samples, the parent says for how long.
    sim.calm();
    const calmAt = rig.now;
    await rig.minutes(15, [poller], () => replies(h, ts).some((r) => text(r).includes("Resolved")));
    const resolvedReply = replies(h, ts).find((r) => text(r).includes("Resolved"));
    expect(resolvedReply, "a Resolved reply in the thread").toBeDefined();
    expect(text(updatesOf(h, ts).at(-1))).toMatch(/is over[\s\S]*Resolved .* after \d+ min/);
    expect(findButtons(updatesOf(h, ts).at(-1)?.args.blocks).map((b) => b.text)).toEqual(["Timeline"]);
    expect(rig.now - calmAt).toBeLessThanOrEqual(10 * MIN);
    expect(await h.store.episodes.listOpen("T0001")).toEqual([]);

    // A second attack within the cool-down (10 min): the same parent fires again, in the same thread.
    sim.stageAttack(ZONE, {
      startsAt: Math.ceil(rig.now / MIN) * MIN,
      rampMinutes: 0,
      durationMinutes: 60,
      peakPerMinute: 900,
    });
    await rig.minutes(8, [poller], () => replies(h, ts).some((r) => text(r).includes("Firing again")));
    expect(replies(h, ts).some((r) => text(r).includes("Firing again"))).toBe(true);
    expect(parents(h)).toHaveLength(1);
    expect(text(updatesOf(h, ts).at(-1))).toMatch(/fired again 1× within the cool-down/);
    const episodes = await h.store.episodes.listOpen("T0001");
    expect(episodes).toHaveLength(1);
    expect(episodes[0]?.seq).toBe(1);
    expect(h.slack.violations).toEqual([]);
  });
});

describe("the parent's buttons", () => {
  /** A zone watch in C0001, an attack staged on the zone, and the alert it posted. */
  async function alertedZone() {
    rig.now = T0;
    const { sim, h, poller } = await setup();
    await answerTo(h, `watch zone ${ZONE}`, "U0001");
    await poller.tick();
    sim.stageAttack(ZONE, { startsAt: T0 + 90_000, rampMinutes: 0, durationMinutes: 60, peakPerMinute: 800 });
    await rig.minutes(8, [poller], () => parents(h).length > 0);
    const parent = parents(h)[0];
    return { h, poller, parent, ts: await tsOf(parent, h) };
  }

  it("Acknowledge survives the next update; a mitigation answers in the alert's thread, leaving the alert as it is", async () => {
    const { h, poller, parent, ts } = await alertedZone();
    const buttons = findButtons(parent?.args.blocks);

    const ack = buttons.find((b) => b.text === "Acknowledge")!;
    expect((await h.click(ack, { userId: "U0002", messageTs: ts })).status).toBe(200);
    await h.slack.waitForCall("chat.update", (c) => c.args.ts === ts && text(c).includes("acknowledged by"));
    await rig.minutes(1, [poller]);
    const latest = updatesOf(h, ts).at(-1);
    expect(text(latest)).toContain("acknowledged by <@U0002>");
    expect(findButtons(latest?.args.blocks).map((b) => b.text)).not.toContain("Acknowledge");

    const block = buttons.find((b) => b.text.startsWith("Block "))!;
    expect(block.action_id).toBe("edge.change.confirm.alert_block");
    const click = await h.click(block, { userId: "U0001", messageTs: ts });
    expect(click.status).toBe(200);
    const inThread = await h.slack.waitForCall(
      "chat.postMessage",
      (c) => c.args.thread_ts === ts && /block|approv/i.test(text(c) + String(c.args.text)),
    );
    expect(inThread.args.channel).toBe("C0001");
    // The alert itself was not replaced through the click's response_url (once the click's work is done).
    await h.settled();
    expect(h.slack.responsesTo(click.responseId).filter((r) => r.body.replace_original === true)).toEqual([]);

    // The same button pressed again: that button's request, answered privately.
    const again = await h.click(block, { userId: "U0002", messageTs: ts });
    expect(String((await h.slack.waitForResponse(again.responseId)).body.text)).toContain(
      "This button was already used",
    );
  });

  it("a move the zone already has is said as in force, not offered: the top IP blocked and DDoS raised to High since it fired", async () => {
    const { h, poller, parent, ts } = await alertedZone();
    const labels = findButtons(parent?.args.blocks).map((b) => b.text);
    const blockLabel = labels.find((l) => l.startsWith("Block "));
    expect(blockLabel).toBeDefined();
    expect(labels).toContain("DDoS high for 30 min");
    const ip = blockLabel!.slice("Block ".length);

    // Since the alert was posted: the IP went into edgeops' block list (another request, another replica),
    // and someone raised DDoS to High in the dashboard.
    await setEntryState(h.deps.edge.forKey(TEST_EDGE_KEY), ZONE, accessEntryOf(ip)!, "block");
    runSimCommand(h.sim, `dashboard ${ZONE} ddos high`);

    const before = updatesOf(h, ts).length;
    await rig.minutes(5, [poller], () => updatesOf(h, ts).length > before);
    const latest = updatesOf(h, ts).at(-1);
    expect(updatesOf(h, ts).length).toBeGreaterThan(before);
    const now = findButtons(latest?.args.blocks).map((b) => b.text);
    expect(now).not.toContain(blockLabel);
    expect(now).not.toContain("DDoS high for 30 min");
    expect(text(latest)).toContain(
      `Already in force: \`${ip}\` is blocked by edgeops' access list · DDoS sensitivity is High`,
    );
    // Still firing, still acknowledgeable.
    expect(now).toContain("Acknowledge");
  });

  it("a mitigation someone already asked for by command: the presser is pointed at it privately, the thread stays quiet", async () => {
    const { h, parent, ts } = await alertedZone();
    const block = findButtons(parent?.args.blocks).find((b) => b.text.startsWith("Block "))!;
    const p = JSON.parse(block.value!).p as { shieldZoneId: number; value: string };

    const typed = await answerTo(h, `block ${p.shieldZoneId} ${p.value}`, "U0002");
    const confirm = typed.buttons.find((b) => b.text === "Confirm")!;
    await h.click(confirm, { userId: "U0002" });
    await h.slack.waitForCall("chat.postMessage", (c) => text(c).includes("Approval needed"));

    const threadBefore = replies(h, ts).length;
    const click = await h.click(block, { userId: "U0001", messageTs: ts });
    const pointer = await h.slack.waitForResponse(click.responseId);
    expect(pointer.body.response_type).toBe("ephemeral");
    expect(pointer.body.replace_original).toBe(false);
    expect(String(pointer.body.text)).toContain("<@U0002> already asked for");
    await h.settled();
    expect(replies(h, ts)).toHaveLength(threadBefore);
  });
});

describe("/edge watch apps", () => {
  it("a failing app is one alert with a Restart button; back to active resolves it with the duration", async () => {
    const { sim, h, poller, app } = await setupWithAnActiveApp();
    expect((await answerTo(h, "watch apps", "U0001")).text).toContain("Watching apps");
    await poller.tick();
    expect(parents(h)).toHaveLength(0);

    sim.stageAppStatus(app.id, [
      { at: T0 + 2 * MIN, status: "failing" },
      { at: T0 + 4 * MIN, status: "suspended" },
      { at: T0 + 9 * MIN, status: "active" },
    ]);
    await rig.minutes(3, [poller]);
    expect(parents(h)).toHaveLength(1);
    const parent = parents(h)[0];
    expect(text(parent)).toContain(`${app.name} is failing`);
    expect(findButtons(parent?.args.blocks).map((b) => b.text)).toEqual([
      "Restart app",
      "Mute 1h",
      "Acknowledge",
    ]);
    const ts = await tsOf(parent, h);
    // Failing → suspended: one short reply in the thread, still one parent.
    await rig.minutes(2, [poller]);
    expect(replies(h, ts).map(text).join("\n")).toMatch(/now \*?Suspended/i);
    await rig.minutes(5, [poller]);
    expect(parents(h)).toHaveLength(1);
    expect(replies(h, ts).some((r) => /Resolved after 7 min/.test(text(r)))).toBe(true);
    expect(text(updatesOf(h, ts).at(-1))).toContain(`${app.name} is back`);
  });

  it("a channel that refuses posts marks the watch failing, tells its creator once, and the open alert is posted once it can", async () => {
    const { sim, h, poller, app } = await setupWithAnActiveApp();
    await answerTo(h, "watch apps failing", "U0002", "C0002");
    await poller.tick();
    h.slack.addFault({ method: "chat.postMessage", error: "not_in_channel", channel: "C0002", times: 2 });
    sim.stageAppStatus(app.id, [{ at: T0 + MIN, status: "failing" }]);
    // (The fake records refused calls too: these count attempts.)
    await rig.minutes(1, [poller]);
    expect(parents(h, "C0002")).toHaveLength(1);
    const [watch] = await h.store.watches.list("T0001", "C0002");
    expect(watch).toMatchObject({ failing: true });
    expect(h.slack.callsTo("conversations.open").map((c) => c.args.users)).toEqual(["U0002"]);
    const dm = h.slack.callsTo("chat.postMessage").find((c) => c.args.channel !== "C0002");
    expect(text(dm)).toContain("could not be posted");
    // Still refused a minute later: tried again, but no second direct message.
    await rig.minutes(1, [poller]);
    expect(parents(h, "C0002")).toHaveLength(2);
    expect(h.slack.callsTo("conversations.open")).toHaveLength(1);
    // The bot is invited: the open alert arrives, once, and the watch is healthy again.
    await rig.minutes(1, [poller]);
    expect(parents(h, "C0002")).toHaveLength(3);
    expect(text(parents(h, "C0002")[2])).toContain("is failing");
    expect((await h.store.watches.get(watch!.id))?.failing).toBe(false);
    await rig.minutes(2, [poller]);
    expect(parents(h, "C0002")).toHaveLength(3);
  });

  it("muted: tracked but not posted; the alert still open when the mute ends is posted then", async () => {
    const { sim, h, poller, app } = await setupWithAnActiveApp();
    await answerTo(h, "watch apps", "U0001");
    const [watch] = await h.store.watches.list("T0001", "C0001");
    expect((await answerTo(h, `watch mute ${watch!.id} 5m`, "U0001")).text).toContain("muted until");
    expect((await answerTo(h, `watch mute ${watch!.id} 5m`, "U0002")).text).toContain(
      `Only the person who created watch ${watch!.id} or a workspace admin`,
    );
    await poller.tick();
    sim.stageAppStatus(app.id, [{ at: T0 + MIN, status: "failing" }]);
    await rig.minutes(3, [poller]);
    expect(parents(h)).toHaveLength(0);
    expect(await h.store.episodes.listOpen("T0001")).toHaveLength(1);
    await rig.minutes(3, [poller]);
    expect(parents(h)).toHaveLength(1);
    expect(text(parents(h)[0])).toContain("is failing");
  });
});

describe("restarts and replicas", () => {
  it("a restart neither repeats nor forgets an open alert", async () => {
    rig.now = T0;
    const dataDir = mkdtempSync(join(tmpdir(), "edgeops-alerts-"));
    rig.defer(async () => rmSync(dataDir, { recursive: true, force: true }));
    const first = await setup({ dataDir });
    const { sim } = first;
    await answerTo(first.h, `watch zone ${ZONE}`, "U0001");
    await first.poller.tick();
    sim.stageAttack(ZONE, { startsAt: T0 + 90_000, rampMinutes: 0, durationMinutes: 60, peakPerMinute: 800 });
    await rig.minutes(8, [first.poller], () => parents(first.h).length > 0);
    expect(parents(first.h)).toHaveLength(1);
    const ts = await tsOf(parents(first.h)[0], first.h);
    await first.poller.stop();
    await first.h.close();

    // The same data, a new process: it updates the same parent, and resolves it in the same thread.
    const second = await setup({ dataDir, sim });
    await rig.minutes(3, [second.poller]);
    expect(parents(second.h)).toHaveLength(0);
    expect(updatesOf(second.h, ts).length).toBeGreaterThanOrEqual(1);
    sim.calm();
    await rig.minutes(15, [second.poller], () => replies(second.h, ts).length > 0);
    expect(replies(second.h, ts).map(text).join("\n")).toContain("Resolved after");
    expect(parents(second.h)).toHaveLength(0);
  });
});
