import { describe, expect, it } from "vitest";
import { appList } from "../../../src/services/pickers.js";
import { ACTIONS, BLOCKS } from "../../../src/slack/ids.js";
import { SIM_IDS } from "../../../tools/simulator/index.js";
import { postIn } from "../../support/channel-post.js";
import { answerTo, blocksText, cardUpdate, findButtons, TEST_EDGE_KEY } from "../../support/harness.js";
import { incidentCard } from "../../support/incident-card.js";
import { pick, pickerIn } from "../../support/picker.js";
import { useHarness } from "../../support/use-harness.js";
import { ALICE, BOB, CAROL } from "../../support/users.js";

/** Small points of wording, each one through signed commands and clicks into the receiver. */

const ZONE = SIM_IDS.firstShieldZone;

const h = useHarness({ admins: [ALICE] });

/** `userId` clicks Share in channel: the copy posted in the channel, and its text. */
async function shareClicked(share: { action_id: string; value?: string }, userId: string) {
  const shared = await h.click(share, { userId });
  const post = await h.slack.waitForResponse(shared.responseId, (r) => r.body.response_type === "in_channel");
  return { post, text: blocksText(post.body.blocks) };
}

const shieldZone = () => h.sim.state.shieldZones.find((z) => z.shieldZoneId === ZONE)!;
const button = (blocks: unknown, actionId: string) =>
  findButtons(blocks).find((b) => b.action_id === actionId)!;

/** Bob types `/edge <text>` in `channelId` and confirms; the card posted for approval. */
async function askedByBob(text: string, label: string, channelId = "C0001") {
  const typed = await answerTo(h, text, BOB, channelId);
  const confirm = typed.buttons.find((b) => b.action_id === ACTIONS.changeConfirm);
  expect(confirm, typed.text).toBeDefined();
  await h.click(confirm!, { userId: BOB, channelId });
  return h.slack.waitForCall(
    "chat.postMessage",
    (x) => blocksText(x.args.blocks).includes(label) && blocksText(x.args.blocks).includes("Approval needed"),
  );
}

