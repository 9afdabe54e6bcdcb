import { describe, expect, it } from "vitest";
import { createChangeSweeper, undoDue } from "../../../src/jobs/change-sweeps.js";
import { ACTION_PATTERNS, ACTIONS } from "../../../src/slack/ids.js";
import { SIM_IDS } from "../../../tools/simulator/index.js";
import type { SimAccessList } from "../../../tools/simulator/seed.js";
import { approvePending, askAndApprove, BOB } from "../../support/change-flow.js";
import { answerTo, blocksText, cardUpdate, findButtons, type Harness } from "../../support/harness.js";
import { useHarness } from "../../support/use-harness.js";

/**
 * /edge block and /edge unblock, through the receiver, the fake Slack and the simulator's access lists. edgeops
 * keeps its entries in lists it names and creates; the customer's own lists are never changed.
 */

const ZONE = SIM_IDS.customerAccessList.zoneId;

type Button = ReturnType<typeof findButtons>[number];

const listsOf = (h: Harness) => h.sim.state.accessLists.get(ZONE) ?? [];
const listNamed = (h: Harness, name: string) => listsOf(h).find((l) => l.name === name);
const entries = (l: SimAccessList | undefined) => (l?.content ?? "").split("\n").filter((x) => x !== "");
const contentWrites = (h: Harness) =>
  h.sim.requests.filter((r) => r.method === "PATCH" && /\/access-lists\/\d+$/.test(r.path));

const command = (h: Harness, text: string) => answerTo(h, text, BOB);

/** Bob presses the button (a typed command's Confirm or a card's Block), Carol approves: applied. */
async function confirmAndApprove(h: Harness, button: Button, label: string) {
  await h.click(button, { userId: BOB });
  await approvePending(h, label);
}

async function ask(h: Harness, text: string, label: string) {
  const { typed } = await askAndApprove(h, text, label);
  expect(typed.text).toContain(label);
}

