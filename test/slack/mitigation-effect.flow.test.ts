/**
 * Did it work? Through the real receiver, the fake Slack and the simulator (which applies edgeops' access lists
 * and settings to its own traffic from the minute they are written), on one manual clock: an applied change's
 * card shows its measured effect while the zone's alert is open, the alert's resolution reply says what worked,
 * and the postmortem export has a What worked table; where the data cannot say, each says why instead of a number.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createPoller, type Poller } from "../../src/jobs/alerts.js";
import { EFFECT_MIN_EVENTS_BEFORE, perMinuteWords } from "../../src/services/mitigation-effect.js";
import { cardRedrawer } from "../../src/slack/change-requests.js";
import { ACTIONS } from "../../src/slack/ids.js";
import { SIM_IDS, type Simulator } from "../../tools/simulator/index.js";
import { pinReadings } from "../support/adversary.js";
import { askAndApprove } from "../support/change-flow.js";
import { answerTo, blocksText, findButtons, TEST_EDGE_KEY } from "../support/harness.js";
import { ALICE, BOB } from "../support/users.js";
import { startWorld, type World } from "../support/world.js";

const MIN = 60_000;
const ZONE = SIM_IDS.zoneUnderAttack;

const opened: World[] = [];
const pollers: Poller[] = [];
afterEach(async () => {
  for (const p of pollers.splice(0)) await p.stop();
  for (const w of opened.splice(0)) await w.close();
});

/** A world with the alerts poller on its clock, redrawing cards as the bot does (src/app/compose.ts). */
async function world() {
  const w = await startWorld();
  opened.push(w);
  const poller = createPoller({
    deps: w.deps,
    clientFor: w.app.env.clientFor,
    clock: w.clock,
    budgetClock: () => w.clock.now(),
    redrawCard: cardRedrawer(w.app.env),
  });
  pollers.push(poller);
  /** `n` minutes, the poller ticking after each, until `until` holds. */
  const minutes = async (n: number, until?: () => boolean) => {
    for (let i = 0; i < n; i++) {
      await w.clock.advance(MIN);
      await poller.tick();
      if (until?.()) return;
    }
  };
  return { w, poller, minutes };
}

