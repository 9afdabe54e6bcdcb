/**
 * What happens in a private channel stays with its members: the App Home, `/edge audit` and the pointer to
 * a request someone already made, through the real receiver (signed requests, the fake Slack Web API's
 * memberships, the store on SQLite and PostgreSQL).
 */
import { describe, expect, it } from "vitest";
import { SIM_IDS } from "../../tools/simulator/index.js";
import { openHome } from "../support/app-home.js";
import { onBothStores } from "../support/both-stores.js";
import { askAndConfirm } from "../support/change-flow.js";
import { answerTo, blocksText, type Harness, type HarnessOptions, startHarness } from "../support/harness.js";
import { ALICE, BOB, CAROL } from "../support/users.js";

const ZONE = SIM_IDS.customerAccessList.zoneId;
const IP = "198.51.100.23";
const LABEL = `Block IP ${IP} on shield zone ${ZONE}`;
const DAVE = "U0004"; // a member of #general only
const PRIVATE = "G0PRIV";
const GENERAL = "C0GEN";

/** Types the command as `userId` in `channelId`, presses Confirm, and returns what the click answered. */
async function typeAndConfirm(h: Harness, text: string, userId: string, channelId: string) {
  const { click } = await askAndConfirm(h, text, { userId, channelId });
  expect(click.status).toBe(200);
  return blocksText((await h.slack.waitForResponse(click.responseId)).body.blocks);
}

async function withPrivateChannel(options: HarnessOptions, body: (h: Harness) => Promise<void>) {
  const h = await startHarness(options);
  h.slack.users.set(DAVE, { id: DAVE, name: "dave" });
  h.slack.memberships.set(BOB, [PRIVATE]);
  h.slack.memberships.set(CAROL, [PRIVATE, GENERAL]);
  h.slack.memberships.set(DAVE, [GENERAL]);
  try {
    expect(await typeAndConfirm(h, `block ${ZONE} ${IP}`, BOB, PRIVATE)).toContain(
      "needs a second person's approval",
    );
    const scheduled = await answerTo(
      h,
      `schedule dns ${SIM_IDS.dnsZoneCompleted} daily 09:00 UTC`,
      BOB,
      PRIVATE,
    );
    expect(scheduled.text).toContain("Scheduled");
    await body(h);
  } finally {
    await h.close();
  }
}

async function homeAndAudit(options: HarnessOptions = {}) {
  await withPrivateChannel(options, async (h) => {
    // Dave, in #general only: neither the request nor the schedule of the private channel.
    const daves = await openHome(h, DAVE);
    expect(daves).not.toContain(IP);
    expect(daves).not.toContain(PRIVATE);
    expect(daves).toContain("*Pending approvals in your channels* (0)");
    expect(daves).toContain("*Schedules in your channels* (0)");

    // Bob, who is in it, sees both.
    const bobs = await openHome(h, BOB);
    expect(bobs).toContain("*Pending approvals in your channels* (1)");
    // Linked to its card, which only the channel's members can open.
    expect(bobs).toContain(`|${LABEL}>* in <#${PRIVATE}>`);
    expect(bobs).toContain(`*<https://acme.slack.com/archives/${PRIVATE}/p`);
    expect(bobs).toContain("*Schedules in your channels* (1)");

    // /edge audit: Dave sees nothing of it, Bob does.
    const daveAudit = await answerTo(h, "audit 5", DAVE, GENERAL);
    expect(daveAudit.text).not.toContain(IP);
    expect(daveAudit.text).not.toContain(PRIVATE);
    expect(daveAudit.text).toContain("the channels you are in");
    expect(daveAudit.buttons.map((b) => b.text)).not.toContain("Share in channel");
    const bobAudit = await answerTo(h, "audit 5", BOB, PRIVATE);
    expect(bobAudit.text).toContain(`shield zone ${ZONE} / ip ${IP}`);
    expect(bobAudit.text).toContain(`in <#${PRIVATE}>`);

    // Alice, an admin in no channel: everything, for her alone (no Share in channel).
    const aliceAudit = await answerTo(h, "audit 5", ALICE, GENERAL);
    expect(aliceAudit.text).toContain(`in <#${PRIVATE}>`);
    expect(aliceAudit.text).toContain("for you alone");
    expect(aliceAudit.buttons.map((b) => b.text)).not.toContain("Share in channel");
    // In the channel, even an admin's answer holds only that channel's entries.
    const shared = await h.command("audit 5 public", { userId: ALICE, channelId: GENERAL });
    const sharedText = blocksText((await h.slack.waitForResponse(shared.responseId)).body.blocks);
    expect(sharedText).toContain(`What happened in <#${GENERAL}>`);
    expect(sharedText).not.toContain(PRIVATE);
    expect(sharedText).not.toContain(IP);
  });
}

describe("a private channel's requests and schedules", () => {
  onBothStores(
    "App Home and /edge audit show them only to its members; admins see the audit alone",
    homeAndAudit,
    20_000,
  );
});

describe("the pointer to a request someone already made", () => {
  it("names the private channel and the asker only to the channel's members", async () => {
    await withPrivateChannel({}, async (h) => {
      const daves = await typeAndConfirm(h, `block ${ZONE} ${IP}`, DAVE, GENERAL);
      expect(daves).toContain(`Someone already asked for *${LABEL}*; it waits for approval elsewhere.`);
      expect(daves).not.toContain(PRIVATE);
      expect(daves).not.toContain(BOB);
      // Carol is in the private channel: told who asked and where, from #general too.
      const carols = await typeAndConfirm(h, `block ${ZONE} ${IP}`, CAROL, GENERAL);
      expect(carols).toContain(
        `<@${BOB}> already asked for *${LABEL}*: it is waiting for approval in <#${PRIVATE}>`,
      );
      expect(await h.store.changeRequests.countPending("T0001")).toBe(1);
    });
  }, 20_000);
});