describe("small wording", () => {
  it("one of a thing is said in the singular: 1 minute, 1 known bot, 1 listed person or group", async () => {
    // One minute can't be typed (too short to approve in), but a channel may have kept one.
    await h.store.policies.setChannel("T0001", "C0ONE", { expiryMinutes: 1 });
    const expiry = await answerTo(h, "policy", ALICE, "C0ONE");
    expect(expiry.text).toContain("1 minute");
    expect(expiry.text).not.toContain("1 minutes");

    const bots = await answerTo(h, `bots ${ZONE}`, ALICE);
    expect(bots.text).toContain("(1 known bot)");
    expect(bots.text).not.toContain("(1 known bots)");

    await answerTo(h, `policy approvers <@${CAROL}> here`, ALICE, "C0ONE");
    const card = await h.slack.waitForCall("chat.postMessage", (x) =>
      blocksText(x.args.blocks).includes("Approval needed"),
    );
    expect(blocksText(card.args.blocks)).toContain("1 listed person or group");
    expect(blocksText(card.args.blocks)).not.toContain("1 listed people");
  });

  it("a policy card's Before says what was in force, not only 'inherited'", async () => {
    await answerTo(h, "policy approvals off here", ALICE, "C0INHERIT");
    const card = await h.slack.waitForCall(
      "chat.postMessage",
      (x) => x.args.channel === "C0INHERIT" && blocksText(x.args.blocks).includes("Approval needed"),
    );
    const before = blocksText(card.args.blocks);
    expect(before).not.toContain("no override (inherited)");
    expect(before).toContain("inherited from the workspace: approvals required, approvers workspace admins");
    expect(before).toContain("1 approver per request");

    await h.store.policies.setChannel("T0001", "C0PARTIAL", { approvalsNeeded: 2 });
    await answerTo(h, "policy approvals off here", ALICE, "C0PARTIAL");
    const { text } = await postIn(h, "C0PARTIAL", "Approval needed");
    expect(text).toContain("approvals required (inherited from the workspace)");
    expect(text).toContain("2 approvers per request");
    expect(text).not.toContain("approvals inherited");
  });

  it("the simulator's AI recommendation states its rule's own traffic (count and busiest URL)", async () => {
    const { zoneId, ruleId } = SIM_IDS.waf;
    type Rule = { ruleId: string; totalTriggeredRequests: number; topTargetedUrls: Record<string, number> };
    const triggered = async () => {
      const res = await fetch(`${h.sim.url}/shield/waf/rules/review-triggered/${zoneId}`, {
        headers: { AccessKey: TEST_EDGE_KEY },
      });
      const body = (await res.json()) as { triggeredRules: Rule[] };
      return body.triggeredRules.find((r) => r.ruleId === ruleId)!;
    };
    // Read on both sides of the answer: the 24-hour window may move by a minute in between.
    const before = await triggered();
    const answer = await answerTo(h, `waf ${zoneId} ${ruleId}`, ALICE);
    const after = await triggered();
    const stated = [before, after].map((r) => {
      const [url, count] = Object.entries(r.topTargetedUrls).sort((a, b) => b[1] - a[1])[0]!;
      const total = r.totalTriggeredRequests;
      return `matched ${total.toLocaleString("en-US")} requests in the last 24 hours; the busiest URL, \`${url}\`, had ${count.toLocaleString("en-US")} of them (${Math.round((count / total) * 100)}%)`;
    });
    expect(
      stated.some((s) => answer.text.includes(s)),
      `${answer.text}\n---\n${stated.join("\n")}`,
    ).toBe(true);
  });

  it("/edge bots offers no button for the action a category already has", async () => {
    const groups = h.sim.state.botCategories.get(ZONE)!;
    const set = (category: number, action: number) => {
      groups.find((g) => g.category === category)!.categoryAction = action;
    };
    set(1, 1);
    set(2, 2);
    set(3, 0);
    const bots = await answerTo(h, `bots ${ZONE}`, ALICE);
    const offered = (category: number) =>
      bots.buttons.filter((b) => JSON.parse(b.value!).c === category).map((b) => b.text);
    expect(offered(1)).toEqual(["Allow", "Clear"]);
    expect(offered(2)).toEqual(["Block", "Clear"]);
    expect(offered(3)).toEqual(["Block", "Allow"]);
  });

  it("est is New York's time (with daylight saving), not Panama's", async () => {
    const answer = await answerTo(h, `schedule dns ${SIM_IDS.dnsZoneLarge} daily 09:00 est`, ALICE, "C0EST");
    expect(answer.text).toContain("America/New_York");
    expect(answer.text).not.toContain("Panama");
  });

  it("a recorded approval is not a warning", async () => {
    await h.store.policies.setChannel("T0001", "C0TWO", { approvalsNeeded: 2 });
    shieldZone().dDoSShieldSensitivity = 1;
    const card = await askedByBob(`ddos ${ZONE} high`, "DDoS sensitivity", "C0TWO");
    const click = await h.click(button(card.args.blocks, ACTIONS.approve), {
      userId: CAROL,
      channelId: "C0TWO",
    });
    const text = blocksText((await h.slack.waitForResponse(click.responseId)).body.blocks);
    expect(text).toContain("Your approval is recorded");
    expect(text).not.toContain(":warning:");
    expect(text).toContain(":white_check_mark:");
  });

  it("learning mode is turned on, not 'set to on'", async () => {
    shieldZone().learningMode = false;
    const answer = await answerTo(h, `learning ${ZONE} on`, BOB);
    expect(answer.text).toContain(`Turn learning mode on for shield zone ${ZONE}`);
    expect(answer.text).not.toContain("to on");
  });

  it("the audit log shows the API's error key and reason, not [redacted]", async () => {
    shieldZone().dDoSShieldSensitivity = 1;
    const card = await askedByBob(`ddos ${ZONE} medium`, "DDoS sensitivity");
    h.sim.addFault({
      method: "PATCH",
      path: /^\/shield\/shield-zone/,
      refuse: { statusCode: 400, errorKey: "shield.zone.locked", message: "The zone is locked by support." },
      times: 1,
    });
    await h.click(button(card.args.blocks, ACTIONS.approve), { userId: CAROL });
    await cardUpdate(h, (t) => t.includes("DDoS sensitivity") && t.includes("did not go through"));
    const audit = await answerTo(h, "audit", ALICE);
    const line = audit.text.split("\n").find((l) => l.includes("ddos_sensitivity.apply"))!;
    expect(line, audit.text).toContain("shield.zone.locked");
    expect(line).toContain("The zone is locked by support.");
    expect(line).not.toContain("[redacted]");
  });

  it("a shared answer says who shared it", async () => {
    const zones = await answerTo(h, "zones", BOB);
    const share = zones.buttons.find((b) => b.action_id === ACTIONS.shareInChannel)!;
    const click = await h.click(share, { userId: BOB });
    const shared = await h.slack.waitForResponse(
      click.responseId,
      (r) => r.body.response_type === "in_channel",
    );
    expect(blocksText(shared.body.blocks)).toContain(`Shared by <@${BOB}>`);
  });

  it("/edge apps: a status the API does not document is not a second 'unknown'", async () => {
    const answer = await answerTo(h, "apps 100", BOB);
    const totals = answer.text.split("\n").find((l) => l.includes(" read of "))!;
    expect(totals.match(/unknown/g)).toHaveLength(1);
    expect(totals).toContain('"hibernating" (undocumented)');
  });

  it("no Confirm for a change already in force; an unblock no-op names the block waiting for approval", async () => {
    shieldZone().dDoSShieldSensitivity = 1;
    const same = await answerTo(h, `ddos ${ZONE} low`, BOB);
    expect(same.text).toContain("already in force");
    expect(same.buttons.map((b) => b.text)).not.toContain("Confirm");

    const ip = "198.51.100.77";
    const notListed = await answerTo(h, `unblock ${ZONE} ${ip}`, BOB);
    expect(notListed.text).toContain(
      `Nothing to unblock: IP ${ip} is in none of edgeops' block or challenge lists`,
    );
    expect(notListed.buttons.map((b) => b.text)).not.toContain("Confirm");
    expect(notListed.text).not.toContain("waiting for approval");

    await askedByBob(`block ${ZONE} ${ip}`, ip);
    const pending = await answerTo(h, `unblock ${ZONE} ${ip}`, ALICE);
    expect(pending.buttons.map((b) => b.text)).not.toContain("Confirm");
    expect(pending.text).toContain(`A request to block ${ip} on this zone is waiting for approval`);
    expect(pending.text).toContain("Nothing to unblock");
    expect(pending.text).not.toContain("already in force");
    expect(pending.text).toContain(`<@${BOB}>`);
  });

  it("a new apps watch names the apps already failing or suspended (it posts only changes)", async () => {
    const answer = await answerTo(h, "watch apps", ALICE, "C0WATCH");
    const failing = h.sim.state.apps.filter((a) => a.status.toLowerCase() === "failing");
    expect(failing.length).toBeGreaterThan(0);
    expect(answer.text).toContain("already in a watched status");
    expect(answer.text).toContain(failing[0]!.name);
    expect(answer.text).toContain("posts only what changes from now on");
  });

  it("the incident card's 'All apps' list is the account's, not the zone's", async () => {
    const { card } = await incidentCard(h, ZONE, { userId: ALICE });
    const all = findButtons(card.body.blocks).find((b) => /^All \d+ apps$/.test(b.text));
    expect(all, blocksText(card.body.blocks)).toBeDefined();
    const click = await h.click(all!, { userId: ALICE });
    const list = await h.slack.waitForResponse(click.responseId);
    const text = blocksText(list.body.blocks);
    expect(text).toContain("Apps failing or deploying · the whole account");
    expect(text).not.toContain(`shield zone ${ZONE}`);
  });

  it("the key field is required while there is no key (no '(optional)' on a field that is refused empty)", async () => {
    await h.store.keys.remove("T0001");
    try {
      await h.command("key", { userId: ALICE });
      const open = await h.slack.waitForCall("views.open");
      const view = open.args.view as { blocks: { block_id?: string; optional?: boolean }[] };
      expect(view.blocks.find((b) => b.block_id === BLOCKS.keyInput)?.optional).toBe(false);
    } finally {
      await h.store.keys.set("T0001", TEST_EDGE_KEY, ALICE);
    }
  });
});

