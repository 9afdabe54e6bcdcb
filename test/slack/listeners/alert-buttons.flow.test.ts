/**
 * An alert's buttons and the App Home through the real receiver: signed clicks on the buttons of the parent
 * message the alert builders render, the fake Slack Web API recording what the bot posts, the simulator behind the
 * Incident overview, the store (SQLite, and PostgreSQL for the race) holding who acknowledged and the mute.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { alertViewOf } from "../../../src/alerts/view.js";
import { alertParentMessage } from "../../../src/slack/blocks/alerts.js";
import { ACTIONS } from "../../../src/slack/ids.js";
import type { AlertEpisode, Watch } from "../../../src/store/index.js";
import { SIM_IDS } from "../../../tools/simulator/index.js";
import { openHome } from "../../support/app-home.js";
import { describeOnBothStores, postgresTests } from "../../support/both-stores.js";
import type { Harness, HarnessOptions } from "../../support/harness.js";
import { blocksText, findButtons, startHarness } from "../../support/harness.js";
import { useHarness } from "../../support/use-harness.js";

const ZONE = SIM_IDS.zoneUnderAttack;
const PARENT_TS = "1700000123.000200";
const LIMITS = { perChannel: 10, perWorkspace: 50 };
/** A plain member who creates the watches (neither admin nor owner). */
const DAVE = "U0004";

interface Posted {
  watch: Watch;
  episode: AlertEpisode;
  /** The buttons of the parent message as the alert builders render it. */
  buttons: ReturnType<typeof findButtons>;
}

let seq = 0;
/** A watch and a firing episode whose parent is posted at PARENT_TS (as the poller leaves them). */
async function postedAlert(
  h: Harness,
  o: { kind?: "zone" | "app"; channelId?: string; teamId?: string; createdBy?: string } = {},
): Promise<Posted> {
  seq += 1;
  const kind = o.kind ?? "zone";
  const teamId = o.teamId ?? "T0001";
  // One channel per alert: a channel watches a zone once.
  const channelId = o.channelId ?? `C0ALERTS${seq}`;
  const target = kind === "zone" ? String(ZONE) : "";
  const created = await h.store.watches.createIfRoom(
    {
      teamId,
      channelId,
      createdBy: o.createdBy ?? DAVE,
      kind: kind === "zone" ? "zone" : "apps",
      target,
      options:
        kind === "zone" ? { sensitivity: "normal", label: SIM_IDS.domainUnderAttack } : { statuses: null },
      nextPollAt: h.deps.clock.now() + 60_000,
    },
    LIMITS,
  );
  if (created.kind === "full") throw new Error("watch caps reached");
  const watch = created.item;
  const subject =
    kind === "zone"
      ? {
          kind: "zone" as const,
          shieldZoneId: ZONE,
          label: SIM_IDS.domainUnderAttack,
          readings: [{ signal: "ddos" as const, count: 2400, mean: 3, z: 40.2, over: true }],
          topOffender: null,
          ddosSensitivity: null,
        }
      : {
          kind: "app" as const,
          appId: `mc-app-${seq}`,
          appName: `shop-api-${seq}`,
          status: "failing",
          transition: "failing" as const,
          since: h.deps.clock.now() - 120_000,
        };
  const episode = await h.store.episodes.open({
    watchId: watch.id,
    teamId,
    channelId,
    subject: kind === "zone" ? target : subject.kind === "app" ? subject.appId : "",
    seq: 1,
    kind: kind === "zone" ? "attack" : "failing",
    details: { subject },
  });
  if (!episode) throw new Error("episode not opened");
  await h.store.episodes.setMessage(episode.id, PARENT_TS);
  const stored = (await h.store.episodes.get(episode.id)) as AlertEpisode;
  const parent = alertParentMessage(alertViewOf(stored, watch), h.deps.clock.now());
  return { watch, episode: stored, buttons: findButtons(parent.blocks) };
}

const buttonOf = (p: Posted, label: string) => {
  const b = p.buttons.find((x) => x.text === label);
  if (!b) throw new Error(`no ${label} button: ${p.buttons.map((x) => x.text).join(", ")}`);
  return b;
};

async function click(h: Harness, p: Posted, label: string, userId: string) {
  const res = await h.click(buttonOf(p, label), {
    userId,
    channelId: p.episode.channelId,
    messageTs: PARENT_TS,
  });
  expect(res.status).toBe(200);
  return res;
}

