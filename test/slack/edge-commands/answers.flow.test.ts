import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ACTIONS } from "../../../src/slack/ids.js";
import { SIM_IDS } from "../../../tools/simulator/index.js";
import { withReadings } from "../../support/adversary.js";
import { postIn } from "../../support/channel-post.js";
import { answerTo, blocksText, findButtons, type Harness, startHarness } from "../../support/harness.js";
import { incidentCard } from "../../support/incident-card.js";
import { useHarness } from "../../support/use-harness.js";

// Every answer true and the next step obvious, through signed commands into the receiver.
const h = useHarness({ admins: ["U0001"] }, { resetEach: false });

const say = (text: string) => answerTo(h, text, "U0001");

describe("input and paging", () => {
  const long = "a".repeat(5000);

  it("quotes at most ~60 characters of a long word and keeps the advice", async () => {
    for (const text of [`apps ${long}`, `waf 18401 920100 ${long}`, `ddos 18401 ${long}`, long]) {
      const answer = await say(text);
      expect(answer.text.length).toBeLessThan(400);
      expect(answer.text).not.toContain("a".repeat(61));
      expect(answer.text).toMatch(/For example|Use active|Try \/edge help/);
    }
  });

  it("a long zone search is refused for its length, not its letters", async () => {
    const answer = await say(`zones ${long}`);
    expect(answer.text).toContain("too long");
    expect(answer.text).not.toContain("letters, digits");
    expect((await say(`block ${long} 203.0.113.7`)).text).toContain("too long for a domain");
  });

  it("a number too large is called too large, never echoed rewritten", async () => {
    for (const text of [
      "ratelimit 9007199254740993",
      "ratelimit 100000000000000000000",
      "dns 99999999999999999999",
    ]) {
      const answer = await say(text);
      expect(answer.text).toContain("too large");
      expect(answer.text).not.toMatch(/e\+\d|9007199254740992|are numbers/);
    }
  });

  it("a negative limit or id is a number out of range, not a status", async () => {
    expect((await say("apps -5")).text).toContain("The limit is a number from 1 to 1000");
    const ratelimit = (await say("ratelimit -1")).text;
    expect(ratelimit).toContain("whole numbers from 1");
    expect(ratelimit).not.toContain("are numbers:");
  });

  it("a page past the last says how many pages there are", async () => {
    const answer = await say("zones 4");
    expect(answer.text).not.toContain("Page 4 of 3");
    expect(answer.text).toContain("There are 3 pages of shield zones (27 zones): /edge zones 3");
  });

  it("admins and people together: says it is one or the other", async () => {
    const answer = await say("policy approvers admins <@U0002>");
    expect(answer.text).toContain("either the workspace admins or a list of people and groups");
    expect(answer.text).not.toContain('"admins" is not a person');
  });

  it("a zone id typed after the value is recognised and the command runs", async () => {
    const block = await say("block 203.0.113.9 18401");
    expect(block.text).toContain("Block IP 203.0.113.9 on shield zone 18401?");
    expect(block.buttons.map((b) => b.text)).toContain("Confirm");
    expect((await say("ddos high 18401")).text).toContain(
      "Set DDoS sensitivity of shield zone 18401 to High?",
    );
    expect((await say("bot aiscraper 18401 allow")).text).toContain("AI scraper on shield zone 18401?");
    // Without a zone at all, the picker is still the answer.
    expect((await say("ddos high")).text).toContain("Which shield zone?");
  });
});

