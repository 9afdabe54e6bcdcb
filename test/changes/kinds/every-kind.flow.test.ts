import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createChangeSweeper, reconcileStale } from "../../../src/jobs/change-sweeps.js";
import { ACTIONS } from "../../../src/slack/ids.js";
import { SIM_IDS } from "../../../tools/simulator/index.js";
import { pinReadings } from "../../support/adversary.js";
import { onPostgres, postgresTests } from "../../support/both-stores.js";
import { nextTimer } from "../../support/clock.js";
import {
  answerTo,
  blocksText,
  cardUpdate,
  findButtons,
  type Harness,
  type HarnessOptions,
  startHarness,
} from "../../support/harness.js";
import { ALICE, BOB, CAROL } from "../../support/users.js";
import { startWorld, type World } from "../../support/world.js";

/**
 * Every change kind passes the same suite, through the receiver, the fake Slack and the
 * simulator: confirm / cancel, self-approval refused, N approvals, expiry, exactly one Edge call under
 * twenty concurrent clicks, Retry once, audit rows, faults (429, 500, timeout after send, 2xx with an
 * odd body), bad arguments answered with an example.
 */

interface KindFixture {
  kind: string;
  /** A command that asks for the change (a fresh one each call: settings are reset first). */
  ask(h: Harness): string;
  /** Words on the card that name this change. */
  label: string;
  /** The Edge API write this change makes. */
  write: { method: string; path: RegExp };
  /** Not safe to repeat: a 5xx or timeout is not retried by the client. */
  notRetried: boolean;
  /** A one-off action: nothing to read back afterwards. */
  oneOff: boolean;
  /** Read back, but with no undo (a WAF rule review): it can't be temporary. */
  noUndo?: boolean;
  /** How many times the change is in force now (the simulator's own state). */
  effect(h: Harness): number;
  /** Bad arguments, each answered with an example and no button. */
  bad: string[];
}

const ZONE = SIM_IDS.firstShieldZone;
const APP = SIM_IDS.appWithUnknownStatus;
const shieldZone = (h: Harness) => h.sim.state.shieldZones.find((z) => z.shieldZoneId === ZONE)!;
const pullZoneOf = (h: Harness) => h.sim.state.shieldZones.find((z) => z.pullZoneId !== null)!.pullZoneId!;

