/**
 * The chart on a zone alert's parent, through the alert poller, the Edge API simulator and the fake Slack Web
 * API on one controlled clock: the picture of the watch's last hour (threats per minute by feature, each
 * feature's alert level), its fallbacks, and its redraws while the alert fires.
 */
import { PNG } from "pngjs";
import { describe, expect, it } from "vitest";
import { alertChart } from "../../src/alerts/chart.js";
import { alertLevel, evaluateZone, type ZoneSample } from "../../src/alerts/detect.js";
import { BUCKET_MS, type ZoneState } from "../../src/alerts/evaluate.js";
import type { EpisodeDetails } from "../../src/alerts/view.js";
import { chartData } from "../../src/charts/incident-chart.js";
import { actedOnCount, METRICS_RESOLUTION } from "../../src/edge/schemas/shield.js";
import { alertChartDigest } from "../../src/slack/alert-chart.js";
import { SIM_IDS } from "../../tools/simulator/index.js";
import type { SlackCall } from "../support/fake-slack.js";
import { answerTo, type Harness, TEST_EDGE_KEY } from "../support/harness.js";
import { BOB, CAROL } from "../support/users.js";
import { clickOn, parents, T0, text, updatesOf, usePollerRig } from "./alert-poller-support.js";

const ZONE = SIM_IDS.zoneEnterprise;
const CHANNEL = "C0001";
const rig = usePollerRig();

type Block = { type: string; slack_file?: { id: string }; alt_text?: string };
const images = (c: SlackCall | { blocks?: unknown } | undefined) =>
  (((c && "args" in c ? c.args.blocks : c?.blocks) ?? []) as Block[]).filter((b) => b.type === "image");

/** A zone watch in C0001 at sensitivity normal, an attack staged on the zone, until its parent is posted. */
async function attacked(before?: (h: Harness) => void) {
  rig.now = T0;
  const s = await rig.start({ budgetOnClock: true });
  await answerTo(s.h, `watch zone ${ZONE}`, "U0001");
  await s.poller.tick();
  before?.(s.h);
  s.sim.stageAttack(ZONE, { startsAt: T0 + 90_000, rampMinutes: 0, durationMinutes: 60, peakPerMinute: 800 });
  await rig.minutes(8, s.poller, () => parents(s.h).length > 0);
  const [episode] = await s.h.store.episodes.listOpen("T0001");
  expect(episode?.messageTs).toBeTruthy();
  return { ...s, parent: parents(s.h)[0], episode: episode!, ts: episode!.messageTs! };
}

async function zoneState(h: Harness): Promise<ZoneState> {
  const [watch] = await h.store.watches.list("T0001", CHANNEL);
  return watch?.state as ZoneState;
}

