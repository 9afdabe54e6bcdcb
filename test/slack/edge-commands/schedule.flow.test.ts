import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ACTIONS } from "../../../src/slack/ids.js";
import { SIM_IDS } from "../../../tools/simulator/index.js";
import { describeOnBothStores, postgresTests } from "../../support/both-stores.js";
import { steppedClock } from "../../support/clock.js";
import {
  blocksText,
  commandAnswer,
  findButtons,
  type Harness,
  type HarnessOptions,
  startHarness,
  TEST_EDGE_KEY,
} from "../../support/harness.js";

let h: Harness;
const clock = Date.parse("2026-03-27T12:00:00Z");
const ZONE = SIM_IDS.dnsZoneCompleted;
/** Every refusal ends with an example to copy ("Try: …" or "For example: …"). */
const EXAMPLE = "/edge schedule dns 5678";

beforeAll(async () => {
  // Two workspaces: OAuth installs (a single bot token answers only its own workspace).
  h = await startHarness({ clock: steppedClock(() => clock), oauth: true, installs: ["T0001", "T0002"] });
  h.slack.users.set("U0003", { id: "U0003", name: "carol", tz: "America/New_York" });
});
afterAll(async () => {
  await h?.close();
});

type Who = { userId?: string; teamId?: string; channelId?: string };

const run = (text: string, who: Who = {}) => commandAnswer(h, `schedule ${text}`, who);

const idIn = (text: string) => /Id `(s[a-z0-9]+)`/.exec(text)?.[1] ?? /`(s[a-z0-9]{7})`/.exec(text)?.[1];