const KINDS: KindFixture[] = [
  {
    kind: "bot_category",
    ask: (h) => {
      h.sim.state.botCategories.get(ZONE)!.find((g) => g.category === 1)!.categoryAction = 0;
      return `bot ${ZONE} seo block`;
    },
    label: "SEO",
    write: { method: "PUT", path: /bot-categorization\/categories\/1$/ },
    notRetried: false,
    oneOff: false,
    effect: (h) =>
      h.sim.state.botCategories.get(ZONE)!.find((g) => g.category === 1)!.categoryAction === 1 ? 1 : 0,
    bad: ["bot", `bot ${ZONE}`, `bot ${ZONE} robots block`, `bot ${ZONE} seo maybe`, `bot zone seo block`],
  },
  {
    kind: "restart_app",
    ask: () => `restart ${APP}`,
    label: "Restart application",
    write: { method: "POST", path: /\/mc\/apps\/[^/]+\/restart$/ },
    notRetried: true,
    oneOff: true,
    effect: (h) => h.sim.state.appRestarts.get(APP)?.length ?? 0,
    bad: ["restart", "restart no-such-app", `restart ${APP} now`],
  },
  {
    kind: "purge",
    ask: (h) => `purge ${pullZoneOf(h)} product-images`,
    label: "Purge cache tag",
    write: { method: "POST", path: /\/pullzone\/\d+\/purgeCache$/ },
    notRetried: false,
    oneOff: true,
    effect: (h) => h.sim.state.purges.filter((p) => p.kind === "pullZone").length,
    bad: ["purge", "purge abc", "purge 1 tag extra", "purge 1 <!here>", "purge url", "purge url ftp://x"],
  },
  // Shield zone settings and WAF rule reviews
  {
    kind: "ddos_sensitivity",
    ask: (h) => {
      shieldZone(h).dDoSShieldSensitivity = 1;
      return `ddos ${ZONE} challenge`;
    },
    label: "DDoS sensitivity",
    write: { method: "PATCH", path: /^\/shield\/shield-zone$/ },
    notRetried: false,
    oneOff: false,
    effect: (h) => (shieldZone(h).dDoSShieldSensitivity === 4 ? 1 : 0),
    bad: [
      "ddos",
      `ddos ${ZONE}`,
      `ddos ${ZONE} extreme`,
      `ddos ${ZONE} high now`,
      "ddos zone!! high",
      `ddos ${ZONE} high for 99h`,
    ],
  },
  {
    kind: "learning_mode",
    ask: (h) => {
      shieldZone(h).learningMode = false;
      return `learning ${ZONE} on`;
    },
    label: "Learning mode",
    write: { method: "PATCH", path: /^\/shield\/shield-zone$/ },
    notRetried: false,
    oneOff: false,
    effect: (h) => (shieldZone(h).learningMode === true ? 1 : 0),
    bad: ["learning", `learning ${ZONE}`, `learning ${ZONE} maybe`, `learning ${ZONE} on now`],
  },
  {
    kind: "waf_mode",
    ask: (h) => {
      shieldZone(h).wafExecutionMode = 0;
      return `waf-mode ${ZONE} block`;
    },
    label: "WAF execution mode",
    write: { method: "PATCH", path: /^\/shield\/shield-zone$/ },
    notRetried: false,
    oneOff: false,
    effect: (h) => (shieldZone(h).wafExecutionMode === 1 ? 1 : 0),
    bad: ["waf-mode", `waf-mode ${ZONE}`, `waf-mode ${ZONE} challenge`, `waf-mode ${ZONE} log please`],
  },
  {
    kind: "waf_rule_review",
    ask: (h) => {
      // Not disabled yet, so each ask is a fresh review (Disable rule is read back in the zone's list).
      shieldZone(h).wafDisabledRules = [];
      return `waf ${ZONE} ${SIM_IDS.waf.ruleId} disable`;
    },
    label: `WAF rule ${SIM_IDS.waf.ruleId}`,
    write: { method: "POST", path: /^\/shield\/waf\/rules\/review-triggered\/\d+$/ },
    notRetried: false,
    oneOff: false,
    noUndo: true,
    effect: (h) => h.sim.state.wafRuleReviews.length,
    bad: [
      `waf ${ZONE}`,
      `waf ${ZONE} 942100 nuke`,
      `waf ${ZONE} 942100 disable now`,
      `waf ${ZONE} <!here> disable`,
    ],
  },
  {
    kind: "access_block",
    ask: (h) => {
      // Out of edgeops' lists again, so each ask is a fresh block (the customer's list is never touched).
      for (const l of h.sim.state.accessLists.get(ZONE) ?? [])
        if (l.name.startsWith("edgeops: ")) l.content = l.content.replace(/^203\.0\.113\.7$/m, "");
      return `block ${ZONE} 203.0.113.7`;
    },
    label: "Block IP 203.0.113.7",
    write: { method: "PATCH", path: /\/access-lists\/\d+$/ },
    notRetried: false,
    oneOff: false,
    effect: (h) =>
      (h.sim.state.accessLists.get(ZONE) ?? []).filter(
        (l) => l.name === "edgeops: blocked IPs" && l.content.split("\n").includes("203.0.113.7"),
      ).length,
    bad: [
      "block",
      `block ${ZONE}`,
      `block ${ZONE} 203.0.113.300`,
      `block ${ZONE} 203.0.113.0/33`,
      `block ${ZONE} 10.0.0.0/4`,
      `block ${ZONE} 203.0.113.7/24`,
      `block ${ZONE} AS99999999999`,
      `block ${ZONE} 4134`,
      `block ${ZONE} XX`,
      `block ${ZONE} t13d1516h2_8daaf6152771`,
      `block ${ZONE} <!here>`,
      `block ${ZONE} 203.0.113.7 deny`,
      `block ${ZONE} 203.0.113.7 challenge now`,
      `block ${ZONE} 203.0.113.7 for 3d`,
      `unblock ${ZONE} 203.0.113.7 challenge`,
    ],
  },
];

function writes(h: Harness, f: KindFixture) {
  return h.sim.requests.filter((r) => r.method === f.write.method && f.write.path.test(r.path)).length;
}

const command = (h: Harness, text: string, userId = BOB) => answerTo(h, text, userId);