describe("a zone alert's parent", () => {
  it("shows the chart of its last hour: the alert's numbers, per minute by feature, and the detector's alert level", async () => {
    const { h, parent, episode } = await attacked();
    const shown = images(parent);
    expect(shown).toHaveLength(1);
    const fileId = shown[0]!.slack_file!.id;
    const upload = h.slack.uploads.get(fileId)!;
    // Uploaded without a channel (not a message of its own), a PNG of the chart's size, not blank.
    expect(upload.shared?.channelId).toBeUndefined();
    const png = PNG.sync.read(upload.bytes!);
    expect(png.width).toBeGreaterThan(1440);
    let inked = 0;
    for (let i = 0; i < png.data.length; i += 4) if (png.data[i]! < 245 || png.data[i + 1]! < 245) inked++;
    expect(inked / (png.width * png.height)).toBeGreaterThan(0.01);

    // The picture was drawn from exactly this data: the watch's samples after the evaluation that posted it.
    const state = await zoneState(h);
    const chart = alertChart(ZONE, state, "normal")!;
    const details = episode.details as EpisodeDetails;
    expect(details.chart).toEqual({ digest: alertChartDigest(chart), fileId, altText: shown[0]!.alt_text });

    // Its numbers are the Edge API's: each two-minute bucket's DDoS events, halved.
    const detailed = await h.deps.edge.forKey(TEST_EDGE_KEY).getMetricsOverviewDetailed(ZONE, {
      from: chart.range.metricsFrom,
      to: chart.range.metricsTo,
      resolution: METRICS_RESOLUTION.twoMinutes,
    });
    const ddos = chartData(chart).filter((d) => d.series === "DDoS");
    const apiPoints = detailed.features.ddos.points.filter(
      (p) => p.at >= chart.range.metricsFrom && p.at + BUCKET_MS <= chart.range.metricsTo,
    );
    expect(apiPoints.length).toBeGreaterThan(20);
    for (const p of apiPoints)
      expect(ddos.find((d) => d.at === p.at)?.perMinute, `bucket ${p.at}`).toBe(actedOnCount(p.values) / 2);
    // The last bucket is the parent's DDoS reading.
    const last = ddos.at(-1)!;
    expect(last.at).toBe(state.lastBucketAt);
    expect(text(parent)).toContain(`*DDoS* ${Math.round(last.perMinute).toLocaleString("en-US")}/min`);

    // The DDoS alert level is the detector's: a bucket reaching it is over, one just under is not.
    const level = chart.thresholds.find((t) => t.series === "DDoS")!;
    expect(level.perMinute * 2).toBe(alertLevel(state.samples, "ddos", "normal"));
    const bucket = (count: number): ZoneSample => ({
      at: 0,
      counts: { ddos: count, waf: 0, rateLimit: 0, bot: 0 },
    });
    const over = (count: number) => evaluateZone(state.samples, bucket(count), "normal").readings[0]!.over;
    expect(over(Math.ceil(level.perMinute * 2))).toBe(true);
    expect(over(Math.ceil(level.perMinute * 2) - 1)).toBe(false);
    expect(last.perMinute).toBeGreaterThanOrEqual(level.perMinute);
    expect(shown[0]!.alt_text).toMatch(/Alert threshold: [\d,.]+ per minute \(DDoS alert level\)/);
    expect(shown[0]!.alt_text).toContain("at sensitivity normal");
    expect(h.slack.violations).toEqual([]);
  }, 60_000);

  it("is redrawn while it fires: a new bucket replaces the picture (the old file deleted), an unchanged one uploads nothing", async () => {
    const { h, poller, ts } = await attacked();
    let shownFile = images(parents(h)[0])[0]!.slack_file!.id;
    let sawRedraw = false;
    let sawUnchanged = false;
    for (let i = 0; i < 6; i++) {
      const before = await zoneState(h);
      const uploads = h.slack.callsTo("files.getUploadURLExternal").length;
      await rig.minutes(1, poller);
      const after = await zoneState(h);
      const uploaded = h.slack.callsTo("files.getUploadURLExternal").length - uploads;
      if (after.lastBucketAt === before.lastBucketAt) {
        // Nothing new to draw: no upload, no delete, the parent keeps its file.
        sawUnchanged = true;
        expect(uploaded, `minute ${i}`).toBe(0);
        expect(images(h.slack.messageAt(CHANNEL, ts))[0]!.slack_file!.id).toBe(shownFile);
        continue;
      }
      sawRedraw = true;
      expect(uploaded, `minute ${i}`).toBe(1);
      const latest = updatesOf(h, ts).at(-1);
      const now = images(latest);
      expect(now).toHaveLength(1);
      const newFile = now[0]!.slack_file!.id;
      expect(newFile).not.toBe(shownFile);
      expect(h.slack.uploads.get(shownFile)!.deleted).toBe(true);
      expect(h.slack.uploads.get(newFile)!.deleted).toBe(false);
      shownFile = newFile;
    }
    expect(sawRedraw).toBe(true);
    expect(sawUnchanged).toBe(true);
    // Every file but the one shown was deleted, each once.
    const deleted = h.slack.callsTo("files.delete").map((c) => c.args.file);
    expect(new Set(deleted).size).toBe(deleted.length);
    const live = [...h.slack.uploads.values()].filter((u) => !u.deleted).map((u) => u.id);
    expect(live).toEqual([shownFile]);
  }, 90_000);
});

