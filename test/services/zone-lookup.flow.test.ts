import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { ZONE_DIRECTORY_TTL_MS } from "../../src/services/zone-lookup.js";
import { ACTIONS } from "../../src/slack/ids.js";
import {
  type PullZone,
  type ShieldZone,
  SIM_IDS,
  type Simulator,
  startSimulator,
} from "../../tools/simulator/index.js";
import { steppedClock } from "../support/clock.js";
import { blocksText, commandAnswer, type Harness, startHarness, TEST_EDGE_KEY } from "../support/harness.js";

/** Workspace T0002 stores a key of another bunny.net account. */
const OTHER_KEY = "sim-other-key-4b8d1e6f90a2";
const { domain: SHOP_DOMAIN, pullZoneName: SHOP_PULL_ZONE, shieldZoneId: SHOP_ZONE } = SIM_IDS.zoneByDomain;

let sim: Simulator;
let h: Harness;

beforeAll(async () => {
  sim = await startSimulator({ scanDurationMs: 50, apiKeys: [TEST_EDGE_KEY, OTHER_KEY] });
  // Two workspaces: OAuth installs (a single bot token answers only its own workspace).
  // The time of day stands still but for advanceClock: the cache's minute is the test's, not the machine's
  // (a loaded machine can take more than the last second of it between two commands).
  h = await startHarness({
    sim,
    oauth: true,
    installs: ["T0001", "T0002"],
    clock: steppedClock(() => Date.UTC(2026, 10, 28, 12)),
  });
  await h.store.keys.set("T0002", OTHER_KEY, "U0001");
});
afterAll(async () => {
  await h?.close();
  await sim?.close();
});
beforeEach(async () => {
  // A confirmation's impact preview searches the event log after the answer: let the last test's work
  // end (the bot quiet, no Edge call waiting or in flight) before the log is cleared, so it does not land
  // in this test's.
  await h.settled();
  // Every test starts with cold directories and a clean request log.
  h.advanceClock(ZONE_DIRECTORY_TTL_MS + 1);
  sim.clearFaults();
  sim.clearRequests();
});

const run = (text: string, who: { teamId?: string } = {}) => commandAnswer(h, text, who);

const requestsTo = (path: string | RegExp, key?: string) =>
  sim.requests.filter(
    (r) =>
      (typeof path === "string" ? r.path === path : path.test(r.path)) &&
      (key === undefined || r.headers.accesskey === key),
  );
const directoryCalls = (key?: string) => ({
  shieldZones: requestsTo("/shield/shield-zones", key).length,
  pullZones: requestsTo("/pullzone", key).length,
});

describe("/edge zones <text>", () => {
  it("finds a zone by part of its domain, with its names, plan, WAF and DDoS", async () => {
    const { text, body } = await run("zones SHOP.acme");
    expect(text).toContain('Shield zones matching "shop.acme"');
    expect(text).toContain("1 of 27 zones searched match `shop.acme`");
    expect(text).toContain(`*Zone ${SHOP_ZONE}* · ${SHOP_DOMAIN}, ${SHOP_PULL_ZONE}.b-cdn.net`);
    expect(text).toMatch(new RegExp(`pull zone ${SHOP_PULL_ZONE} \\(\\d+\\) · \\w+ · WAF (on|off)`));
    expect(text).not.toContain("Zone 18402");
    expect(body.response_type).toBe("ephemeral");
    expect(h.slack.violations).toEqual([]);
  });

  it("finds a zone by its pull zone name, and says what no zone matches", async () => {
    expect((await run("zones globex-portal")).text).toContain("portal.globex-example.net");
    const none = await run("zones nosuchsite");
    expect(none.text).toContain(
      "No shield zone's domain or pull zone name contains `nosuchsite` (27 zones searched)",
    );
    expect(none.text).toContain("/edge zones");
  });

  it("lists every zone that matches, exact name first, and unshielded pull zones apart", async () => {
    const { text } = await run("zones acme-example.com");
    expect(text).toContain("3 of 27 zones searched match `acme-example.com`");
    const order = [18403, 18401, 18402].map((id) => text.indexOf(`*Zone ${id}*`));
    expect(order.every((i) => i >= 0)).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    expect(text).toContain("Pull zones that match but have no shield zone: pull zone acme-staging");
    const many = await run("zones example");
    expect(many.text).toContain("24 of 27 zones searched match `example`");
  });

  it("refuses two search words and text that cannot be a name", async () => {
    expect((await run("zones acme shop")).text).toContain("Give one page number or one word to search for");
    expect((await run("zones a*b")).text).toContain("Search for part of a domain or pull zone name");
    expect((await run("zones 0")).text).toContain("The page is a number from 1");
    expect(sim.requests).toEqual([]);
  });
});