describe("find by name where an id is asked", () => {
  it("/edge apps <name> lists the apps whose name contains it", async () => {
    const checkout = h.sim.state.apps.filter((a) => a.name.includes("checkout"));
    expect(checkout.length).toBeGreaterThan(1);
    const answer = await answerTo(h, "apps checkout", BOB);
    expect(answer.text).not.toContain("is not a status");
    expect(answer.text).toContain(`${checkout.length} matching`);
    for (const app of checkout) expect(answer.text).toContain(`*${app.name}*`);
    const others = h.sim.state.apps.filter((a) => !a.name.includes("checkout"));
    expect(answer.text).not.toContain(`*${others[0]!.name}*`);
  });

  it("/edge restart <part of a name> lists the apps it matches, with their ids, as zones do", async () => {
    const checkout = h.sim.state.apps.filter((a) => a.name.includes("checkout"));
    const answer = await answerTo(h, "restart checkout", BOB);
    expect(answer.text).toContain(`${checkout.length} contain it`);
    for (const app of checkout) expect(answer.text).toContain(`${app.name} (${app.id})`);
    expect(answer.buttons.map((b) => b.text)).not.toContain("Confirm");
    const exact = await answerTo(h, `restart ${checkout[0]!.name}`, BOB);
    expect(exact.buttons.map((b) => b.text)).toContain("Confirm");
  });

  it("/edge dns <domain> finds the DNS zone by its domain", async () => {
    const zone = h.sim.state.dnsZones.get(SIM_IDS.dnsZoneCompleted)!;
    const answer = await answerTo(h, `dns ${zone.domain}`, BOB);
    expect(answer.text).not.toContain("ids are numbers");
    expect(answer.text).toContain(`DNS scan · ${zone.domain}`);
    const missing = await answerTo(h, "dns no-such-domain.org", BOB);
    expect(missing.text).toContain('No DNS zone has the domain "no-such-domain.org"');
    expect(missing.text).toContain("/edge dns alone");
  });
});

