import { PNG } from "pngjs";
import { describe, expect, it } from "vitest";
import { ACTIONS } from "../../../src/slack/ids.js";
import { SIM_IDS } from "../../../tools/simulator/index.js";
import { checkBlockKitLimits } from "../../support/block-kit-limits.js";
import { onPostgres, postgresTests } from "../../support/both-stores.js";
import { askAndApprove, BOB, CAROL } from "../../support/change-flow.js";
import { steppedClock } from "../../support/clock.js";
import type { Harness, HarnessOptions } from "../../support/harness.js";
import { answerTo, blocksText, findButtons, startHarness } from "../../support/harness.js";
import { ALICE } from "../../support/users.js";
import { openWafAlert, zoneWatch } from "../../support/zone-alert.js";

/**
 * /edge timeline through the receiver (signed requests), the fake Slack and the simulator:
 * a block asked, approved and applied through the real flow and an alert acknowledged with its button come
 * back as one story; a private channel's request only for its members; Next pages within Block Kit's limits;
 * Export posts a Markdown postmortem draft through Slack's files upload. On SQLite and PostgreSQL.
 */

const ZONE = SIM_IDS.customerAccessList.zoneId;

/** Bob's block of 203.0.113.7, approved by Carol and in effect. */
async function blockApplied(h: Harness) {
  await askAndApprove(h, `block ${ZONE} 203.0.113.7 for 30m`, "Block IP 203.0.113.7");
}

/** The answer that replaces the placeholder of the command or click `responseId`. */
const replacement = (h: Harness, responseId: string) =>
  h.slack.waitForResponse(responseId, (r) => r.body.replace_original === true, 10_000);

/** An access-block request on ZONE, written as the engine writes one: the row and its audit entry. */
async function requestWritten(
  h: Harness,
  {
    channelId,
    requesterId,
    type,
    value,
  }: { channelId: string; requesterId: string; type: string; value: string },
) {
  const params = { shieldZoneId: ZONE, type, value, state: "block" };
  const r = await h.store.changeRequests.create({
    kind: "access_block",
    teamId: "T0001",
    channelId,
    requesterId,
    params,
    expiresAt: Date.now() + 3_600_000,
  });
  await h.store.audit.append({
    teamId: "T0001",
    userId: requesterId,
    action: "access_block.request",
    target: `shield zone ${ZONE} / ${type} ${value}`,
    outcome: "pending",
    details: { requestId: r.id, channelId, params },
  });
}

async function alertAcknowledged(h: Harness) {
  const watch = await zoneWatch(h.store, {
    teamId: "T0001",
    channelId: "C0001",
    createdBy: ALICE,
    zoneId: ZONE,
    nextPollAt: Date.now() + 3_600_000,
  });
  // Read when more IP groups were logged than the alert reads: its busiest IP is of the groups read.
  const episode = await openWafAlert(h.store, watch, {
    label: null,
    topOffender: "203.0.113.7",
    topOffenderOfGroups: 2_000,
  });
  await h.store.episodes.setMessage(episode.id, "1700000001.000100");
  await h.click(
    { action_id: ACTIONS.alertAcknowledge, value: episode.id },
    { userId: CAROL, messageTs: "1700000001.000100" },
  );
  await h.slack.waitForCall("chat.postMessage", (c) => blocksText(c.args.blocks).includes("acknowledged"));
}

/** A request asked in a private channel BOB is not in (written as the engine writes one). */
async function privateRequest(h: Harness) {
  await requestWritten(h, { channelId: "GSECRET", requesterId: CAROL, type: "country", value: "CN" });
}

