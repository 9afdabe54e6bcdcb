import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { LARGE_SHARE } from "../../src/services/impact-preview.js";
import { ACTIONS } from "../../src/slack/ids.js";
import { SIM_IDS } from "../../tools/simulator/index.js";
import { blocksText, cardUpdate, findButtons, type Harness, startHarness } from "../support/harness.js";
import { pick, pickerIn } from "../support/picker.js";
import { BOB } from "../support/users.js";
import { startWorld } from "../support/world.js";

/**
 * Before anyone confirms or approves a mitigation, its confirmation and its approval
 * card show what it would have touched in the zone's last hour of event log, through the receiver, the
 * fake Slack and the simulator. The message goes out first ("estimating…") and is filled in place.
 */

const ZONE = SIM_IDS.zoneUnderAttack;
const ESTIMATING = "Impact in the last hour: estimating…";

/** `/edge <text>`: the first answer and the one that fills it in place. */
async function typed(h: Harness, text: string) {
  const res = await h.command(text, { userId: BOB, channelId: "C0001" });
  expect(res.status).toBe(200);
  const first = await h.slack.waitForResponse(res.responseId, undefined, 15_000);
  const filled = await h.slack.waitForResponse(
    res.responseId,
    (r) => r.body.replace_original === true,
    15_000,
  );
  return {
    res,
    first,
    filled,
    firstText: blocksText(first.body.blocks),
    text: blocksText(filled.body.blocks),
  };
}

