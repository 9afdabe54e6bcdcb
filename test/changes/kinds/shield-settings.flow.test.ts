import { describe, expect, it } from "vitest";
import { createChangeSweeper, undoDue } from "../../../src/jobs/change-sweeps.js";
import { ACTION_PATTERNS, ACTIONS } from "../../../src/slack/ids.js";
import { SIM_IDS } from "../../../tools/simulator/index.js";
import { withReadings } from "../../support/adversary.js";
import { askAndApprove, BOB, CAROL, inEffect } from "../../support/change-flow.js";
import {
  answerTo,
  blocksText,
  cardUpdate,
  findButtons,
  type Harness,
  TEST_EDGE_KEY,
} from "../../support/harness.js";
import { useHarness } from "../../support/use-harness.js";

/**
 * DDoS sensitivity and WAF execution mode (PATCH /shield/shield-zone, one field, guarded
 * against a concurrent change), and the review buttons of a triggered WAF rule on `/edge waf` and the
 * incident card, through the receiver, the fake Slack and the simulator.
 */

const ZONE = SIM_IDS.zoneUnderAttack;
const RULE = SIM_IDS.waf.ruleId;

const patches = (h: Harness) =>
  h.sim.requests.filter((r) => r.method === "PATCH" && r.path === "/shield/shield-zone");
const reviews = (h: Harness) =>
  h.sim.requests.filter((r) => r.method === "POST" && /review-triggered\/\d+$/.test(r.path));
const zone = (h: Harness) => h.sim.state.shieldZones.find((z) => z.shieldZoneId === ZONE)!;

const command = (h: Harness, text: string, userId = BOB) => answerTo(h, text, userId);
const didNotGoThrough = (t: string) => t.includes("did not go through");

/** A review button: a change request through the generic Confirm, behind a Slack confirm dialog. */
function reviewButton(buttons: ReturnType<typeof findButtons>, label: string) {
  const b = buttons.find((x) => ACTION_PATTERNS.changeConfirm.test(x.action_id) && x.text === label);
  expect(b, label).toBeDefined();
  expect((b!.confirm as { title?: { text?: string } } | undefined)?.title?.text).toBe(`${label}?`);
  return b!;
}

