import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createChangeSweeper, reconcileStale } from "../../src/jobs/change-sweeps.js";
import { ACTION_PATTERNS, ACTIONS } from "../../src/slack/ids.js";
import { SIM_IDS } from "../../tools/simulator/index.js";
import { withReadings } from "../support/adversary.js";
import { askAndApprove, BOB, CAROL } from "../support/change-flow.js";
import {
  answerTo,
  blocksText,
  cardUpdate,
  findButtons,
  type Harness,
  startHarness,
} from "../support/harness.js";
import { useHarness } from "../support/use-harness.js";
import { useWorld } from "../support/world.js";

/**
 * Verified writes, through the receiver, the fake Slack and the simulator: a
 * refusal inside a 2xx is a refusal, for writes and reads alike (the simulator's refusal fault answers
 * each operation's documented form).
 */

const BOTS_ZONE = SIM_IDS.zoneEnterprise;
const ZONE = SIM_IDS.zoneUnderAttack;

const command = (h: Harness, text: string, userId = BOB) => answerTo(h, text, userId);
const shieldZone = (h: Harness, id: number) => h.sim.state.shieldZones.find((z) => z.shieldZoneId === id)!;
const category = (h: Harness, zoneId: number, c: number) =>
  h.sim.state.botCategories.get(zoneId)!.find((g) => g.category === c)!;

const failedCard = (t: string) => t.includes("did not go through");
const patchesOf = (h: Harness) =>
  h.sim.requests.filter((r) => r.method === "PATCH" && r.path === "/shield/shield-zone");