describe("/edge schedule over signed HTTP", () => {
  it("dns: schedules in the named zone and states the next three runs there, across the DST change", async () => {
    const { text, body } = await run(`dns ${ZONE} daily 09:00 Europe/Amsterdam`);
    expect(body.response_type).toBe("ephemeral");
    expect(text).toContain("Scheduled: a DNS summary of shop-example.com (zone 51001) in this channel");
    expect(text).toContain("daily at 09:00 (Europe/Amsterdam)");
    expect(text).toContain(
      "Sat 28 Mar 2026, 09:00 CET\n• Sun 29 Mar 2026, 09:00 CEST\n• Mon 30 Mar 2026, 09:00 CEST",
    );
    const id = idIn(text)!;
    const stored = await h.store.schedules.get(id);
    expect(stored).toMatchObject({
      teamId: "T0001",
      channelId: "C0001",
      createdBy: "U0001",
      target: String(ZONE),
      spec: "daily 09:00",
      timezone: "Europe/Amsterdam",
      nextRunAt: Date.parse("2026-03-28T08:00:00Z"),
    });
    const audit = await h.store.audit.list("T0001", 20);
    expect(audit.find((a) => a.action === "schedule.create" && a.target === `schedule:${id}`)).toBeDefined();
    expect(h.slack.violations).toEqual([]);
  });

  it("dns: the same schedule twice is stored once", async () => {
    const again = await run(`dns ${ZONE} daily 9:00 europe/amsterdam`);
    expect(again.text).toContain("This channel already gets a DNS summary");
    const mine = (await h.store.schedules.list("T0001", "C0001")).filter((s) => s.spec === "daily 09:00");
    expect(mine).toHaveLength(1);
  });

  it("dns: without a time zone, the user's Slack time zone; without one in Slack, UTC", async () => {
    const carol = await run(`dns ${ZONE} weekly mon 09:00`, { userId: "U0003", channelId: "C0NY" });
    expect(carol.text).toContain("every Monday at 09:00 (America/New_York)");
    expect(carol.text).toContain("Mon 30 Mar 2026, 09:00 EDT");
    expect(carol.text).toContain("Times are in your Slack time zone, America/New_York");
    const ghost = await run(`dns ${ZONE} weekdays 08:30`, { userId: "U0404", channelId: "C0NY" });
    expect(ghost.text).toContain("weekdays at 08:30 (UTC)");
    expect(ghost.text).toContain("Mon 30 Mar 2026, 08:30 UTC");
    expect(ghost.text).toContain("Times are in UTC");
  });

  it("dns: a cron expression in quotes (Slack's curly quotes too)", async () => {
    const { text } = await run(`dns ${ZONE} \u201C30 7 * * 1-5\u201D UTC`, { channelId: "C0CRON" });
    expect(text).toContain("cron `30 7 * * 1-5` (UTC)");
    expect(text).toContain("Mon 30 Mar 2026, 07:30 UTC");
  });

  it("dns: bad input gets a sentence with a correct example", async () => {
    const cases: [string, string][] = [
      [`dns ${ZONE} hourly`, '"hourly" is not a schedule I know'],
      [`dns ${ZONE} daily 25:00 UTC`, "25:00 is not a time of day"],
      [`dns ${ZONE} weekly funday 09:00`, '"funday" is not a day of the week'],
      [`dns ${ZONE} daily 09:00 Mars/Olympus`, '"Mars/Olympus" is not a time zone I know'],
      [`dns ${ZONE} "0 9 31 2 *" UTC`, "never happens"],
      [`dns ${ZONE} "*/5 * * * *" UTC`, "more often than every 15 minutes"],
      [`dns ${ZONE} 0 9 * * *`, "Put a cron expression in quotes"],
      ["dns no-such-zone.example daily 09:00", 'No DNS zone has the domain "no-such-zone.example"'],
      ["dns shop-exampel.com daily 09:00", `Did you mean shop-example.com (${ZONE})?`],
      ["dns nonsense daily 09:00", '"nonsense" is neither a DNS zone id nor a domain'],
      ["dns", "Which DNS zone?"],
      ["fortnightly", '"fortnightly" is not a schedule command'],
    ];
    for (const [input, sentence] of cases) {
      const { text } = await run(input);
      expect(text, input).toContain(sentence);
      expect(text, input).toContain(EXAMPLE);
    }
  });

  it("dns: takes the DNS zone in every form /edge dns takes: id, #id, domain in any case, trailing dot, URL", async () => {
    const forms = [
      `#${ZONE}`,
      "shop-example.com",
      "SHOP-Example.COM.",
      "https://shop-example.com/",
      "<http://shop-example.com|shop-example.com>",
    ];
    for (const [i, form] of forms.entries()) {
      const channelId = `C0FORM${i}`;
      const { text } = await run(`dns ${form} daily 09:00 UTC`, { channelId });
      expect(text, form).toContain(
        `Scheduled: a DNS summary of shop-example.com (zone ${ZONE}) in this channel`,
      );
      expect(
        (await h.store.schedules.list("T0001", channelId)).map((s) => s.target),
        form,
      ).toEqual([String(ZONE)]);
      const dns = await commandAnswer(h, `dns ${form}`, { channelId });
      expect(dns.text, form).toContain("DNS scan · shop-example.com");
    }
  });

  it("dns: the answer offers no Share in channel, so sharing can never create a second schedule", async () => {
    const first = await run(`dns ${ZONE} weekdays 07:45 UTC`, { channelId: "C0SHARE" });
    expect(first.buttons.some((b) => b.action_id === ACTIONS.shareInChannel)).toBe(false);
    expect(await h.store.schedules.list("T0001", "C0SHARE")).toHaveLength(1);
    const list = await run("list", { channelId: "C0SHARE" });
    expect(list.buttons.some((b) => b.action_id === ACTIONS.shareInChannel)).toBe(true);
  });

  it("list: this channel's schedules with next run, last run and outcome; not other channels' or teams'", async () => {
    const here = await run("list");
    expect(here.text).toContain("Scheduled DNS summaries (1)");
    expect(here.text).toContain("daily at 09:00 (Europe/Amsterdam)");
    expect(here.text).toContain("next <!date^");
    expect(here.text).toContain("never run");
    const elsewhere = await run("list", { channelId: "C0EMPTY" });
    expect(elsewhere.text).toContain("No DNS summaries are scheduled in this channel");
    const otherTeam = await run("list", { teamId: "T0002" });
    expect(otherTeam.text).toContain("No DNS summaries are scheduled in this channel");
  });

  it("run: posts one summary now in the schedule's channel and records it", async () => {
    const [s] = await h.store.schedules.list("T0001", "C0001");
    h.slack.clear();
    const res = await h.command(`schedule run ${s!.id}`);
    const post = await h.slack.waitForCall("chat.postMessage", (c) => c.args.channel === "C0001", 10_000);
    const text = blocksText(post.args.blocks);
    expect(text).toContain("DNS summary · shop-example.com");
    expect(findButtons(post.args.blocks).map((b) => b.action_id)).toContain(ACTIONS.dnsScanNow);
    // The run records its outcome once the post is done: wait for the bot to be quiet, not for time.
    await h.settled();
    expect((await h.store.schedules.get(s!.id))?.lastOutcome).toBe("ok");
    const after = (await h.store.schedules.get(s!.id))!;
    expect(after.lastRunAt).toBe(clock);
    expect(after.nextRunAt).toBe(s!.nextRunAt);
    expect(h.slack.responsesTo(res.responseId)).toEqual([]);
    const listed = await run("list");
    expect(listed.text).toContain(":white_check_mark: posted");
  });

  it("the posted summary's Scan now button scans the zone and updates the message", async () => {
    const post = h.slack.callsTo("chat.postMessage").find((c) => c.args.channel === "C0001")!;
    const scanNow = findButtons(post.args.blocks).find((b) => b.action_id === ACTIONS.dnsScanNow)!;
    h.sim.clearRequests();
    const click = await h.click(scanNow, { channelId: "C0001" });
    const done = await h.slack.waitForResponse(
      click.responseId,
      (r) => blocksText(r.body.blocks).includes("Completed"),
      10_000,
    );
    expect(done.body.replace_original).toBe(true);
    expect(h.sim.requests.find((r) => r.method === "POST")?.body).toEqual({ ZoneId: ZONE });
  });

  it("run: when I'm not in the channel, the user is told how to fix it", async () => {
    const created = await run(`dns ${ZONE} daily 10:00 UTC`, { channelId: "C0LOCKED" });
    const id = idIn(created.text)!;
    h.slack.addFault({ method: "chat.postMessage", channel: "C0LOCKED", error: "not_in_channel", times: 1 });
    const { text } = await run(`run ${id}`, { channelId: "C0LOCKED" });
    expect(text).toContain("I'm not a member of that channel");
    expect(text).toContain(`/edge schedule remove ${id}`);
    expect((await h.store.schedules.get(id))?.failing).toBe(true);
  });

  it("remove: only within the workspace; audit-logged", async () => {
    const [s] = await h.store.schedules.list("T0001", "C0001");
    const foreign = await run(`remove ${s!.id}`, { teamId: "T0002" });
    expect(foreign.text).toContain(`There is no schedule "${s!.id}" in this workspace`);
    expect(await h.store.schedules.get(s!.id)).toBeDefined();
    const run2 = await run(`run ${s!.id}`, { teamId: "T0002" });
    expect(run2.text).toContain("There is no schedule");

    const removed = await run(`remove ${s!.id}`);
    expect(removed.text).toContain(`Removed \`${s!.id}\``);
    expect(await h.store.schedules.get(s!.id)).toBeUndefined();
    const audit = await h.store.audit.list("T0001", 50);
    expect(
      audit.find((a) => a.action === "schedule.remove" && a.target === `schedule:${s!.id}`),
    ).toBeDefined();
    expect((await run(`remove ${s!.id}`)).text).toContain("There is no schedule");
    expect((await run("remove")).text).toContain("Which schedule?");
  });

  it("help lists the schedule command with its example", async () => {
    const res = await h.command("help");
    const answer = await h.slack.waitForResponse(res.responseId);
    expect(blocksText(answer.body.blocks)).toContain("/edge schedule dns 5678 daily 09:00 Europe/Amsterdam");
  });
});