/** Bob asks and confirms: the pending card's Approve button. */
async function askAndConfirm(h: Harness, f: KindFixture) {
  const typed = await command(h, f.ask(h));
  const confirm = typed.buttons.find((b) => b.action_id === ACTIONS.changeConfirm);
  expect(confirm, `${f.kind}: ${typed.text}`).toBeDefined();
  const click = await h.click(confirm!, { userId: BOB });
  const banner = blocksText((await h.slack.waitForResponse(click.responseId)).body.blocks);
  const post = await h.slack.waitForCall("chat.postMessage", (c) => {
    const t = blocksText(c.args.blocks);
    return t.includes("Approval needed") && t.includes(f.label);
  });
  const approve = findButtons(post.args.blocks).find((b) => b.action_id === ACTIONS.approve)!;
  const reject = findButtons(post.args.blocks).find((b) => b.action_id === ACTIONS.reject)!;
  return { banner, approve, reject };
}

describe.each(KINDS)("change kind $kind (SQLite)", (f) => {
  // A world: the Edge client's timeouts and the queue's pause after a 429 pass when the test moves the clock.
  let h: World;
  beforeAll(async () => {
    h = await startWorld();
  });
  afterEach(async () => {
    h.sim.clearFaults();
    h.slack.clear();
    await h.store.policies.clearChannel("T0001", "C0001");
  });
  afterAll(async () => {
    await h.close();
  });

  it("bad arguments get a sentence with an example and no button", async () => {
    for (const text of f.bad) {
      const answer = await command(h, text);
      expect(answer.text, text).toMatch(/For example|\/edge /);
      expect(
        answer.buttons.filter((b) => b.action_id === ACTIONS.changeConfirm),
        text,
      ).toHaveLength(0);
    }
  });

  it("Cancel changes nothing; the requester can't approve; another approver applies it with one call, audited", async () => {
    const typed = await command(h, f.ask(h));
    await h.click(typed.buttons.find((b) => b.action_id === ACTIONS.changeCancel)!, { userId: BOB });
    const before = writes(h, f);
    const { banner, approve } = await askAndConfirm(h, f);
    expect(banner).toContain("needs a second person's approval");
    const self = await h.click(approve, { userId: BOB });
    expect(blocksText((await h.slack.waitForResponse(self.responseId)).body.blocks)).toContain(
      "someone else",
    );
    expect(writes(h, f)).toBe(before);
    const effect = f.effect(h);
    await h.click(approve, { userId: CAROL });
    await cardUpdate(h, (t) => t.includes(f.label) && t.includes("is in effect"));
    expect(writes(h, f) - before).toBe(1);
    expect(f.effect(h) - effect).toBe(1);
    const audit = (await command(h, "audit 10", ALICE)).text;
    for (const step of ["request", "approve", "apply"]) expect(audit).toContain(`${f.kind}.${step}`);
  });

  it("needs two distinct approvers when the policy says 2; an expired request can't be approved", async () => {
    await h.store.policies.setChannel("T0001", "C0001", { approvalsNeeded: 2 });
    const before = writes(h, f);
    const { approve } = await askAndConfirm(h, f);
    await h.click(approve, { userId: CAROL });
    await cardUpdate(h, (t) => t.includes("Approved by 1 of 2"));
    expect(writes(h, f)).toBe(before);
    await h.click(approve, { userId: ALICE });
    await cardUpdate(h, (t) => t.includes(f.label) && t.includes("is in effect"));
    expect(writes(h, f) - before).toBe(1);

    h.slack.clear();
    await h.store.policies.clearChannel("T0001", "C0001");
    const late = await askAndConfirm(h, f);
    h.advanceClock(31 * 60_000);
    const click = await h.click(late.approve, { userId: CAROL });
    expect(blocksText((await h.slack.waitForResponse(click.responseId)).body.blocks)).toContain("expired");
    expect(writes(h, f) - before).toBe(1);
  });

  it("twenty concurrent Approve clicks make exactly one call", async () => {
    const approvers = Array.from({ length: 20 }, (_, i) => `UK${String(i).padStart(2, "0")}`);
    for (const id of approvers) h.slack.users.set(id, { id, is_admin: true });
    const before = writes(h, f);
    const { approve } = await askAndConfirm(h, f);
    await Promise.all(approvers.map((userId) => h.click(approve, { userId })));
    await cardUpdate(h, (t) => t.includes(f.label) && t.includes("is in effect"));
    await h.settled();
    expect(writes(h, f) - before).toBe(1);
  });

  it("a 2xx with an odd body is applied; a 500 fails with Retry, and Retry makes one more call", async () => {
    let { approve } = await askAndConfirm(h, f);
    h.sim.addFault({ ...f.write, status: 200, body: "malformed", times: 1 });
    await h.click(approve, { userId: CAROL });
    await cardUpdate(h, (t) => t.includes(f.label) && t.includes("is in effect"));

    h.slack.clear();
    ({ approve } = await askAndConfirm(h, f));
    h.sim.addFault({ ...f.write, status: 500, body: "none", times: f.notRetried ? 1 : 3 });
    const before = writes(h, f);
    await h.click(approve, { userId: CAROL });
    const failed = await cardUpdate(h, (t) => t.includes(f.label) && t.includes("did not go through"));
    expect(writes(h, f) - before).toBe(f.notRetried ? 1 : 3);
    const retry = findButtons(failed.args.blocks).find((b) => b.action_id === ACTIONS.retry)!;
    await Promise.all([h.click(retry, { userId: CAROL }), h.click(retry, { userId: ALICE })]);
    await cardUpdate(h, (t) => t.includes(f.label) && t.includes("is in effect"));
    await h.settled();
    expect(writes(h, f) - before).toBe((f.notRetried ? 1 : 3) + 1);
  });

  it("a 429 waits for Retry-After and then applies once", async () => {
    const { approve } = await askAndConfirm(h, f);
    h.sim.addFault({ ...f.write, status: 429, retryAfter: "1", times: 1 });
    const before = writes(h, f);
    const paused = nextTimer(h.deps.clock, 1_000); // the key's queue pauses for Retry-After
    await h.click(approve, { userId: CAROL });
    await paused;
    expect(writes(h, f) - before).toBe(1); // the 429; the retry waits for the pause to end
    await h.clock.advance(1_000);
    await cardUpdate(h, (t) => t.includes(f.label) && t.includes("is in effect"));
    expect(writes(h, f) - before).toBe(2); // the 429 and the one that went through
  });

  it.runIf(!f.oneOff && !f.noUndo)(
    "for 30m: applied, then undone exactly once by two sweepers at once, the previous value back",
    async () => {
      const typed = await command(h, `${f.ask(h)} for 30m`);
      const confirm = typed.buttons.find((b) => b.action_id === ACTIONS.changeConfirm);
      expect(confirm, typed.text).toBeDefined();
      await h.click(confirm!, { userId: BOB });
      const post = await h.slack.waitForCall("chat.postMessage", (c) =>
        blocksText(c.args.blocks).includes(f.label),
      );
      expect(blocksText(post.args.blocks)).toContain("30 min, then undone");
      const approve = findButtons(post.args.blocks).find((b) => b.action_id === ACTIONS.approve)!;
      await h.click(approve, { userId: CAROL });
      await cardUpdate(h, (t) => t.includes(f.label) && t.includes("Undo now"));
      expect(f.effect(h)).toBe(1);
      const before = writes(h, f);
      h.advanceClock(31 * 60_000);
      const sweepers = [createChangeSweeper(h.app.env), createChangeSweeper(h.app.env)];
      await Promise.all(sweepers.map((x) => x.sweep()));
      await cardUpdate(h, (t) => t.includes(f.label) && t.includes("Undone"));
      expect(f.effect(h)).toBe(0);
      expect(writes(h, f) - before).toBe(1);
      await Promise.all(sweepers.map((x) => x.sweep()));
      expect(writes(h, f) - before).toBe(1);
      const audit = (await command(h, "audit 10", ALICE)).text;
      expect(audit).toContain(`${f.kind}.undo`);
    },
  );

  it("a timeout after the call was sent says 'not known yet'; the reconciler settles it honestly", async () => {
    const { approve } = await askAndConfirm(h, f);
    // Each attempt is answered 2.3 s after it arrives (on the world's clock): after the client's 2 s timeout.
    h.sim.addFault({ ...f.write, latencyMs: 2_300, times: 3 });
    const before = writes(h, f);
    await h.click(approve, { userId: CAROL });
    // Each attempt is cut off when the clock passes its timeout; then the card says so, or the client tries
    // again (a call safe to repeat, at most three times in all).
    const checking = cardUpdate(h, (t) => t.includes("Not known yet, checking"));
    let attempts = 0;
    for (;;) {
      const next = await Promise.race([
        checking.then(() => "card" as const),
        h.sim
          .waitForRequest(() => writes(h, f) - before > attempts)
          .then(
            () => "sent" as const,
            () => "none" as const,
          ),
      ]);
      if (next === "card") break;
      if (next === "none") throw new Error("neither another attempt nor the card came");
      attempts++;
      await h.clock.advance(2_000);
    }
    expect(writes(h, f) - before).toBe(attempts);
    if (f.notRetried) expect(attempts).toBe(1);
    else expect(attempts).toBeLessThanOrEqual(3);
    await h.clock.advance(300); // the last late answer lands in the simulator
    h.advanceClock(61_000);
    const [settled] = await reconcileStale(h.deps);
    // A setting is re-read (in force → applied); a one-off action can't be, so it says so, with Retry.
    if (f.oneOff) expect(settled?.lastError?.message).toContain("can't tell afterwards");
    else expect(settled?.state).toBe("applied");
  });
});

