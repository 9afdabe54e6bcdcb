import { describe, expect, it } from "vitest";
import { incidentRange } from "../../../src/services/incident.js";
import type { TimelineEntry, TimelineStory } from "../../../src/services/timeline.js";
import { TIMELINE_PAGE_SIZE, timelineMessage } from "../../../src/slack/blocks/timeline.js";
import { ACTIONS } from "../../../src/slack/ids.js";
import { checkBlockKitLimits } from "../../support/block-kit-limits.js";
import { blocksText, findButtons } from "../../support/harness.js";

/** The timeline view is pure: whatever the story's size, each page stays within Block Kit's limits. */

const NOW = 1_795_000_000_000;
const LONG = `Block IP <203.0.113.7> & ${"x".repeat(400)}`;

function bigStory(entries: number, mitigations: number): TimelineStory {
  const range = incidentRange("24h", NOW);
  const list: TimelineEntry[] = Array.from({ length: entries }, (_, i) => ({
    kind: "change",
    at: range.from + i * 1_000,
    by: i % 2 === 0 ? "U0002" : "system",
    channelId: "C0001",
    requestId: `r${i}`,
    change: LONG,
    step: i % 3 === 0 ? "failed" : "approval",
    approvals: { count: 1, needed: 2 },
    note: `the Edge API said <no> & ${"y".repeat(400)}`,
  }));
  return {
    timeline: {
      teamId: "T0001",
      zoneId: 4321,
      range,
      entries: list,
      mitigations: Array.from({ length: mitigations }, (_, i) => ({
        requestId: `m${i}`,
        change: LONG,
        asked: { by: "U0002", channelId: "C0001" },
        appliedAt: NOW - 60_000,
        until: i % 2 === 0 ? NOW + 60_000 : null,
      })),
      alerts: { count: 3, firstOpenedAt: range.from, lastResolvedAt: null, firing: 1 },
      hidden: 7,
      cut: true,
    },
    peaks: { error: "The Edge API did not answer in time." },
  };
}

describe("timeline view", () => {
  it("pages 1,500 long entries and 500 mitigations within Block Kit's limits, escaping what came from outside", () => {
    const story = bigStory(1_500, 500);
    const pages = Math.ceil(1_500 / TIMELINE_PAGE_SIZE);
    for (const page of [1, 2, pages]) {
      const reply = timelineMessage(story, {
        page,
        label: "shop.example.com",
        scope: "yours",
        buttons: "all",
        now: NOW,
      });
      expect(checkBlockKitLimits("message", reply)).toEqual([]);
      expect(reply.blocks.length).toBeLessThanOrEqual(49); // room for the Share in channel row
      const text = blocksText(reply.blocks);
      expect(text).toContain(`Page ${page} of ${pages}`);
      expect(text).toContain("&lt;203.0.113.7&gt; &amp;");
      expect(text).not.toContain("<203.0.113.7>");
      expect(text).toMatch(/…and \d{3} mitigations not shown\./);
      expect(text).toContain("7 entries from other channels are left out.");
      expect(text).toContain("the oldest are left out");
      expect(text).toContain("*Peaks:* not available (The Edge API did not answer in time.)");
      const ids = findButtons(reply.blocks).map((b) => b.action_id);
      expect(ids.includes(ACTIONS.timelinePreviousPage)).toBe(page > 1);
      expect(ids.includes(ACTIONS.timelineNextPage)).toBe(page < pages);
      expect(ids).toContain(ACTIONS.timelineExport);
    }
  });

  it("has no buttons when shared in a channel", () => {
    const reply = timelineMessage(bigStory(5, 0), {
      page: 1,
      label: null,
      scope: "channel",
      buttons: "none",
      now: NOW,
    });
    expect(findButtons(reply.blocks)).toEqual([]);
    expect(blocksText(reply.blocks)).toContain("Only what happened in this channel.");
  });
});
