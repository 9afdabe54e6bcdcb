import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ACTIONS } from "../../../src/slack/ids.js";
import { SIM_IDS } from "../../../tools/simulator/index.js";
import { blocksText, findButtons, type Harness, startHarness, TEST_EDGE_KEY } from "../../support/harness.js";

let h: Harness;

beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.close();
});

async function run(text: string, who: { userId?: string; teamId?: string; channelId?: string } = {}) {
  const res = await h.command(text, who);
  expect(res.status).toBe(200);
  const answer = await h.slack.waitForResponse(res.responseId);
  return {
    res,
    body: answer.body,
    text: blocksText(answer.body.blocks),
    buttons: findButtons(answer.body.blocks),
  };
}

describe("/edge read commands over signed HTTP", () => {
  it("acks at once with an empty 200 and answers through response_url", async () => {
    const { res, body } = await run("apps");
    expect(res.body).toBe("");
    expect(body.response_type).toBe("ephemeral");
    expect(h.slack.violations).toEqual([]);
  });

  it("/edge alone and /edge help list the commands with examples", async () => {
    for (const text of ["", "help"]) {
      const { text: shown } = await run(text);
      for (const sub of ["apps", "zones", "bots", "ratelimit", "waf", "dns", "key"])
        expect(shown).toContain(`/edge ${sub}`);
      expect(shown).toContain("/edge apps failing 50");
    }
  });

  it("apps: status emoji and label, endpoint, totals, and paging by the Next page button", async () => {
    const first = await run("apps");
    expect(first.text).toContain("Magic Containers applications");
    expect(first.text).toMatch(/20 read of 47/);
    expect(first.text).toMatch(/:large_green_circle: \d+ active/);
    const next = first.buttons.find((b) => b.action_id === ACTIONS.appsNextPage);
    expect(next).toBeDefined();
    expect(first.buttons.some((b) => b.action_id === ACTIONS.shareInChannel)).toBe(true);

    h.sim.clearRequests();
    const click = await h.click(next!);
    expect(click.status).toBe(200);
    const second = await h.slack.waitForResponse(click.responseId);
    expect(second.body.replace_original).toBe(true);
    expect(blocksText(second.body.blocks)).toMatch(/20 read of 47/);
    const apiCall = h.sim.requests.find((r) => r.path === "/mc/apps");
    expect(apiCall?.query.nextCursor).toBe(JSON.parse(next!.value!).c);

    const third = await h.click(
      findButtons(second.body.blocks).find((b) => b.action_id === ACTIONS.appsNextPage)!,
    );
    const last = await h.slack.waitForResponse(third.responseId);
    expect(blocksText(last.body.blocks)).toMatch(/7 read of 47/);
    expect(findButtons(last.body.blocks).some((b) => b.action_id === ACTIONS.appsNextPage)).toBe(false);
  });

  it("apps: progressing shows as deploying, and a status word filters", async () => {
    const { text } = await run("apps deploying 100");
    expect(text).toContain("(deploying)");
    expect(text).toContain("Deploying");
    expect(text).not.toMatch(/\bActive {2}·/);
  });

  it("apps: a filtered answer counts what it filters, and two statuses are both kept", async () => {
    const count = (status: string) =>
      h.sim.state.apps.filter((a) => a.status.toLowerCase() === status).length;
    const [failing, deploying] = [count("failing"), count("progressing")];
    const all = h.sim.state.apps.length;

    const one = await run("apps failing 100");
    expect(one.text).toContain(`${failing} of the ${all} applications read of ${all} are failing · page 1`);
    expect(one.text).not.toContain("active");

    const both = await run("apps failing deploying 100");
    expect(both.text).toContain("Magic Containers applications (failing or deploying)");
    expect(both.text).toContain(
      `${failing + deploying} of the ${all} applications read of ${all} are failing or deploying (${failing} failing, ${deploying} deploying)`,
    );
    expect(both.text).toContain("Failing  ·");
    expect(both.text).toContain("Deploying  ·");
    expect(both.text).not.toMatch(/\bActive {2}·/);

    // Next page keeps both statuses.
    const small = await run("apps failing deploying 3");
    const next = small.buttons.find((b) => b.action_id === ACTIONS.appsNextPage)!;
    const click = await h.click(next);
    const second = blocksText((await h.slack.waitForResponse(click.responseId)).body.blocks);
    expect(second).toContain("Magic Containers applications (failing or deploying)");
    expect(second).toMatch(/(Failing|Deploying) {2}·/);
    expect(second).not.toMatch(/\b(Active|Suspended|Inactive) {2}·/);
  });

  it("apps: a bad status word or limit gets a sentence with an example", async () => {
    expect((await run("apps sleepy")).text).toContain('"sleepy" is not a status');
    expect((await run("apps 5000")).text).toContain(
      "The limit is a number from 1 to 1000: /edge apps failing 50",
    );
  });

  it("zones: compact rows with Previous/Next page buttons", async () => {
    const first = await run("zones");
    expect(first.text).toContain(`Zone ${SIM_IDS.firstShieldZone}`);
    expect(first.text).toMatch(/Page 1 of 3/);
    expect(first.buttons.map((b) => b.action_id)).toContain(ACTIONS.zonesNextPage);
    expect(first.buttons.map((b) => b.action_id)).not.toContain(ACTIONS.zonesPreviousPage);
    const click = await h.click(first.buttons.find((b) => b.action_id === ACTIONS.zonesNextPage)!);
    const second = await h.slack.waitForResponse(click.responseId);
    expect(blocksText(second.body.blocks)).toMatch(/Page 2 of 3/);
    expect(findButtons(second.body.blocks).map((b) => b.action_id)).toContain(ACTIONS.zonesPreviousPage);
    expect((await run("zones 0")).text).toContain("The page is a number from 1: /edge zones 2");
  });

  it("zones: an undocumented plan type shows as unknown rather than failing", async () => {
    const { text } = await run("zones 3");
    expect(text).toContain(`Zone ${SIM_IDS.zoneWithUnknownEnum}`);
    expect(text).toContain("Unknown (9)");
  });

  it("bots: detection settings and each category's action", async () => {
    const { text } = await run(`bots ${SIM_IDS.zoneEnterprise}`);
    expect(text).toContain("Request integrity");
    expect(text).toContain("Browser fingerprint");
    expect(text).toContain("Challenge");
    expect(text).toContain("SEO");
    expect((await run("bots 0")).text).toContain(
      "Zone ids are whole numbers from 1. For example: /edge bots 1234",
    );
    expect((await run("bots a%b")).text).toContain(
      '"a%b" is neither a zone id nor a domain: /edge bots 1234',
    );
    // Without a zone, a picker asks which (test/slack/listeners/pickers.flow.test.ts).
    expect((await run("bots")).text).toContain("Which shield zone? Pick it below");
  });

  it("ratelimit: four counters, a 28-day sparkline, the busiest day and the total", async () => {
    const { text } = await run(`ratelimit ${SIM_IDS.rateLimitIds[0]}`);
    expect(text).toContain("Blocked");
    expect(text).toContain("Challenged");
    expect(text).toContain("Past 28 days");
    expect(text).toMatch(/`[▁▂▃▄▅▆▇█]{28}`/);
    expect(text).toMatch(/Busiest day: \d{4}-\d\d-\d\d with [\d,]+ · total [\d,]+/);
  });

  it("waf: the recommendation escaped for Slack, or the API's reason", async () => {
    const ok = await run(`waf ${SIM_IDS.waf.zoneId} ${SIM_IDS.waf.ruleId}`);
    expect(ok.text).toContain("&lt;");
    expect(ok.text).not.toMatch(/<(?!@|#|!date)[a-z]/i);
    const failed = await run(`waf ${SIM_IDS.wafFailed.zoneId} ${SIM_IDS.wafFailed.ruleId}`);
    expect(failed.text).toContain("No recommendation for this rule.");
  });

  it("dns: records grouped by type, a page of the first type and a button for every other, with Scan now", async () => {
    const large = await run(`dns ${SIM_IDS.dnsZoneLarge}`);
    expect(large.text).toMatch(/\*A\* \(\d+\)\n[\s\S]*A records 1–\d+ of \d+ · page 1 of \d+/);
    expect(large.buttons.map((b) => b.text)).toContain("TXT (107)");
    expect(large.buttons.map((b) => b.action_id)).toContain(ACTIONS.dnsScanNow);
    const failed = await run(`dns ${SIM_IDS.dnsZoneFailedScan}`);
    expect(failed.text).toContain("The scan failed:");
    const none = await run(`dns ${SIM_IDS.dnsZoneNoScan}`);
    expect(none.text).toContain("has not been scanned yet");
  });

  it("dns: Scan now triggers a scan and replaces the message with the finished scan", async () => {
    const none = await run(`dns ${SIM_IDS.dnsZoneNoScan}`);
    h.sim.clearRequests();
    const click = await h.click(none.buttons.find((b) => b.action_id === ACTIONS.dnsScanNow)!);
    const finished = await h.slack.waitForResponse(click.responseId, (r) =>
      blocksText(r.body.blocks).includes("Completed"),
    );
    expect(finished.body.replace_original).toBe(true);
    const trigger = h.sim.requests.find((r) => r.method === "POST" && r.path === "/dnszone/records/scan");
    expect(trigger?.body).toEqual({ ZoneId: SIM_IDS.dnsZoneNoScan });
  });

  it("public answers go to the channel and Share in channel re-posts publicly", async () => {
    expect((await run("zones public")).body.response_type).toBe("in_channel");
    const priv = await run(`ratelimit ${SIM_IDS.rateLimitIds[1]}`);
    const share = priv.buttons.find((b) => b.action_id === ACTIONS.shareInChannel)!;
    const click = await h.click(share);
    const posted = await h.slack.waitForResponse(
      click.responseId,
      (r) => r.body.response_type === "in_channel",
    );
    expect(blocksText(posted.body.blocks)).toContain(`Rate limit ${SIM_IDS.rateLimitIds[1]}`);
    await h.slack.waitForResponse(click.responseId, (r) => r.body.delete_original === true);
  });

  it("an unknown subcommand gets a sentence pointing at help", async () => {
    expect((await run("deploy everything")).text).toContain('I don\'t know "/edge deploy". Try /edge help');
    // A slip of a letter or two is named, with the rest of what was typed, ready to copy.
    expect((await run("blok 1234 203.0.113.7")).text).toBe(
      ':warning: I don\'t know "/edge blok". Did you mean /edge block 1234 203.0.113.7? Try /edge help for the list of commands.',
    );
    expect((await run("incdent <@U1|x> 1h")).text).toContain("Did you mean /edge incident &lt;@U1|x&gt; 1h?");
  });

  it("a workspace without a key is told how to set one", async () => {
    // Its own harness: a single-token install answers only its token's workspace.
    const nokey = await startHarness({ seedKey: false });
    try {
      const res = await nokey.command("apps");
      expect(blocksText((await nokey.slack.waitForResponse(res.responseId)).body.blocks)).toContain(
        "No Edge API key for this workspace yet: an admin can run /edge key.",
      );
    } finally {
      await nokey.close();
    }
  });

  it("Edge API errors become one sentence, never a stack trace", async () => {
    h.sim.addFault({ path: "/shield/shield-zones", status: 500, body: "none", times: 10 });
    const { text } = await run("zones");
    expect(text).not.toMatch(/at .*\.ts:\d+|Error:/);
    expect(text.length).toBeGreaterThan(10);
    h.sim.clearFaults();
    const notFound = await run(`bots ${SIM_IDS.unknownShieldZone}`);
    expect(notFound.text).toMatch(/not found|doesn't exist|does not exist/i);
  });

  it("never shows the API key in any answer or log line", () => {
    const everything = JSON.stringify(h.slack.responses) + JSON.stringify(h.slack.calls) + h.logs.text;
    expect(everything).not.toContain(TEST_EDGE_KEY);
  });
});

describe("/edge zones names each zone once the pull zones are read, never waiting for them", () => {
  let fresh: Harness;
  beforeAll(async () => {
    fresh = await startHarness();
  });
  afterAll(async () => {
    await fresh?.close();
  });

  async function zonesText(text: string) {
    const res = await fresh.command(text);
    expect(res.status).toBe(200);
    return (await fresh.slack.waitForResponse(res.responseId)).body;
  }

  it("answers by id while the pull zone list is slow, then by name on later pages", async () => {
    // The pull zone list is held at the simulator until the first page has been answered.
    let release = () => {};
    fresh.sim.addFault({ path: "/pullzone", holdUntil: new Promise<void>((r) => (release = r)), times: 1 });
    const first = blocksText((await zonesText("zones")).blocks);
    expect(first).toContain(`*Zone ${SIM_IDS.firstShieldZone}* · pull zone 2310037 · Business`);
    expect(first).not.toContain("shop.acme-example.com");

    // The names load in the background; a later page has them, with the same facts and limits.
    await fresh.sim.waitForRequest((r) => r.path === "/pullzone");
    release();
    await fresh.settled();
    const named = blocksText((await zonesText("zones")).blocks);
    expect(named).toContain("shop.acme-example.com");
    expect(named).toContain(
      `*Zone ${SIM_IDS.firstShieldZone}* · shop.acme-example.com, acme-shop.b-cdn.net\n      pull zone acme-shop (2310037) · Business · WAF on (Block)`,
    );
    expect(named).toContain("limits: 25 rate-limit rules, 50 custom rules");
    expect(named).toMatch(/Page 1 of 3/);

    // The Next page button names its zones too; the page itself is still read from the Edge API.
    const next = findButtons((await zonesText("zones")).blocks).find(
      (b) => b.action_id === ACTIONS.zonesNextPage,
    );
    fresh.sim.clearRequests();
    const click = await fresh.click(next!);
    const second = blocksText((await fresh.slack.waitForResponse(click.responseId)).body.blocks);
    expect(second).toMatch(/Page 2 of 3/);
    expect(second).toMatch(/\*Zone \d+\* · [a-z0-9.-]+\.[a-z]+/);
    expect(fresh.sim.requests.filter((r) => r.path === "/shield/shield-zones")).toHaveLength(1);
    expect(fresh.slack.violations).toEqual([]);
  });

  it("a pull zone list that fails does not fail the zones page", async () => {
    const other = await startHarness();
    try {
      other.sim.addFault({ path: "/pullzone", status: 500, times: 100 });
      const res = await other.command("zones");
      const text = blocksText((await other.slack.waitForResponse(res.responseId)).body.blocks);
      expect(text).toContain(`*Zone ${SIM_IDS.firstShieldZone}* · pull zone 2310037`);
      expect(text).toMatch(/Page 1 of 3/);
      // A second look (the list still failing) is answered the same way.
      const again = await other.command("zones 2");
      expect(blocksText((await other.slack.waitForResponse(again.responseId)).body.blocks)).toMatch(
        /Page 2 of 3/,
      );
    } finally {
      await other.close();
    }
  });
});
