import { describe, expect, it } from "vitest";
import { createChangeSweeper } from "../../src/jobs/change-sweeps.js";
import { ACTIONS } from "../../src/slack/ids.js";
import { SIM_IDS } from "../../tools/simulator/index.js";
import type { SimAccessList } from "../../tools/simulator/seed.js";
import { onPostgres, postgresTests } from "../support/both-stores.js";
import {
  answerTo,
  blocksText,
  cardUpdate,
  findButtons,
  type Harness,
  type HarnessOptions,
  startHarness,
} from "../support/harness.js";
import { refuseWrites } from "../support/refused-writes.js";
import { ALICE, BOB, CAROL } from "../support/users.js";

/**
 * Each target (a zone's setting, a bot category, an access entry) remembers
 * the request that set it last; an undo touches only what its request still owns and puts back what its
 * apply replaced; requests for one target that wait together say so, and the later one is refused.
 */

const OPEN = "C0OPEN"; // approvals off
const DDOS_ZONE = SIM_IDS.zoneUnderAttack;
const BOT_ZONE = SIM_IDS.firstShieldZone;
const ACCESS_ZONE = SIM_IDS.customerAccessList.zoneId;

const patches = (h: Harness) =>
  h.sim.requests.filter((r) => r.method === "PATCH" && r.path === "/shield/shield-zone");