describe("a zone alert's chart and the mitigations", () => {
  it("marks where a change asked in the watch's channel took effect, with who approved it; one asked elsewhere is not marked", async () => {
    const { h, poller, ts } = await attacked();
    h.slack.users.set(CAROL, { id: CAROL, name: "carol" });
    /** A block asked by Bob in `channelId`, approved by Carol and applied, as the engine leaves one. */
    const applied = async (ip: string, channelId: string) => {
      const params = { shieldZoneId: ZONE, type: "ip", value: ip, state: "block" };
      const r = await h.store.changeRequests.create({
        kind: "access_block",
        teamId: "T0001",
        channelId,
        requesterId: BOB,
        params,
        observed: "none",
        expiresAt: rig.now + 3_600_000,
      });
      await h.store.changeRequests.transition(r.id, "pending", "approved", {
        decidedBy: CAROL,
        decidedAt: rig.now,
        approvedBy: [CAROL],
      });
      await h.store.changeRequests.transition(r.id, "approved", "applied", {});
      await h.store.changeRequests.setTargetOwner("T0001", `T0001/shield zone ${ZONE}/access ip ${ip}`, r.id);
    };
    await applied("203.0.113.7", CHANNEL);
    await applied("203.0.113.8", "C0002");
    const before = updatesOf(h, ts).length;
    await rig.minutes(1, poller);
    // The mark alone changes the chart: redrawn at the next check, bucket or not.
    const latest = updatesOf(h, ts).slice(before).at(-1);
    const alt = images(latest)[0]?.alt_text ?? "";
    expect(alt).toMatch(
      new RegExp(
        `Mitigations took effect: Block IP 203\\.0\\.113\\.7 on shield zone ${ZONE} at \\d\\d:\\d\\d UTC \\(approved by carol\\)\\.`,
      ),
    );
    expect(alt).not.toContain("203.0.113.8");
  }, 60_000);
});

describe("a zone alert's parent without its picture", () => {
  const expectTextParent = (parent: SlackCall | undefined) => {
    expect(images(parent)).toEqual([]);
    expect(text(parent)).toMatch(/\*DDoS\* [\d,]+\/min/);
  };

  it("without files:write: the parent as it was, its readings in text", async () => {
    const { h, parent } = await attacked((h) =>
      h.slack.addFault({ method: "files.getUploadURLExternal", error: "missing_scope", times: 1000 }),
    );
    expect(h.slack.callsTo("files.getUploadURLExternal").length).toBeGreaterThan(0);
    expectTextParent(parent);
  }, 60_000);

  it("when the upload fails: the parent as it was", async () => {
    const { h, parent } = await attacked((h) =>
      h.slack.addFault({ method: "files.completeUploadExternal", error: "internal_error", times: 1000 }),
    );
    expect(h.slack.callsTo("files.completeUploadExternal").length).toBeGreaterThan(0);
    expectTextParent(parent);
  }, 60_000);

  it("when Slack refuses the picture: the same parent goes out without it, posted once", async () => {
    const { h, ts } = await attacked((h) => h.slack.setRefuseSlackFiles(true));
    const posted = parents(h);
    // The refused post (with the image), then the one Slack took (without).
    expect(posted.map((c) => images(c).length)).toEqual([1, 0]);
    const shown = h.slack.messageAt(CHANNEL, ts);
    expect(images(shown)).toEqual([]);
    expect(blocksTextOf(shown)).toMatch(/DDoS/);
    expect((await h.store.episodes.listOpen("T0001"))[0]?.messageTs).toBe(ts);
    h.slack.violations.length = 0;
  }, 60_000);
});

describe("a zone alert's buttons", () => {
  it("render the parent with its picture, and without it when Slack refuses the picture", async () => {
    const { h, parent, ts } = await attacked();
    const fileId = images(parent)[0]!.slack_file!.id;
    await clickOn(h, parent, "Acknowledge", "U0001", ts);
    const acked = await h.slack.waitForMessage(CHANNEL, ts, (m) =>
      blocksTextOf(m).includes("acknowledged by"),
    );
    expect(images(acked).map((b) => b.slack_file?.id)).toEqual([fileId]);

    h.slack.setRefuseSlackFiles(true);
    await clickOn(h, parent, "Mute 1h", "U0001", ts);
    const muted = await h.slack.waitForMessage(
      CHANNEL,
      ts,
      (m) => blocksTextOf(m).includes("muted until"),
      20_000,
    );
    expect(images(muted)).toEqual([]);
    expect(blocksTextOf(muted)).toMatch(/DDoS/);
    h.slack.violations.length = 0;
  }, 60_000);
});

const blocksTextOf = (m: { blocks?: unknown } | undefined) => JSON.stringify(m?.blocks ?? []);