describe("verified writes (SQLite)", () => {
  // A world: a PATCH held at the Edge API is never cut short by the client's timeout on a real clock.
  const h = useWorld();

  it("a bot-category PUT answered 202 invalid_plan_type is refused with the plan sentence, not applied", async () => {
    category(h, BOTS_ZONE, 1).categoryAction = 0;
    h.sim.addFault({ method: "PUT", path: /\/bot-categorization\/categories\/1$/, refuse: {}, times: 1 });
    const { text, buttons } = await askAndApprove(h, `bot ${BOTS_ZONE} seo block`, "SEO", failedCard);
    expect(text).toContain("plan does not include bot categorization");
    expect(text).not.toContain("is in effect");
    // A plan refusal would meet the same refusal again: no Retry, the plan sentence says what to do.
    expect(buttons.some((b) => b.action_id === ACTIONS.retry)).toBe(false);
    expect(category(h, BOTS_ZONE, 1).categoryAction).toBe(0);
  });

  it("a PATCH /shield/shield-zone answered 202 with an error envelope is refused with the API's message", async () => {
    shieldZone(h, ZONE).dDoSShieldSensitivity = 1;
    h.sim.addFault({
      method: "PATCH",
      path: "/shield/shield-zone",
      refuse: { message: "Shield zone is locked by billing.", errorKey: "shield_zone.locked" },
      times: 1,
    });
    const { text } = await askAndApprove(h, `ddos ${ZONE} high`, "DDoS sensitivity", failedCard);
    expect(text).toContain("Shield zone is locked by billing.");
    expect(text).not.toContain("is in effect");
    expect(shieldZone(h, ZONE).dDoSShieldSensitivity).toBe(1);
  });

  it("an access-list write answered 202 with an error envelope is refused, even when the body claims 200", async () => {
    const zoneId = SIM_IDS.customerAccessList.zoneId;
    h.sim.addFault({
      method: "PATCH",
      path: new RegExp(`/shield-zone/${zoneId}/access-lists/\\d+$`),
      refuse: { message: "Custom entry limit reached.", statusCode: 200 },
    });
    const { text } = await askAndApprove(h, `block ${zoneId} 203.0.113.77`, "203.0.113.77", failedCard);
    expect(text).toContain("Custom entry limit reached.");
    const lists = h.sim.state.accessLists.get(zoneId) ?? [];
    expect(lists.some((l) => l.content.includes("203.0.113.77"))).toBe(false);
  });

  it("a WAF rule review answered {success:false, errorResponse} is refused with the API's message", () =>
    withReadings(h.sim, { "shield.refusal-form": "error-given" }, async () => {
      h.sim.addFault({
        method: "POST",
        path: /\/waf\/rules\/review-triggered\/\d+$/,
        refuse: { message: "Rule reviews are paused for this zone." },
        times: 1,
      });
      const waf = await command(h, `waf ${SIM_IDS.waf.zoneId} ${SIM_IDS.waf.ruleId}`);
      const ignore = waf.buttons.find(
        (b) => ACTION_PATTERNS.changeConfirm.test(b.action_id) && b.text === "Ignore",
      );
      expect(ignore, waf.text).toBeDefined();
      await h.click(ignore!, { userId: BOB });
      const post = await h.slack.waitForCall("chat.postMessage", (c) =>
        blocksText(c.args.blocks).includes(SIM_IDS.waf.ruleId),
      );
      const approve = findButtons(post.args.blocks).find((b) => b.action_id === ACTIONS.approve)!;
      await h.click(approve, { userId: CAROL });
      const card = await cardUpdate(h, failedCard);
      expect(blocksText(card.args.blocks)).toContain("Rule reviews are paused for this zone.");
    }));

  it("reads: bot categories answered {categories: null, error.success false} claiming 200 are a refusal, not an empty list", async () => {
    h.sim.addFault({
      method: "GET",
      path: new RegExp(`/shield-zone/${BOTS_ZONE}/bot-categorization$`),
      refuse: { message: "Categorization is being rebuilt.", statusCode: 200 },
    });
    const bots = await command(h, `bots ${BOTS_ZONE}`);
    expect(bots.text).toContain("Categorization is being rebuilt.");
  });

  it("reads: the shield zone list answered {data: null, error.success false} is a refusal, not 'no zones'", async () => {
    h.sim.addFault({
      method: "GET",
      path: "/shield/shield-zones",
      status: 200,
      body: { data: null, error: { statusCode: 200, success: false, message: "Zones are unavailable." } },
    });
    const zones = await command(h, "zones");
    expect(zones.text).toContain("Zones are unavailable.");
  });

  it("a WAF rule review answered {success: false, errorResponse: null} is refused, not reported applied", async () => {
    const z = shieldZone(h, SIM_IDS.waf.zoneId);
    z.wafDisabledRules = [];
    // The document's UpdateReviewTriggeredRuleResponse: `success` alone may say it was refused.
    const { text } = await withReadings(h.sim, { "shield.refusal-form": "error-null" }, () =>
      askAndApprove(
        h,
        `waf ${SIM_IDS.waf.zoneId} ${SIM_IDS.waf.ruleId} disable`,
        `WAF rule ${SIM_IDS.waf.ruleId}`,
        (t) => failedCard(t) || t.includes("is in effect"),
        () =>
          h.sim.addFault({
            method: "POST",
            path: /\/waf\/rules\/review-triggered\/\d+$/,
            refuse: {},
            times: 1,
          }),
      ),
    );
    expect(text).toContain("did not go through");
    expect(text).toContain("refused the request without saying why");
    expect(text).not.toContain("is in effect");
    expect(z.wafDisabledRules).not.toContain(SIM_IDS.waf.ruleId);
  });

  it("a PATCH /shield/shield-zone refused beside its request echoed as `data` keeps the API's reason", async () => {
    shieldZone(h, ZONE).dDoSShieldSensitivity = 1;
    const { text } = await withReadings(h.sim, { "shield.refusal-form": "data-echoed" }, () =>
      askAndApprove(
        h,
        `ddos ${ZONE} high`,
        "DDoS sensitivity",
        (t) => failedCard(t) || t.includes("is in effect"),
        () =>
          h.sim.addFault({
            method: "PATCH",
            path: "/shield/shield-zone",
            refuse: { message: "Shield zone is locked by billing.", errorKey: "shield_zone.locked" },
            times: 1,
          }),
      ),
    );
    expect(text).toContain("Shield zone is locked by billing.");
    expect(text).not.toContain("is in effect");
    expect(shieldZone(h, ZONE).dDoSShieldSensitivity).toBe(1);
  });

  // ---- applied means the read right after shows it -------------------------------------------

  it("a bot-category PUT answered 200 with nothing changed: the read-back shows None, the card says so and offers Retry", async () => {
    category(h, BOTS_ZONE, 2).categoryAction = 0;
    const { text, buttons } = await askAndApprove(
      h,
      `bot ${BOTS_ZONE} aiscraper block`,
      "AI scraper",
      failedCard,
      () => h.sim.addFault({ method: "PUT", path: /\/categories\/2$/, status: 200, body: "none", times: 1 }),
    );
    expect(text).toContain("reading it back right after shows None: it is not in effect");
    expect(buttons.some((b) => b.action_id === ACTIONS.retry)).toBe(true);
    expect(category(h, BOTS_ZONE, 2).categoryAction).toBe(0);
    const audit = await h.store.audit.list("T0001", 20);
    expect(audit.find((a) => a.action === "bot_category.apply")?.outcome).toBe("failed");
  });

  it("an access-list write answered 200 with nothing changed is not reported blocked", async () => {
    const zoneId = SIM_IDS.customerAccessList.zoneId;
    const { text } = await askAndApprove(
      h,
      `block ${zoneId} 198.51.100.77`,
      "198.51.100.77",
      failedCard,
      () =>
        h.sim.addFault({
          method: "PATCH",
          path: new RegExp(`/shield-zone/${zoneId}/access-lists/\\d+$`),
          status: 200,
          body: "none",
        }),
    );
    expect(text).toContain("reading it back right after shows not listed by edgeops");
    const lists = h.sim.state.accessLists.get(zoneId) ?? [];
    expect(lists.some((l) => l.content.includes("198.51.100.77"))).toBe(false);
  });

  it("a write whose read-back fails is not known yet (checking), not applied", async () => {
    category(h, BOTS_ZONE, 3).categoryAction = 0;
    const { text } = await askAndApprove(
      h,
      `bot ${BOTS_ZONE} aitool block`,
      "AI tool",
      (t) => t.includes("Not known yet"),
      () =>
        h.sim.addFault({
          method: "GET",
          path: new RegExp(`/shield-zone/${BOTS_ZONE}/bot-categorization$`),
          status: 500,
          // The read before the write (is it still what the request saw?) passes; the read-back fails.
          skip: 1,
        }),
    );
    expect(text).toContain("reading it back failed");
    expect(text).not.toContain("is in effect");
  });

  it("a WAF rule review the zone's settings do not show right after is not known yet; the reconciler reads it again", async () => {
    const z = shieldZone(h, SIM_IDS.waf.zoneId);
    z.wafLogOnlyRules = [];
    z.wafDisabledRules = [];
    const { text } = await askAndApprove(
      h,
      `waf ${SIM_IDS.waf.zoneId} ${SIM_IDS.waf.ruleId} log-only`,
      `WAF rule ${SIM_IDS.waf.ruleId}`,
      (t) => t.includes("Not known yet") || t.includes("is in effect") || failedCard(t),
      // Answered as a success, though nothing moved at the Edge API.
      () =>
        h.sim.addFault({
          method: "POST",
          path: /\/waf\/rules\/review-triggered\/\d+$/,
          status: 200,
          body: { success: true, errorResponse: null },
          times: 1,
        }),
    );
    expect(text).not.toContain("is in effect");
    expect(text).toContain("Not known yet");
    expect(text).toContain("log-only rules");
    // It shows a minute later (the API was slow to show it): applied then.
    z.wafLogOnlyRules = [SIM_IDS.waf.ruleId];
    h.advanceClock(61_000);
    const [settled] = await reconcileStale(h.deps);
    expect(settled?.state).toBe("applied");
  });

  it("a WAF rule review the zone still does not show a minute later is not called in effect, nor said never to have reached the API", async () => {
    const z = shieldZone(h, SIM_IDS.waf.zoneId);
    z.wafDisabledRules = [];
    await askAndApprove(
      h,
      `waf ${SIM_IDS.waf.zoneId} ${SIM_IDS.waf.ruleId} disable`,
      `WAF rule ${SIM_IDS.waf.ruleId}`,
      (t) => t.includes("Not known yet"),
      () =>
        h.sim.addFault({
          method: "POST",
          path: /\/waf\/rules\/review-triggered\/\d+$/,
          status: 200,
          body: { success: true, errorResponse: null },
          times: 1,
        }),
    );
    h.advanceClock(61_000);
    const [settled] = await reconcileStale(h.deps);
    expect(settled?.state).toBe("failed");
    expect(settled?.lastError?.message).toContain("still did not show when edgeops checked again");
    expect(settled?.lastError?.message).not.toContain("may never have reached the Edge API");
  });

  // ---- what else moved with PATCH /shield/shield-zone ------------------------------------------

  /** The zone at DDoS Low, WAF Block, learning mode off: what the PATCH tests start from. */
  const zoneAtLowBlockLearningOff = () => {
    const z = shieldZone(h, ZONE);
    z.dDoSShieldSensitivity = 1;
    z.wafExecutionMode = 1;
    z.learningMode = false;
    return z;
  };

  /** The next PATCH of the zone, held at the Edge API until `answer()`; `arrived()` once it is there. */
  const heldPatch = () => {
    const patches = () =>
      h.sim.requests.filter((r) => r.method === "PATCH" && r.path === "/shield/shield-zone");
    const sent = patches().length;
    let answer = () => {};
    const holdUntil = new Promise<void>((r) => (answer = r));
    return {
      fault: { method: "PATCH", path: "/shield/shield-zone", holdUntil },
      arrived: () => h.sim.waitForRequest(() => patches().length === sent + 1),
      answer: () => answer(),
    };
  };

  it("settings that moved with the PATCH are named on the card and in the audit log, with no Retry", () =>
    withReadings(h.sim, { "shield-settings.patch-absent": "keep" }, async () => {
      const z = zoneAtLowBlockLearningOff();
      const patch = heldPatch();
      const settled = askAndApprove(
        h,
        `ddos ${ZONE} high`,
        "DDoS sensitivity",
        (t) => t.includes("is in effect"),
        () => h.sim.addFault({ ...patch.fault, times: 1 }),
      );
      // While the PATCH is in flight (held at the Edge API), two other settings move (the API's reset or
      // someone in the dashboard); then the Edge API answers it.
      await patch.arrived();
      z.wafExecutionMode = 0;
      z.learningMode = true;
      patch.answer();
      const { text, buttons } = await settled;
      expect(text).toContain("WAF execution mode: Block → Log");
      expect(text).toContain("Learning mode: off → on");
      expect(buttons.some((b) => b.action_id === ACTIONS.retry)).toBe(false);
      expect(z.dDoSShieldSensitivity).toBe(3);
      const audit = await h.store.audit.list("T0001", 20);
      const applied = audit.find((a) => a.action === "ddos_sensitivity.apply");
      expect(applied?.outcome).toBe("applied");
      expect(JSON.stringify(applied?.details)).toContain("WAF execution mode: Block → Log");
    }));

  it("a PATCH that did not take while another setting moved: failed, naming what moved, with no Retry", async () => {
    const z = zoneAtLowBlockLearningOff();
    const patch = heldPatch();
    const settled = askAndApprove(h, `ddos ${ZONE} challenge`, "DDoS sensitivity", failedCard, () =>
      h.sim.addFault({ ...patch.fault, status: 200, body: "none", times: 1 }),
    );
    await patch.arrived();
    z.wafExecutionMode = 0;
    patch.answer();
    const { text, buttons } = await settled;
    expect(text).toContain("reading it back right after shows Low");
    expect(text).toContain("WAF execution mode: Block → Log");
    expect(buttons.some((b) => b.action_id === ACTIONS.retry)).toBe(false);
  });
  it("an unchanged setting answered in another form the documents allow is not 'another setting moved'", async () => {
    const z = zoneAtLowBlockLearningOff();
    // Empty settings stored as null: after the PATCH the lists read [], the booleans false, and the WAF
    // engine's variables come back in another order.
    z.wafDisabledRules = null;
    z.wafLogOnlyRules = null;
    z.wafRequestIgnoredHeaders = null;
    z.wafRealtimeThreatIntelligenceEnabled = null;
    z.whitelabelResponsePages = null;
    z.wafEngineConfig = [
      { name: "paranoia_level", valueEncoded: "2" },
      { name: "inbound_anomaly_score_threshold", valueEncoded: "5" },
    ];
    const before = patchesOf(h).length;
    const { text } = await withReadings(
      h.sim,
      {
        "shield-settings.patch-absent": "keep",
        "shield-settings.empty-form": 1,
        "shield-settings.waf-engine-order": "reverse",
      },
      () => askAndApprove(h, `ddos ${ZONE} high`, "DDoS sensitivity"),
    );
    expect(patchesOf(h).length - before).toBe(1);
    expect(z.wafDisabledRules).toEqual([]);
    expect(z.wafRealtimeThreatIntelligenceEnabled).toBe(false);
    expect(z.wafEngineConfig?.[0]?.name).toBe("inbound_anomaly_score_threshold");
    expect(text).not.toContain("Other settings moved");
    const audit = await h.store.audit.list("T0001", 20);
    const applied = audit.find((a) => a.action === "ddos_sensitivity.apply");
    expect(applied?.outcome).toBe("applied");
    expect(JSON.stringify(applied?.details ?? {})).not.toContain("alsoChanged");
  });

  it("a PATCH that resets the fields it was not sent: what moved is named on the card, with no Retry", async () => {
    const z = zoneAtLowBlockLearningOff();
    z.wafEnabled = true;
    const { text, buttons } = await withReadings(h.sim, { "shield-settings.patch-absent": "reset" }, () =>
      askAndApprove(h, `ddos ${ZONE} high`, "DDoS sensitivity"),
    );
    expect(z.wafExecutionMode).toBe(0);
    expect(text).toContain("Other settings moved with this change");
    expect(text).toContain("WAF execution mode: Block → Log");
    expect(buttons.some((b) => b.action_id === ACTIONS.retry)).toBe(false);
  });
});