describe("/edge schedule remove and run: the schedule's creator and admins only", () => {
  // bob (U0002) and erin (U0005) are members; alice (U0001) is an admin, frank (U0006) an owner.
  const erin = { userId: "U0005", channelId: "C0BOB" };
  const bob = { userId: "U0002", channelId: "C0BOB" };

  async function bobsSchedule(time: string): Promise<string> {
    const created = await run(`dns ${ZONE} daily ${time} UTC`, bob);
    return idIn(created.text)!;
  }
  const refusals = async (id: string) =>
    (await h.store.audit.list("T0001", 200)).filter(
      (a) => a.target === `schedule:${id}` && a.outcome === "refused",
    );

  it("someone else who is not an admin is refused with a sentence, and the refusal is audit-logged", async () => {
    h.slack.users.set("U0005", { id: "U0005", name: "erin" });
    h.slack.users.set("U0006", { id: "U0006", name: "frank", is_owner: true });
    const id = await bobsSchedule("06:00");
    h.slack.clear();

    const removal = await run(`remove ${id}`, erin);
    expect(removal.text).toContain(
      `Only the person who created schedule ${id} or a workspace admin can remove it: ask them, or an admin or owner.`,
    );
    expect(await h.store.schedules.get(id)).toBeDefined();

    const running = await run(`run ${id}`, erin);
    expect(running.text).toContain(
      `Only the person who created schedule ${id} or a workspace admin can run it`,
    );
    expect(h.slack.callsTo("chat.postMessage").filter((c) => c.args.channel === "C0BOB")).toEqual([]);
    expect((await h.store.schedules.get(id))?.lastRunAt).toBeNull();

    const refused = await refusals(id);
    expect(refused.map((a) => [a.action, a.userId]).sort()).toEqual([
      ["schedule.remove", "U0005"],
      ["schedule.run", "U0005"],
    ]);
    expect(refused[0]!.details).toMatchObject({ createdBy: "U0002", channelId: "C0BOB" });
  });

  it("the creator runs and removes their own schedule without being an admin", async () => {
    const id = await bobsSchedule("06:30");
    h.slack.clear();
    await h.command(`schedule run ${id}`, bob);
    await h.slack.waitForCall("chat.postMessage", (c) => c.args.channel === "C0BOB", 10_000);
    const removed = await run(`remove ${id}`, bob);
    expect(removed.text).toContain(`Removed \`${id}\``);
    expect(await h.store.schedules.get(id)).toBeUndefined();
    expect(await refusals(id)).toEqual([]);
  });

  it("workspace admins and owners run and remove anyone's schedule", async () => {
    const id = await bobsSchedule("07:00");
    h.slack.clear();
    await h.command(`schedule run ${id}`, { userId: "U0006", channelId: "C0BOB" });
    await h.slack.waitForCall("chat.postMessage", (c) => c.args.channel === "C0BOB", 10_000);
    const removed = await run(`remove ${id}`, { userId: "U0001" });
    expect(removed.text).toContain(`Removed \`${id}\``);
    const audit = await h.store.audit.list("T0001", 200);
    expect(audit.find((a) => a.action === "schedule.remove" && a.target === `schedule:${id}`)).toMatchObject({
      userId: "U0001",
      outcome: "ok",
    });
    expect(await refusals(id)).toEqual([]);
  });

  it("removed from another channel: the channel it posted in is told who removed it, and from where only if that is public", async () => {
    const fromPublic = await bobsSchedule("08:00");
    h.slack.clear();
    const removed = await run(`remove ${fromPublic}`, { userId: "U0001", channelId: "C0ADMIN" });
    expect(removed.text).toContain("<#C0BOB> was told who removed it.");
    const note = await h.slack.waitForCall("chat.postMessage", (c) => c.args.channel === "C0BOB");
    const told = blocksText(note.args.blocks);
    expect(told).toContain(`<@U0001> removed the scheduled DNS summary of zone ${ZONE} (\`${fromPublic}\``);
    expect(told).toContain("that posted here, from <#C0ADMIN>.");

    const fromPrivate = await bobsSchedule("08:30");
    h.slack.clear();
    await run(`remove ${fromPrivate}`, { userId: "U0001", channelId: "G0SECRET" });
    const quiet = await h.slack.waitForCall("chat.postMessage", (c) => c.args.channel === "C0BOB");
    expect(blocksText(quiet.args.blocks)).toContain("that posted here, from another channel.");
    expect(blocksText(quiet.args.blocks)).not.toContain("G0SECRET");

    // Removed where it posts: no note, the answer is there.
    const here = await bobsSchedule("09:30");
    h.slack.clear();
    await run(`remove ${here}`, bob);
    expect(h.slack.callsTo("chat.postMessage").filter((c) => c.args.channel === "C0BOB")).toEqual([]);
  });

  it("when Slack cannot say whether the user is an admin, nothing happens and the user is told", async () => {
    const id = await bobsSchedule("07:30");
    const stranger = await run(`remove ${id}`, { userId: "U0GONE", channelId: "C0BOB" });
    expect(stranger.text).toContain('Slack answered "user_not_found"');
    expect(await h.store.schedules.get(id)).toBeDefined();
  });
});