describe("every refusal names the next step", () => {
  it("a schedule for a DNS zone that does not exist is refused, and none is stored", async () => {
    const answer = await say("schedule dns 59999 daily 09:00");
    expect(answer.text).toContain("There is no DNS zone 59999 in this account");
    expect(answer.text).toContain("/edge dns alone to pick one");
    expect((await h.store.schedules.list("T0001")).map((s) => s.target)).not.toContain("59999");
    // A zone that exists but was never scanned can still be scheduled.
    expect((await say(`schedule dns ${SIM_IDS.dnsZoneNoScan} daily 09:00`)).text).toContain("Scheduled");
  });

  it("/edge dns of a missing zone says it is missing, not unscanned", async () => {
    const missing = await say("dns 59999");
    expect(missing.text).toContain("There is no DNS zone 59999");
    expect(missing.text).not.toContain("has not been scanned");
    expect(missing.buttons.map((b) => b.text)).not.toContain("Scan now");
    expect((await say(`dns ${SIM_IDS.dnsZoneNoScan}`)).text).toContain("has not been scanned yet");
  });

  it("/edge waf blames the zone when the zone is missing, the rule when the rule is", async () => {
    const zone = await say(`waf ${SIM_IDS.unknownShieldZone} 942100`);
    expect(zone.text).toContain(`Shield zone ${SIM_IDS.unknownShieldZone} was not found`);
    expect(zone.text).not.toContain("WAF rule");
    const rule = await say(`waf ${SIM_IDS.zoneUnderAttack} 999999`);
    expect(rule.text).toContain(`/edge incident ${SIM_IDS.zoneUnderAttack} lists the rules`);
  });

  it("a missing shield zone names how to find the right one", async () => {
    const answer = await say("block 99999999 203.0.113.50");
    expect(answer.text).toContain("Shield zone 99999999 was not found");
    expect(answer.text).toContain("/edge zones shop.example.com");
  });
});

describe("WAF off and learning mode ended are said as they are", () => {
  // Seeded: zone 18405's WAF is off (mode Block); zone 18403 reports learning mode on until a past day.
  const WAF_OFF = SIM_IDS.firstShieldZone + 4;
  const LEARNING_ENDED = SIM_IDS.firstShieldZone + 2;

  it("waf-mode on a zone whose WAF is off says the WAF is off, not 'already in force'", async () => {
    const same = await say(`waf-mode ${WAF_OFF} block`);
    expect(same.text).toContain(`The WAF of shield zone ${WAF_OFF} is off`);
    expect(same.text).toContain("Turn the WAF on in the bunny.net dashboard");
    expect(same.buttons.map((b) => b.text)).not.toContain("Confirm");
    const other = await say(`waf-mode ${WAF_OFF} log`);
    expect(other.text).toContain("Log takes effect only once the WAF is turned on");
    expect(other.buttons.map((b) => b.text)).toContain("Confirm");
  });

  // The zone answers its past end as set: still on, with the end past ("shield-settings.learning-expiry").
  it("learning mode on until a past date is shown as ended, and learning on says so and when the new period ends", () =>
    withReadings(h.sim, { "shield-settings.learning-expiry": "as-set" }, async () => {
      const zone = h.sim.state.shieldZones.find((z) => z.shieldZoneId === LEARNING_ENDED)!;
      expect(zone.learningMode).toBe(true);
      expect(Date.parse(zone.learningModeUntil!)).toBeLessThan(Date.now());

      const list = await say("zones");
      const line = list.text.split("\n").find((l) => l.includes(`*Zone ${LEARNING_ENDED}*`));
      const facts = list.text.slice(list.text.indexOf(line!)).split("\n")[1];
      expect(facts).toContain("learning ended");
      expect(facts).not.toMatch(/learning until/);

      // Not "already in force": it ended, and learning on starts a new period with its own end.
      const on = await say(`learning ${LEARNING_ENDED} on`);
      expect(on.text).toContain(`The last learning period of shield zone ${LEARNING_ENDED} ended`);
      expect(on.text).toContain("Learning mode runs for 24 hours from when this is applied");
      expect(on.buttons.map((b) => b.text)).toContain("Confirm");

      const { text } = await incidentCard(h, LEARNING_ENDED, { userId: "U0001" });
      expect(text).toContain("learning mode off (ended");
      expect(text).not.toContain("learning mode on");
    }));
});