describe("/edge block and /edge unblock", () => {
  const h = useHarness();

  // First: later tests move the clock, and the card is of the last minutes.
  it("each top offender on the incident card has a Block button that goes through Confirm and approval", async () => {
    const res = await h.command(`incident ${SIM_IDS.zoneUnderAttack}`, { userId: BOB, channelId: "C0001" });
    const card = await h.slack.waitForResponse(
      res.responseId,
      (r) => r.body.replace_original === true,
      15_000,
    );
    const blockButtons = findButtons(card.body.blocks).filter((b) =>
      ACTION_PATTERNS.changeConfirm.test(b.action_id),
    );
    const kinds = blockButtons.map((b) => JSON.parse(b.value!).p.type as string);
    for (const t of ["ip", "asn", "country", "ja4"]) expect(kinds).toContain(t);
    expect(blockButtons.every((b) => b.confirm !== undefined)).toBe(true);

    const ja4 = blockButtons.find((b) => JSON.parse(b.value!).p.type === "ja4")!;
    const value = JSON.parse(ja4.value!).p.value as string;
    const writes = contentWrites(h).length;
    await confirmAndApprove(h, ja4, `Block JA4 fingerprint ${value}`);
    expect(entries(listNamed(h, "edgeops: blocked JA4 fingerprints"))).toEqual([value]);
    expect(contentWrites(h).length - writes).toBe(1);

    // The card shows what edgeops blocks, and offers to lift it instead.
    const again = await h.command(`incident ${SIM_IDS.zoneUnderAttack}`, { userId: BOB, channelId: "C0001" });
    const refreshed = await h.slack.waitForResponse(
      again.responseId,
      (r) => r.body.replace_original === true,
      15_000,
    );
    expect(blocksText(refreshed.body.blocks)).toContain(`${value}\` `);
    expect(blocksText(refreshed.body.blocks)).toMatch(
      new RegExp(`${value}\` [\\d,]+ · \\w+ · blocked by edgeops`),
    );
    const lift = findButtons(refreshed.body.blocks).find(
      (b) => b.value?.includes(value) && b.value.includes('"k":"access_block"'),
    )!;
    expect(lift.text).toBe(`Unblock ${value}`);
    expect(JSON.parse(lift.value!).p.state).toBe("none");
  }, 30_000);

  it("creates edgeops' own lists on first use, moves an entry between them, and never changes the customer's lists", async () => {
    // A customer list with the very name edgeops uses, but of another type: not edgeops' list.
    const decoy: SimAccessList = {
      id: 8_500,
      configurationId: 9_500,
      name: "edgeops: blocked IPs",
      description: null,
      type: 1,
      content: "198.51.100.0/24",
      isEnabled: true,
      action: 4,
      lastModified: 1,
    };
    listsOf(h).push(decoy);
    const customer = listsOf(h).find((l) => l.id === SIM_IDS.customerAccessList.listId)!;
    const before = structuredClone([customer, decoy]);

    await ask(h, `block ${ZONE} 203.0.113.7`, "Block IP 203.0.113.7");
    const blocked = listsOf(h).find((l) => l.name === "edgeops: blocked IPs" && l.type === 0);
    expect(blocked).toMatchObject({ isEnabled: true, action: 2 });
    expect(entries(blocked)).toEqual(["203.0.113.7"]);

    h.slack.clear();
    await ask(h, `block ${ZONE} 203.0.113.7 challenge`, "Challenge IP 203.0.113.7");
    expect(listNamed(h, "edgeops: challenged IPs")).toMatchObject({ isEnabled: true, action: 3 });
    expect(entries(listNamed(h, "edgeops: challenged IPs"))).toEqual(["203.0.113.7"]);
    expect(entries(blocked)).toEqual([]);

    // 198.51.100.10 is only in the customer's allowlist: edgeops does not list it, so nothing to lift.
    h.slack.clear();
    const writes = contentWrites(h).length;
    const typed = await command(h, `unblock ${ZONE} 198.51.100.10`);
    expect(typed.text).toContain("not listed by edgeops");
    // A no-op is said at once, with no Confirm to press first.
    expect(typed.buttons.find((b) => b.action_id === ACTIONS.changeConfirm)).toBeUndefined();
    expect(typed.text).toMatch(/already/i);
    expect(contentWrites(h).length).toBe(writes);

    h.slack.clear();
    await ask(h, `unblock ${ZONE} 203.0.113.7`, "Unblock IP 203.0.113.7");
    expect(entries(listNamed(h, "edgeops: challenged IPs"))).toEqual([]);

    expect([customer, decoy]).toEqual(before);
    const touched = h.sim.requests.filter(
      (r) =>
        r.method !== "GET" &&
        [
          `/${customer.id}`,
          `/${decoy.id}`,
          `/configurations/${customer.configurationId}`,
          `/configurations/${decoy.configurationId}`,
        ].some((tail) => r.path.endsWith(tail)),
    );
    expect(touched).toEqual([]);
  });

  it("`for 30m` is undone exactly once; an entry someone else moved meanwhile is left as it is", async () => {
    await ask(h, `block ${ZONE} as4134 for 30m`, "Block ASN AS4134");
    expect(entries(listNamed(h, "edgeops: blocked ASNs"))).toEqual(["AS4134"]);
    const sweeper = createChangeSweeper(h.app.env);
    const writes = contentWrites(h).length;
    h.advanceClock(29 * 60_000);
    expect(await sweeper.sweep()).toBe(0);
    h.advanceClock(61_000);
    expect(await sweeper.sweep()).toBe(1);
    await cardUpdate(h, (t) => t.includes("AS4134") && t.includes("Undone"));
    expect(entries(listNamed(h, "edgeops: blocked ASNs"))).toEqual([]);
    expect(contentWrites(h).length - writes).toBe(1);
    h.advanceClock(31 * 60_000);
    expect(await sweeper.sweep()).toBe(0);
    expect(contentWrites(h).length - writes).toBe(1);

    h.slack.clear();
    await ask(h, `block ${ZONE} cn challenge for 30m`, "Challenge country CN");
    // Someone moves CN from the challenged list to the blocked one by hand.
    const challenged = listNamed(h, "edgeops: challenged countries")!;
    challenged.content = "";
    listsOf(h).push({
      ...challenged,
      id: 8_600,
      configurationId: 9_600,
      name: "edgeops: blocked countries",
      content: "CN",
      action: 2,
    });
    const moved = contentWrites(h).length;
    h.advanceClock(31 * 60_000);
    const [left] = await undoDue(h.deps);
    expect(left?.state).toBe("undone");
    expect(contentWrites(h).length).toBe(moved);
    expect(entries(listNamed(h, "edgeops: blocked countries"))).toEqual(["CN"]);
    expect((await h.store.audit.list("T0001", 5)).some((a) => a.outcome === "left")).toBe(true);
  });

  it("an undo that keeps failing tells how to undo it by hand with /edge unblock, never the /edge block that re-applies it", async () => {
    const ip = "198.51.100.77";
    await ask(h, `block ${ZONE} ${ip} for 30m`, `Block IP ${ip}`);
    h.sim.addFault({ method: "PATCH", path: /\/access-lists\/\d+$/, status: 500, body: "none" });
    h.advanceClock(31 * 60_000);
    let message = "";
    for (let attempt = 0; attempt < 10; attempt++) {
      const [tried] = await undoDue(h.deps);
      message = tried?.lastError?.message ?? message;
      h.advanceClock(61_000);
    }
    expect(message).toContain(`undo it by hand with /edge unblock ${ZONE} ${ip}`);
    expect(message).not.toContain("/edge block");
    h.sim.clearFaults();
  });
});
