import { PNG } from "pngjs";
import { beforeEach, describe, expect, it } from "vitest";
import { ACTIONS } from "../../src/slack/ids.js";
import { SIM_IDS } from "../../tools/simulator/index.js";
import { BOB, CAROL } from "../support/change-flow.js";
import { findButtons } from "../support/harness.js";
import { incidentCard as typedIncidentCard } from "../support/incident-card.js";
import { useHarness } from "../support/use-harness.js";

/**
 * The incident card's chart through the real receiver: a signed `/edge incident`, the fake Slack's files API and
 * the simulator's attack on shield zone 18401.
 */

const h = useHarness();
const ATTACKED = SIM_IDS.zoneUnderAttack;

beforeEach(() => {
  h.sim.clearRequests();
  h.slack.setRefuseSlackFiles(false);
});

type Block = { type: string; slack_file?: { id: string }; alt_text?: string; text?: { text?: string } };

async function incidentCard(args: string, channelId = "C0001") {
  const { card, text } = await typedIncidentCard(h, args, { channelId });
  const blocks = card.body.blocks as Block[];
  return { card, blocks, images: blocks.filter((b) => b.type === "image"), text };
}

/** The traffic section's text: with a sparkline each row holds block characters. */
const SPARK = /[▁▂▃▄▅▆▇█]/;
const trafficText = (blocks: Block[]) =>
  blocks.find((b) => b.type === "section" && b.text?.text?.startsWith("*Traffic and threats*"))?.text?.text ??
  "";

function inkedShare(bytes: Buffer): { width: number; height: number; inked: number } {
  const png = PNG.sync.read(bytes);
  let inked = 0;
  for (let i = 0; i < png.data.length; i += 4)
    if (png.data[i]! < 245 || png.data[i + 1]! < 245 || png.data[i + 2]! < 245) inked++;
  return { width: png.width, height: png.height, inked: inked / (png.width * png.height) };
}

