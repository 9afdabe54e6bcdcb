import { describe, expect, it } from "vitest";
import { ACTION_PATTERNS, ACTIONS } from "../../src/slack/ids.js";
import { SIM_IDS } from "../../tools/simulator/index.js";
import { onPostgres, postgresTests } from "../support/both-stores.js";
import { answerTo, blocksText, findButtons, type Harness, startHarness } from "../support/harness.js";
import { BOB, CAROL } from "../support/users.js";

/**
 * Several people reach for the same mitigation during an incident (the same Block button on the same
 * card). One request waits for approval; the others are pointed at it instead of a card each.
 */

const ZONE = SIM_IDS.customerAccessList.zoneId;
const IP = "203.0.113.99";
const LABEL = `Block IP ${IP} on shield zone ${ZONE}`;

/** Types the command as `userId` in `channelId`, presses Confirm, and returns what the click answered. */
async function typeAndConfirm(h: Harness, text: string, userId: string, channelId = "C0001") {
  const typed = await answerTo(h, text, userId, channelId);
  const confirm = typed.buttons.find((b) => b.action_id === ACTIONS.changeConfirm);
  if (!confirm) throw new Error(`no Confirm on: ${typed.text}`);
  const click = await h.click(confirm, { userId, channelId });
  expect(click.status).toBe(200);
  return blocksText((await h.slack.waitForResponse(click.responseId)).body.blocks);
}

const cards = (h: Harness) =>
  h.slack.callsTo("chat.postMessage").filter((c) => blocksText(c.args.blocks).includes("Approval needed"));

async function twins(options: Parameters<typeof startHarness>[0] = {}) {
  const h = await startHarness(options);
  // Carol is in both channels, so she may be told where Bob's request waits (test/slack/private-channels.flow.test.ts).
  h.slack.memberships.set(CAROL, ["C0001", "C0002"]);
  try {
    const first = await typeAndConfirm(h, `block ${ZONE} ${IP}`, BOB);
    expect(first).toContain("needs a second person's approval");
    expect(cards(h)).toHaveLength(1);

    // Carol, in another channel, asks for the very same change: pointed at Bob's request.
    const second = await typeAndConfirm(h, `block ${ZONE} ${IP}`, CAROL, "C0002");
    expect(second).toContain(
      `<@${BOB}> already asked for *${LABEL}*: it is waiting for approval in <#C0001>`,
    );
    expect(second).toContain("No second request was made");
    // Bob again: told it is his own.
    expect(await typeAndConfirm(h, `block ${ZONE} ${IP}`, BOB)).toContain(`You already asked for *${LABEL}*`);
    expect(cards(h)).toHaveLength(1);
    expect(await h.store.changeRequests.listPending("T0001")).toHaveLength(1);
    const audit = await h.store.audit.list("T0001", 10);
    expect(audit.filter((e) => e.outcome === "already pending").map((e) => e.userId)).toEqual([BOB, CAROL]);

    // Not the same change: for 30 minutes only, or another IP. Each gets its own request.
    expect(await typeAndConfirm(h, `block ${ZONE} ${IP} for 30m`, CAROL)).toContain(
      "needs a second person's approval",
    );
    expect(await typeAndConfirm(h, `block ${ZONE} 203.0.113.98`, CAROL)).toContain(
      "needs a second person's approval",
    );
    expect(cards(h)).toHaveLength(3);

    // In a channel where approvals are off, the same change is simply applied: nothing to join.
    await h.store.policies.setChannel("T0001", "C0OPEN", { approvals: "off", updatedBy: "U0001" });
    expect(await typeAndConfirm(h, `block ${ZONE} 203.0.113.98`, CAROL, "C0OPEN")).toContain(
      `Done: *Block IP 203.0.113.98 on shield zone ${ZONE}*`,
    );
    expect(cards(h)).toHaveLength(3);

    // Once Bob's request has expired, asking again makes a new one.
    h.advanceClock(31 * 60_000);
    expect(await typeAndConfirm(h, `block ${ZONE} ${IP}`, CAROL)).toContain(
      "needs a second person's approval",
    );
    expect(cards(h)).toHaveLength(4);
    expect(h.slack.violations).toEqual([]);
  } finally {
    await h.close();
  }
}