describe("a domain wherever a shield zone id goes", () => {
  it("/edge bots <domain> shows that zone's bot settings", async () => {
    const { text } = await run(`bots ${SHOP_DOMAIN}`);
    expect(text).toContain(`Bot detection · shield zone ${SHOP_ZONE}`);
    expect(requestsTo(`/shield/shield-zone/${SHOP_ZONE}/bot-detection`)).toHaveLength(1);
  });

  it("accepts any case, a URL, Slack's link form and the pull zone name", async () => {
    for (const arg of [
      `HTTPS://${SHOP_DOMAIN.toUpperCase()}/some/path`,
      `<http://${SHOP_DOMAIN}|${SHOP_DOMAIN}>`,
      `${SHOP_DOMAIN}.`,
      SHOP_PULL_ZONE,
    ]) {
      expect((await run(`bots ${arg}`)).text).toContain(`shield zone ${SHOP_ZONE}`);
    }
  });

  it("/edge bot <domain> … asks to confirm the change on the zone the domain names", async () => {
    const { text, buttons } = await run(`bot ${SHOP_DOMAIN} aiscraper allow`);
    expect(text).toMatch(/\?/);
    const confirm = buttons.find((b) => b.action_id === ACTIONS.changeConfirm);
    expect(JSON.parse(confirm!.value!)).toMatchObject({
      k: "bot_category",
      p: { shieldZoneId: SHOP_ZONE, category: 2, action: 2 },
    });
    expect(requestsTo(`/shield/shield-zone/${SHOP_ZONE}/bot-categorization`)).toHaveLength(1);
  });

  it("/edge waf <domain> <rule> reads that zone's recommendation", async () => {
    const { text } = await run(`waf ${SHOP_DOMAIN} ${SIM_IDS.waf.ruleId}`);
    expect(text).toContain(SIM_IDS.waf.ruleId);
    expect(
      requestsTo(
        `/shield/waf/rules/review-triggered/ai-recommendation/${SIM_IDS.waf.zoneId}/${SIM_IDS.waf.ruleId}`,
      ),
    ).toHaveLength(1);
  });

  it("an id needs no lookup", async () => {
    await run(`bots ${SHOP_ZONE}`);
    expect(directoryCalls()).toEqual({ shieldZones: 0, pullZones: 0 });
  });

  it("a name that only part of several zones' names contains lists them with their ids, and acts on none", async () => {
    const { text } = await run(`bots ${SIM_IDS.ambiguousName}`);
    expect(text).toContain(`No shield zone's domain or pull zone name is exactly "acme"; 3 contain it:`);
    expect(text).toContain(`${SHOP_DOMAIN} (zone ${SHOP_ZONE})`);
    expect(text).toContain("api.acme-example.com (zone 18402)");
    expect(text).toContain("acme-example.com (zone 18403)");
    expect(text).toContain("Give the full domain or the zone id: /edge bots 1234");
    expect(requestsTo(/bot-detection|bot-categorization/)).toEqual([]);
  });

  it("lists at most ten candidates", async () => {
    const { text } = await run("bot example seo block");
    expect(text).toContain("24 contain it:");
    expect(text.match(/\(zone \d+\)/g)).toHaveLength(10);
    expect(text).toContain("and 14 more");
  });

  it("a name two zones share exactly is ambiguous too", async () => {
    const shop = sim.state.shieldZones.find((z) => z.shieldZoneId === SHOP_ZONE)!;
    const other = sim.state.shieldZones.find((z) => z.shieldZoneId === SIM_IDS.zoneEnterprise)!;
    const saved = other.pullZoneId;
    other.pullZoneId = shop.pullZoneId;
    try {
      const { text } = await run(`waf ${SHOP_DOMAIN} 942100`);
      expect(text).toContain(`"${SHOP_DOMAIN}" names 2 shield zones:`);
      expect(text).toContain(`(zone ${SHOP_ZONE})`);
      expect(text).toContain(`(zone ${SIM_IDS.zoneEnterprise})`);
      expect(requestsTo(/ai-recommendation/)).toEqual([]);
    } finally {
      other.pullZoneId = saved;
    }
  });

  it("an unknown domain gets a sentence saying how to find the zone", async () => {
    const { text } = await run("bots nosuch.example.org");
    expect(text).toContain(
      'No shield zone has the domain or pull zone name "nosuch.example.org". Search for it with /edge zones and part of its name, or give the zone id: /edge bots 1234',
    );
    const unshielded = await run(`bots ${SIM_IDS.unshieldedDomain}`);
    expect(unshielded.text).toContain("belongs to pull zone acme-staging, which has no shield zone");
  });

  it("bad words are refused before any Edge call", async () => {
    expect((await run("bots a%b")).text).toContain('"a%b" is neither a zone id nor a domain');
    expect((await run("bot shop.acme-example.com nosuch block")).text).toContain(
      '"nosuch" is not a bot category',
    );
    expect(sim.requests).toEqual([]);
  });
});