/** A workspace limited to 2 schedules a channel and 3 in all. */
async function limitsThroughTheReceiver(options: HarnessOptions): Promise<void> {
  const lh = await startHarness({
    ...options,
    clock: steppedClock(() => clock),
    oauth: true,
    installs: ["T0001", "T0002"],
    env: { SCHEDULES_PER_CHANNEL: "2", SCHEDULES_PER_WORKSPACE: "3" },
  });
  try {
    await lh.store.keys.set("T0002", TEST_EDGE_KEY, "U0001");
    const send = async (text: string, who: Who) => {
      const res = await lh.command(`schedule ${text}`, who);
      expect(res.status).toBe(200);
      return blocksText((await lh.slack.waitForResponse(res.responseId, undefined, 15_000)).body.blocks);
    };

    // Five at once into one channel: exactly two are stored, the others are told the channel is full.
    const hours = ["01", "02", "03", "04", "05"];
    const answers = await Promise.all(
      hours.map((hh) => send(`dns ${ZONE} daily ${hh}:00 UTC`, { channelId: "C0RACE" })),
    );
    expect(answers.filter((t) => t.includes("Scheduled: a DNS summary"))).toHaveLength(2);
    const full = answers.filter((t) => !t.includes("Scheduled: a DNS summary"));
    expect(full).toHaveLength(3);
    for (const t of full)
      expect(t).toContain(
        "This channel already has 2 schedules, the most allowed here. Remove one first, e.g. /edge schedule remove s7k2m9qa (/edge schedule list shows their ids)",
      );
    expect(await lh.store.schedules.list("T0001", "C0RACE")).toHaveLength(2);

    // One already stored is still recognised in a full channel.
    const [kept] = await lh.store.schedules.list("T0001", "C0RACE");
    const again = await send(`dns ${ZONE} ${kept!.spec} UTC`, { channelId: "C0RACE" });
    expect(again).toContain("This channel already gets a DNS summary");

    expect(await send(`dns ${ZONE} daily 06:00 UTC`, { channelId: "C0TWO" })).toContain("Scheduled:");
    const workspaceFull = await send(`dns ${ZONE} daily 07:00 UTC`, { channelId: "C0THREE" });
    expect(workspaceFull).toContain("This workspace already has 3 schedules, the most allowed.");
    expect(workspaceFull).toContain("SCHEDULES_PER_WORKSPACE");
    expect(await lh.store.schedules.list("T0001")).toHaveLength(3);

    // Another workspace has its own room; removing one makes room again.
    expect(await send(`dns ${ZONE} daily 07:00 UTC`, { teamId: "T0002", channelId: "C0THREE" })).toContain(
      "Scheduled:",
    );
    expect(await send(`remove ${kept!.id}`, { channelId: "C0RACE" })).toContain("Removed");
    expect(await send(`dns ${ZONE} daily 07:00 UTC`, { channelId: "C0THREE" })).toContain("Scheduled:");
    expect(await lh.store.schedules.list("T0001")).toHaveLength(3);
    expect(lh.slack.violations).toEqual([]);
  } finally {
    await lh.close();
  }
}

if (!postgresTests)
  console.warn("*** PostgreSQL unreachable: the PostgreSQL schedule-limit test is SKIPPED ***");

describeOnBothStores(
  "/edge schedule dns: SCHEDULES_PER_CHANNEL and SCHEDULES_PER_WORKSPACE, even when commands race",
  limitsThroughTheReceiver,
  60_000,
);
