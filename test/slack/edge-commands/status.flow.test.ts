import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ACTIONS } from "../../../src/slack/ids.js";
import { SIM_IDS } from "../../../tools/simulator/index.js";
import { onBothStores } from "../../support/both-stores.js";
import { steppedClock } from "../../support/clock.js";
import {
  answerTo,
  blocksText,
  findButtons,
  type Harness,
  type HarnessOptions,
  startHarness,
  TEST_EDGE_KEY,
} from "../../support/harness.js";
import { ALICE, BOB } from "../../support/users.js";

/**
 * `/edge status`: the account's first zones ranked by how far their last whole 2-minute slot is from their last
 * hour (the watches' detector), with buttons to each zone's incident card and a watch; one detailed-metrics read
 * per zone and minute at most, whoever asks and on whichever replica.
 */

/** A fixed time of day (the simulator's too): every command of a test falls in one minute unless moved. */
const NOW = Date.UTC(2026, 10, 27, 12, 0, 30);
let now = NOW;
const clock = steppedClock(() => now);
/**
 * The bound counts requests at the simulator: a read slowed past the Edge client's timeout on a loaded machine is
 * sent again (a retry of the same read, seen under load average 23 with the harness's 2 s), so the timeout is long.
 */
const SLOW_MACHINE = { edgeTimeoutMs: 60_000 };

const DETAILED = /^\/shield\/metrics\/overview\/(\d+)\/detailed/;
/** Quiet zones among the first 25 the simulator lists (it lists them by id), attacked with different peaks. */
const LOW = SIM_IDS.firstShieldZone + 5;
const MID = SIM_IDS.firstShieldZone + 6;
const HIGH = SIM_IDS.firstShieldZone + 7;
/** A zone whose metrics begin three slots ago (new to Shield): too little history to know its usual. */
const NEW_ZONE = SIM_IDS.firstShieldZone + 8;

const zoneLists = (h: Harness) => h.sim.requests.filter((r) => r.path === "/shield/shield-zones");
const metricReads = (h: Harness) => h.sim.requests.filter((r) => r.method === "GET" && DETAILED.test(r.path));
/** How many detailed-metrics reads each zone had. */
function readsPerZone(h: Harness): Map<number, number> {
  const counts = new Map<number, number>();
  for (const r of metricReads(h)) {
    const zone = Number(DETAILED.exec(r.path)?.[1]);
    counts.set(zone, (counts.get(zone) ?? 0) + 1);
  }
  return counts;
}

const PLACEHOLDER = "this message is replaced when they are in";

/** `/edge status` typed by `userId` on `on`: its first answer, and the answer that is not the placeholder. */
async function status(on: Harness, userId: string) {
  const res = await on.command("status", { userId });
  expect(res.status).toBe(200);
  const first = await on.slack.waitForResponse(res.responseId);
  const final = await on.slack.waitForResponse(
    res.responseId,
    (r) => !blocksText(r.body.blocks).includes(PLACEHOLDER),
    20_000,
  );
  return {
    first: { body: first.body, text: blocksText(first.body.blocks) },
    body: final.body,
    text: blocksText(final.body.blocks),
    buttons: findButtons(final.body.blocks),
  };
}

/** The line of the ranking that names `zone`, and its place. */
function rankedLine(text: string, zone: number): { place: number; line: string } {
  const line = text.split("\n").find((l) => l.includes(`*Zone ${zone}*`));
  if (!line) throw new Error(`zone ${zone} is not ranked in:\n${text}`);
  return { place: Number(/^(\d+)\./.exec(line)?.[1]), line };
}

/** The simulator's own answer for the zone's last hour, cut to its last three buckets in every series. */
async function metricsOfLastThreeSlots(h: Harness, zone: number): Promise<unknown> {
  const from = new Date(Math.floor((NOW - 3_600_000) / 120_000) * 120_000).toISOString();
  const to = new Date(NOW).toISOString();
  const res = await fetch(
    `${h.sim.url}/shield/metrics/overview/${zone}/detailed?StartDate=${from}&EndDate=${to}&Resolution=1`,
    { headers: { AccessKey: TEST_EDGE_KEY } },
  );
  const answer = (await res.json()) as { data: Record<string, unknown> };
  for (const value of Object.values(answer.data)) {
    const series = value as { metrics?: Record<string, unknown> } | null;
    if (series && typeof series === "object" && series.metrics)
      series.metrics = Object.fromEntries(Object.entries(series.metrics).slice(-3));
  }
  return answer;
}