describe("the zone directory cache", () => {
  it("a second lookup within a minute makes no Edge call; after a minute it reads the lists again", async () => {
    await run(`bots ${SHOP_DOMAIN}`);
    expect(directoryCalls()).toEqual({ shieldZones: 1, pullZones: 1 });
    await run("zones acme");
    await run(`bot ${SHOP_PULL_ZONE} seo block`);
    h.advanceClock(ZONE_DIRECTORY_TTL_MS - 1_000);
    await run(`waf ${SHOP_DOMAIN} 942100`);
    expect(directoryCalls()).toEqual({ shieldZones: 1, pullZones: 1 });

    h.advanceClock(1_001);
    await run(`bots ${SHOP_DOMAIN}`);
    expect(directoryCalls()).toEqual({ shieldZones: 2, pullZones: 2 });
  });

  it("is kept per API key: another workspace's key never sees the names cached for this one", async () => {
    await run(`bots ${SHOP_DOMAIN}`);
    expect(directoryCalls(TEST_EDGE_KEY)).toEqual({ shieldZones: 1, pullZones: 1 });

    // The account behind the other key renames the site; the first key's directory is still cached.
    const pullZone = sim.state.pullZones.find((p) => p.Name === SHOP_PULL_ZONE)!;
    const site = pullZone.Hostnames.find((hn) => hn.Value === SHOP_DOMAIN)!;
    site.Value = "renamed.acme-example.com";
    try {
      const other = await run("bots renamed.acme-example.com", { teamId: "T0002" });
      expect(other.text).toContain(`shield zone ${SHOP_ZONE}`);
      expect(directoryCalls(OTHER_KEY)).toEqual({ shieldZones: 1, pullZones: 1 });
      expect((await run(`bots ${SHOP_DOMAIN}`, { teamId: "T0002" })).text).toContain("No shield zone has");

      // The first workspace still reads its own cached names, with no new call.
      expect((await run(`bots ${SHOP_DOMAIN}`)).text).toContain(`shield zone ${SHOP_ZONE}`);
      expect((await run("bots renamed.acme-example.com")).text).toContain("No shield zone has");
      expect(directoryCalls(TEST_EDGE_KEY)).toEqual({ shieldZones: 1, pullZones: 1 });
    } finally {
      site.Value = SHOP_DOMAIN;
    }
  });

  it("an Edge error during the lookup is a sentence, is not cached, and nothing else is called", async () => {
    sim.addFault({ path: "/pullzone", status: 500, body: "none" });
    const failed = await run(`bots ${SHOP_DOMAIN}`);
    expect(failed.text).toContain(
      `I could not look up "${SHOP_DOMAIN}" in the zone list. The Edge API had a problem on its side (HTTP 500); try again in a few minutes. Or give the zone id: /edge bots 1234`,
    );
    expect(failed.text).not.toMatch(/Error:|at .*\.ts:\d+/);
    expect(requestsTo(/bot-detection/)).toEqual([]);

    sim.clearFaults();
    sim.addFault({ path: "/shield/shield-zones", status: 403, body: { statusCode: 403 } });
    expect((await run(`bots ${SHOP_DOMAIN}`)).text).toContain(
      "This workspace's Edge API key is not allowed to list shield zones",
    );
    sim.clearFaults();
    sim.addFault({ path: "/pullzone", body: "malformed" });
    expect((await run("zones acme")).text).toContain(
      "The Edge API sent an answer edgeops could not understand",
    );

    sim.clearFaults();
    expect((await run(`bots ${SHOP_DOMAIN}`)).text).toContain(`shield zone ${SHOP_ZONE}`);
  });
});