describe("shield zone settings and WAF rule reviews (SQLite)", () => {
  const h = useHarness();

  it("sends only the changed field, and the zone's GET and the zones list show the new value", async () => {
    zone(h).dDoSShieldSensitivity = 1;
    const before = patches(h).length;
    const { typed } = await askAndApprove(h, `ddos ${ZONE} challenge`, "DDoS sensitivity");
    expect(typed.text).toContain("Low → *Challenge*");
    const sent = patches(h).slice(before);
    expect(sent).toHaveLength(1);
    expect(sent[0]!.body).toEqual({ shieldZoneId: ZONE, shieldZone: { dDoSShieldSensitivity: 4 } });
    const get = async (path: string) =>
      (await (await fetch(`${h.sim.url}${path}`, { headers: { AccessKey: TEST_EDGE_KEY } })).json()) as {
        data: { shieldZoneId: number; dDoSShieldSensitivity: number }[] | { dDoSShieldSensitivity: number };
      };
    expect((await get(`/shield/shield-zone/${ZONE}`)).data).toMatchObject({ dDoSShieldSensitivity: 4 });
    const list = (await get("/shield/shield-zones?perPage=1000")).data as { shieldZoneId: number }[];
    expect(list.find((z) => z.shieldZoneId === ZONE)).toMatchObject({ dDoSShieldSensitivity: 4 });
    expect(zone(h).dDoSShieldSensitivity).toBe(4);
  });

  it("an approved change reads the zone once before its PATCH and once after", async () => {
    zone(h).dDoSShieldSensitivity = 1;
    let before = 0;
    await askAndApprove(h, `ddos ${ZONE} high`, "DDoS sensitivity", inEffect, () => {
      before = h.sim.requests.length;
    });
    // The zone's own calls (the approval card's impact preview searches the event log beside them).
    const calls = h.sim.requests
      .slice(before)
      .map((r) => `${r.method} ${r.path}`)
      .filter((c) => c.includes("/shield/shield-zone"));
    expect(calls).toEqual([
      `GET /shield/shield-zone/${ZONE}`,
      "PATCH /shield/shield-zone",
      `GET /shield/shield-zone/${ZONE}`,
    ]);
    expect(zone(h).dDoSShieldSensitivity).toBe(3);
  });

  it("a WAF mode applied on a zone whose WAF is off: the applied card says the mode has no effect until the WAF is on", async () => {
    zone(h).wafEnabled = false;
    zone(h).wafExecutionMode = 0;
    try {
      const applied = await askAndApprove(h, `waf-mode ${ZONE} block`, "WAF execution mode");
      expect(zone(h).wafExecutionMode).toBe(1);
      expect(applied.text).toContain(`The WAF of shield zone ${ZONE} is off`);
      expect(applied.text).toContain("Block takes effect only once the WAF is turned on");
    } finally {
      zone(h).wafEnabled = true;
    }
  });

  it("a value someone changed after the request was made is not overwritten: refused with a sentence and Retry", async () => {
    zone(h).wafExecutionMode = 0;
    const before = patches(h).length;
    await askAndApprove(h, `waf-mode ${ZONE} block`, "WAF execution mode", inEffect, () => {
      zone(h).wafExecutionMode = 1; // someone set Block in the dashboard …
      zone(h).wafExecutionMode = 0; // … and back: unchanged, so this one goes through
    });
    expect(patches(h).length - before).toBe(1);

    h.slack.clear();
    zone(h).dDoSShieldSensitivity = 2;
    let mid = 0;
    const failed = await askAndApprove(h, `ddos ${ZONE} high`, "DDoS sensitivity", didNotGoThrough, () => {
      zone(h).dDoSShieldSensitivity = 0; // someone turned it off after Bob asked
      mid = patches(h).length;
    });
    expect(failed.text).toContain("changed from Medium to Off since this request was made");
    // Retry would meet the same changed setting: the card says to ask again instead.
    expect(failed.buttons.some((b) => b.action_id === ACTIONS.retry)).toBe(false);
    expect(patches(h).length).toBe(mid);
    expect(zone(h).dDoSShieldSensitivity).toBe(0);
  });

  it("`ddos … for 30m` is undone exactly once: the previous value is back, later sweeps do nothing", async () => {
    zone(h).dDoSShieldSensitivity = 1;
    const applied = await askAndApprove(h, `ddos ${ZONE} high for 30m`, "DDoS sensitivity");
    expect(applied.typed.text).toContain("for 30 min, then undone");
    expect(applied.buttons.some((b) => b.action_id === ACTIONS.undo)).toBe(true);
    expect(zone(h).dDoSShieldSensitivity).toBe(3);
    const sweeper = createChangeSweeper(h.app.env);
    const before = patches(h).length;
    h.advanceClock(31 * 60_000);
    const other = createChangeSweeper(h.app.env); // a second replica
    const swept = await Promise.all([sweeper.sweep(), other.sweep()]);
    expect(swept[0] + swept[1]).toBe(1);
    await cardUpdate(h, (t) => t.includes("DDoS sensitivity") && t.includes("Undone"));
    expect(zone(h).dDoSShieldSensitivity).toBe(1);
    expect(patches(h).length - before).toBe(1);
    expect(patches(h).at(-1)!.body).toEqual({ shieldZoneId: ZONE, shieldZone: { dDoSShieldSensitivity: 1 } });
    expect(await sweeper.sweep()).toBe(0);
    expect(patches(h).length - before).toBe(1);
  });

  it("an undo leaves a value someone changed meanwhile", async () => {
    zone(h).dDoSShieldSensitivity = 1;
    await askAndApprove(h, `ddos ${ZONE} medium for 30m`, "DDoS sensitivity");
    zone(h).dDoSShieldSensitivity = 4;
    const before = patches(h).length;
    h.advanceClock(31 * 60_000);
    expect(await undoDue(h.deps)).toHaveLength(1);
    expect(patches(h).length).toBe(before);
    expect(zone(h).dDoSShieldSensitivity).toBe(4);
  });

  it.each(["as-set", "off-until-kept", "off-until-cleared"])(
    "/edge learning on where the last learning period ended (answered %s) starts a new one, with its end time",
    async (form) => {
      const z = zone(h);
      z.learningMode = true;
      z.learningModeUntil = new Date(h.clock.now() - 24 * 3_600_000).toISOString();
      const before = patches(h).length;
      const { text } = await withReadings(h.sim, { "shield-settings.learning-expiry": form }, () =>
        askAndApprove(h, `learning ${ZONE} on`, "Learning mode", (t) => inEffect(t) || didNotGoThrough(t)),
      );
      expect(text).toContain("is in effect");
      const sent = patches(h).slice(before);
      expect(sent).toHaveLength(1);
      const update = (sent[0]!.body as { shieldZone: { learningMode?: boolean; learningModeUntil?: string } })
        .shieldZone;
      expect(update.learningMode).toBe(true);
      expect(Date.parse(update.learningModeUntil ?? "")).toBeGreaterThan(h.clock.now());
    },
  );

  it("/edge waf has Ignore / Log only / Disable rule; Disable rule, approved, disables the rule once", async () => {
    // A WAF that is on triggers rules, whatever earlier PATCHes left (some readings reset what they were not sent).
    zone(h).wafEnabled = true;
    zone(h).wafDisabledRules = [];
    const answer = await command(h, `waf ${ZONE} ${RULE}`);
    reviewButton(answer.buttons, "Ignore");
    reviewButton(answer.buttons, "Log only");
    const disable = reviewButton(answer.buttons, "Disable rule");
    const before = reviews(h).length;
    await h.click(disable, { userId: BOB });
    const post = await h.slack.waitForCall("chat.postMessage", (c) =>
      blocksText(c.args.blocks).includes(`Disable WAF rule ${RULE}`),
    );
    expect(reviews(h).length).toBe(before);
    await h.click(findButtons(post.args.blocks).find((b) => b.action_id === ACTIONS.approve)!, {
      userId: CAROL,
    });
    await cardUpdate(h, (t) => t.includes(`WAF rule ${RULE}`) && t.includes("is in effect"));
    expect(
      reviews(h)
        .slice(before)
        .map((r) => r.body),
    ).toEqual([{ ruleId: RULE, action: 2 }]);
    expect(zone(h).wafDisabledRules).toContain(RULE);
  });

  it("each triggered rule on the incident card has the review buttons; Log only goes through approval", async () => {
    zone(h).wafEnabled = true;
    zone(h).wafLogOnlyRules = [];
    const res = await h.command(`incident ${ZONE}`, { userId: BOB, channelId: "C0001" });
    const card = await h.slack.waitForResponse(
      res.responseId,
      (r) => r.body.replace_original === true,
      15_000,
    );
    const buttons = findButtons(card.body.blocks);
    const logOnly = buttons.filter(
      (b) => ACTION_PATTERNS.changeConfirm.test(b.action_id) && b.text === "Log only",
    );
    const recommendations = buttons.filter((b) => b.action_id === ACTIONS.incidentWafRecommendation);
    expect(logOnly.length).toBeGreaterThan(0);
    expect(logOnly).toHaveLength(recommendations.length);
    const first = JSON.parse(logOnly[0]!.value!) as { p: { ruleId: string } };
    const before = reviews(h).length;
    await h.click(reviewButton(buttons, "Log only"), { userId: BOB });
    const post = await h.slack.waitForCall("chat.postMessage", (c) =>
      blocksText(c.args.blocks).includes(`Make WAF rule ${first.p.ruleId} log only`),
    );
    await h.click(findButtons(post.args.blocks).find((b) => b.action_id === ACTIONS.approve)!, {
      userId: CAROL,
    });
    await cardUpdate(h, (t) => t.includes(`WAF rule ${first.p.ruleId}`) && t.includes("is in effect"));
    expect(reviews(h).length - before).toBe(1);
    expect(zone(h).wafLogOnlyRules).toContain(first.p.ruleId);
  });

  // Simulator deviation: the document lists no 404 for POST /shield/waf/rules/review-triggered/{id}; the
  // simulator refuses an untriggered rule with one (UNDOCUMENTED in test/tools/simulator/openapi.flow.test.ts). What is
  // checked is that any refusal reads as a sentence and changes nothing.
  it("a rule the zone did not trigger is refused by the Edge API with a sentence, and nothing changes", async () => {
    let count = 0;
    const failed = await askAndApprove(
      h,
      `waf ${ZONE} 999999 ignore`,
      "WAF rule 999999",
      didNotGoThrough,
      () => {
        count = h.sim.state.wafRuleReviews.length;
      },
    );
    expect(failed.text).not.toMatch(/stack|Error:/);
    expect(h.sim.state.wafRuleReviews.length).toBe(count);
  });
});