/** Bob and Carol press Confirm on the same change at the same instant, five times over. */
async function atOnce(options: Parameters<typeof startHarness>[0] = {}) {
  const h = await startHarness(options);
  try {
    const ips = ["198.51.100.11", "198.51.100.12", "198.51.100.13", "198.51.100.14", "198.51.100.15"];
    const answers = await Promise.all(
      ips.map(async (ip) => {
        const [bob, carol] = await Promise.all(
          [BOB, CAROL].map(async (userId) => {
            const typed = await answerTo(h, `block ${ZONE} ${ip}`, userId);
            return typed.buttons.find((b) => b.action_id === ACTIONS.changeConfirm)!;
          }),
        );
        const clicks = await Promise.all([
          h.click(bob!, { userId: BOB }),
          h.click(carol!, { userId: CAROL }),
        ]);
        return Promise.all(
          clicks.map(async (c) => blocksText((await h.slack.waitForResponse(c.responseId)).body.blocks)),
        );
      }),
    );
    for (const pair of answers) {
      expect(pair.filter((t) => t.includes("needs a second person's approval"))).toHaveLength(1);
      expect(pair.filter((t) => t.includes("already asked for"))).toHaveLength(1);
    }
    expect(cards(h)).toHaveLength(ips.length);
    expect(await h.store.changeRequests.listPending("T0001")).toHaveLength(ips.length);
  } finally {
    await h.close();
  }
}

describe("the same change asked twice while the first waits for approval", () => {
  it("on SQLite: points the second asker at the waiting request, posts no second card", async () => {
    await twins();
  });

  it.runIf(postgresTests)("on PostgreSQL (parameters compared as stored)", async () => {
    await onPostgres(twins);
  });

  it("two people confirming it at the same instant: one request and one card (SQLite)", async () => {
    await atOnce();
  });

  it.runIf(postgresTests)(
    "two people confirming it at the same instant: one request and one card (PostgreSQL)",
    async () => {
      await onPostgres(atOnce);
    },
  );
});

describe("the incident card marks an offender whose block waits for approval", () => {
  it("Bob's pending block shows on the card; Carol pressing the same Block is pointed at it", async () => {
    const h = await startHarness();
    try {
      const card = async () => {
        const res = await h.command(`incident ${SIM_IDS.zoneUnderAttack}`, {
          userId: CAROL,
          channelId: "C0001",
        });
        return (
          await h.slack.waitForResponse(res.responseId, (r) => r.body.replace_original === true, 15_000)
        ).body.blocks;
      };
      const ipBlock = (blocks: unknown) =>
        findButtons(blocks).find(
          (b) => ACTION_PATTERNS.changeConfirm.test(b.action_id) && JSON.parse(b.value!).p.type === "ip",
        )!;
      const first = ipBlock(await card());
      const ip = JSON.parse(first.value!).p.value as string;
      expect(blocksText(await card())).not.toContain("awaiting approval");

      await h.click(first, { userId: BOB, channelId: "C0001" });
      await h.slack.waitForCall("chat.postMessage", (c) =>
        blocksText(c.args.blocks).includes("Approval needed"),
      );

      const refreshed = await card();
      expect(blocksText(refreshed)).toMatch(
        new RegExp(
          `${ip.replaceAll(".", "\\.")}\` [\\d,]+ · [^\n]*:hourglass_flowing_sand: block awaiting approval`,
        ),
      );
      const click = await h.click(ipBlock(refreshed), { userId: CAROL, channelId: "C0001" });
      const answer = blocksText((await h.slack.waitForResponse(click.responseId)).body.blocks);
      expect(answer).toContain(
        `<@${BOB}> already asked for *Block IP ${ip} on shield zone ${SIM_IDS.zoneUnderAttack}*`,
      );
      expect(cards(h)).toHaveLength(1);
    } finally {
      await h.close();
    }
  }, 30_000);
});