describe("the incident card's chart", () => {
  it("is a PNG uploaded without a channel and shown in an image block whose alt text says what it shows", async () => {
    const { images, blocks } = await incidentCard(`${ATTACKED} 1h`);
    expect(images).toHaveLength(1);
    const fileId = images[0]!.slack_file!.id;
    const upload = h.slack.uploads.get(fileId)!;
    // Completed, but shared in no channel: not a message of its own.
    expect(upload.shared).not.toBeNull();
    expect(upload.shared!.channelId).toBeUndefined();
    expect(h.slack.callsTo("files.completeUploadExternal")[0]!.args.channel_id).toBeUndefined();
    expect(upload.filename).toBe(`incident-zone-${ATTACKED}-1h.png`);
    const png = inkedShare(upload.bytes!);
    expect(png.width).toBeGreaterThan(1440);
    expect(png.height).toBeGreaterThan(520);
    expect(png.inked).toBeGreaterThan(0.01);
    const alt = images[0]!.alt_text!;
    expect(alt).toContain(`shield zone ${ATTACKED} over the last hour`);
    expect(alt).toMatch(
      /Peak: [\d,.]+ per minute \((WAF|DDoS|Rate limits|Bot detection|Blocked|Challenged)\)/,
    );
    expect(upload.altText).toBe(alt);
    // The picture says it: no sparkline beside the numbers.
    expect(trafficText(blocks)).not.toMatch(SPARK);
    expect(h.slack.violations).toEqual([]);
  }, 40_000);

  it("without files:write the card keeps its text sparklines", async () => {
    h.slack.addFault({ method: "files.getUploadURLExternal", error: "missing_scope", times: 1 });
    const { images, blocks } = await incidentCard(`${ATTACKED} 1h`);
    expect(images).toEqual([]);
    expect(trafficText(blocks)).toMatch(SPARK);
    expect(h.slack.callsTo("files.getUploadURLExternal")).toHaveLength(1);
  }, 40_000);

  it("when the upload fails the card keeps its text sparklines", async () => {
    h.slack.addFault({ method: "files.completeUploadExternal", error: "internal_error", times: 1 });
    const { images, blocks } = await incidentCard(`${ATTACKED} 1h`);
    expect(images).toEqual([]);
    expect(trafficText(blocks)).toMatch(SPARK);
  }, 40_000);

  it("with no traffic to draw nothing is uploaded and the card says why the traffic is missing", async () => {
    h.sim.addFault({ path: `/shield/metrics/overview/${ATTACKED}/detailed`, status: 400 });
    const { images, text } = await incidentCard(`${ATTACKED} 1h`);
    expect(images).toEqual([]);
    expect(text).toContain("Traffic and threats");
    expect(h.slack.callsTo("files.getUploadURLExternal")).toEqual([]);
  }, 40_000);

  it("when Slack refuses the picture the same card goes out without it, with its sparklines", async () => {
    h.slack.setRefuseSlackFiles(true);
    const res = await h.command(`incident ${ATTACKED} 1h`);
    const card = await h.slack.waitForResponse(
      res.responseId,
      (r) => r.body.replace_original === true && !(r.body.blocks as Block[]).some((b) => b.type === "image"),
      20_000,
    );
    const refused = h.slack
      .responsesTo(res.responseId)
      .filter((r) => (r.body.blocks as Block[]).some((b) => b.type === "image"));
    expect(refused).toHaveLength(1);
    expect(trafficText(card.body.blocks as Block[])).toMatch(SPARK);
    expect(findButtons(card.body.blocks).some((b) => b.action_id === ACTIONS.shareInChannel)).toBe(true);
    h.slack.violations.length = 0;
  }, 40_000);

  it("Refresh replaces the picture: a new file on the card, the old one deleted, never two", async () => {
    const first = await incidentCard(`${ATTACKED} 1h`);
    const oldId = first.images[0]!.slack_file!.id;
    const refresh = findButtons(first.card.body.blocks).find((b) => b.action_id === ACTIONS.incidentRefresh)!;
    const click = await h.click(refresh);
    const again = await h.slack.waitForResponse(click.responseId, undefined, 20_000);
    const images = (again.body.blocks as Block[]).filter((b) => b.type === "image");
    expect(again.body.replace_original).toBe(true);
    expect(images).toHaveLength(1);
    expect(images[0]!.slack_file!.id).not.toBe(oldId);
    await h.slack.waitForCall("files.delete");
    expect(h.slack.callsTo("files.delete").map((c) => c.args.file)).toEqual([oldId]);
    expect(h.slack.uploads.get(oldId)!.deleted).toBe(true);
    expect(h.slack.uploads.get(images[0]!.slack_file!.id)!.deleted).toBe(false);
  }, 60_000);

  it("marks where a block asked in this channel took effect and who approved it; another channel's card does not", async () => {
    h.slack.users.set(CAROL, { id: CAROL, name: "carol" });
    // A block asked by Bob in C0001, approved by Carol and applied, as the engine leaves one.
    const params = { shieldZoneId: ATTACKED, type: "ip", value: "203.0.113.7", state: "block" };
    const r = await h.store.changeRequests.create({
      kind: "access_block",
      teamId: "T0001",
      channelId: "C0001",
      requesterId: BOB,
      params,
      observed: "none",
      expiresAt: Date.now() + 3_600_000,
    });
    await h.store.changeRequests.transition(r.id, "pending", "approved", {
      decidedBy: CAROL,
      decidedAt: Date.now(),
      approvedBy: [CAROL],
    });
    await h.store.changeRequests.transition(r.id, "approved", "applied", {});
    await h.store.changeRequests.setTargetOwner(
      "T0001",
      `T0001/shield zone ${ATTACKED}/access ip 203.0.113.7`,
      r.id,
    );
    const here = await incidentCard(`${ATTACKED} 1h`);
    const alt = here.images[0]!.alt_text!;
    expect(alt).toMatch(
      new RegExp(
        `Mitigations took effect: Block IP 203\\.0\\.113\\.7 on shield zone ${ATTACKED} at \\d\\d:\\d\\d UTC \\(approved by carol\\)`,
      ),
    );
    const elsewhere = await incidentCard(`${ATTACKED} 1h`, "C0002");
    expect(elsewhere.images[0]!.alt_text).toContain("No mitigation took effect in this window.");
  }, 60_000);
});