describe("/edge status", () => {
  let h: Harness;
  beforeAll(async () => {
    now = NOW;
    h = await startHarness({ ...SLOW_MACHINE, clock, simulatorOnClock: true });
    // Each attack began two minutes before the last whole slot ended: that slot is all attack, the hour before none.
    const attack = (peakPerMinute: number) => ({
      startsAt: NOW - 150_000,
      rampMinutes: 0,
      durationMinutes: 60,
      peakPerMinute,
    });
    h.sim.stageAttack(LOW, attack(300));
    h.sim.stageAttack(MID, attack(1_200));
    h.sim.stageAttack(HIGH, attack(4_800));
    h.sim.addFault({
      path: `/shield/metrics/overview/${NEW_ZONE}/detailed`,
      body: await metricsOfLastThreeSlots(h, NEW_ZONE),
    });
  });
  afterAll(async () => {
    await h?.close();
  });

  it("ranks the attacked zones by how far they are from their usual, says what is unknown and how many zones it read of how many", async () => {
    h.sim.clearRequests();
    const answer = await status(h, BOB);
    // Nothing was known this minute: the first answer says the zones are being read; the ranking replaces it.
    expect(answer.first.text).toContain("Reading 25 zones' metrics");
    expect(answer.body.replace_original).toBe(true);

    expect(answer.text).toContain(`Ranked 25 of ${SIM_IDS.shieldZoneCount} zones`);
    const high = rankedLine(answer.text, HIGH);
    const mid = rankedLine(answer.text, MID);
    const low = rankedLine(answer.text, LOW);
    for (const { line } of [high, mid, low]) expect(line).toContain("unusual, without a watch");
    expect(high.place).toBeLessThan(mid.place);
    expect(mid.place).toBeLessThan(low.place);
    // The furthest signal's last hour as a sparkline: quiet, then the attack's slot at the top.
    expect(high.line).toMatch(/`[▁▂]+[▁-█]*█`/);

    // Three slots of history: unknown, and never ranked as usual.
    expect(answer.text).toContain(`zone ${NEW_ZONE} (too little history to know its usual)`);
    expect(answer.text).not.toContain(`*Zone ${NEW_ZONE}*`);

    // Bounded: each of the first 25 zones read once, none beyond them.
    const reads = readsPerZone(h);
    expect([...reads.values()].every((n) => n === 1)).toBe(true);
    expect(reads.size).toBe(25);
    expect(Math.max(...reads.keys())).toBeLessThanOrEqual(SIM_IDS.firstShieldZone + 24);
    expect(h.slack.violations).toEqual([]);
  });

  it("asked again within the minute by someone else, answers from the readings without an Edge metrics read", async () => {
    h.sim.clearRequests();
    const again = await status(h, ALICE);
    expect(again.first.text).not.toContain(PLACEHOLDER);
    expect(rankedLine(again.text, HIGH).place).toBeLessThan(rankedLine(again.text, LOW).place);
    expect(metricReads(h)).toEqual([]);
  });

  it("a ranked zone's buttons open its incident card and start a zone watch in the channel", async () => {
    const answer = await status(h, BOB);
    const forHigh = answer.buttons.filter((b) => b.value === JSON.stringify({ zoneId: HIGH }));
    const incident = forHigh.find((b) => b.action_id === ACTIONS.statusIncident);
    const watch = forHigh.find((b) => b.action_id === ACTIONS.statusWatch);
    if (!incident || !watch)
      throw new Error(`no buttons for zone ${HIGH}: ${JSON.stringify(answer.buttons)}`);

    const card = await h.click(incident, { userId: ALICE, channelId: "C0001" });
    expect(card.status).toBe(200);
    const cardAnswer = await h.slack.waitForResponse(card.responseId, undefined, 20_000);
    expect(blocksText(cardAnswer.body.blocks)).toContain(`Incident picture · shield zone ${HIGH}`);
    expect(cardAnswer.body.replace_original).toBe(false);

    const watched = await h.click(watch, { userId: ALICE, channelId: "C0001" });
    expect(watched.status).toBe(200);
    const watchAnswer = await h.slack.waitForResponse(watched.responseId);
    expect(blocksText(watchAnswer.body.blocks)).toContain("Watching");
    const watches = (await h.store.watches.list("T0001")).filter((w) => w.kind === "zone");
    expect(watches.map((w) => [w.target, w.channelId])).toContainEqual([String(HIGH), "C0001"]);

    // The ranking now says a watch alerts on it, and offers no second watch.
    const after = await status(h, BOB);
    expect(rankedLine(after.text, HIGH).line).toContain("a zone watch already alerts on it");
    expect(
      after.buttons.some(
        (b) => b.action_id === ACTIONS.statusWatch && b.value === JSON.stringify({ zoneId: HIGH }),
      ),
    ).toBe(false);
  });

  it("a button whose value is not the app's says to run /edge status again", async () => {
    const res = await h.click({ action_id: ACTIONS.statusIncident, value: '{"zoneId":"18401; drop"}' });
    const answer = await h.slack.waitForResponse(res.responseId);
    expect(blocksText(answer.body.blocks)).toContain("That button is out of date: run /edge status again.");
  });

  it("words after /edge status get a usage sentence, not a ranking", async () => {
    h.sim.clearRequests();
    const answer = await answerTo(h, "status foo", BOB);
    expect(answer.text).toContain("`/edge status` takes no words");
    expect(answer.text).toContain("/edge incident 1234");
    expect(metricReads(h)).toEqual([]);
  });
});