async function oneCallOnPostgres(options: HarnessOptions) {
  const h = await startHarness(options);
  // Every kind in turn on one zone: a PATCH that reset the fields it was not sent (a reading the documents
  // allow, specified in verified-writes.flow.test.ts) would turn the WAF off under the WAF review that follows.
  pinReadings(h.sim, { "shield-settings.patch-absent": "keep" });
  try {
    for (const f of KINDS) {
      h.slack.clear();
      const before = writes(h, f);
      const { approve } = await askAndConfirm(h, f);
      await Promise.all([CAROL, ALICE, CAROL, ALICE, CAROL].map((userId) => h.click(approve, { userId })));
      await cardUpdate(h, (t) => t.includes(f.label) && t.includes("is in effect"));
      await h.settled();
      expect(writes(h, f) - before, f.kind).toBe(1);
    }
  } finally {
    await h.close();
  }
}

describe("every kind applies once under concurrent approvals on PostgreSQL", () => {
  it.runIf(postgresTests)("on PostgreSQL", async () => {
    await onPostgres(oneCallOnPostgres);
  });
});

describe("a policy can require approvals for some changes only (by name or risk level)", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => {
    await h.close();
  });

  it("narrowing approvals to restarts needs another admin; then a restart waits and a purge applies at once", async () => {
    const bad = await command(h, "policy approvals required for reboot", ALICE);
    expect(bad.text).toContain("For example: /edge policy approvals required for purge,restart");
    const asked = await command(h, "policy approvals required for restart here", ALICE);
    expect(asked.text).toContain("requires approval for fewer kinds of change");
    const card = await h.slack.waitForCall("chat.postMessage", (c) =>
      blocksText(c.args.blocks).includes("approvals for restart"),
    );
    const approve = findButtons(card.args.blocks).find((b) => b.action_id === ACTIONS.approve)!;
    await h.click(approve, { userId: CAROL });
    await cardUpdate(h, (t) => t.includes("approvals for restart") && t.includes("is in effect"));
    expect((await command(h, "policy", BOB)).text).toContain("restart");

    h.slack.clear();
    const purge = KINDS.find((k) => k.kind === "purge")!;
    const before = writes(h, purge);
    const typed = await command(h, purge.ask(h));
    const confirm = typed.buttons.find((b) => b.action_id === ACTIONS.changeConfirm)!;
    const done = await h.click(confirm, { userId: BOB });
    expect(blocksText((await h.slack.waitForResponse(done.responseId)).body.blocks)).toContain("Done");
    expect(writes(h, purge) - before).toBe(1);

    const restart = KINDS.find((k) => k.kind === "restart_app")!;
    const { banner } = await askAndConfirm(h, restart);
    expect(banner).toContain("needs a second person's approval");

    // Widening back to every change (or to a risk level that covers more) is a tightening: at once.
    h.slack.clear();
    const wider = await command(h, "policy approvals required for high,medium here", ALICE);
    expect(wider.text).toContain("Policy updated");
    // A tightening is told to the channel, not put to a vote.
    expect(h.slack.callsTo("chat.postMessage").map((c) => blocksText(c.args.blocks))).toEqual([
      expect.stringContaining("changed the approval policy"),
    ]);
  });
});