const botPuts = (h: Harness) =>
  h.sim.requests.filter((r) => r.method === "PUT" && /bot-categorization\/categories\//.test(r.path));
const zone = (h: Harness) => h.sim.state.shieldZones.find((z) => z.shieldZoneId === DDOS_ZONE)!;
const category = (h: Harness, c: number) =>
  h.sim.state.botCategories.get(BOT_ZONE)!.find((g) => g.category === c)!;
const entries = (l: SimAccessList | undefined) => (l?.content ?? "").split("\n").filter((x) => x !== "");
const blockedIps = (h: Harness) =>
  entries((h.sim.state.accessLists.get(ACCESS_ZONE) ?? []).find((l) => l.name === "edgeops: blocked IPs"));

/** Types `/edge <text>` as `userId` in `channelId` and presses Confirm: what the click answered. */
async function confirm(h: Harness, text: string, userId: string, channelId = OPEN) {
  const typed = await answerTo(h, text, userId, channelId);
  const button = typed.buttons.find((b) => b.action_id === ACTIONS.changeConfirm);
  if (!button) throw new Error(`no Confirm on: ${typed.text}`);
  const click = await h.click(button, { userId, channelId });
  expect(click.status).toBe(200);
  return blocksText((await h.slack.waitForResponse(click.responseId)).body.blocks);
}

async function withHarness(options: HarnessOptions, run: (h: Harness) => Promise<void>) {
  const h = await startHarness(options);
  try {
    await h.store.policies.setChannel("T0001", OPEN, { approvals: "off", updatedBy: ALICE });
    await run(h);
    expect(h.slack.violations).toEqual([]);
  } finally {
    await h.close();
  }
}

/** DDoS high for 30 minutes; a second responder asks for high to keep it: it stays High. */
async function keptForGood(options: HarnessOptions) {
  await withHarness(options, async (h) => {
    const sweeper = createChangeSweeper(h.app.env);
    zone(h).dDoSShieldSensitivity = 1;
    expect(await confirm(h, `ddos ${DDOS_ZONE} high for 30m`, BOB)).toContain("Done");
    expect(zone(h).dDoSShieldSensitivity).toBe(3);
    const before = patches(h).length;
    const kept = await confirm(h, `ddos ${DDOS_ZONE} high`, ALICE);
    expect(kept).not.toContain("nothing changed");
    expect(kept).toContain(
      "was already in force and now stays: the temporary change that set it will not undo it",
    );
    expect(patches(h).length).toBe(before); // nothing to write
    const bobsCard = await cardUpdate(h, (t) => t.includes("Kept for good by"));
    expect(blocksText(bobsCard.args.blocks)).toContain(`<@${ALICE}>'s request`);
    expect(findButtons(bobsCard.args.blocks).some((b) => b.action_id === ACTIONS.undo)).toBe(false);
    h.advanceClock(31 * 60_000);
    await sweeper.sweep();
    expect(zone(h).dDoSShieldSensitivity).toBe(3);
    expect(patches(h).length).toBe(before);
  });
}

/** Block X for 24h while block X for 30m is in force: X stays blocked for 24 hours, then is unblocked. */
async function keptLonger(options: HarnessOptions) {
  await withHarness(options, async (h) => {
    const sweeper = createChangeSweeper(h.app.env);
    const ip = "198.51.100.40";
    expect(await confirm(h, `block ${ACCESS_ZONE} ${ip} for 30m`, BOB)).toContain("Done");
    expect(blockedIps(h)).toContain(ip);
    expect(await confirm(h, `block ${ACCESS_ZONE} ${ip} for 24h`, ALICE)).toContain(
      "was already in force and now stays until",
    );
    const until = await cardUpdate(h, (t) => t.includes(`Block IP ${ip}`) && t.includes("Kept by"));
    expect(blocksText(until.args.blocks)).toMatch(/Kept by <@U0001>'s request \(Block IP [^)]*\) until/);
    h.advanceClock(31 * 60_000);
    await sweeper.sweep();
    expect(blockedIps(h)).toContain(ip);
    h.advanceClock(24 * 60 * 60_000);
    await sweeper.sweep();
    expect(blockedIps(h)).not.toContain(ip);
  });
}

/** Unblocked, then blocked again by someone else: the first block's undo leaves the new block alone. */
async function reblocked(options: HarnessOptions) {
  await withHarness(options, async (h) => {
    const sweeper = createChangeSweeper(h.app.env);
    const other = "198.51.100.41";
    expect(await confirm(h, `block ${ACCESS_ZONE} ${other} for 30m`, BOB)).toContain("Done");
    expect(await confirm(h, `unblock ${ACCESS_ZONE} ${other}`, CAROL)).toContain("Done");
    const superseded = await cardUpdate(
      h,
      (t) => t.includes(`Block IP ${other}`) && t.includes("Superseded"),
    );
    expect(blocksText(superseded.args.blocks)).toContain(`Superseded by <@${CAROL}>'s request (Unblock`);
    expect(await confirm(h, `block ${ACCESS_ZONE} ${other}`, ALICE)).toContain("Done");
    h.advanceClock(31 * 60_000);
    await sweeper.sweep();
    expect(blockedIps(h)).toContain(other);
  });
}

/** SEO is Allow; Bob asks Block for 30m; someone clears it in the dashboard; Carol approves: refused. */
async function stale(options: HarnessOptions) {
  await withHarness(options, async (h) => {
    category(h, 1).categoryAction = 2;
    expect(await confirm(h, `bot ${BOT_ZONE} 1 block for 30m`, BOB, "C0001")).toContain(
      "needs a second person's approval",
    );
    const card = await h.slack.waitForCall("chat.postMessage", (c) =>
      blocksText(c.args.blocks).includes("Approval needed: Block SEO"),
    );
    category(h, 1).categoryAction = 0;
    const puts = botPuts(h).length;
    await h.click(findButtons(card.args.blocks).find((b) => b.action_id === ACTIONS.approve)!, {
      userId: CAROL,
    });
    const refused = await cardUpdate(h, (t) => t.includes("did not go through"));
    expect(blocksText(refused.args.blocks)).toContain("since this request was made");
    expect(botPuts(h).length).toBe(puts);
    expect(category(h, 1).categoryAction).toBe(0);
  });
}

/**
 * Bob asks Block for 30m on Allow; someone sets Block in the dashboard before Carol approves: nothing
 * to set and nothing to undo, so it is not applied (set outside edgeops); half an hour later it is
 * still Block, never put back to Allow, and no card says "undone".
 */
async function undoesToReplaced(options: HarnessOptions) {
  await withHarness(options, async (h) => {
    category(h, 2).categoryAction = 2;
    await confirm(h, `bot ${BOT_ZONE} 2 block for 30m`, BOB, "C0001");
    const second = await h.slack.waitForCall("chat.postMessage", (c) =>
      blocksText(c.args.blocks).includes("Approval needed: Block AI scraper"),
    );
    category(h, 2).categoryAction = 1;
    await h.click(findButtons(second.args.blocks).find((b) => b.action_id === ACTIONS.approve)!, {
      userId: CAROL,
    });
    const card = await cardUpdate(h, (t) => t.includes("AI scraper") && t.includes("Not applied"));
    expect(blocksText(card.args.blocks)).toContain("is already Block, permanently (set outside edgeops)");
    h.advanceClock(31 * 60_000);
    await createChangeSweeper(h.app.env).sweep();
    expect(category(h, 2).categoryAction).toBe(1);
    const updates = h.slack.calls
      .filter((c) => c.method === "chat.update")
      .map((c) => blocksText(c.args.blocks));
    expect(updates.some((t) => t.includes("the previous setting is back"))).toBe(false);
  });
}

/** Chained temporary changes unwind to the value before the first: High for 30m, then Medium for 1h. */
async function chained(options: HarnessOptions) {
  await withHarness(options, async (h) => {
    zone(h).dDoSShieldSensitivity = 1;
    await confirm(h, `ddos ${DDOS_ZONE} high for 30m`, BOB);
    await confirm(h, `ddos ${DDOS_ZONE} medium for 1h`, ALICE);
    expect(zone(h).dDoSShieldSensitivity).toBe(2);
    h.advanceClock(31 * 60_000);
    await createChangeSweeper(h.app.env).sweep();
    expect(zone(h).dDoSShieldSensitivity).toBe(2);
    h.advanceClock(30 * 60_000);
    await createChangeSweeper(h.app.env).sweep();
    expect(zone(h).dDoSShieldSensitivity).toBe(1);
  });
}

/** Two requests for one target with different values wait together; the later approval is refused. */
async function conflicts(options: HarnessOptions) {
  await withHarness(options, async (h) => {
    category(h, 5).categoryAction = 1;
    const puts = botPuts(h).length;
    await confirm(h, `bot ${BOT_ZONE} 5 allow`, BOB, "C0001");
    const bobs = await h.slack.waitForCall("chat.postMessage", (c) =>
      blocksText(c.args.blocks).includes("Approval needed: Allow"),
    );
    expect(blocksText(bobs.args.blocks)).not.toContain("Conflicts with");
    await confirm(h, `bot ${BOT_ZONE} 5 clear`, ALICE, "C0002");
    const alices = await h.slack.waitForCall("chat.postMessage", (c) =>
      blocksText(c.args.blocks).includes("Approval needed: Clear"),
    );
    // Asked in another channel (it could be private): said to exist, not who asked what where.
    expect(blocksText(alices.args.blocks)).toContain("Conflicts with a request waiting in another channel.");
    expect(blocksText(alices.args.blocks)).not.toContain(`<@${BOB}>`);
    expect(blocksText(alices.args.blocks)).not.toContain("<#C0001>");
    const bobsNow = await cardUpdate(
      h,
      (t) => t.includes("Approval needed: Allow") && t.includes("Conflicts"),
    );
    expect(blocksText(bobsNow.args.blocks)).toContain("Conflicts with a request waiting in another channel.");
    expect(blocksText(bobsNow.args.blocks)).not.toContain(`<@${ALICE}>'s request`);
    expect(blocksText(bobsNow.args.blocks)).not.toContain("<#C0002>");

    const approve = (card: typeof bobs) =>
      h.click(findButtons(card.args.blocks).find((b) => b.action_id === ACTIONS.approve)!, {
        userId: CAROL,
      });
    await approve(bobs);
    await cardUpdate(h, (t) => t.includes("Allow") && t.includes("is in effect"));
    // Alice's request can no longer apply: its card says why and offers no Approve.
    const superseded = await cardUpdate(h, (t) => t.includes("Clear") && t.includes("Superseded"));
    expect(blocksText(superseded.args.blocks)).toContain(
      "Superseded by a request in another channel, applied first",
    );
    expect(blocksText(superseded.args.blocks)).not.toContain(`<@${BOB}>`);
    expect(findButtons(superseded.args.blocks)).toEqual([]);
    await approve(alices);
    expect(category(h, 5).categoryAction).toBe(2);
    expect(botPuts(h).length - puts).toBe(1);
  });
}

/** A card noted with a conflict after it was posted still says who may approve it. */
async function conflictKeepsApprovers(options: HarnessOptions) {
  await withHarness(options, async (h) => {
    category(h, 4).categoryAction = 1;
    await confirm(h, `bot ${BOT_ZONE} 4 allow`, BOB, "C0001");
    const bobs = await h.slack.waitForCall("chat.postMessage", (c) =>
      blocksText(c.args.blocks).includes("Approval needed: Allow"),
    );
    expect(blocksText(bobs.args.blocks)).toContain("Approvers:");
    await confirm(h, `bot ${BOT_ZONE} 4 clear`, ALICE, "C0001");
    const bobsNow = await cardUpdate(
      h,
      (t) => t.includes("Approval needed: Allow") && t.includes("Conflicts"),
    );
    expect(blocksText(bobsNow.args.blocks)).toContain(`Conflicts with <@${ALICE}>'s request`);
    expect(blocksText(bobsNow.args.blocks)).toContain("Approvers:");
    expect(findButtons(bobsNow.args.blocks).some((b) => b.action_id === ACTIONS.approve)).toBe(true);
  });
}

/**
 * The same person asks DDoS High for good and for 30 minutes: the second card links the first. A third
 * request for another value names each of them once, told apart.
 */
async function relatedRequests(options: HarnessOptions) {
  await withHarness(options, async (h) => {
    zone(h).dDoSShieldSensitivity = 1;
    await confirm(h, `ddos ${DDOS_ZONE} high`, BOB, "C0001");
    await h.slack.waitForCall("chat.postMessage", (c) =>
      blocksText(c.args.blocks).includes("Approval needed"),
    );
    const temporary = await confirm(h, `ddos ${DDOS_ZONE} high for 30m`, BOB, "C0001");
    expect(temporary).toContain("A permanent request for the same change waits");
    const second = await h.slack.waitForCall("chat.postMessage", (c) => {
      const t = blocksText(c.args.blocks);
      return t.includes("Approval needed") && t.includes("then undone");
    });
    const secondText = blocksText(second.args.blocks);
    expect(secondText).toContain(`A permanent request for the same change waits: <@${BOB}>'s request`);
    expect(secondText).toContain("Approvers:");
    const first = await cardUpdate(
      h,
      (t) => t.includes("Approval needed") && t.includes("temporary request"),
    );
    expect(blocksText(first.args.blocks)).toContain(
      `A temporary request for the same change waits: <@${BOB}>'s request`,
    );

    await confirm(h, `ddos ${DDOS_ZONE} medium`, ALICE, "C0001");
    const third = await h.slack.waitForCall("chat.postMessage", (c) =>
      blocksText(c.args.blocks).includes(
        `Approval needed: Set DDoS sensitivity of shield zone ${DDOS_ZONE} to Medium`,
      ),
    );
    const lines = blocksText(third.args.blocks)
      .split("\n")
      .filter((l) => l.includes("Conflicts with"));
    expect(lines).toHaveLength(1);
    const named = lines[0]!.match(/<@U\w+>'s request \([^)]*\), waiting here/g) ?? [];
    expect(named).toHaveLength(2);
    expect(new Set(named).size).toBe(2);
    expect(lines[0]).toContain("for 30 min");
  });
}

/** A conflicting request rejected: the card still waiting stops naming it. */
async function conflictClosed(options: HarnessOptions) {
  await withHarness(options, async (h) => {
    category(h, 6).categoryAction = 1;
    await confirm(h, `bot ${BOT_ZONE} 6 allow`, BOB, "C0001");
    await confirm(h, `bot ${BOT_ZONE} 6 clear`, ALICE, "C0002");
    const alices = await h.slack.waitForCall("chat.postMessage", (c) =>
      blocksText(c.args.blocks).includes("Approval needed: Clear"),
    );
    await cardUpdate(h, (t) => t.includes("Approval needed: Allow") && t.includes("Conflicts"));
    await h.click(findButtons(alices.args.blocks).find((b) => b.action_id === ACTIONS.reject)!, {
      userId: CAROL,
    });
    const bobsNow = await cardUpdate(
      h,
      (t) => t.includes("Approval needed: Allow") && !t.includes("Conflicts"),
    );
    expect(findButtons(bobsNow.args.blocks).some((b) => b.action_id === ACTIONS.approve)).toBe(true);
  });
}

/**
 * DDoS High for 30m; the store refuses the owner record when Alice keeps High for good: her request is
 * neither applied without owning the target nor reported as "nothing changed". It is not known yet; the
 * reconciler finishes the takeover, and Bob's undo never lowers DDoS under her.
 */
async function ownerRecordRefused(options: HarnessOptions) {
  await withHarness(options, async (h) => {
    const sweeper = createChangeSweeper(h.app.env);
    zone(h).dDoSShieldSensitivity = 1;
    expect(await confirm(h, `ddos ${DDOS_ZONE} high for 30m`, BOB)).toContain("Done");
    const restore = await refuseWrites(h.store, "change_targets");
    const kept = await confirm(h, `ddos ${DDOS_ZONE} high`, ALICE);
    expect(kept).toContain("Not known yet");
    expect(kept).not.toContain("nothing was changed");
    await restore();
    h.advanceClock(61_000);
    await sweeper.sweep();
    const alices = (await h.store.changeRequests.listPending("T0001")).length; // none waits
    expect(alices).toBe(0);
    await cardUpdate(h, (t) => t.includes("Kept for good by"));
    h.advanceClock(31 * 60_000);
    await sweeper.sweep();
    expect(zone(h).dDoSShieldSensitivity).toBe(3);
  });
}

/**
 * Alice keeps Bob's temporary High for an hour, and the move to applied is lost (the store refuses it):
 * the reconciler settles her request with what it replaced (Low, what Bob's undo would have put back), so
 * an hour later DDoS is back to Low, not "undone" to High.
 */
async function reconciledWithReplaced(options: HarnessOptions) {
  await withHarness(options, async (h) => {
    const sweeper = createChangeSweeper(h.app.env);
    zone(h).dDoSShieldSensitivity = 1;
    expect(await confirm(h, `ddos ${DDOS_ZONE} high for 30m`, BOB)).toContain("Done");
    const restore = await refuseWrites(h.store, "approval_requests", "NEW.state = 'applied'");
    expect(await confirm(h, `ddos ${DDOS_ZONE} high for 1h`, ALICE)).not.toContain("nothing was changed");
    await restore();
    h.advanceClock(61_000);
    await sweeper.sweep();
    h.advanceClock(31 * 60_000);
    await sweeper.sweep();
    expect(zone(h).dDoSShieldSensitivity).toBe(3);
    h.advanceClock(30 * 60_000);
    await sweeper.sweep();
    expect(zone(h).dDoSShieldSensitivity).toBe(1);
  });
}

/**
 * Bob asks DDoS High for good and High for 30m, both waiting; Carol approves the permanent one (Low →
 * High), then the temporary one: it finds High already set for good, so it is not applied (no Undo now,
 * nothing to undo later), says by whose request, and the audit says what it found. Half an hour later
 * DDoS is still High, no card says "undone", and the timeline still has the permanent High in force.
 */
async function temporaryOverPermanent(options: HarnessOptions) {
  await withHarness(options, async (h) => {
    zone(h).dDoSShieldSensitivity = 1;
    const isCard = (temporary: boolean) => (c: { args: { blocks?: unknown } }) => {
      const t = blocksText(c.args.blocks as never);
      return t.includes("Approval needed: Set DDoS sensitivity") && t.includes("then undone") === temporary;
    };
    await confirm(h, `ddos ${DDOS_ZONE} high`, BOB, "C0001");
    const permanent = await h.slack.waitForCall("chat.postMessage", isCard(false));
    await confirm(h, `ddos ${DDOS_ZONE} high for 30m`, BOB, "C0001");
    const temporary = await h.slack.waitForCall("chat.postMessage", isCard(true));
    const approve = findButtons(temporary.args.blocks).find((b) => b.action_id === ACTIONS.approve)!;
    await h.click(findButtons(permanent.args.blocks).find((b) => b.action_id === ACTIONS.approve)!, {
      userId: CAROL,
    });
    await cardUpdate(h, (t) => t.includes("is in effect") && !t.includes("then undone"));
    expect(zone(h).dDoSShieldSensitivity).toBe(3);
    const before = patches(h).length;
    await h.click(approve, { userId: CAROL });
    const refused = await cardUpdate(h, (t) => t.includes("then undone") && !t.includes("Approval needed"));
    const text = blocksText(refused.args.blocks);
    expect(text).toContain(`is already High, permanently, by <@${BOB}>'s request`);
    expect(text).not.toContain("is in effect");
    expect(findButtons(refused.args.blocks).some((b) => b.action_id === ACTIONS.undo)).toBe(false);
    expect(patches(h).length).toBe(before);
    // The audit says what the apply found (High), not what the request saw when asked (Low).
    const applies = (await h.store.audit.list("T0001", 50)).filter(
      (a) => a.action === "ddos_sensitivity.apply" && a.details?.requestId === approve.value,
    );
    expect(applies.length).toBeGreaterThan(0);
    for (const a of applies) expect(a.details?.observed).toBe(3);

    h.advanceClock(31 * 60_000);
    await createChangeSweeper(h.app.env).sweep();
    expect(zone(h).dDoSShieldSensitivity).toBe(3);
    const updates = h.slack.calls
      .filter((c) => c.method === "chat.update")
      .map((c) => blocksText(c.args.blocks));
    expect(updates.some((t) => t.includes("the previous setting is back"))).toBe(false);

    const res = await h.command(`timeline ${DDOS_ZONE} 1h`, { userId: ALICE, channelId: "C0001" });
    const story = blocksText(
      (await h.slack.waitForResponse(res.responseId, (r) => r.body.replace_original === true, 10_000)).body
        .blocks,
    );
    expect(story).toContain("*Still in force:*");
    expect(story).toContain(`Set DDoS sensitivity of shield zone ${DDOS_ZONE} to High`);
  });
}

const SCENARIOS: [string, (o: HarnessOptions) => Promise<void>][] = [
  ["a request for the value a temporary change holds keeps it for good: that undo is cancelled", keptForGood],
  ["block for 24h while block for 30m is in force: blocked for 24 hours, then unblocked", keptLonger],
  ["unblocked, then blocked again by someone else: the first block's undo leaves it", reblocked],
  ["an apply is refused when the value moved since the request", stale],
  [
    "a temporary change whose value was set in the dashboard meanwhile is not applied: nothing to undo",
    undoesToReplaced,
  ],
  ["chained temporary changes unwind to the value before the first", chained],
  [
    "conflicting requests say so on both cards; once one applies, the other is closed as superseded",
    conflicts,
  ],
  ["a conflicting request rejected: the card still waiting stops naming it", conflictClosed],
  ["a card noted with a conflict after it was posted keeps its Approvers line", conflictKeepsApprovers],
  [
    "the same person's permanent and temporary requests for one value are linked, each named once",
    relatedRequests,
  ],
  [
    "the owner record refused: not applied half-way, and the earlier undo never lowers the kept value",
    ownerRecordRefused,
  ],
  [
    "a request the reconciler settles records what it replaced: its undo puts back the value before",
    reconciledWithReplaced,
  ],
  [
    "a temporary request for a value already set for good is not applied, and nothing is called undone",
    temporaryOverPermanent,
  ],
];

describe("each target remembers its last writer (SQLite)", () => {
  for (const [name, run] of SCENARIOS) it(name, () => run({}));
});

describe.runIf(postgresTests)("each target remembers its last writer (PostgreSQL)", () => {
  for (const [name, run] of SCENARIOS) it(name, () => onPostgres(run));
});