describe("/edge status on two replicas of one store", () => {
  onBothStores(
    "reads each zone at most once a minute, whichever replica and person asks",
    async (options: HarnessOptions) => {
      now = NOW;
      const a = await startHarness({ ...options, ...SLOW_MACHINE, clock, simulatorOnClock: true });
      let b: Harness | undefined;
      try {
        b = await startHarness({
          ...options,
          ...SLOW_MACHINE,
          clock,
          dataDir: a.dataDir,
          sim: a.sim,
          slack: a.slack,
          seedKey: false,
        });
        const replicaB = b;
        // Asked on both replicas at once: each replica's zone list is held until both asked, so both look for
        // this minute's readings together; every zone is claimed by one of them and read once.
        a.sim.clearRequests();
        let release = () => {};
        a.sim.addFault({
          path: "/shield/shield-zones",
          holdUntil: new Promise<void>((resolve) => {
            release = resolve;
          }),
          times: 2,
        });
        const asked = Promise.all([status(a, BOB), status(replicaB, ALICE)]);
        // Both lists arrived (and are held): the second one recorded is the signal.
        await a.sim.waitForRequest(
          (r) => r.path === "/shield/shield-zones" && zoneLists(a).length >= 2,
          10_000,
        );
        release();
        const [onA, onB] = await asked;
        for (const answer of [onA, onB])
          expect(answer.text).toContain(`Ranked 25 of ${SIM_IDS.shieldZoneCount} zones`);
        const first = readsPerZone(a);
        expect(first.size).toBeLessThanOrEqual(25);
        expect([...first.values()].every((n) => n === 1)).toBe(true);

        // Again on B within the minute: the store has every reading, no metrics read is made.
        const again = await status(replicaB, BOB);
        expect(again.text).toContain(`*Zone ${SIM_IDS.zoneUnderAttack}*`);
        expect(metricReads(a).length).toBe([...first.values()].reduce((x, y) => x + y, 0));

        // The next minute is read again, once per zone.
        now = NOW + 60_000;
        a.sim.clearRequests();
        await Promise.all([status(a, ALICE), status(replicaB, BOB)]);
        const next = readsPerZone(a);
        expect(next.size).toBeGreaterThan(0);
        expect([...next.values()].every((n) => n === 1)).toBe(true);

        // A zone whose read another replica still has in flight: B waits a while, then says it is being read
        // (unknown, never usual), and its answer is final (no "replaced when they are in" left standing).
        now = NOW + 120_000;
        a.sim.clearRequests();
        const held = SIM_IDS.zoneQuiet;
        let releaseRead = () => {};
        a.sim.addFault({
          path: `/shield/metrics/overview/${held}/detailed`,
          holdUntil: new Promise<void>((resolve) => {
            releaseRead = resolve;
          }),
        });
        const onA2 = status(a, ALICE);
        await a.sim.waitForRequest((r) => r.path === `/shield/metrics/overview/${held}/detailed`);
        const onB2 = await status(replicaB, BOB);
        expect(onB2.text).toContain(`zone ${held} (being read now; ask again in a moment)`);
        expect(onB2.text).not.toContain(`*Zone ${held}*`);
        releaseRead();
        expect(rankedLine((await onA2).text, held).line).toContain("within its usual");
        expect(readsPerZone(a).get(held)).toBe(1);
      } finally {
        now = NOW;
        await b?.close();
        await a.close();
      }
    },
    60_000,
  );
});