describe("impact preview on confirmations and approval cards", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterEach(() => {
    h.sim.clearFaults();
    h.slack.clear();
  });
  afterAll(async () => {
    await h.close();
  });

  it("a country's confirmation says estimating first, then the events it matched, their share, top paths and a warning for a large share", async () => {
    const { first, filled, firstText, text } = await typed(h, `block ${ZONE} CN challenge`);
    expect(firstText).toContain(ESTIMATING);
    expect(findButtons(first.body.blocks).map((b) => b.action_id)).toContain(ACTIONS.changeConfirm);

    expect(text).not.toContain("estimating");
    const m =
      /`CN` matched ([\d,]+) events? \(([^)]*)\), ([\d.<]+) % of this zone's ([\d,]+) events? in the event log\./.exec(
        text,
      );
    expect(m, text).not.toBeNull();
    const matched = Number(m![1]!.replace(/,/g, ""));
    const total = Number(m![4]!.replace(/,/g, ""));
    expect(matched).toBeGreaterThan(0);
    expect(total).toBeGreaterThanOrEqual(matched);
    // The edge's actions, in words apart from "in the event log" (where every counted event is): Log is "logged only".
    expect(m![2]).toMatch(/^(?:[\d,]+ (?:blocked|challenged|logged only)(?:, |$))+$/);
    // The numbers say the hour they are from, to the minute they were read: a card keeps them.
    const asOf = /\*Impact in the hour to <!date\^(\d+)\^/.exec(text);
    expect(asOf, text).not.toBeNull();
    const readAt = Number(asOf![1]) * 1000;
    expect(Math.abs(readAt - h.deps.clock.now())).toBeLessThan(5 * 60_000);
    const share = matched / total;
    expect(Number(m![3])).toBeCloseTo(share * 100, share * 100 >= 10 ? -0.5 : 0);
    expect(text).toMatch(/Top paths: `\/[^`]*` [\d,]+/);
    expect(text).toContain("Events are security events only; clean requests are not in the event log.");
    const warning = `CN is ${m![3]} % of this zone's events in the event log over that hour: blocking it also blocks everyone there.`;
    if (share >= LARGE_SHARE) expect(text).toContain(warning);
    else expect(text).not.toContain("blocks everyone there");
    // Still the same confirmation: its buttons are there to press.
    expect(findButtons(filled.body.blocks).map((b) => b.action_id)).toEqual(
      findButtons(first.body.blocks).map((b) => b.action_id),
    );

    // The searches were the last hour's, for that country, through the event-log operation.
    const searches = h.sim.requests.filter((q) => q.path === `/shield/event-logs/${ZONE}/search`);
    const bodies = searches.map((q) => q.body as { from: number; to: number; filters?: unknown });
    // In every way of writing the code: the document does not say whether eq minds case.
    expect(
      bodies.some((b) => JSON.stringify(b.filters) === '[{"field":"country","op":"in","value":["CN","cn"]}]'),
    ).toBe(true);
    expect(bodies.every((b) => b.to - b.from === 3_600_000)).toBe(true);
  }, 30_000);

  it("the approval card first says estimating, then is filled in place with the preview and keeps its buttons", async () => {
    const { first } = await typed(h, `block ${ZONE} AS4134`);
    const confirm = findButtons(first.body.blocks).find((b) => b.action_id === ACTIONS.changeConfirm)!;
    await h.click(confirm, { userId: BOB });
    const post = await h.slack.waitForCall("chat.postMessage", (c) =>
      blocksText(c.args.blocks).includes("Approval needed"),
    );
    expect(blocksText(post.args.blocks)).toContain(ESTIMATING);
    const filled = await cardUpdate(
      h,
      (t) => t.includes("Approval needed") && t.includes("`AS4134` matched"),
    );
    expect(filled.args.channel).toBe(post.args.channel);
    const text = blocksText(filled.args.blocks);
    expect(text).not.toContain("estimating");
    expect(text).toContain("security events only");
    expect(findButtons(filled.args.blocks).map((b) => b.action_id)).toEqual([
      ACTIONS.approve,
      ACTIONS.reject,
    ]);
  }, 30_000);

  it.each([
    [
      "ddos",
      `ddos ${ZONE} high`,
      /:bar_chart: \*What DDoS protection handled in the hour to <!date\^\d+\^[^>]*> at \w+:\* [\d,]+ DDoS events?/,
    ],
    [
      "waf-mode",
      `waf-mode ${ZONE} log`,
      /What the WAF handled in the hour to <!date\^\d+\^[^>]*> in \w+ mode:\* [\d,]+ WAF events?/,
    ],
    ["waf rule review", `waf ${ZONE} 942100 log-only`, /WAF rule `942100` triggered [\d,]+ times?/],
    ["bot category", `bot ${ZONE} aiscraper allow`, /[\d,]+ bot-detection events?/],
  ])(
    "%s: the confirmation shows the matching events of the last hour",
    async (_name, command, line) => {
      const { firstText, text } = await typed(h, command);
      expect(firstText).toContain(ESTIMATING);
      // A seeded run may name the features in words edgeops cannot match (event-logs.feature-spelling "long"):
      // then the preview says so, never a number.
      if (h.sim.adversary.strict && text.includes("could not be matched in the event log")) {
        expect(text).toContain("Impact in the last hour: unknown.");
        return;
      }
      expect(text).toMatch(line);
      expect(text).toContain("security events only");
      if (command.startsWith("bot")) expect(text).toContain("The event log does not name bot categories");
    },
    30_000,
  );

  it("a setting's preview says what its current level handled, not an estimate of the new one", async () => {
    // The zone under attack is at DDoS Low.
    const { text } = await typed(h, `ddos ${ZONE} high`);
    if (h.sim.adversary.strict && text.includes("could not be matched in the event log")) {
      expect(text).toContain("Impact in the last hour: unknown.");
      return;
    }
    expect(text).toMatch(
      /:bar_chart: \*What DDoS protection handled in the hour to <!date\^\d+\^[^>]*> at Low:\* [1-9][\d,]* DDoS events?/,
    );
    expect(text).toContain("A stricter level may act on more, which the event log cannot estimate.");
    expect(text).not.toMatch(/\*Impact in the hour to/);
  }, 30_000);

  it("a setting whose current level handled nothing in the last hour says there is nothing to estimate from", async () => {
    const zone = h.sim.state.shieldZones.find((z) => z.shieldZoneId === ZONE)!;
    const was = zone.dDoSShieldSensitivity;
    zone.dDoSShieldSensitivity = 0;
    try {
      const { text } = await typed(h, `ddos ${ZONE} high`);
      if (h.sim.adversary.strict && text.includes("could not be matched in the event log")) {
        expect(text).toContain("Impact in the last hour: unknown.");
        return;
      }
      expect(text).toMatch(
        /DDoS protection handled no events in the hour to <!date\^\d+\^[^>]*> at Off, so there is nothing to estimate the change from\./,
      );
      expect(text).not.toMatch(/[\d,]+ DDoS events?/);
    } finally {
      zone.dDoSShieldSensitivity = was;
    }
  }, 30_000);

  it("a change asked through a picker (no zone typed) is confirmed with estimating, then filled in the picker's place", async () => {
    const asked = await h.command("block 203.0.113.13", { userId: BOB, channelId: "C0001" });
    const pickerAnswer = await h.slack.waitForResponse(asked.responseId, undefined, 15_000);
    const picker = pickerIn(pickerAnswer.body.blocks)!;
    const responseId = await pick(h, picker, String(ZONE), { userId: BOB });
    const first = await h.slack.waitForResponse(responseId, undefined, 15_000);
    expect(blocksText(first.body.blocks)).toContain(ESTIMATING);
    const filled = await h.slack.waitForResponse(
      responseId,
      (r) => blocksText(r.body.blocks).includes("`203.0.113.13` matched"),
      15_000,
    );
    expect(filled.body.replace_original).toBe(true);
    expect(findButtons(filled.body.blocks).map((b) => b.action_id)).toContain(ACTIONS.changeConfirm);
  }, 30_000);

  it("a plan without the event log says so in one line", async () => {
    const { text } = await typed(h, `block ${SIM_IDS.zoneWithoutEventLogs} 203.0.113.9`);
    expect(text).toContain("This zone's plan has no event log, so edgeops cannot preview the impact.");
    expect(text).not.toMatch(/matched [\d,]+/);
  }, 30_000);

  it("an Edge failure says the impact is unknown, never a made-up number", async () => {
    h.sim.addFault({ method: "POST", path: /\/shield\/event-logs\//, status: 500, body: "none" });
    const { text } = await typed(h, `block ${ZONE} 203.0.113.10`);
    expect(text).toContain("Impact in the last hour: unknown.");
    expect(text).toContain("No estimate is shown rather than a guess.");
    expect(text).not.toMatch(/matched [\d,]+|% of this zone/);
  }, 30_000);

  it("a confirmation already answered is not brought back by a late fill", async () => {
    // The preview's search is held at the simulator until the confirmation has been cancelled.
    let release = () => {};
    h.sim.addFault({
      method: "POST",
      path: /\/shield\/event-logs\//,
      holdUntil: new Promise<void>((r) => (release = r)),
    });
    const res = await h.command(`block ${ZONE} 203.0.113.12`, { userId: BOB, channelId: "C0001" });
    const first = await h.slack.waitForResponse(res.responseId, undefined, 15_000);
    await h.sim.waitForRequest((r) => r.method === "POST" && /\/shield\/event-logs\//.test(r.path));
    const cancel = findButtons(first.body.blocks).find((b) => b.action_id === ACTIONS.changeCancel)!;
    const cancelled = await h.click(cancel, { userId: BOB });
    const said = await h.slack.waitForResponse(cancelled.responseId);
    expect(JSON.stringify(said.body)).toContain("Cancelled: nothing was changed.");
    // Now the event log answers: the fill comes too late, and nothing replaces the confirmation.
    release();
    await h.settled();
    expect(h.slack.responsesTo(res.responseId).filter((r) => r.body.replace_original === true)).toEqual([]);
  }, 30_000);

  it("a slow event log never holds the confirmation back: it goes out at once and the preview gives up by its deadline", async () => {
    // On a world: the preview's deadline (EDGE_API_TIMEOUT_MS) passes when the test moves the one clock.
    const w = await startWorld();
    let release = () => {};
    try {
      w.sim.addFault({
        method: "POST",
        path: /\/shield\/event-logs\//,
        holdUntil: new Promise<void>((r) => (release = r)),
      });
      const started = Date.now();
      const res = await w.command(`block ${ZONE} 203.0.113.11`, { userId: BOB, channelId: "C0001" });
      // The ack: the preview adds nothing to it (it is read after the confirmation is sent).
      expect(res.status).toBe(200);
      expect(Date.now() - started).toBeLessThan(1_000);
      const first = await w.slack.waitForResponse(res.responseId, undefined, 15_000);
      expect(blocksText(first.body.blocks)).toContain(ESTIMATING);
      expect(first.at - started).toBeLessThan(3_000);
      // The search reached the event log and is not answered; the preview's deadline passes.
      await w.sim.waitForRequest((r) => r.method === "POST" && /\/shield\/event-logs\//.test(r.path));
      expect(w.slack.responsesTo(res.responseId).filter((r) => r.body.replace_original === true)).toEqual([]);
      await w.clock.advance(w.config.edge.timeoutMs);
      const filled = await w.slack.waitForResponse(res.responseId, (r) => r.body.replace_original === true);
      const text = blocksText(filled.body.blocks);
      expect(text).toContain("Impact in the last hour: unknown.");
      expect(text).not.toMatch(/matched [\d,]+/);
    } finally {
      release();
      await w.settled();
      await w.close();
    }
  }, 40_000);
});

describe("impact preview where the event log spells its values its own way", () => {
  let h: Harness;
  /** The simulator's seed, if the run set one: pins stage one reading on top of it. */
  let seed: number | undefined;
  const pin = (p: Record<string, unknown>) =>
    h.sim.setAdversary({ ...(seed === undefined ? {} : { seed }), pin: p });
  beforeAll(async () => {
    h = await startHarness();
    seed = h.sim.adversary.seed;
  });
  afterEach(() => {
    h.sim.setAdversary(seed === undefined ? {} : { seed });
    h.sim.scaleIncident(ZONE, { eventLogGroups: 0 });
    h.sim.clearFaults();
    h.slack.clear();
  });
  afterAll(async () => {
    await h.close();
  });

  it('an ASN the event log writes without "AS" still matches its events', async () => {
    pin({ "event-logs.asn-spelling": "number" });
    const { text } = await typed(h, `block ${ZONE} AS4134`);
    expect(text).toMatch(/`AS4134` matched [1-9][\d,]* events?/);
    expect(text).not.toContain("Nothing from AS4134 is in the event log");
  }, 30_000);

  it("a feature the event log writes in capitals and compares case-sensitively is still counted", async () => {
    pin({ "event-logs.feature-spelling": "upper", "event-logs.eq-case": "sensitive" });
    const { text } = await typed(h, `waf-mode ${ZONE} log`);
    expect(text).toMatch(
      /What the WAF handled in the hour to <!date\^\d+\^[^>]*> in \w+ mode:\* [1-9][\d,]* WAF events?/,
    );
  }, 30_000);

  it("a feature the event log names in words edgeops cannot match is unknown, never 0", async () => {
    pin({ "event-logs.feature-spelling": "long" });
    const { text } = await typed(h, `ddos ${ZONE} high`);
    expect(text).toContain("Impact in the last hour: unknown.");
    expect(text).toContain("could not be matched in the event log");
    expect(text).not.toMatch(/[\d,]+ DDoS events?/);
  }, 30_000);

  it("actions the event log spells otherwise still give the breakdown, from each group's per-action counts", async () => {
    pin({ "event-logs.action-spelling": "past" });
    const { text } = await typed(h, `block ${ZONE} CN challenge`);
    expect(text).toMatch(/`CN` matched [1-9][\d,]* events? \([\d,]+ (blocked|challenged|logged)/);
  }, 30_000);

  it("an answer without totalPages: the top paths say they are of those read", async () => {
    pin({ "event-logs.total-pages": "absent" });
    // 2,600 more sources in 198.18.0.0/15, each on a path of its own.
    h.sim.scaleIncident(ZONE, { eventLogGroups: 2_600 });
    const { text } = await typed(h, `block ${ZONE} 198.18.0.0/15`);
    expect(text).toMatch(/`198\.18\.0\.0\/15` matched [1-9][\d,]* events?/);
    expect(text).toContain("Top paths (of those read):");
  }, 30_000);
});