describe("a temporary change applied at once whose card can't be posted", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
    await h.store.policies.setChannel("T0001", "C0NOCARD", { approvals: "off" });
  });
  afterAll(async () => {
    await h.close();
  });

  it("the requester reads that it is in effect, until when, and the command that undoes it", async () => {
    const z = shieldZone(h, ZONE);
    z.dDoSShieldSensitivity = 1;
    const typed = await command(h, `ddos ${ZONE} high for 30m`, BOB);
    const confirm = typed.buttons.find((b) => b.action_id === ACTIONS.changeConfirm)!;
    h.slack.addFault({ method: "chat.postMessage", error: "not_in_channel", channel: "C0NOCARD", times: 1 });
    const click = await h.click(confirm, { userId: BOB, channelId: "C0NOCARD" });
    await h.slack.waitForResponse(click.responseId);
    const said = blocksText(h.slack.responsesTo(click.responseId).at(-1)!.body.blocks);
    expect(z.dDoSShieldSensitivity).toBe(3);
    expect(said).not.toContain("nothing changed");
    expect(said).toContain("is in effect until");
    expect(said).toContain("/edge ddos");
    expect(said).toContain("low");
    const [request] = (await h.store.audit.list("T0001", 20)).filter(
      (a) => a.action === "ddos_sensitivity.apply",
    );
    expect(request?.outcome).toBe("applied");
  });
});