describe("paging", () => {
  it("/edge dns pages by record type: every type has a button, TXT too, and each type pages with Previous / Next", async () => {
    const zone = SIM_IDS.dnsZoneLarge;
    const first = await answerTo(h, `dns ${zone}`, BOB);
    expect(first.text).toMatch(/A records 1–\d+ of 208 · page 1 of 6/);
    expect(first.text).not.toContain("more records");
    const txt = first.buttons.find((b) => b.text === "TXT (107)");
    expect(txt, first.buttons.map((b) => b.text).join(", ")).toBeDefined();
    const ids = first.buttons.map((b) => b.action_id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(first.buttons.map((b) => b.text)).toContain("Share in channel");

    const click = await h.click(txt!, { userId: BOB });
    const txtPage = await h.slack.waitForResponse(click.responseId, (r) => r.body.replace_original === true);
    const text = blocksText(txtPage.body.blocks);
    expect(text).toMatch(/TXT records 1–\d+ of 107 · page 1 of 3/);
    const next = findButtons(txtPage.body.blocks).find((b) => b.text === "Next page")!;
    expect(findButtons(txtPage.body.blocks).map((b) => b.text)).toContain("Share in channel");
    const click2 = await h.click(next, { userId: BOB });
    const page2 = await h.slack.waitForResponse(click2.responseId, (r) => r.body.replace_original === true);
    expect(blocksText(page2.body.blocks)).toMatch(/TXT records \d+–\d+ of 107 · page 2 of 3/);
    const buttons = findButtons(page2.body.blocks).map((b) => b.text);
    expect(buttons).toEqual(expect.arrayContaining(["Previous page", "Next page", "Share in channel"]));

    const typed = await answerTo(h, `dns ${zone} txt 3`, BOB);
    expect(typed.text).toMatch(/TXT records \d+–107 of 107 · page 3 of 3/);
    const missing = await answerTo(h, `dns ${zone} LOC`, BOB);
    expect(missing.text).toContain("has no LOC records");
    expect(missing.text).toContain("TXT");
  });
});

describe("apps pages and picker answers", () => {
  it("/edge apps: page N of M, whole-list totals on every page, Previous and Next", async () => {
    // Without the per-key app list at hand the page's own counts are said to be the page's (no extra call).
    h.advanceClock(10 * 60_000);
    const cold = await answerTo(h, "apps", BOB);
    expect(cold.text).toContain("on this page:");
    // With it (a picker or an earlier answer loaded it), every page says the whole list's totals.
    await appList(h.deps, "T0001");
    const first = await answerTo(h, "apps", BOB);
    const all = h.sim.state.apps.length;
    const pages = Math.ceil(all / 20);
    expect(first.text).toContain(`page 1 of ${pages} · all ${all}:`);
    const next = first.buttons.find((b) => b.action_id === ACTIONS.appsNextPage)!;
    const click = await h.click(next, { userId: BOB });
    const second = await h.slack.waitForResponse(click.responseId, (r) => r.body.replace_original === true);
    const text = blocksText(second.body.blocks);
    expect(text).toContain(`page 2 of ${pages} · all ${all}:`);
    // The totals are the whole list's, the same as on page 1.
    expect(
      text
        .split("\n")
        .find((l) => l.includes(" read of "))!
        .split(`all ${all}:`)[1],
    ).toBe(
      first.text
        .split("\n")
        .find((l) => l.includes(" read of "))!
        .split(`all ${all}:`)[1],
    );
    const previous = findButtons(second.body.blocks).find((b) => b.action_id === ACTIONS.appsPreviousPage);
    expect(previous).toBeDefined();
    const back = await h.click(previous!, { userId: BOB });
    const again = await h.slack.waitForResponse(back.responseId, (r) => r.body.replace_original === true);
    expect(blocksText(again.body.blocks)).toContain(`page 1 of ${pages}`);
    expect(blocksText(again.body.blocks)).toContain(`*${h.sim.state.apps[0]!.name}*`);
  });

  it("/edge zones: the next page keeps Share in channel, which shares that page", async () => {
    const first = await answerTo(h, "zones", BOB);
    const next = first.buttons.find((b) => b.action_id === ACTIONS.zonesNextPage)!;
    const click = await h.click(next, { userId: BOB });
    const second = await h.slack.waitForResponse(click.responseId, (r) => r.body.replace_original === true);
    expect(blocksText(second.body.blocks)).toMatch(/Page 2 of 3/);
    const share = findButtons(second.body.blocks).find((b) => b.action_id === ACTIONS.shareInChannel);
    expect(share, "Share in channel on page 2").toBeDefined();
    expect(JSON.parse(share!.value!).text).toBe("zones 2");
  });

  it("the incident card's See all lists keep Share in channel, which shares that page", async () => {
    const { card } = await incidentCard(h, ZONE, { userId: BOB });
    const seeAll = findButtons(card.body.blocks).find(
      (b) => b.action_id === `${ACTIONS.incidentSeeAll}.waf`,
    )!;
    const click = await h.click(seeAll, { userId: BOB });
    const list = await h.slack.waitForResponse(click.responseId);
    expect(blocksText(list.body.blocks)).toContain(`Triggered WAF rules · shield zone ${ZONE}`);
    const share = findButtons(list.body.blocks).find((b) => b.action_id === ACTIONS.shareInChannel);
    expect(share, "Share in channel on the See all list").toBeDefined();
    const { post, text } = await shareClicked(share!, BOB);
    expect(text).toContain(`Triggered WAF rules · shield zone ${ZONE}`);
    expect(text).toMatch(/page 1 of \d+/);
    expect(text).toContain(`Shared by <@${BOB}>`);
    expect(findButtons(post.body.blocks).some((b) => b.action_id === ACTIONS.shareInChannel)).toBe(false);
  });

  it("/edge apps: a page after the first keeps Share in channel; the shared copy says which page it is", async () => {
    await appList(h.deps, "T0001");
    const first = await answerTo(h, "apps", BOB);
    const next = first.buttons.find((b) => b.action_id === ACTIONS.appsNextPage)!;
    const click = await h.click(next, { userId: BOB });
    const second = await h.slack.waitForResponse(click.responseId, (r) => r.body.replace_original === true);
    const share = findButtons(second.body.blocks).find((b) => b.action_id === ACTIONS.shareInChannel);
    expect(share, "Share in channel on apps page 2").toBeDefined();
    const { text } = await shareClicked(share!, BOB);
    const pages = Math.ceil(h.sim.state.apps.length / 20);
    expect(text).toContain(`page 2 of ${pages}`);
    expect(text).toContain(`*${h.sim.state.apps[20]!.name}*`);
    expect(text).not.toContain(`*${h.sim.state.apps[0]!.name}*`);
    expect(text).toContain(`Shared by <@${BOB}>`);
  });

  it("an answer reached through a picker keeps Share in channel", async () => {
    const asked = await answerTo(h, "dns", BOB);
    const picker = pickerIn(asked.body.blocks);
    expect(picker, asked.text).toBeDefined();
    const responseId = await pick(h, picker!, String(SIM_IDS.dnsZoneCompleted), { userId: BOB });
    const answer = await h.slack.waitForResponse(responseId);
    expect(blocksText(answer.body.blocks)).toContain("DNS scan");
    expect(findButtons(answer.body.blocks).map((b) => b.text)).toContain("Share in channel");
  });
});