describe("approvers Slack knows, and a number of approvals that can be met", () => {
  let p: Harness;
  beforeAll(async () => {
    p = await startHarness();
    p.slack.usergroups.set("S0LEADS", ["U0002", "U0003"]);
  });
  afterAll(async () => {
    await p?.close();
  });
  const admin = (text: string) => answerTo(p, text, "U0001");
  const policyNow = () => p.store.policies.getEffective("T0001", "C0001");

  it("an unknown person or group is refused before any policy changes", async () => {
    const person = await admin("policy approvers <@U0NOSUCH>");
    expect(person.text).toContain("Slack knows no person U0NOSUCH");
    const group = await admin("policy approvers <!subteam^S0NOPE|@nope>");
    expect(group.text).toContain("Slack knows no user group S0NOPE");
    expect((await policyNow()).approvers).toEqual({ kind: "admins" });
    expect(p.slack.callsTo("users.info").some((c) => c.args.user === "U0NOSUCH")).toBe(true);
    expect(p.slack.callsTo("usergroups.users.list").some((c) => c.args.usergroup === "S0NOPE")).toBe(true);
  });

  it("more approvals than people besides the requester is refused", async () => {
    // Approvals off, so each change below applies at once (none loosens a rule in force).
    await p.store.policies.setWorkspace("T0001", {
      approvals: "off",
      approvers: { kind: "list", users: ["U0001", "U0002"], usergroups: [] },
      updatedBy: "U0001",
    });
    const tooMany = await admin("policy approvals 2");
    expect(tooMany.text).toContain("only 1 person besides you could approve");
    expect((await policyNow()).approvalsNeeded).toBe(1);
    // A group whose members make up the number is enough.
    expect((await admin("policy approvers <@U0001> <!subteam^S0LEADS|@leads>")).text).toContain(
      "Policy updated",
    );
    expect((await admin("policy approvals 2")).text).toContain("Policy updated");
    expect((await policyNow()).approvalsNeeded).toBe(2);
  });

  it("a loosening policy card needs the number of approvals the policy imposes, where enough admins can give it", async () => {
    // Admins alice, carol and dave: two besides carol. (With two admins it needs one: policy-reachable.flow.test.ts.)
    p.slack.users.set("U0004", { id: "U0004", name: "dave", is_admin: true });
    const asked = await answerTo(p, "policy approvals 1", "U0003");
    expect(asked.text).toContain("another admin has to approve it");
    const card = await p.slack.waitForCall("chat.postMessage", (c) =>
      blocksText(c.args.blocks).includes("Approval policy"),
    );
    expect(blocksText(card.args.blocks)).toMatch(/0 of 2|2 approvals|2 more needed/);
    const pending = await p.store.changeRequests.listPending("T0001");
    expect(pending.find((r) => r.kind === "policy")?.approvalsNeeded).toBe(2);
  });
});

describe("tightening is told to the channel, and the audit log says before → after", () => {
  it("a tightening posts in the channel who changed what, and what it was", async () => {
    const answer = await say("policy expiry 10");
    expect(answer.text).toContain("Policy updated for the workspace");
    const { text } = await postIn(h, "C0001", "changed the approval policy");
    expect(text).toContain("<@U0001> changed the approval policy for the workspace");
    expect(text).toContain("expiry 10 minutes");
    expect(text).toContain("*Before*");
  });

  it("policy and change entries show what changed, before and after", async () => {
    const typed = await say("ddos 18401 high");
    const confirm = typed.buttons.find((b) => b.text === "Confirm")!;
    await h.click(confirm, { userId: "U0001" });
    await h.slack.waitForCall("chat.postMessage", (c) =>
      blocksText(c.args.blocks).includes("DDoS sensitivity"),
    );
    const audit = (await say("audit")).text;
    const ddos = audit.split("\n").findIndex((l) => l.includes("ddos_sensitivity.request"));
    expect(ddos).toBeGreaterThanOrEqual(0);
    expect(audit.split("\n")[ddos + 1]).toMatch(/DDoS sensitivity: \w+ → \*High\*/);
    // Applied at once: one row, its apply.
    const policy = audit.split("\n").findIndex((l) => l.includes("policy.apply"));
    expect(policy).toBeGreaterThanOrEqual(0);
    expect(audit.split("\n")[policy + 1]).toContain("Change: expiry 10 minutes");
    expect(audit.split("\n")[policy + 1]).toContain("Before:");
  });
});

