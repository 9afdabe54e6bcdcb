import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { parseDashboardLink } from "../../../src/services/dashboard-links.js";
import { SIM_IDS, type Simulator } from "../../../tools/simulator/index.js";
import { startBotWithAnotherAccount } from "../../support/another-account.js";
import { eventsHandled } from "../../support/events-handled.js";
import { blocksText, type Harness, SIGNING_SECRET } from "../../support/harness.js";
import { postSigned } from "../../support/slack-signer.js";

/**
 * dash.bunny.net links unfurl into a compact status card (link_shared → chat.unfurl),
 * for workspaces with a key, and only for zones and applications that workspace's key sees.
 */

const ZONE = SIM_IDS.zoneUnderAttack; // shop.acme-example.com
const OTHER_KEY = "sim-other-account-key-unfurl";
const OTHER_TEAM = "T0002";

let events = 0;
/** A link_shared event for `urls`, as Slack posts it to the Events API URL. */
async function share(h: Harness, urls: string[], teamId = "T0001") {
  events += 1;
  const body = JSON.stringify({
    token: "legacy",
    team_id: teamId,
    api_app_id: "A0001",
    type: "event_callback",
    event_id: `Ev${events}`,
    event_time: Math.floor(Date.now() / 1000),
    event: {
      type: "link_shared",
      channel: "C0001",
      is_bot_user_member: true,
      user: "U0002",
      message_ts: `1700000${events}.000100`,
      unfurl_id: `Uf${events}`,
      source: "conversations_history",
      event_ts: `1700000${events}.000200`,
      links: urls.map((url) => ({ domain: new URL(url).hostname, url })),
    },
  });
  const res = await postSigned(`${h.eventsUrl}`, body, SIGNING_SECRET, { contentType: "application/json" });
  expect(res.status).toBe(200);
  return `Uf${events}`;
}

const handledEvents = eventsHandled();

/**
 * The log line that says how an event ended, for events that leave no trace in Slack: once the bot is
 * quiet (the event's listener ended, nothing in flight), the line is there.
 */
async function logged(h: Harness, unfurlId: string, text: string) {
  await handledEvents.handled("link_shared", (e) => e.unfurl_id === unfurlId);
  await h.settled();
  expect(h.logs.text).toContain(text);
}

describe("dashboard link unfurls", () => {
  let sim: Simulator;
  let h: Harness;
  let appId: string;
  let pullZoneId: number;
  beforeAll(async () => {
    ({ sim, h } = await startBotWithAnotherAccount({
      otherTeam: OTHER_TEAM,
      otherKey: OTHER_KEY,
      shapeOther: (state) => {
        state.shieldZones = state.shieldZones.filter((z) => z.shieldZoneId === SIM_IDS.zoneWithoutBotPlan);
        state.apps = [];
      },
      middleware: [handledEvents.middleware],
    }));
    appId = sim.state.apps[0]!.id;
    pullZoneId = sim.state.shieldZones.find((z) => z.shieldZoneId === ZONE)!.pullZoneId!;
  });
  afterEach(() => {
    h.slack.clear();
  });
  afterAll(async () => {
    await h.close();
    await sim.close();
  });

  it("recognises the dashboard's zone and application pages, and nothing else", () => {
    expect(parseDashboardLink("https://dash.bunny.net/shield/18401/overview")).toEqual({
      kind: "shield_zone",
      id: 18401,
    });
    expect(parseDashboardLink("https://dash.bunny.net/shield/zones/18401")).toEqual({
      kind: "shield_zone",
      id: 18401,
    });
    expect(parseDashboardLink("https://DASH.bunny.net/cdn/2310037/general?x=1#y")).toEqual({
      kind: "pull_zone",
      id: 2310037,
    });
    expect(parseDashboardLink("https://dash.bunny.net/magic-containers/apps/mc-abc123/overview")).toEqual({
      kind: "app",
      id: "mc-abc123",
    });
    for (const url of [
      "https://dash.bunny.net/billing",
      "https://dash.bunny.net/cdn/0/general",
      "https://dash.bunny.net.evil.example/cdn/1",
      "ftp://dash.bunny.net/cdn/1",
      "not a url",
    ])
      expect(parseDashboardLink(url), url).toBeUndefined();
  });

  it("unfurls a shield zone, a pull zone and an application of the workspace's own account", async () => {
    const urls = [
      `https://dash.bunny.net/shield/${ZONE}/overview`,
      `https://dash.bunny.net/cdn/${pullZoneId}/general`,
      `https://dash.bunny.net/magic-containers/apps/${appId}`,
    ];
    const unfurlId = await share(h, urls);
    const call = await h.slack.waitForCall("chat.unfurl", (c) => c.args.unfurl_id === unfurlId);
    expect(call.args.source).toBe("conversations_history");
    const unfurls = call.args.unfurls as Record<string, { blocks: unknown }>;
    expect(Object.keys(unfurls).sort()).toEqual([...urls].sort());
    for (const url of urls.slice(0, 2)) {
      const text = blocksText(unfurls[url]!.blocks);
      expect(text).toContain("shop.acme-example.com");
      expect(text).toContain(`shield zone ${ZONE}`);
      expect(text).toMatch(/WAF (on|off)/);
    }
    expect(blocksText(unfurls[urls[2]!]!.blocks)).toContain(sim.state.apps[0]!.name);
    expect(h.slack.violations).toEqual([]);
  });

  it("refuses a link to another workspace's zone: no unfurl, and a log line says why", async () => {
    // T0002's key sees only the first shield zone; 18401 belongs to T0001's account.
    const refused = await share(
      h,
      [`https://dash.bunny.net/shield/${ZONE}`, `https://dash.bunny.net/magic-containers/apps/${appId}`],
      OTHER_TEAM,
    );
    await logged(h, refused, "unfurl refused: not visible to this workspace's Edge API key");
    expect(h.slack.callsTo("chat.unfurl").map((c) => Object.keys(c.args.unfurls as object))).toEqual([]);
    // Its own zone unfurls, and only that one of a mixed message.
    const own = `https://dash.bunny.net/shield/${SIM_IDS.zoneWithoutBotPlan}`;
    const unfurlId = await share(h, [own, `https://dash.bunny.net/shield/${ZONE}`], OTHER_TEAM);
    const call = await h.slack.waitForCall("chat.unfurl", (c) => c.args.unfurl_id === unfurlId);
    expect(Object.keys(call.args.unfurls as object)).toEqual([own]);
  });

  it("does nothing for a workspace without a key, or for dashboard pages that are not a zone or an app", async () => {
    const noKey = await share(h, [`https://dash.bunny.net/shield/${ZONE}`], "T0NOKEY");
    await logged(h, noKey, "unfurl skipped: no Edge API key for this workspace");
    const notPages = await share(h, [
      "https://dash.bunny.net/billing",
      `https://dash.bunny.net/shield/99999999`,
    ]);
    await logged(h, notPages, "not a zone or application page");
    expect(h.slack.callsTo("chat.unfurl")).toEqual([]);
  });
});
