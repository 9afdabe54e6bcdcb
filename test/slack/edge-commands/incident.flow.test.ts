import { afterAll, beforeAll, beforeEach, describe, expect, it, onTestFinished } from "vitest";
import { accessEntryOf } from "../../../src/services/access-entries.js";
import { setEntryState } from "../../../src/services/access-lists.js";
import { ACTIONS } from "../../../src/slack/ids.js";
import { type Fault, SIM_IDS } from "../../../tools/simulator/index.js";
import { pinReadings } from "../../support/adversary.js";
import { checkBlockKitLimits } from "../../support/block-kit-limits.js";
import { blocksText, findButtons, type Harness, startHarness, TEST_EDGE_KEY } from "../../support/harness.js";
import { useWorld, type World } from "../../support/world.js";

let h: Harness;
const ATTACKED = SIM_IDS.zoneUnderAttack;

beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.close();
});
beforeEach(() => {
  h.sim.clearFaults();
  h.sim.clearRequests();
  h.slack.clear();
});

type Block = { type: string; text?: { text?: string }; fields?: { text: string }[] };

/** The text of each card section, keyed by its bold title (offenders' fields joined to their title). */
function sections(blocks: unknown): Map<string, string> {
  const out = new Map<string, string>();
  let last: string | undefined;
  for (const b of blocks as Block[]) {
    if (b.type !== "section") continue;
    const text = b.text?.text ?? "";
    const title = /^\*([^*]+)\*/.exec(text)?.[1];
    if (title) {
      out.set(title, text);
      last = title;
    } else if (b.fields && last) out.set(last, `${out.get(last)}\n${b.fields.map((f) => f.text).join("\n")}`);
  }
  return out;
}

const SECTION_TITLES = [
  "Zone",
  "Traffic and threats",
  "Top offenders",
  "Triggered WAF rules",
  "Rate limits",
  "Apps",
];

/**
 * `/edge incident <args>` on `on` (default the file's harness): the placeholder, then the card that replaces
 * it. `afterFirst` runs once the placeholder is in, before the card is awaited (e.g. to release held calls
 * or move a world's clock).
 */
async function incident(
  args: string,
  timeoutMs = 15_000,
  { on = h, afterFirst }: { on?: Harness; afterFirst?: (responseId: string) => Promise<void> | void } = {},
) {
  const sent = Date.now();
  const res = await on.command(`incident ${args}`);
  expect(res.status).toBe(200);
  const first = await on.slack.waitForResponse(res.responseId);
  await afterFirst?.(res.responseId);
  const card = await on.slack.waitForResponse(
    res.responseId,
    (r) => r.body.replace_original === true,
    timeoutMs,
  );
  return {
    sent,
    first,
    card,
    text: blocksText(card.body.blocks),
    sections: sections(card.body.blocks),
    buttons: findButtons(card.body.blocks),
  };
}

/**
 * Resolves once the only work left is `held` Edge calls waiting at the simulator, and nothing else moves
 * (several probes in a row, as h.settled()): the moment to move a world's clock past their timeout
 * without cutting off any other call.
 */
async function onlyHeld(x: Harness, held: number): Promise<void> {
  let quiet = 0;
  let seen = "";
  for (let probe = 0; probe < 5_000; probe++) {
    await new Promise((resolve) => setImmediate(resolve));
    await x.store.ping();
    const queue = x.deps.edge.queueStats();
    const now = `${x.slack.calls.length}/${x.slack.responses.length}/${x.sim.requests.length}`;
    const only =
      queue.waiting === 0 && queue.inFlight === held && x.sim.inFlight() === held && x.slack.inFlight() === 0;
    quiet = only && now === seen ? quiet + 1 : 0;
    seen = now;
    if (quiet >= 5) return;
  }
  throw new Error(`the bot did not come down to ${held} held Edge call(s)`);
}

/**
 * `attempts` attempts of the call to `path`, each held at the simulator: once attempt n reached it and is
 * all that is left, the world's clock moves `stepMs` (the client's timeout, or up to a deadline).
 */
async function timeOutAttempts(x: World, path: string, attempts: number, stepMs: number): Promise<void> {
  for (let attempt = 1; attempt <= attempts; attempt++) {
    await x.sim.waitForRequest(() => x.sim.requests.filter((q) => q.path === path).length >= attempt);
    await onlyHeld(x, 1);
    await x.clock.advance(stepMs);
  }
}

