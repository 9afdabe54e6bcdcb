/**
 * What edgeops reads from its own access lists, as users meet it on the incident card (through the receiver,
 * the fake Slack and the simulator's access lists): an entry is blocked or challenged by edgeops only while its
 * list does what its name says, whatever a person changed in the dashboard.
 */
import { describe, expect, it } from "vitest";
import { ACTION_PATTERNS } from "../../src/slack/ids.js";
import { SIM_IDS } from "../../tools/simulator/index.js";
import type { SimAccessList } from "../../tools/simulator/seed.js";
import { approvePending, askAndConfirm, BOB } from "../support/change-flow.js";
import { answerTo, blocksText, findButtons, type Harness } from "../support/harness.js";
import { useHarness } from "../support/use-harness.js";

const ZONE = SIM_IDS.zoneUnderAttack;

const listsOf = (h: Harness) => {
  let lists = h.sim.state.accessLists.get(ZONE);
  if (!lists) {
    lists = [];
    h.sim.state.accessLists.set(ZONE, lists);
  }
  return lists;
};

/** The incident card of the zone under attack, as Bob sees it. */
async function incidentCard(h: Harness) {
  const res = await h.command(`incident ${ZONE}`, { userId: BOB, channelId: "C0001" });
  const card = await h.slack.waitForResponse(res.responseId, (r) => r.body.replace_original === true, 15_000);
  const blocks = card.body.blocks;
  const accessButtons = findButtons(blocks)
    .filter((b) => ACTION_PATTERNS.changeConfirm.test(b.action_id))
    .map((b) => ({ button: b, p: JSON.parse(b.value!).p as { type: string; value: string; state: string } }));
  return { text: blocksText(blocks), accessButtons };
}

/** A list as edgeops makes it (named for its type and action), put in the zone as a person left it. */
function edgeopsList(h: Harness, name: string, type: number, content: string, state: Partial<SimAccessList>) {
  const id = h.sim.state.nextAccessListId++;
  const list: SimAccessList = {
    id,
    configurationId: id + 1_000,
    name,
    description: null,
    type,
    content,
    isEnabled: true,
    action: 2,
    lastModified: 1,
    ...state,
  };
  listsOf(h).push(list);
  return list;
}

describe("the incident card reads edgeops' lists as they are in force", () => {
  const h = useHarness();

  it("an entry in edgeops' block list that a person turned off, or gave another action, is not blocked by edgeops: the card offers Block, and Block blocks it again", async () => {
    const first = await incidentCard(h);
    const ip = first.accessButtons.find((b) => b.p.type === "ip")!.p.value;
    const country = first.accessButtons.find((b) => b.p.type === "country")!.p.value;
    const ipList = edgeopsList(h, "edgeops: blocked IPs", 0, ip, { isEnabled: false });
    edgeopsList(h, "edgeops: blocked countries", 3, country, { action: 3 });

    const card = await incidentCard(h);
    expect(card.text).not.toMatch(new RegExp(`${ip}\` [^\\n]*by edgeops`));
    expect(card.text).not.toMatch(new RegExp(`${country}\` [^\\n]*by edgeops`));
    const block = card.accessButtons.find((b) => b.p.value === ip)!;
    expect(block.button.text).toBe(`Block ${ip}`);
    expect(card.accessButtons.find((b) => b.p.value === country)?.button.text).toBe(`Block ${country}`);

    await h.click(block.button, { userId: BOB });
    await approvePending(h, `Block IP ${ip}`);
    expect(ipList).toMatchObject({ isEnabled: true, action: 2, content: ip });
    const after = await incidentCard(h);
    expect(after.text).toMatch(new RegExp(`${ip}\` [^\\n]*blocked by edgeops`));
    expect(after.accessButtons.find((b) => b.p.value === ip)?.button.text).toBe(`Unblock ${ip}`);
  }, 30_000);
});

describe("edgeops finds its own lists whatever spelling of their names the API answers", () => {
  const h = useHarness();
  const settled = (t: string) => !t.includes("Waiting for approval") && !t.includes("Approved, applying");

  it("a name answered in another case is still edgeops' list: the entry blocked there reads as blocked, and no second list is made", async () => {
    const ip = (await incidentCard(h)).accessButtons.find((b) => b.p.type === "ip")!.p.value;
    h.sim.setAdversary({ pin: { "access-lists.name-spelling": "upper-case" } });
    try {
      const { typed } = await askAndConfirm(h, `block ${ZONE} ${ip}`);
      expect(typed.text).toContain(`Block IP ${ip}`);
      const { text } = await approvePending(h, `Block IP ${ip}`, settled);
      expect(text).toContain("is in effect");

      const card = await incidentCard(h);
      expect(card.text).toMatch(new RegExp(`${ip}\` [^\\n]*blocked by edgeops`));
      expect(card.accessButtons.find((b) => b.p.value === ip)?.button.text).toBe(`Unblock ${ip}`);

      h.slack.clear();
      const again = await answerTo(h, `block ${ZONE} ${ip}`, BOB);
      expect(again.text).toMatch(/already/i);
      const own = listsOf(h).filter((l) => l.name.toLowerCase() === "edgeops: blocked ips");
      expect(own.map((l) => l.content)).toEqual([ip]);
    } finally {
      h.sim.setAdversary({});
    }
  }, 30_000);
});