const threadPosts = (h: Harness) =>
  h.slack.callsTo("chat.postMessage").filter((c) => c.args.thread_ts === PARENT_TS);
const parentUpdates = (h: Harness, p: Posted) =>
  h.slack
    .callsTo("chat.update")
    .filter((c) => c.args.ts === PARENT_TS && c.args.channel === p.episode.channelId);
const privateAnswer = async (h: Harness, responseId: string) =>
  blocksText((await h.slack.waitForResponse(responseId)).body.blocks);
/** `userId` sends a click on `actionId` for the alert `p` that its message has no button for: the private answer. */
async function craftedClick(h: Harness, p: Posted, actionId: string, userId: string) {
  const res = await h.click(
    { action_id: actionId, value: p.episode.id },
    { userId, channelId: p.episode.channelId, messageTs: PARENT_TS },
  );
  return privateAnswer(h, res.responseId);
}

describe("alert buttons through the receiver (SQLite)", () => {
  const h = useHarness();
  beforeAll(async () => {
    h.slack.users.set(DAVE, { id: DAVE, name: "dave" });
  });

  it("Acknowledge: the parent shows who took it and loses the button, a reply in the thread says so, once", async () => {
    const p = await postedAlert(h);
    expect(p.buttons.map((b) => b.text)).toEqual(["Incident overview", "Timeline", "Mute 1h", "Acknowledge"]);
    await click(h, p, "Acknowledge", "U0002");

    const update = await h.slack.waitForCall("chat.update", (c) => c.args.ts === PARENT_TS);
    expect(update.args.channel).toBe(p.episode.channelId);
    const text = blocksText(update.args.blocks);
    expect(text).toContain(`Attack on ${SIM_IDS.domainUnderAttack} (shield zone ${ZONE})`);
    expect(text).toContain("acknowledged by <@U0002>");
    expect(findButtons(update.args.blocks).map((b) => b.text)).toEqual([
      "Incident overview",
      "Timeline",
      "Mute 1h",
    ]);
    const reply = await h.slack.waitForCall("chat.postMessage", (c) => c.args.thread_ts === PARENT_TS);
    expect(reply.args.channel).toBe(p.episode.channelId);
    expect(blocksText(reply.args.blocks)).toContain("<@U0002> acknowledged this alert and is on it.");
    expect((await h.store.episodes.get(p.episode.id))?.acknowledgedBy).toBe("U0002");
    const audit = await h.store.audit.list("T0001", 50);
    expect(audit.some((a) => a.action === "alert.acknowledge" && a.userId === "U0002")).toBe(true);

    // A stale Acknowledge button clicked by someone else: a private sentence, no second reply, bob stays.
    const late = await click(h, p, "Acknowledge", "U0003");
    expect(await privateAnswer(h, late.responseId)).toContain("<@U0002> already acknowledged this alert");
    await h.slack.waitForCall(
      "chat.update",
      (c) => c.args.ts === PARENT_TS && parentUpdates(h, p).length === 2,
    );
    expect(blocksText(parentUpdates(h, p)[1]?.args.blocks)).toContain("acknowledged by <@U0002>");
    expect(threadPosts(h)).toHaveLength(1);
    const again = await click(h, p, "Acknowledge", "U0002");
    expect(await privateAnswer(h, again.responseId)).toContain("You already acknowledged this alert");
    expect((await h.store.episodes.get(p.episode.id))?.acknowledgedBy).toBe("U0002");
  });

  it("Mute 1h: the watch's creator and admins may, others get a sentence; the parent shows until when", async () => {
    const p = await postedAlert(h);
    const refused = await click(h, p, "Mute 1h", "U0002");
    expect(await privateAnswer(h, refused.responseId)).toContain(
      `Only the person who created watch ${p.watch.id} or a workspace admin can mute it`,
    );
    expect((await h.store.watches.get(p.watch.id))?.mutedUntil).toBeNull();
    expect(threadPosts(h)).toHaveLength(0);
    const audit = await h.store.audit.list("T0001", 50);
    expect(
      audit.some((a) => a.action === "watch.mute" && a.outcome === "refused" && a.userId === "U0002"),
    ).toBe(true);

    const before = h.deps.clock.now();
    await click(h, p, "Mute 1h", DAVE);
    const update = await h.slack.waitForCall("chat.update", (c) => c.args.ts === PARENT_TS);
    const until = (await h.store.watches.get(p.watch.id))?.mutedUntil ?? 0;
    expect(until).toBeGreaterThanOrEqual(before + 3_600_000);
    expect(until).toBeLessThan(before + 3_600_000 + 60_000);
    expect(blocksText(update.args.blocks)).toContain(`muted until <!date^${Math.floor(until / 1000)}^`);
    const reply = await h.slack.waitForCall("chat.postMessage", (c) => c.args.thread_ts === PARENT_TS);
    expect(blocksText(reply.args.blocks)).toContain(`<@${DAVE}> muted this watch for 1 h, until`);

    // An admin (alice) may too.
    h.slack.clear();
    await click(h, p, "Mute 1h", "U0001");
    await h.slack.waitForCall("chat.postMessage", (c) => c.args.thread_ts === PARENT_TS);
    expect(blocksText(threadPosts(h)[0]?.args.blocks)).toContain("<@U0001> muted this watch");
  });

  it("Mute 1h on one app's alert shows the mute on every open alert of that watch", async () => {
    const p = await postedAlert(h, { kind: "app" });
    const otherTs = "1700000999.000300";
    const other = await h.store.episodes.open({
      watchId: p.watch.id,
      teamId: "T0001",
      channelId: p.episode.channelId,
      subject: "mc-other-app",
      seq: 1,
      kind: "failing",
      details: {
        subject: {
          kind: "app",
          appId: "mc-other-app",
          appName: "other-app",
          status: "failing",
          transition: "failing",
          since: h.deps.clock.now(),
        },
        reopened: 0,
      },
    });
    if (!other) throw new Error("not opened");
    await h.store.episodes.setMessage(other.id, otherTs);
    await click(h, p, "Mute 1h", DAVE);
    await h.slack.waitForCall("chat.postMessage", (c) => c.args.thread_ts === PARENT_TS);
    const updated = h.slack.callsTo("chat.update");
    expect(updated.map((c) => c.args.ts).sort()).toEqual([PARENT_TS, otherTs].sort());
    for (const u of updated) expect(blocksText(u.args.blocks)).toContain("muted until");
    expect(blocksText(updated.find((u) => u.args.ts === otherTs)?.args.blocks)).toContain(
      "other-app is failing",
    );
  });

  it("Incident overview: a placeholder in the thread, replaced by the zone's incident card from the simulator", async () => {
    const p = await postedAlert(h);
    h.sim.clearRequests();
    await click(h, p, "Incident overview", "U0002");
    const placeholder = await h.slack.waitForCall("chat.postMessage", (c) => c.args.thread_ts === PARENT_TS);
    expect(placeholder.args.channel).toBe(p.episode.channelId);
    expect(blocksText(placeholder.args.blocks)).toContain(
      `Gathering the picture of zone ${ZONE} over the last 15 minutes`,
    );
    const card = await h.slack.waitForCall(
      "chat.update",
      (c) => c.args.ts !== PARENT_TS && blocksText(c.args.blocks).includes("Incident picture"),
      15_000,
    );
    expect(card.args.channel).toBe(p.episode.channelId);
    const text = blocksText(card.args.blocks);
    expect(text).toContain(`Incident picture · shield zone ${ZONE}`);
    expect(text).toContain("Last 15 minutes");
    // In a channel's thread: public, so no Share button.
    expect(findButtons(card.args.blocks).map((b) => b.action_id)).not.toContain(ACTIONS.shareInChannel);
    expect(h.sim.requests.some((r) => r.path === `/shield/metrics/overview/${ZONE}/detailed`)).toBe(true);
    expect(h.slack.violations).toEqual([]);
  });

  it("Incident overview of an alert open for two hours covers it: the 6-hour window", async () => {
    const p = await postedAlert(h);
    h.advanceClock(2 * 3_600_000);
    try {
      await click(h, p, "Incident overview", "U0002");
      const placeholder = await h.slack.waitForCall(
        "chat.postMessage",
        (c) => c.args.thread_ts === PARENT_TS,
      );
      expect(blocksText(placeholder.args.blocks)).toContain("over the last 6 hours");
      await h.slack.waitForCall(
        "chat.update",
        (c) => blocksText(c.args.blocks).includes("Incident picture"),
        15_000,
      );
    } finally {
      h.advanceClock(-2 * 3_600_000);
    }
  });

  it("Incident overview where the bot cannot post: the clicker reads why", async () => {
    const p = await postedAlert(h);
    h.slack.addFault({
      method: "chat.postMessage",
      error: "not_in_channel",
      channel: p.episode.channelId,
      times: 1,
    });
    const res = await click(h, p, "Incident overview", "U0002");
    expect(await privateAnswer(h, res.responseId)).toContain("I'm not a member of that channel");
  });

  it("an app alert has no Incident overview; a crafted click says what to use instead", async () => {
    const p = await postedAlert(h, { kind: "app" });
    expect(p.buttons.map((b) => b.text)).toEqual(["Restart app", "Mute 1h", "Acknowledge"]);
    expect(await craftedClick(h, p, ACTIONS.alertIncident, "U0002")).toContain(
      "The incident overview is for shield zones",
    );
  });

  it("Timeline: the presser alone reads the zone's story over the alert's window, their channels' entries only", async () => {
    const p = await postedAlert(h);
    h.slack.memberships.set("U0002", [p.episode.channelId]);
    h.slack.memberships.set(DAVE, ["C0ELSEWHERE"]);
    const res = await click(h, p, "Timeline", "U0002");
    const answer = await h.slack.waitForResponse(res.responseId);
    expect(answer.body.response_type).toBe("ephemeral");
    expect(answer.body.replace_original).toBe(false);
    const text = blocksText(answer.body.blocks);
    expect(text).toContain(`Timeline of ${SIM_IDS.domainUnderAttack} (shield zone ${ZONE})`);
    // Other tests' alerts on the same zone are in channels U0002 is not in: only this one shows.
    expect(text).toContain("1 alert, still firing");
    expect(text).toContain(`Alert opened in <#${p.episode.channelId}>`);
    // As /edge timeline answers one reader: Export (and paging when there are pages).
    expect(findButtons(answer.body.blocks).map((b) => b.action_id)).toContain(ACTIONS.timelineExport);
    // Nothing is posted in the channel or its thread.
    expect(threadPosts(h)).toHaveLength(0);
    expect(parentUpdates(h, p)).toHaveLength(0);

    // Someone who is not in the alert's channel reads no entry of it.
    const other = await click(h, p, "Timeline", DAVE);
    const otherText = await privateAnswer(h, other.responseId);
    expect(otherText).toContain(`Timeline of ${SIM_IDS.domainUnderAttack} (shield zone ${ZONE})`);
    expect(otherText).toContain("no alert");
    expect(otherText).not.toContain("Alert opened");
    expect(h.slack.violations).toEqual([]);
  });

  it("an app alert has no Timeline; a crafted click says what to use instead", async () => {
    const p = await postedAlert(h, { kind: "app" });
    expect(await craftedClick(h, p, ACTIONS.alertTimeline, "U0002")).toContain(
      "The timeline is for shield zones",
    );
  });

  it("a removed watch, another workspace's alert or a tampered value: a sentence, nothing changes", async () => {
    const removed = await postedAlert(h);
    await h.store.watches.remove("T0001", removed.watch.id);
    for (const label of ["Acknowledge", "Mute 1h", "Incident overview"]) {
      const res = await click(h, removed, label, "U0001");
      expect(await privateAnswer(h, res.responseId), label).toContain(
        "This alert is gone: its watch was removed.",
      );
    }
    const foreign = await postedAlert(h, { teamId: "T0OTHER" });
    const res = await click(h, foreign, "Acknowledge", "U0001");
    expect(await privateAnswer(h, res.responseId)).toContain("This alert is gone");
    expect((await h.store.episodes.get(foreign.episode.id))?.acknowledgedBy).toBeNull();
    for (const value of ["<!channel>", "", "x".repeat(101)]) {
      const r = await h.click({ action_id: ACTIONS.alertAcknowledge, value }, { userId: "U0001" });
      expect(await privateAnswer(h, r.responseId)).toContain("That button is out of date");
    }
    expect(threadPosts(h)).toHaveLength(0);
    expect(h.slack.callsTo("chat.update")).toHaveLength(0);
  });
});