describe("/edge incident through the receiver and the simulator", () => {
  // The world (one manual clock) for what outlasts the Edge client's timeout.
  const w = useWorld();
  it("posts the placeholder within 3 s, then the card replaces it", async () => {
    // The busiest rule keeps its metrics row on any seed: the card lists rules with counters.
    const seed = h.sim.adversary.seed;
    h.sim.setAdversary({ seed, pin: { "rate-limits.metrics-missing": false } });
    onTestFinished(() => h.sim.setAdversary({ seed }));
    // Every Edge API answer is held until the placeholder is in: it never waits for the Edge API.
    let release = () => {};
    h.sim.addFault({ path: "/", holdUntil: new Promise<void>((r) => (release = r)) });
    const r = await incident(String(ATTACKED), undefined, {
      afterFirst: (responseId) => {
        expect(h.slack.responsesTo(responseId)).toHaveLength(1);
        h.sim.clearFaults();
        release();
      },
    });
    expect(blocksText(r.first.body.blocks)).toContain(`Gathering the picture of zone ${ATTACKED}`);
    expect(r.first.body.replace_original).toBe(false);
    expect(r.first.at - r.sent).toBeLessThan(3000);
    expect(r.card.at).toBeGreaterThan(r.first.at);
    expect(r.card.body.response_type).toBe("ephemeral");
    expect(h.slack.violations).toEqual([]);

    for (const title of SECTION_TITLES) {
      expect(r.sections.get(title), title).toBeDefined();
      expect(r.sections.get(title), title).not.toContain(":warning:");
    }
    expect(r.text).toContain("Last 15 minutes");
    // The traffic is drawn as a chart above its numbers (test/slack/incident-chart.flow.test.ts), so the rows
    // carry no sparkline.
    expect(r.sections.get("Traffic and threats")).toMatch(/DDoS\s+[\d,]+\s+(–|=|▲|▼)/);
    expect((r.card.body.blocks as { type: string }[]).filter((b) => b.type === "image")).toHaveLength(1);
    expect(r.sections.get("Top offenders")).toMatch(
      /\*IPs\* · [\d,]+ in all\n`[\d.:a-f]+` [\d,]+ · (blocked|challenged|logged)/,
    );
    expect(r.sections.get("Triggered WAF rules")).toContain("triggered");
    expect(r.sections.get("Rate limits")).toContain(`Rate limit ${SIM_IDS.rateLimitRulesUnderAttack[0]} ·`);

    // The card's searches were the window's, grouped by each dimension.
    const searches = h.sim.requests.filter((q) => q.path === `/shield/event-logs/${ATTACKED}/search`);
    expect(searches.map((q) => (q.body as { groupBy: string[] }).groupBy[0]).sort()).toEqual([
      "asn",
      "country",
      "ip",
      "ja4",
    ]);
    // The traffic section's whole slots: 8 of 2 min, ending where the slot in progress begins.
    const body = searches[0]?.body as { from: number; to: number };
    expect(body.to - body.from).toBe(16 * 60_000);
    expect(body.to % (2 * 60_000)).toBe(0);
    const detailed = h.sim.requests.filter((q) => q.path === `/shield/metrics/overview/${ATTACKED}/detailed`);
    // Two reads (the window and the one before); on a loaded machine a held read may time out and be
    // asked again, which repeats a read and adds none.
    const distinctReads = [...new Map(detailed.map((q) => [JSON.stringify(q.query), q])).values()];
    expect(distinctReads).toHaveLength(2);
    expect(distinctReads.map((q) => q.query.Resolution)).toEqual(["1", "1"]);

    const ids = r.buttons.map((b) => b.action_id);
    expect(ids).toContain(ACTIONS.incidentRefresh);
    expect(ids).toContain(ACTIONS.shareInChannel);
    expect(ids).toContain(ACTIONS.incidentWafRecommendation);
  });

  const failures: {
    section: string;
    fault: Fault;
    reason: RegExp;
    zone?: number;
    plan403?: boolean;
    /** The section's calls outlast the client's timeout: held at the simulator, on a world. */
    timesOut?: boolean;
  }[] = [
    {
      section: "Zone",
      fault: { path: new RegExp(`^/shield/shield-zone/${ATTACKED}$`), status: 500 },
      reason: /had a problem on its side \(HTTP 500\)/,
    },
    {
      section: "Traffic and threats",
      fault: { path: `/shield/metrics/overview/${ATTACKED}/detailed`, body: "malformed" },
      reason: /could not understand/,
    },
    {
      section: "Top offenders",
      fault: { path: `/shield/event-logs/${ATTACKED}/search`, status: 429 },
      reason: /rate-limiting this workspace's requests/,
    },
    {
      section: "Top offenders",
      fault: { path: "/nothing" },
      zone: SIM_IDS.zoneWithoutEventLogs,
      plan403: true,
      reason: /plan does not include event logs/,
    },
    {
      section: "Triggered WAF rules",
      fault: { path: `/shield/waf/rules/review-triggered/${ATTACKED}`, status: 403 },
      reason: /not allowed to review triggered WAF rules/,
    },
    {
      section: "Rate limits",
      fault: { path: `/shield/metrics/rate-limits/${ATTACKED}` },
      reason: /did not answer in time/,
      timesOut: true,
    },
    {
      section: "Apps",
      fault: { path: "/mc/apps", reset: true },
      reason: /could not reach the Edge API/,
    },
  ];

  for (const f of failures) {
    it(`${f.section} failing alone (${f.reason.source}) is one line with the reason; the rest renders`, async () => {
      const on = f.timesOut ? w : h;
      let release = () => {};
      on.sim.addFault(
        f.timesOut ? { ...f.fault, holdUntil: new Promise<void>((r) => (release = r)) } : f.fault,
      );
      const before = on.sim.state.planFeatureErrorStatus;
      if (f.plan403) on.sim.state.planFeatureErrorStatus = 403;
      try {
        const r = await incident(String(f.zone ?? ATTACKED), undefined, {
          on,
          // Each of the three attempts (a read is retried) is cut off when the clock passes its timeout.
          ...(f.timesOut ? { afterFirst: () => timeOutAttempts(w, f.fault.path as string, 3, 2_000) } : {}),
        });
        const failed = r.sections.get(f.section) ?? "";
        expect(failed).toMatch(f.reason);
        expect(failed.split("\n")).toHaveLength(2);
        expect(failed.split("\n")[1]).toMatch(/^:warning: /);
        for (const title of SECTION_TITLES.filter((t) => t !== f.section)) {
          expect(r.sections.get(title), title).toBeDefined();
          expect(r.sections.get(title), title).not.toContain(":warning:");
        }
        expect(on.slack.violations).toEqual([]);
      } finally {
        on.sim.state.planFeatureErrorStatus = before;
        release();
        if (f.timesOut) await w.settled();
      }
    }, 30_000);
  }

  it("Refresh rebuilds the card in place; Share in channel posts it publicly", async () => {
    const r = await incident(`${ATTACKED} 1h`);
    h.sim.clearRequests();
    const refresh = r.buttons.find((b) => b.action_id === ACTIONS.incidentRefresh)!;
    const click = await h.click(refresh);
    const again = await h.slack.waitForResponse(click.responseId, undefined, 15_000);
    expect(again.body.replace_original).toBe(true);
    expect(blocksText(again.body.blocks)).toContain("Last hour");
    expect(h.sim.requests.some((q) => q.path === `/shield/shield-zone/${ATTACKED}`)).toBe(true);
    expect(findButtons(again.body.blocks).some((b) => b.action_id === ACTIONS.shareInChannel)).toBe(true);

    const share = findButtons(again.body.blocks).find((b) => b.action_id === ACTIONS.shareInChannel)!;
    const shared = await h.click(share);
    const post = await h.slack.waitForResponse(
      shared.responseId,
      (x) => x.body.response_type === "in_channel",
      15_000,
    );
    expect(blocksText(post.body.blocks)).toContain(`Incident picture · shield zone ${ATTACKED}`);
    expect(findButtons(post.body.blocks).some((b) => b.action_id === ACTIONS.shareInChannel)).toBe(false);
  }, 40_000);

  it("at size (10,000 event-log groups, 500 rules) the card and its paged lists stay within Slack's limits", async () => {
    h.sim.scaleIncident(ATTACKED, { eventLogGroups: 10_000, triggeredRules: 500 });
    const r = await incident(String(ATTACKED), 30_000);
    expect(h.slack.violations).toEqual([]);
    expect(checkBlockKitLimits("message", r.card.body)).toEqual([]);
    // Thousands of IPs (those seen in the slot in progress are not counted: the card's whole slots).
    expect(r.sections.get("Top offenders")).toMatch(/\*IPs\* · \d{1,2},\d{3} in all/);

    const allIps = r.buttons.find((b) => b.action_id === `${ACTIONS.incidentSeeAll}.ip`)!;
    h.sim.clearRequests();
    const seeAll = await h.click(allIps);
    const first = await h.slack.waitForResponse(seeAll.responseId, undefined, 15_000);
    expect(first.body.replace_original).toBe(false);
    expect(blocksText(first.body.blocks)).toMatch(/Offending IPs · shield zone \d+/);
    expect(blocksText(first.body.blocks)).toMatch(/page 1 of \d{3}/);
    const next = findButtons(first.body.blocks).find((b) => b.action_id === ACTIONS.incidentNextPage)!;
    const paged = await h.click(next);
    const second = await h.slack.waitForResponse(paged.responseId, undefined, 15_000);
    expect(second.body.replace_original).toBe(true);
    expect(blocksText(second.body.blocks)).toMatch(/page 2 of \d{3}/);
    const pages = h.sim.requests
      .filter((q) => q.path === `/shield/event-logs/${ATTACKED}/search`)
      .map((q) => (q.body as { page: number }).page);
    expect(pages).toEqual([0, 1]);
    const secondIds = findButtons(second.body.blocks).map((b) => b.action_id);
    // Block for each IP of the page, as on the card (50 a page), then paging and Share.
    expect(secondIds.filter((id) => id.startsWith(ACTIONS.changeConfirm))).toHaveLength(50);
    expect(secondIds.filter((id) => !id.startsWith(ACTIONS.changeConfirm))).toEqual([
      ACTIONS.incidentPreviousPage,
      ACTIONS.incidentNextPage,
      ACTIONS.shareInChannel,
    ]);

    const allRules = r.buttons.find((b) => b.action_id === `${ACTIONS.incidentSeeAll}.waf`)!;
    const rulesClick = await h.click(allRules);
    const rules = await h.slack.waitForResponse(rulesClick.responseId, undefined, 15_000);
    expect(blocksText(rules.body.blocks)).toMatch(/page 1 of 1\d · 5\d\d in all/);
    expect(h.slack.violations).toEqual([]);
  }, 60_000);

  it("an event log that gives total without totalPages still pages the offenders' list", async () => {
    h.sim.scaleIncident(ATTACKED, { eventLogGroups: 2_600 });
    const restore = pinReadings(h.sim, { "event-logs.total-pages": "absent" });
    try {
      const r = await incident(String(ATTACKED), 30_000);
      expect(r.sections.get("Top offenders")).toMatch(
        /\*IPs\* · 2,\d{3} in all · top of the first 2,000 groups/,
      );
      const allIps = r.buttons.find((b) => b.action_id === `${ACTIONS.incidentSeeAll}.ip`)!;
      const seeAll = await h.click(allIps);
      const first = await h.slack.waitForResponse(seeAll.responseId, undefined, 15_000);
      expect(blocksText(first.body.blocks)).toMatch(/page 1 of (4\d|5\d|6\d) · 2,\d{3} in all/);
      expect(findButtons(first.body.blocks).map((b) => b.action_id)).toContain(ACTIONS.incidentNextPage);
    } finally {
      restore();
      h.sim.scaleIncident(ATTACKED, { eventLogGroups: 0 });
    }
  }, 60_000);

  it("ASNs the event log writes without AS still get their Block buttons", async () => {
    const restore = pinReadings(h.sim, { "event-logs.asn-spelling": "number" });
    try {
      const r = await incident(String(ATTACKED));
      expect(r.sections.get("Top offenders")).toMatch(/\*ASNs\* · [\d,]+ in all\n`\d+` [\d,]+/);
      const blocks = r.buttons.filter((b) => /^Block AS\d+$/.test(b.text));
      expect(blocks.length, r.buttons.map((b) => b.text).join(", ")).toBeGreaterThan(0);
    } finally {
      restore();
    }
  }, 30_000);

  it("the offenders' list says it is in the Edge API's order, busiest first only within each page", async () => {
    const restore = pinReadings(h.sim, { "event-logs.order": "reverse" });
    try {
      const r = await incident(String(ATTACKED));
      const allIps = r.buttons.find((b) => b.action_id === `${ACTIONS.incidentSeeAll}.ip`)!;
      const seeAll = await h.click(allIps);
      const first = await h.slack.waitForResponse(seeAll.responseId, undefined, 15_000);
      const text = blocksText(first.body.blocks);
      expect(text).toMatch(/page 1 of [2-9]/);
      expect(text).toContain(
        "in the order the Edge API gives (it promises none): busiest first within this page",
      );
    } finally {
      restore();
    }
  }, 30_000);

  it("a rule's AI recommendation button answers as /edge waf does, beside the card", async () => {
    const r = await incident(String(ATTACKED));
    const button = r.buttons.find(
      (b) =>
        b.action_id === ACTIONS.incidentWafRecommendation && JSON.parse(b.value!).r === SIM_IDS.waf.ruleId,
    );
    expect(button).toBeDefined();
    const click = await h.click(button!);
    const answer = await h.slack.waitForResponse(click.responseId, undefined, 15_000);
    expect(answer.body.replace_original).toBe(false);
    expect(blocksText(answer.body.blocks)).toContain(`WAF rule ${SIM_IDS.waf.ruleId} · AI recommendation`);
  }, 30_000);

  it("takes the zone's domain: the placeholder names it, the card is that zone's and shows its domain and pull zone", async () => {
    const r = await incident(`${SIM_IDS.domainUnderAttack} 1h`);
    expect(blocksText(r.first.body.blocks)).toContain(
      `Gathering the picture of zone ${SIM_IDS.domainUnderAttack}`,
    );
    expect(r.text).toContain(`shield zone ${ATTACKED}`);
    expect(r.sections.get("Zone")).toContain(SIM_IDS.domainUnderAttack);
    expect(r.sections.get("Zone")).toMatch(/pull zone \S+ \(\d+\)/);
    const ambiguous = await h.command(`incident ${SIM_IDS.ambiguousDomain}`);
    const answer = await h.slack.waitForResponse(
      ambiguous.responseId,
      (x) => x.body.replace_original === true,
    );
    expect(blocksText(answer.body.blocks)).toContain("Give the full domain or the zone id");
  });

  it("bad arguments and an unknown zone get a sentence saying what to do", async () => {
    const cases: [string, RegExp][] = [
      // Without a zone a picker asks which (test/slack/listeners/pickers.flow.test.ts).
      ["incident", /Which shield zone\? Pick it below and I'll run `\/edge incident &lt;shield zone&gt;`/],
      ["incident shop!", /"shop!" is neither a zone id nor a domain: \/edge incident 1234 1h/],
      [`incident ${ATTACKED} 2h`, /"2h" is not a window\. Use 15m \(the default\), 1h, 6h, 24h or 72h/],
      [`incident ${ATTACKED} 1h now`, /Too many words after the command/],
    ];
    for (const [text, sentence] of cases) {
      const res = await h.command(text);
      const answer = await h.slack.waitForResponse(res.responseId);
      expect(blocksText(answer.body.blocks)).toMatch(sentence);
      expect(answer.body.replace_original).toBe(false);
    }
    const unknown = await incident(String(SIM_IDS.unknownShieldZone));
    // Simulator deviation: GET /shield/shield-zone/{id} documents no 404 (UNDOCUMENTED in test/tools/simulator/openapi.flow.test.ts).
    expect(unknown.text).toContain(`Shield zone ${SIM_IDS.unknownShieldZone} was not found: check the id.`);

    const stale = await h.click({ action_id: ACTIONS.incidentRefresh, value: "{not json" });
    const said = await h.slack.waitForResponse(stale.responseId);
    expect(blocksText(said.body.blocks)).toContain("That button is out of date: run /edge incident again.");
  }, 30_000);
});

describe("/edge incident: bounded time and public answers", () => {
  // Sections get three attempts' worth of EDGE_API_TIMEOUT_MS (3 s here); the harness's client itself
  // times each attempt out after 2 s and tries three times, so only the section deadline can answer by 5 s.
  // On a world: the test moves the clock.
  const slow = useWorld({ env: { EDGE_API_TIMEOUT_MS: "1000" } });

  it("a section still waiting at its deadline says it did not answer in time; the card does not wait for it", async () => {
    const path = `/shield/metrics/rate-limits/${ATTACKED}`;
    let release = () => {};
    slow.sim.addFault({ path, holdUntil: new Promise<void>((r) => (release = r)) });
    try {
      const sent = slow.clock.now();
      const res = await slow.command(`incident ${ATTACKED}`);
      // Attempt 1 times out at 2 s; attempt 2 is still held when the section's deadline (3 s) passes.
      await timeOutAttempts(slow, path, 1, 2_000);
      await slow.sim.waitForRequest(() => slow.sim.requests.filter((q) => q.path === path).length >= 2);
      await onlyHeld(slow, 1);
      await slow.clock.advance(1_000);
      const card = await slow.slack.waitForResponse(res.responseId, (r) => r.body.replace_original === true);
      expect(slow.clock.now() - sent).toBeLessThan(5000);
      // Answered without the rate limits: their second attempt is still waiting, a third never began.
      expect(slow.sim.requests.filter((q) => q.path === path)).toHaveLength(2);
      const s = sections(card.body.blocks);
      expect(s.get("Rate limits")).toMatch(/:warning: The Edge API did not answer in time/);
      for (const title of SECTION_TITLES.filter((t) => t !== "Rate limits"))
        expect(s.get(title), title).not.toContain(":warning:");
    } finally {
      release();
      await slow.settled();
    }
  }, 30_000);

  it("`public` answers in the channel: the placeholder and the card that replaces it, without a Share button", async () => {
    slow.sim.clearFaults();
    slow.sim.clearRequests();
    const res = await slow.command(`incident ${ATTACKED} 6h public`);
    const first = await slow.slack.waitForResponse(res.responseId);
    expect(first.body.response_type).toBe("in_channel");
    expect(blocksText(first.body.blocks)).toContain("over the last 6 hours");
    const card = await slow.slack.waitForResponse(
      res.responseId,
      (r) => r.body.replace_original === true,
      15_000,
    );
    expect(card.body.response_type).toBe("in_channel");
    expect(blocksText(card.body.blocks)).toContain("Last 6 hours");
    const ids = findButtons(card.body.blocks).map((b) => b.action_id);
    expect(ids).toContain(ACTIONS.incidentRefresh);
    expect(ids).not.toContain(ACTIONS.shareInChannel);
    expect(slow.sim.requests.find((q) => q.path.endsWith("/detailed"))?.query.Resolution).toBe("2");
  }, 30_000);
});

describe("/edge incident's 'All countries' list", () => {
  it("marks what edgeops already blocks and offers Block or Unblock on each line, as the card's sections do", async () => {
    const own = await startHarness();
    onTestFinished(() => own.close());
    const first = await incident(String(ATTACKED), 15_000, { on: own });
    const allCountries = first.buttons.find((b) => b.action_id === `${ACTIONS.incidentSeeAll}.country`);
    expect(allCountries?.text).toBe("All countries");
    const opened = await own.click(allCountries!);
    const page = await own.slack.waitForResponse(opened.responseId, undefined, 15_000);
    const codes = [...blocksText(page.body.blocks).matchAll(/^`([A-Z]{2})` [\d,]+/gm)].map((m) => m[1]!);
    expect(codes.length).toBeGreaterThan(5);
    // One of them goes into edgeops' block list (another request, already applied).
    const blocked = codes[codes.length - 1]!;
    await setEntryState(own.deps.edge.forKey(TEST_EDGE_KEY), ATTACKED, accessEntryOf(blocked)!, "block");

    const again = await own.click(allCountries!);
    const marked = await own.slack.waitForResponse(again.responseId, undefined, 15_000);
    const text = blocksText(marked.body.blocks);
    expect(text).toMatch(new RegExp(`^\`${blocked}\` [\\d,]+.* · blocked by edgeops`, "m"));
    const labels = findButtons(marked.body.blocks)
      .filter((b) => b.action_id.startsWith(ACTIONS.changeConfirm))
      .map((b) => b.text);
    expect(labels).toContain(`Unblock ${blocked}`);
    for (const c of codes.filter((c) => c !== blocked)) expect(labels).toContain(`Block ${c}`);
    expect(checkBlockKitLimits("message", marked.body)).toEqual([]);
  }, 40_000);
});