describe("Retry only where it can succeed, and a press is answered; purge checks its pull zone", () => {
  const simZone = (id: number) => h.sim.state.shieldZones.find((z) => z.shieldZoneId === id)!;

  /** Bob asks and confirms; the card's Approve button. */
  async function asked(text: string, label: string) {
    const typed = await answerTo(h, text, "U0002");
    await h.click(typed.buttons.find((b) => b.text === "Confirm")!, { userId: "U0002" });
    const card = await h.slack.waitForCall(
      "chat.postMessage",
      (c) =>
        blocksText(c.args.blocks).includes(label) &&
        findButtons(c.args.blocks).some((b) => b.action_id === ACTIONS.approve),
    );
    return findButtons(card.args.blocks).find((b) => b.action_id === ACTIONS.approve)!;
  }

  it("a setting changed since the request: no Retry, the card says to ask again", async () => {
    const id = SIM_IDS.firstShieldZone + 5;
    simZone(id).dDoSShieldSensitivity = 2;
    const approve = await asked(`ddos ${id} high`, `shield zone ${id}`);
    simZone(id).dDoSShieldSensitivity = 0;
    await h.click(approve, { userId: "U0003" });
    const failed = await h.slack.waitForCall("chat.update", (c) => {
      const t = blocksText(c.args.blocks);
      return t.includes(`shield zone ${id}`) && t.includes("did not go through");
    });
    expect(findButtons(failed.args.blocks).some((b) => b.action_id === ACTIONS.retry)).toBe(false);
    expect(blocksText(failed.args.blocks)).toContain(`Retrying would fail the same way`);
    expect(blocksText(failed.args.blocks)).toContain(`/edge ddos ${id} high`);
  });

  it("a Retry press that fails again is answered privately", async () => {
    const id = SIM_IDS.firstShieldZone + 6;
    simZone(id).dDoSShieldSensitivity = 1;
    const approve = await asked(`ddos ${id} high`, `shield zone ${id}`);
    h.sim.addFault({ method: "PATCH", path: /\/shield\/shield-zone/, status: 500, body: "none", times: 6 });
    await h.click(approve, { userId: "U0003" });
    const failed = await h.slack.waitForCall("chat.update", (c) => {
      const t = blocksText(c.args.blocks);
      return t.includes(`shield zone ${id}`) && t.includes("did not go through");
    });
    const retry = findButtons(failed.args.blocks).find((b) => b.action_id === ACTIONS.retry);
    expect(retry).toBeDefined();
    const press = await h.click(retry!, { userId: "U0003" });
    const answer = await h.slack.waitForResponse(press.responseId, undefined, 15_000);
    expect(blocksText(answer.body.blocks)).toContain("Retried, and it failed again");
  });

  it("/edge purge checks the pull zone before anything is asked, and names it", async () => {
    const missing = await say("purge 9999999");
    expect(missing.text).toContain("There is no pull zone 9999999");
    expect(missing.buttons.map((b) => b.text)).not.toContain("Confirm");
    const known = await say(`purge ${SIM_IDS.pullZoneUnderAttack}`);
    expect(known.text).toContain(`Pull zone ${SIM_IDS.pullZoneUnderAttack} is acme-shop`);
    expect(known.buttons.map((b) => b.text)).toContain("Confirm");
  });
});