// ---- App Home -----------------------------------------------------------------------------------------------

describe("App Home: open alerts of the user's channels", () => {
  const h = useHarness();

  it("lists the firing alerts of the channels the user is in, newest first, and nothing else", async () => {
    const mine = await postedAlert(h, { channelId: "C0MINE" });
    // Opened in the same millisecond, the two would tie on opened_at and "newest first" would be a coin toss.
    h.advanceClock(1000);
    const app = await postedAlert(h, { channelId: "C0MINE2", kind: "app" });
    await h.store.episodes.acknowledge(app.episode.id, "U0003");
    await postedAlert(h, { channelId: "C0NOTMINE" });
    const resolved = await postedAlert(h, { channelId: "C0MINE3" });
    await h.store.episodes.update(resolved.episode.id, resolved.episode.version, {
      status: "resolved",
      resolvedAt: h.deps.clock.now(),
    });
    // Enough memberships for users.conversations to page (200 a page).
    const filler = Array.from({ length: 450 }, (_, i) => `C0FILL${i}`);
    h.slack.memberships.set("U0001", [
      ...filler.slice(0, 300),
      "C0MINE",
      "C0MINE2",
      "C0MINE3",
      ...filler.slice(300),
    ]);

    const text = await openHome(h, "U0001");
    expect(text).toContain("*Open alerts in your channels* (2)");
    expect(text).toContain(`*Attack on ${SIM_IDS.domainUnderAttack} (shield zone ${ZONE})* in <#C0MINE>`);
    const appLine = `*${(app.episode.details as { subject: { appName: string } }).subject.appName} is failing* in <#C0MINE2>`;
    expect(text).toContain(`${appLine}, since`);
    expect(text).toContain("acknowledged by <@U0003>");
    expect(text).not.toContain("C0NOTMINE");
    expect(text).not.toContain("C0MINE3");
    expect(text.indexOf("C0MINE2")).toBeLessThan(text.indexOf("<#C0MINE>"));
    expect(h.slack.callsTo("users.conversations")).toHaveLength(3);
    expect(h.slack.callsTo("users.conversations")[0]?.args).toMatchObject({
      user: "U0001",
      types: "public_channel,private_channel",
    });
    void mine;
  });

  it("says nothing is firing for a member of none of the alerting channels", async () => {
    h.slack.memberships.set("U0002", ["C0QUIET"]);
    const text = await openHome(h, "U0002");
    expect(text).toContain("*Open alerts in your channels* (0)");
    expect(text).toContain("Nothing is firing in the channels you are in.");
  });

  it("explains a missing scope, and the rest of the Home still shows", async () => {
    h.slack.addFault({ method: "users.conversations", error: "missing_scope", times: 1 });
    const text = await openHome(h, "U0001");
    expect(text).toContain("edgeops needs the channels:read and groups:read scopes");
    expect(text).toContain("Magic Containers applications");
    expect(text).toContain("Pending approvals");
    expect(h.logs.text).not.toContain("could not list the user's open alerts");
  });
});