describe("/edge block on a list someone turned off", () => {
  const h = useHarness({}, { resetEach: false });

  it("the confirmation says that confirming turns the list back on with every entry in it", async () => {
    const zoneId = SIM_IDS.customerAccessList.zoneId;
    await askAndApprove(h, `block ${zoneId} 203.0.113.10`, "203.0.113.10", (t) => t.includes("is in effect"));
    await askAndApprove(h, `block ${zoneId} 203.0.113.11`, "203.0.113.11", (t) => t.includes("is in effect"));
    const list = (h.sim.state.accessLists.get(zoneId) ?? []).find((l) => l.name === "edgeops: blocked IPs")!;
    list.isEnabled = false; // a person turned it off in the dashboard

    const typed = await command(h, `block ${zoneId} 203.0.113.12`);
    expect(typed.text).toContain('"edgeops: blocked IPs" on this zone is turned off');
    expect(typed.text).toContain("entries in it are blocked again, not only 203.0.113.12");
    // The entries of a list that is off are not in force: the confirmation does not call them blocked.
    const again = await command(h, `block ${zoneId} 203.0.113.10`);
    expect(again.text).toContain("not listed by edgeops → *blocked*");
  });
});

describe("reads and undos", () => {
  const h = useHarness();

  it("the incident card's rate limits answered {data: null, error.success false} claiming 200 say the refusal, not 'none'", async () => {
    h.sim.addFault({
      method: "GET",
      path: `/shield/metrics/rate-limits/${ZONE}`,
      refuse: { message: "Rate-limit metrics are paused.", statusCode: 200 },
    });
    const res = await h.command(`incident ${ZONE}`, { userId: BOB, channelId: "C0001" });
    const card = await h.slack.waitForResponse(
      res.responseId,
      (r) => r.body.replace_original === true,
      15_000,
    );
    expect(blocksText(card.body.blocks)).toContain("Rate-limit metrics are paused.");
  });

  it("an undo answered 200 with nothing put back is not reported undone: it is tried again", async () => {
    category(h, BOTS_ZONE, 7).categoryAction = 0;
    await askAndApprove(h, `bot ${BOTS_ZONE} social block for 30m`, "Social", (t) =>
      t.includes("is in effect"),
    );
    expect(category(h, BOTS_ZONE, 7).categoryAction).toBe(1);
    h.sim.addFault({ method: "PUT", path: /\/categories\/7$/, status: 200, body: "none", times: 1 });
    h.advanceClock(31 * 60_000);
    expect(await createChangeSweeper(h.app.env).sweep()).toBe(1);
    const card = await cardUpdate(h, (t) => t.includes("Social") && t.includes("undo failed"));
    const text = blocksText(card.args.blocks);
    expect(text).toContain("reading it back right after shows Block");
    expect(text).not.toContain("Undone");
    expect(category(h, BOTS_ZONE, 7).categoryAction).toBe(1);
  });
});