describe("at size", () => {
  let big: Harness;

  beforeAll(async () => {
    // It counts the list's page reads: a retry after a timeout on a loaded machine is not a second read asked.
    big = await startHarness({ edgeTimeoutMs: 60_000 });
    const template = big.sim.state.shieldZones[0]!;
    const zones: ShieldZone[] = [];
    const pullZones: PullZone[] = [];
    for (let i = 0; i < 1_200; i++) {
      const pullZoneId = 5_000_000 + i;
      zones.push({ ...structuredClone(template), shieldZoneId: 600_000 + i, pullZoneId });
      const name = i === 7 ? "evil<b>&co" : `tenant-${String(i).padStart(4, "0")}-storefront`;
      const hostnames = [0, 1, 2, 3].map((n) => `shop${n}.tenant-${i}-a-rather-long-brand-name-example.com`);
      pullZones.push({
        ...structuredClone(big.sim.state.pullZones[0]!),
        Id: pullZoneId,
        Name: name,
        Hostnames: hostnames.map((Value, n) => ({
          Id: pullZoneId * 10 + n,
          Value,
          ForceSSL: true,
          IsSystemHostname: false,
          IsManagedHostname: false,
          HasCertificate: true,
          Certificate: null,
          CertificateKey: null,
        })),
      });
    }
    big.sim.state.shieldZones = zones;
    big.sim.state.pullZones = pullZones;
  });
  afterAll(async () => {
    await big?.close();
  });

  it("1,200 zones over two pages of each list: every match counted, the answer within Block Kit limits", async () => {
    const res = await big.command("zones example");
    const answer = await big.slack.waitForResponse(res.responseId);
    const blocks = answer.body.blocks as unknown[];
    const text = blocksText(blocks);
    expect(text).toContain("1,200 of 1,200 zones searched match `example`");
    expect(text).toMatch(/…and \d+ zones \(narrow the search to see them\) not shown/);
    expect(blocks.length).toBeLessThanOrEqual(50);
    expect(big.slack.violations).toEqual([]);
    expect(big.sim.requests.filter((r) => r.path === "/pullzone").map((r) => r.query.page)).toEqual([
      "1",
      "2",
    ]);
    expect(
      big.sim.requests.filter((r) => r.path === "/shield/shield-zones").map((r) => r.query.page),
    ).toEqual(["1", "2"]);
  });

  it("escapes names from the API", async () => {
    const res = await big.command("zones evil");
    const text = blocksText((await big.slack.waitForResponse(res.responseId)).body.blocks);
    expect(text).toContain("pull zone evil&lt;b&gt;&amp;co");
    expect(text).not.toContain("<b>");
  });
});