async function timelineStory(options: HarnessOptions) {
  const h = await startHarness(options);
  try {
    h.slack.memberships.set(BOB, ["C0001"]);
    await alertAcknowledged(h);
    await blockApplied(h);
    await privateRequest(h);

    const res = await h.command(`timeline ${ZONE}`, { userId: BOB, channelId: "C0001" });
    // The placeholder first, then the story replaces it.
    const placeholder = await h.slack.waitForResponse(res.responseId);
    expect(blocksText(placeholder.body.blocks)).toContain(`Gathering the timeline of zone ${ZONE}`);
    const answer = await replacement(h, res.responseId);
    const text = blocksText(answer.body.blocks);
    expect(answer.body.response_type).toBe("ephemeral");
    expect(text).toContain(`Timeline of shield zone ${ZONE}`);
    expect(text).toContain("; busiest IP 203.0.113.7 (top of the first 2,000 groups)");
    const order = [
      "Alert opened in <#C0001>: WAF 420/min (usually 12)",
      `<@${CAROL}> acknowledged the alert`,
      `<@${BOB}> asked for: Block IP 203.0.113.7 on shield zone ${ZONE}`,
      `<@${CAROL}> approved: Block IP 203.0.113.7`,
      `applied: Block IP 203.0.113.7`,
    ].map((s) => text.indexOf(s));
    expect(
      order.every((i) => i >= 0),
      text,
    ).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    expect(text).toContain("*Still in force:*");
    expect(text).toMatch(/Block IP 203\.0\.113\.7 on shield zone \d+ \(<@U0002> in <#C0001>\) until <!date/);
    // The private channel's request is not shown to BOB, only counted.
    expect(text).not.toContain("country CN");
    expect(text).toContain("1 entry from other channels is left out");
    expect(text).toMatch(/\*Peaks\*|\*Peaks:\*/);
    expect(checkBlockKitLimits("message", answer.body)).toEqual([]);

    // An admin sees every channel's entries.
    const admin = await h.command(`timeline ${ZONE} 1h`, { userId: ALICE, channelId: "C0001" });
    const adminAnswer = await replacement(h, admin.responseId);
    expect(blocksText(adminAnswer.body.blocks)).toContain(`<@${CAROL}> asked for: Block country CN`);

    // Export: a Markdown file in the channel, through files.getUploadURLExternal and files.completeUploadExternal.
    const exportButton = findButtons(answer.body.blocks).find((b) => b.action_id === ACTIONS.timelineExport);
    expect(exportButton).toBeDefined();
    const clicked = await h.click(exportButton!, { userId: BOB, channelId: "C0001" });
    const told = await h.slack.waitForResponse(clicked.responseId, () => true, 10_000);
    expect(blocksText(told.body.blocks)).toContain("Posted the postmortem draft");
    // The draft and, beside it in the same channel, its chart (a PNG the draft links by file name).
    expect(h.slack.callsTo("files.getUploadURLExternal")).toHaveLength(2);
    expect(h.slack.callsTo("files.completeUploadExternal")).toHaveLength(2);
    const file = [...h.slack.uploads.values()].find((u) => u.filename.endsWith(".md"));
    expect(file?.shared?.channelId).toBe("C0001");
    expect(file?.filename).toMatch(new RegExp(`^postmortem-zone-${ZONE}-\\d{4}-\\d\\d-\\d\\d\\.md$`));
    const md = file?.body ?? "";
    const png = [...h.slack.uploads.values()].find((u) => u.filename.endsWith(".png"));
    expect(png?.shared?.channelId).toBe("C0001");
    expect(PNG.sync.read(png!.bytes!).width).toBeGreaterThan(1440);
    expect(md).toContain(`](${png!.filename})`);
    expect(md).toContain(`![Chart of threats per minute by feature on shield zone ${ZONE}`);
    expect(png!.altText).toContain("Mitigations took effect: Block IP 203.0.113.7");
    expect(png!.altText).toContain("(approved by carol)");
    // The chart's numbers: one row per hour slot of the default 24 h window.
    expect(md).toMatch(
      /\| Slot \(1 h, from\) \| Blocked \| Challenged \| WAF \| DDoS \| Rate limits \| Bot detection \|/,
    );
    for (const heading of [
      "# Postmortem draft",
      "## Summary",
      "## Impact",
      "## Timeline",
      "## Mitigations still in force",
      "## Open questions",
    ])
      expect(md).toContain(heading);
    expect(md).toContain(`@bob asked for: Block IP 203.0.113.7 on shield zone ${ZONE} in #incident-42`);
    expect(md).toContain("; busiest IP 203.0.113.7 (top of the first 2,000 groups)");
    expect(md).toContain("1 entry from other channels is left out of this channel's draft.");
    expect(md).toContain("temporary, undone at");
    // Posted for the whole channel: the private channel's request stays out whoever pressed Export.
    expect(md).not.toContain("country CN");
    expect(h.slack.violations).toEqual([]);
  } finally {
    await h.close();
  }
}

if (!postgresTests) console.warn("*** PostgreSQL unreachable: the PostgreSQL timeline test is SKIPPED ***");

describe("/edge timeline: the story of an incident", () => {
  it("on SQLite", () => timelineStory({}), 60_000);
  it.runIf(postgresTests)("on PostgreSQL", () => onPostgres(timelineStory), 60_000);

  it("keeps a removed watch's alert in the story: opened, acknowledged, closed at the removal (not resolved)", async () => {
    const h = await startHarness({});
    try {
      h.slack.memberships.set(BOB, ["C0001"]);
      await alertAcknowledged(h);
      const [watch] = await h.store.watches.list("T0001");
      const removed = await h.command(`watch remove ${watch?.id}`, { userId: ALICE, channelId: "C0001" });
      expect(blocksText((await h.slack.waitForResponse(removed.responseId)).body.blocks)).toContain(
        "Removed",
      );
      expect(await h.store.watches.list("T0001")).toEqual([]);

      const res = await h.command(`timeline ${ZONE}`, { userId: BOB, channelId: "C0001" });
      const text = blocksText((await replacement(h, res.responseId)).body.blocks);
      const order = [
        "Alert opened in <#C0001>: WAF 420/min (usually 12)",
        `<@${CAROL}> acknowledged the alert`,
        "Alert closed after",
        "its watch was removed (not resolved)",
      ].map((s) => text.indexOf(s));
      expect(
        order.every((i) => i >= 0),
        text,
      ).toBe(true);
      expect([...order].sort((a, b) => a - b)).toEqual(order);
      expect(text).not.toContain("Alert resolved");
      // Closed, so no longer firing anywhere (the Home lists firing alerts).
      expect(await h.store.episodes.listOpen("T0001")).toEqual([]);
    } finally {
      await h.close();
    }
  });

  it("Export puts a URL, a domain, an e-mail address or an @name typed into a name in a code span, so nothing in it is autolinked", async () => {
    const h = await startHarness({});
    try {
      const typedName = "bob https://evil.example/login www.evil.example mail-bob@evil.example @everyone";
      h.slack.users.set(BOB, { id: BOB, name: typedName });
      h.slack.memberships.set(BOB, ["C0001"]);
      await blockApplied(h);
      const res = await h.command(`timeline ${ZONE}`, { userId: BOB, channelId: "C0001" });
      const answer = await replacement(h, res.responseId);
      const exportButton = findButtons(answer.body.blocks).find(
        (b) => b.action_id === ACTIONS.timelineExport,
      );
      const clicked = await h.click(exportButton!, { userId: BOB, channelId: "C0001" });
      await h.slack.waitForResponse(clicked.responseId, () => true, 10_000);
      // The draft, not the chart uploaded beside it.
      const md = [...h.slack.uploads.values()].find((u) => u.filename.endsWith(".md"))?.body ?? "";
      expect(md).toContain(
        "@bob `https://evil.example/login` `www.evil.example` `mail-bob@evil.example` `@everyone` asked for: Block IP 203.0.113.7",
      );
      // Outside code spans, nothing a renderer would link is left.
      const outsideCode = md.replace(/(`+)[\s\S]*?\1/g, "");
      expect(outsideCode).not.toMatch(/evil\.example|@everyone/);
    } finally {
      await h.close();
    }
  });

  it("says when an undo was skipped and why, how long a temporary change was in force, and what applied without approval", async () => {
    let now = Date.parse("2026-08-20T10:00:00Z");
    const h = await startHarness({ clock: steppedClock(() => now) });
    try {
      const MIN = 60_000;
      /** A block request on ZONE and its audit steps, each `[minutes after the ask, action, outcome]`, as the engine writes them. */
      const story = async (value: string, steps: [number, string, string][]) => {
        const params = { shieldZoneId: ZONE, type: "ip", value, state: "block" };
        const asked = now;
        const r = await h.store.changeRequests.create({
          kind: "access_block",
          teamId: "T0001",
          channelId: "C0001",
          requesterId: BOB,
          params,
          expiresAt: asked + 3_600_000,
        });
        for (const [minutes, action, outcome] of steps) {
          now = asked + minutes * MIN;
          await h.store.audit.append({
            teamId: "T0001",
            userId: action === "approve" ? CAROL : action === "request" ? BOB : "system",
            action: `access_block.${action}`,
            target: `shield zone ${ZONE} / ip ${value}`,
            outcome,
            details: { requestId: r.id, channelId: "C0001", params },
          });
        }
        now = asked + 60 * MIN;
      };
      // Approved, applied for 30 minutes, undone by the sweeper.
      await story("203.0.113.21", [
        [0, "request", "pending"],
        [2, "approve", "approved"],
        [2, "apply", "applied"],
        [32, "undo", "undone"],
      ]);
      // Applied at once: the channel's policy asked no approval.
      await story("203.0.113.22", [[0, "request", "applied"]]);
      // Temporary, but the setting was changed since: its undo was skipped.
      await story("203.0.113.23", [
        [0, "request", "pending"],
        [1, "approve", "approved"],
        [1, "apply", "applied"],
        [31, "undo", "left"],
      ]);

      const res = await h.command(`timeline ${ZONE}`, { userId: ALICE, channelId: "C0001" });
      const text = blocksText((await replacement(h, res.responseId)).body.blocks);
      expect(text).toMatch(
        /edgeops undid: Block IP 203\.0\.113\.21 on shield zone \d+ in <#C0001> · after 30 min in force/,
      );
      expect(text).toMatch(
        /<@U0002> applied: Block IP 203\.0\.113\.22 on shield zone \d+ in <#C0001> · without approval/,
      );
      expect(text).not.toMatch(/applied: Block IP 203\.0\.113\.21[^\n]*without approval/);
      expect(text).toMatch(
        /edgeops skipped the undo of: Block IP 203\.0\.113\.23 on shield zone \d+ in <#C0001> — the setting was changed since it was applied/,
      );
    } finally {
      await h.close();
    }
  });

  it("takes a domain as other /edge commands do, refuses an unknown window, and says what Export needs", async () => {
    const h = await startHarness();
    try {
      const { domain, shieldZoneId } = SIM_IDS.zoneByDomain;
      const res = await h.command(`timeline ${domain} 6h`, { userId: ALICE, channelId: "C0001" });
      const answer = await replacement(h, res.responseId);
      const text = blocksText(answer.body.blocks);
      expect(text).toContain(`Timeline of ${domain} (shield zone ${shieldZoneId})`);
      expect(text).toContain("*Last 6 hours:* no alert; 0 change requests.");
      expect(text).toContain("Nothing edgeops knows of happened on this zone in the last 6 hours.");

      const bad = await answerTo(h, `timeline ${shieldZoneId} 2d`, ALICE);
      expect(bad.text).toContain('"2d" is not a window. Use 15m, 1h, 6h, 24h (the default) or 72h');

      // A workspace installed before Export: Slack refuses the upload for the missing scope.
      h.slack.addFault({ method: "files.getUploadURLExternal", error: "missing_scope" });
      const exportButton = findButtons(answer.body.blocks).find(
        (b) => b.action_id === ACTIONS.timelineExport,
      )!;
      // The domain typed goes with the buttons, so pages and the draft keep naming the zone by it.
      expect(JSON.parse(exportButton.value ?? "{}")).toMatchObject({ z: shieldZoneId, w: "6h", l: domain });
      const clicked = await h.click(exportButton, { userId: ALICE, channelId: "C0001" });
      const told = await h.slack.waitForResponse(clicked.responseId, () => true, 10_000);
      expect(blocksText(told.body.blocks)).toContain(
        "Posting files needs the files:write scope: an admin adds it by reinstalling the app from manifest.yml.",
      );
      expect(h.slack.callsTo("files.completeUploadExternal")).toHaveLength(0);
    } finally {
      await h.close();
    }
  }, 60_000);

  it("pages a long story within Block Kit's limits (Next replaces the answer)", async () => {
    const h = await startHarness();
    try {
      for (let i = 0; i < 80; i++) {
        h.advanceClock(1_000);
        await requestWritten(h, { channelId: "C0001", requesterId: BOB, type: "ip", value: `10.1.0.${i}` });
      }
      const res = await h.command(`timeline ${ZONE}`, { userId: ALICE, channelId: "C0001" });
      const first = await replacement(h, res.responseId);
      expect(blocksText(first.body.blocks)).toContain("Page 1 of 2 (80 entries");
      expect(checkBlockKitLimits("message", first.body)).toEqual([]);
      const next = findButtons(first.body.blocks).find((b) => b.action_id === ACTIONS.timelineNextPage);
      expect(next).toBeDefined();
      const clicked = await h.click(next!, { userId: ALICE });
      const second = await h.slack.waitForResponse(clicked.responseId, () => true, 10_000);
      expect(second.body.replace_original).toBe(true);
      const text = blocksText(second.body.blocks);
      expect(text).toContain("Page 2 of 2");
      expect(text).toContain("10.1.0.79");
      expect(text).not.toContain("10.1.0.0 ");
      expect(findButtons(second.body.blocks).map((b) => b.action_id)).toContain(ACTIONS.timelinePreviousPage);

      // Shared in the channel: this channel's entries, for everyone there, without buttons to page or export.
      const share = findButtons(first.body.blocks).find((b) => b.action_id === ACTIONS.shareInChannel)!;
      const shared = await h.click(share, { userId: ALICE, channelId: "C0001" });
      const posted = await h.slack.waitForResponse(
        shared.responseId,
        (r) => r.body.response_type === "in_channel",
        10_000,
      );
      expect(blocksText(posted.body.blocks)).toContain("Only what happened in this channel.");
      expect(blocksText(posted.body.blocks)).toContain("Page 1 of 2 (80 entries");
      expect(findButtons(posted.body.blocks)).toEqual([]);
      expect(h.slack.violations).toEqual([]);
    } finally {
      await h.close();
    }
  }, 60_000);
});

const MIN = 60_000;

/** Bob's country block, approved by Carol and then refused at apply: the zone changed since it was asked. */
async function refusedBlock(h: Harness) {
  const params = { shieldZoneId: ZONE, type: "country", value: "CN", state: "block" };
  const r = await h.store.changeRequests.create({
    kind: "access_block",
    teamId: "T0001",
    channelId: "C0001",
    requesterId: BOB,
    params,
    observed: "none",
    expiresAt: h.clock.now() + 3_600_000,
  });
  const step = (userId: string, action: string, outcome: string, more: Record<string, unknown> = {}) =>
    h.store.audit.append({
      teamId: "T0001",
      userId,
      action: `access_block.${action}`,
      target: `shield zone ${ZONE} / country CN`,
      outcome,
      details: { requestId: r.id, channelId: "C0001", params, ...more },
    });
  await step(BOB, "request", "pending");
  await h.store.changeRequests.transition(r.id, "pending", "approved", {
    decidedBy: CAROL,
    decidedAt: h.clock.now(),
    approvedBy: [CAROL],
  });
  await step(CAROL, "approve", "approved");
  await h.store.changeRequests.transition(r.id, "approved", "failed", {
    failedAt: h.clock.now(),
    lastError: { kind: "changed_since", message: "Block country CN was not applied: it changed since." },
  });
  await step(CAROL, "apply", "refused", { reason: "changed_since", observedNow: "block" });
}

describe("the postmortem draft", () => {
  it("says what attacked, what was done and what ended it, how long each step took, one row per change, in words", async () => {
    const h = await startHarness({});
    try {
      h.slack.memberships.set(BOB, ["C0001"]);
      const watch = await zoneWatch(h.store, {
        teamId: "T0001",
        channelId: "C0001",
        createdBy: ALICE,
        zoneId: ZONE,
        nextPollAt: h.clock.now() + 3_600_000,
      });
      const episode = await openWafAlert(h.store, watch, { label: null, topOffender: "203.0.113.7" });
      await h.store.episodes.setMessage(episode.id, "1700000001.000100");
      h.advanceClock(2 * MIN);
      await h.click(
        { action_id: ACTIONS.alertAcknowledge, value: episode.id },
        { userId: CAROL, messageTs: "1700000001.000100" },
      );
      await h.slack.waitForCall("chat.postMessage", (c) =>
        blocksText(c.args.blocks).includes("acknowledged"),
      );
      h.advanceClock(3 * MIN);
      await blockApplied(h);
      await refusedBlock(h);
      h.advanceClock(4 * MIN);
      const open = await h.store.episodes.get(episode.id);
      await h.store.episodes.update(episode.id, open?.version ?? 0, {
        status: "resolved",
        resolvedAt: h.clock.now(),
      });

      const res = await h.command(`timeline ${ZONE} 1h`, { userId: BOB, channelId: "C0001" });
      const answer = await replacement(h, res.responseId);
      const exportButton = findButtons(answer.body.blocks).find(
        (b) => b.action_id === ACTIONS.timelineExport,
      );
      const clicked = await h.click(exportButton!, { userId: BOB, channelId: "C0001" });
      await h.slack.waitForResponse(clicked.responseId, () => true, 10_000);
      const md = [...h.slack.uploads.values()].find((u) => u.filename.endsWith(".md"))?.body ?? "";
      const section = (heading: string) => {
        const at = md.indexOf(`## ${heading}\n`);
        expect(at, md).toBeGreaterThanOrEqual(0);
        const next = md.indexOf("\n## ", at + 1);
        return md.slice(at, next < 0 ? undefined : next);
      };

      const summary = section("Summary");
      expect(summary).toContain("**What attacked:** WAF 420/min (usually 12); busiest IP 203.0.113.7");
      expect(summary).toMatch(/\*\*What was done:\*\* Block IP 203\.0\.113\.7 on shield zone \d+, applied/);
      expect(summary).toContain("1 more change was asked and not applied");
      expect(summary).toMatch(
        /\*\*What ended it:\*\* the alert resolved at .* UTC, 4 min after the last change edgeops applied; edgeops does not know whether that change ended it\./,
      );
      expect(summary).toContain("- Time to acknowledge: 2 min");
      expect(summary).toContain("- Time to first mitigation: 5 min");
      expect(summary).toContain("- Time to calm: 9 min");

      const changes = section("Changes");
      expect(changes).toContain("| Change | Asked by | Approved by | Applied | Undone | In force for |");
      expect(changes).toMatch(
        /\| Block IP 203\.0\.113\.7 on shield zone \d+ \| @bob \| @carol \| \d\d:\d\d UTC \| not yet \(ends \d\d:\d\d UTC\) \| 4 min so far \|/,
      );
      expect(changes).toMatch(
        /\| Block country CN on shield zone \d+ \| @bob \| @carol \| not applied: the setting changed since it was asked, so edgeops left it as it is \| — \| — \|/,
      );
      // Codes are told in words.
      expect(md).not.toContain("changed_since");

      // The impact is read for the story's own window, and says which.
      expect(section("Impact")).toMatch(
        /Read from the Edge API for the story's window, \d{4}-\d\d-\d\d \d\d:\d\d UTC to \d{4}-\d\d-\d\d \d\d:\d\d UTC/,
      );
      expect(h.slack.violations).toEqual([]);
    } finally {
      await h.close();
    }
  }, 60_000);
});