// ---- PostgreSQL: the race ------------------------------------------------------------------------------------

async function tenAcknowledges(options: HarnessOptions): Promise<void> {
  const h = await startHarness(options);
  try {
    const p = await postedAlert(h);
    const people = Array.from({ length: 10 }, (_, i) => `U1${String(i).padStart(3, "0")}`);
    const results = await Promise.all(people.map((u) => click(h, p, "Acknowledge", u)));
    // The winner's answer is the thread reply; once it is posted and the bot is quiet, every click is answered.
    await h.slack.waitForCall("chat.postMessage", (c) => c.args.thread_ts === PARENT_TS);
    await h.settled();
    const answers = results.map((r) => h.slack.responsesTo(r.responseId).at(-1));
    const winner = (await h.store.episodes.get(p.episode.id))?.acknowledgedBy;
    expect(people).toContain(winner);
    // Nine private "already", one thread reply naming the winner.
    expect(
      answers.filter((a) => a && blocksText(a.body.blocks).includes("already acknowledged")),
    ).toHaveLength(9);
    expect(threadPosts(h)).toHaveLength(1);
    expect(blocksText(threadPosts(h)[0]?.args.blocks)).toContain(`<@${winner}> acknowledged`);
  } finally {
    await h.close();
  }
}

if (!postgresTests)
  console.warn("*** PostgreSQL unreachable: the PostgreSQL acknowledge race is SKIPPED ***");

describeOnBothStores("ten people click Acknowledge at once: one wins", tenAcknowledges);