async function search(sim: Simulator, zone: number, body: Record<string, unknown>) {
  const res = await fetch(`${sim.url}/shield/event-logs/${zone}/search`, {
    method: "POST",
    headers: { AccessKey: TEST_EDGE_KEY, "content-type": "application/json" },
    body: JSON.stringify({ pageSize: 500, ...body }),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { groups: Array<{ key: Record<string, string>; count: number }> }).groups;
}

/** The address's events over [from, to) in the simulator's own event log: all, logged (let through), blocked. */
async function eventsOf(sim: Simulator, ip: string, from: number, to: number) {
  const groups = await search(sim, ZONE, {
    from,
    to,
    filters: [{ field: "ip", op: "eq", value: [ip] }],
    groupBy: ["action"],
  });
  const of = (re: RegExp) =>
    groups.filter((g) => re.test(g.key.action ?? "")).reduce((n, g) => n + g.count, 0);
  return { all: groups.reduce((n, g) => n + g.count, 0), logged: of(/^log/i), blocked: of(/^block/i) };
}

/** The busiest IPv4 address of the zone over [from, to). */
async function busiestIp(sim: Simulator, from: number, to: number) {
  const byIp = await search(sim, ZONE, { from, to, groupBy: ["ip"] });
  return byIp.filter((g) => g.key.ip?.includes(".")).sort((a, b) => b.count - a.count)[0]?.key.ip ?? "";
}

const updatesOf = (w: World, ts: string) =>
  w.slack
    .callsTo("chat.update")
    .filter((c) => c.args.ts === ts)
    .map((c) => blocksText(c.args.blocks));
const effectLine = (text: string | undefined) =>
  /\*Effect\* \(as of <!date\^\d+\^[^>]*>\): ([^\n]*)/.exec(text ?? "")?.[1];

/** Alice watches the zone; an attack is staged on it; the alert opens: its parent's ts. */
async function alertOpen(w: World, minutes: (n: number, until?: () => boolean) => Promise<void>) {
  await answerTo(w, `watch zone ${ZONE} sensitivity normal`, ALICE);
  w.sim.stageAttack(ZONE, {
    startsAt: w.clock.now(),
    rampMinutes: 1,
    durationMinutes: 180,
    peakPerMinute: 3_000,
  });
  const parent = () =>
    w.slack
      .callsTo("chat.postMessage")
      .some(
        (c) =>
          c.args.channel === "C0001" && !c.args.thread_ts && blocksText(c.args.blocks).includes(String(ZONE)),
      );
  await minutes(20, parent);
  const episode = (await w.store.episodes.listOpen("T0001"))[0];
  expect(episode?.messageTs, "the zone's alert opened").toBeTruthy();
  return episode!.messageTs as string;
}

describe("an approved block's card shows its measured effect while the zone's alert is open", () => {
  it("the staged attacker's events getting through fall to zero, from the before figure the simulator's event log gives", async () => {
    const { w, poller, minutes } = await world();
    const alertTs = await alertOpen(w, minutes);
    // The before figure is of the whole hour before the block, the minutes before the attack included.
    await minutes(10);
    const now = Math.floor(w.clock.now() / MIN) * MIN;
    const ip = await busiestIp(w.sim, now - 10 * MIN, now);
    expect(ip).toMatch(/^\d+\.\d+\.\d+\.\d+$/);

    const { card } = await askAndApprove(w, `block ${ZONE} ${ip}`, ip);
    const cardTs = card.args.ts as string;
    const appliedMinute = Math.floor(w.clock.now() / MIN) * MIN;

    // One whole minute after: too soon to say, and the card says so rather than a number.
    await minutes(1);
    expect(effectLine(updatesOf(w, cardTs).at(-1))).toMatch(
      /^Too soon to say: 0 whole minutes since it was applied/,
    );

    await minutes(5);
    const text = updatesOf(w, cardTs).at(-1);
    const line = effectLine(text) ?? "";
    // The expected figures from the simulator's own event log over the same windows.
    const before = await eventsOf(w.sim, ip, appliedMinute - 60 * MIN, appliedMinute);
    const afterFrom = appliedMinute + MIN;
    const afterTo = Math.floor(w.clock.now() / MIN) * MIN;
    const after = await eventsOf(w.sim, ip, afterFrom, afterTo);
    expect(before.all).toBeGreaterThanOrEqual(EFFECT_MIN_EVENTS_BEFORE);
    expect(after.logged).toBe(0);
    expect(after.all).toBe(after.blocked);
    const perMin = (n: number, from: number, to: number) => perMinuteWords(n / ((to - from) / MIN));
    expect(line).toContain(
      `, ${ip} went from ${perMin(before.logged, appliedMinute - 60 * MIN, appliedMinute)} to 0 events a minute getting through (of ${perMin(before.all, appliedMinute - 60 * MIN, appliedMinute)} a minute in the event log before); ${perMin(after.blocked, afterFrom, afterTo)} blocked a minute now.`,
    );
    expect(line).toMatch(/^Since the block at \d\d:\d\d UTC, /);
    // The zone's threats before and after, or why not (metrics whose dates can't be read).
    expect(line).toMatch(/The zone's threats (fell|rose|about the same|no change|not known)/);

    // At most once a minute: another tick in the same minute measures nothing and redraws nothing.
    const searches = () => w.sim.requests.filter((r) => r.path.includes("/event-logs/")).length;
    const [s0, u0] = [searches(), updatesOf(w, cardTs).length];
    await poller.tick();
    expect([searches(), updatesOf(w, cardTs).length]).toEqual([s0, u0]);

    // The alert resolves: its thread says what worked, after the story.
    w.sim.calm();
    const replies = () =>
      w.slack
        .callsTo("chat.postMessage")
        .filter((c) => c.args.thread_ts === alertTs)
        .map((c) => blocksText(c.args.blocks));
    await minutes(40, () => replies().some((t) => t.includes("What worked")));
    const worked = replies().find((t) => t.includes("What worked")) ?? "";
    expect(worked).toContain(`*Block IP ${ip} on shield zone ${ZONE}*: Since the block at`);
    expect(worked).toContain("to 0 events a minute getting through");
    expect(replies().findIndex((t) => t.includes("What worked"))).toBeGreaterThan(
      replies().findIndex((t) => t.includes("Timeline of")),
    );
    expect(w.slack.violations).toEqual([]);
  }, 180_000);
});

/** The zone's events of one feature over [from, to) in the simulator's own event log, by what the edge did. */
async function featureEvents(sim: Simulator, zone: number, feature: RegExp, from: number, to: number) {
  const groups = await search(sim, zone, { from, to, groupBy: ["feature", "action"] });
  const of = (re: RegExp) =>
    groups
      .filter((g) => feature.test(g.key.feature ?? "") && re.test(g.key.action ?? ""))
      .reduce((n, g) => n + g.count, 0);
  return { all: of(/./), logged: of(/^log/i), blocked: of(/^block/i) };
}

describe("an approved setting's card shows its feature's signal before and after", () => {
  // A zone whose WAF runs in Log mode (the simulator's seed).
  const WAF_LOG_ZONE = SIM_IDS.firstShieldZone + 2;

  it("WAF mode Log → Block: the WAF events the zone logged a minute become blocked ones", async () => {
    const { w, minutes } = await world();
    // The PATCH naming only the mode keeps the zone's other settings: under the reading where it resets them, the
    // WAF is switched off with it and nothing arrives after (the card then says 0, as the log does).
    pinReadings(w.sim, { "shield-settings.patch-absent": "keep" });
    await answerTo(w, `watch zone ${WAF_LOG_ZONE} sensitivity normal`, ALICE);
    w.sim.stageAttack(WAF_LOG_ZONE, {
      startsAt: w.clock.now(),
      rampMinutes: 1,
      durationMinutes: 180,
      peakPerMinute: 3_000,
    });
    await minutes(15);
    expect((await w.store.episodes.listOpen("T0001")).length, "the zone's alert opened").toBe(1);

    const { card } = await askAndApprove(w, `waf-mode ${WAF_LOG_ZONE} block`, "WAF execution mode");
    const cardTs = card.args.ts as string;
    const applied = w.clock.now();
    await minutes(8);
    const line = effectLine(updatesOf(w, cardTs).at(-1)) ?? "";

    // The metrics' two-minute slots: the hour before the slot of the change, and those wholly after it.
    const slot = 2 * MIN;
    const beforeTo = Math.floor(applied / slot) * slot;
    const afterFrom = Math.ceil(applied / slot) * slot;
    const afterTo = Math.floor(w.clock.now() / slot) * slot;
    // The log names its features in a spelling the documents leave open (the simulator's adversary picks one).
    const waf = /^(waf|web_application_firewall)$/i;
    const before = await featureEvents(w.sim, WAF_LOG_ZONE, waf, beforeTo - 60 * MIN, beforeTo);
    const after = await featureEvents(w.sim, WAF_LOG_ZONE, waf, afterFrom, afterTo);
    // Log mode logged every WAF event; Block mode blocks them, but for its log-only rules.
    expect(before.all).toBeGreaterThanOrEqual(60);
    expect(before.all).toBe(before.logged);
    expect(after.blocked).toBeGreaterThan(after.logged);
    const perMin = (n: number, from: number, to: number) => perMinuteWords(n / ((to - from) / MIN));
    const b = perMin(before.all, beforeTo - 60 * MIN, beforeTo);
    const a = perMin(after.all, afterFrom, afterTo);
    const now = [
      `${perMin(after.blocked, afterFrom, afterTo)} blocked`,
      ...(after.logged > 0 ? [`${perMin(after.logged, afterFrom, afterTo)} logged and let through`] : []),
    ].join(", ");
    expect(line).toMatch(/^Since the change at \d\d:\d\d UTC, /);
    expect(line).toContain(
      `WAF events went from ${b} to ${a} a minute in the zone's metrics (before: ${b} logged and let through; now: ${now}).`,
    );
  }, 180_000);
});

describe("where the data cannot say, the postmortem's What worked table says why instead of a number", () => {
  /** `/edge timeline <zone> 1h` and Export: the draft's What worked section. */
  async function whatWorked(w: World, zone: number) {
    const res = await w.command(`timeline ${zone} 1h`, { userId: BOB, channelId: "C0001" });
    const answer = await w.slack.waitForResponse(
      res.responseId,
      (r) => r.body.replace_original === true,
      15_000,
    );
    const button = findButtons(answer.body.blocks).find((b) => b.action_id === ACTIONS.timelineExport);
    expect(button, blocksText(answer.body.blocks)).toBeDefined();
    const clicked = await w.click(button!, { userId: BOB, channelId: "C0001" });
    await w.slack.waitForResponse(clicked.responseId, () => true, 15_000);
    const md =
      [...w.slack.uploads.values()]
        .filter((u) => u.filename.startsWith(`postmortem-zone-${zone}-`) && u.filename.endsWith(".md"))
        .at(-1)?.body ?? "";
    const section = md.slice(md.indexOf("## What worked"));
    return section.slice(0, section.indexOf("\n## ", 3));
  }

  /** The table's row whose first cell (what) names `what`: its cells, as a Markdown renderer shows them. */
  const rowOf = (table: string, what: string) =>
    table
      .split("\n")
      .filter((l) => l.startsWith("| "))
      .map((l) => l.split(" | ").map((c) => c.replace(/^\| | \|$/g, "").replace(/\\(.)/g, "$1")))
      .find((cells) => cells[0]?.includes(what));

  it("a Basic-plan zone, too little traffic, an overlapping change, unreadable metrics", async () => {
    const { w } = await world();
    // Basic plan: the event log answers 202 + invalid_plan_type.
    await askAndApprove(w, `block ${SIM_IDS.zoneWithoutEventLogs} 203.0.113.7`, "203.0.113.7");
    // A quiet zone, and an address with no event there.
    await askAndApprove(w, `block ${SIM_IDS.zoneQuiet} 203.0.113.8`, "203.0.113.8");
    // The zone under attack: a block, and two minutes later a setting on the same zone.
    await askAndApprove(w, `block ${ZONE} 203.0.113.9`, "203.0.113.9");
    await w.clock.advance(2 * MIN);
    await askAndApprove(w, `waf-mode ${ZONE} log`, "WAF execution mode");
    await w.clock.advance(10 * MIN);

    const basic = await whatWorked(w, SIM_IDS.zoneWithoutEventLogs);
    expect(basic).toContain("| What | Asked by | Approved by | Applied at | In force for | Effect |");
    const row = rowOf(basic, "203.0.113.7");
    expect(row?.slice(1, 3)).toEqual([`@bob`, `@carol`].map((n) => expect.stringContaining(n.slice(1))));
    expect(row?.[3]).toMatch(/^\d\d:\d\d UTC$/);
    expect(row?.[4]).toBe("12 min so far");
    expect(row?.[5]).toBe(
      "Cannot say: this zone's plan has no event log, so edgeops cannot measure 203.0.113.7's events.",
    );

    const quiet = await whatWorked(w, SIM_IDS.zoneQuiet);
    expect(rowOf(quiet, "203.0.113.8")?.[5]).toBe(
      `Too little traffic to say: 203.0.113.8 had 0 events in the hour before it (edgeops measures from ${EFFECT_MIN_EVENTS_BEFORE}).`,
    );

    const attacked = await whatWorked(w, ZONE);
    expect(rowOf(attacked, "203.0.113.9")?.[5]).toMatch(
      new RegExp(
        `^Cannot say: another change on this zone in the same window \\(Set WAF execution mode of shield zone ${ZONE} to Log \\(applied \\d\\d:\\d\\d UTC\\)\\), so a difference can't be put down to this one\\.$`,
      ),
    );
    expect(rowOf(attacked, "WAF execution mode")?.[5]).toMatch(
      /^Cannot say: another change on this zone in the same window \(Block IP 203\.0\.113\.9/,
    );

    // Metrics whose dates no reader knows: a setting's effect is not a number.
    // The card's whole title: where the adversary's PATCH resets unsent settings, the WAF card above names
    // "DDoS sensitivity" among the settings that moved with it.
    await askAndApprove(
      w,
      `ddos ${SIM_IDS.zoneEnterprise} low`,
      `Set DDoS sensitivity of shield zone ${SIM_IDS.zoneEnterprise} to Low`,
    );
    await w.clock.advance(10 * MIN);
    w.sim.state.dateKeyFormat = "unknown";
    const enterprise = await whatWorked(w, SIM_IDS.zoneEnterprise);
    expect(rowOf(enterprise, "DDoS sensitivity")?.[5]).toMatch(
      /^Cannot say: edgeops can't read this zone's metrics/,
    );
  }, 180_000);
});
