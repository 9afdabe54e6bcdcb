/**
 * `/edge watch config`, through the real receiver (signed requests), the fake Slack and the
 * simulator, on SQLite and PostgreSQL. A change made in the dashboard (/sim dashboard) is posted once in the
 * watch's channel; a change made through edgeops never is; Keep makes the new value the snapshot; Put it back
 * enters the usual change flow (Slack's confirm dialog, the policy, a second person's approval) exactly once.
 */
import { describe, expect, it } from "vitest";
import { CONFIG_CALLS, type ConfigState } from "../../src/alerts/drift.js";
import {
  CALLS_PER_EVALUATION,
  callsPerRound,
  stretchedInterval,
  watchInterval,
} from "../../src/alerts/interval.js";
import { ACTIONS } from "../../src/slack/ids.js";
import { runSimCommand } from "../../tools/console/sim-commands.js";
import { type ShieldZone, SIM_IDS, type Simulator } from "../../tools/simulator/index.js";
import type { SlackCall } from "../support/fake-slack.js";
import { answerTo, blocksText, findButtons, type Harness } from "../support/harness.js";
import { pgReachable } from "../support/helpers.js";
import { BOB, CAROL } from "../support/users.js";
import { MIN, usePollerRig } from "./alert-poller-support.js";

const T0 = Date.UTC(2026, 7, 20, 14, 0, 30);
const ZONE = SIM_IDS.zoneEnterprise;
const CHANNEL = "C0001";
const reachable = await pgReachable();

const rig = usePollerRig();

async function setup(engine: "sqlite" | "postgres", prepare?: (zone: ShieldZone, sim: Simulator) => void) {
  rig.now = T0;
  const { sim, h, poller } = await rig.start({ postgres: engine === "postgres", budgetOnClock: true });
  const zone = () => sim.state.shieldZones.find((z) => z.shieldZoneId === ZONE)!;
  zone().wafExecutionMode = 1;
  zone().dDoSShieldSensitivity = 1;
  zone().wafEnabled = true;
  prepare?.(zone(), sim);
  const created = await answerTo(h, `watch config ${ZONE}`, BOB);
  expect(created.text).toContain(`Watching the settings of shield zone ${ZONE}`);
  /** `minutes` minutes pass, the poller checking due watches after each. */
  const tick = async (minutes = 1) => {
    for (let i = 0; i < minutes; i++) {
      rig.now += MIN;
      await poller.tick();
    }
  };
  await poller.tick(); // the snapshot
  const watch = (await h.store.watches.list("T0001", CHANNEL)).find((w) => w.kind === "config")!;
  return { sim, h, tick, zone, watch };
}

/** Every drift post, in the channel or in the thread of its visit's first post (one visit is one post in the channel). */
const driftPosts = (h: Harness) =>
  h.slack
    .callsTo("chat.postMessage")
    .filter((c) => c.args.channel === CHANNEL && blocksText(c.args.blocks).includes("not through edgeops"));
/** The drift posts in the channel itself (not in a thread). */
const channelPosts = (h: Harness) => driftPosts(h).filter((c) => !c.args.thread_ts);
const text = (c: SlackCall | undefined) => blocksText(c?.args.blocks);
/** The approval card updated to say the change is in effect (an update after the first `updatesBefore`). */
const inEffect = (h: Harness, updatesBefore: number) =>
  h.slack.waitForCall(
    "chat.update",
    (c) => h.slack.callsTo("chat.update").indexOf(c) >= updatesBefore && text(c).includes("is in effect"),
  );
const button = (c: SlackCall | undefined, label: string) => {
  const b = findButtons(c?.args.blocks).find((x) => x.text === label);
  if (!b) throw new Error(`no ${label} on ${text(c)}`);
  return b;
};
/** Carol approves the change on `card`; resolves once the card says the change is in effect. */
const approveUntilInEffect = async (h: Harness, card: SlackCall | undefined) => {
  const updates = h.slack.callsTo("chat.update").length;
  await h.click(button(card, "Approve"), { userId: CAROL });
  await inEffect(h, updates);
};

describe.each([
  ["SQLite", "sqlite"],
  ["PostgreSQL", "postgres"],
] as const)("/edge watch config on %s", (_name, engine) => {
  it.skipIf(engine === "postgres" && !reachable)(
    "a dashboard change is posted once with Put it back and Keep; Keep makes it the snapshot",
    async () => {
      const { sim, h, tick, watch } = await setup(engine);
      await tick();
      expect(driftPosts(h)).toHaveLength(0);

      expect(runSimCommand(sim, `dashboard ${ZONE} waf-mode log`)).toContain("block → log");
      const noticedAt = rig.now + MIN;
      await tick();
      // Held back one check: edgeops records its own change just after making it.
      expect(driftPosts(h)).toHaveLength(0);
      await tick();
      expect(driftPosts(h)).toHaveLength(1);
      const post = driftPosts(h)[0];
      expect(text(post)).toContain(
        `shield zone ${ZONE}*: WAF execution mode Block → Log, not through edgeops, noticed <!date^${Math.floor(noticedAt / 1000)}^{time}`,
      );
      expect(findButtons(post?.args.blocks).map((b) => b.text)).toEqual(["Put it back", "Keep"]);
      // Reported once, not at every evaluation.
      await tick(2);
      expect(driftPosts(h)).toHaveLength(1);

      const res = await h.click(button(post, "Keep"), {
        userId: CAROL,
        channelId: CHANNEL,
        messageTs: "1.1",
      });
      expect(res.status).toBe(200);
      const kept = await h.slack.waitForResponse(res.responseId);
      expect(blocksText(kept.body.blocks)).toContain(`<@${CAROL}> kept it`);
      expect(findButtons(kept.body.blocks)).toHaveLength(0);
      const state = (await h.store.watches.get(watch.id))?.state as ConfigState;
      expect(state.snapshot.wafMode).toBe(0);
      await tick();
      expect(driftPosts(h)).toHaveLength(1);

      // Back to Block in the dashboard: a drift from the kept value.
      runSimCommand(sim, `dashboard ${ZONE} waf-mode block`);
      await tick(2);
      expect(driftPosts(h)).toHaveLength(2);
      expect(text(driftPosts(h)[1])).toContain("WAF execution mode Log → Block");
    },
  );

  it.skipIf(engine === "postgres" && !reachable)(
    "Keep is its creator's or an admin's, and refuses a post that is no longer true: the zone changed back, or a later post of the same value",
    async () => {
      const { sim, h, tick, watch } = await setup(engine);
      h.slack.users.set("U0009", { id: "U0009", name: "dave" });
      const keep = async (post: SlackCall | undefined, userId: string) => {
        const res = await h.click(button(post, "Keep"), { userId, channelId: CHANNEL, messageTs: "1.1" });
        return blocksText((await h.slack.waitForResponse(res.responseId)).body.blocks);
      };
      const snapshot = async () => {
        const state = (await h.store.watches.get(watch.id))?.state as ConfigState | undefined;
        if (!state) throw new Error("the watch has no snapshot");
        return state.snapshot;
      };

      runSimCommand(sim, `dashboard ${ZONE} waf-mode log`);
      await tick(2);
      const first = driftPosts(h)[0];
      expect(await keep(first, "U0009")).toContain(
        `Only the person who created watch ${watch.id} or a workspace admin can keep the changes noticed by it`,
      );
      expect((await snapshot()).wafMode).toBe(1);

      // Put back in the dashboard: the post no longer says what the zone has.
      runSimCommand(sim, `dashboard ${ZONE} waf-mode block`);
      expect(await keep(first, BOB)).toContain(
        "The zone no longer has WAF execution mode Log: it is Block now. Nothing was kept.",
      );
      expect((await snapshot()).wafMode).toBe(1);

      // Log again later: a second post. The first post's Keep does not accept the later change.
      await tick(2);
      runSimCommand(sim, `dashboard ${ZONE} waf-mode log`);
      await tick(2);
      expect(driftPosts(h)).toHaveLength(2);
      expect(await keep(first, BOB)).toContain("WAF execution mode changed again after this post");
      expect((await snapshot()).wafMode).toBe(1);
      expect(await keep(driftPosts(h)[1], BOB)).toContain(`<@${BOB}> kept it`);
      expect((await snapshot()).wafMode).toBe(0);
    },
  );

  it.skipIf(engine === "postgres" && !reachable)(
    "a dashboard change it posted is in the zone's timeline, as noticed, with its before and after",
    async () => {
      const { sim, h, tick } = await setup(engine);
      runSimCommand(sim, `dashboard ${ZONE} ddos high`);
      const noticedAt = rig.now + MIN;
      await tick(2);
      expect(driftPosts(h)).toHaveLength(1);
      h.slack.memberships.set(BOB, [CHANNEL]);
      const res = await h.command(`timeline ${ZONE} 1h`, { userId: BOB, channelId: CHANNEL });
      const story = await h.slack.waitForResponse(res.responseId, (r) => r.body.replace_original === true);
      const all = blocksText(story.body.blocks);
      const line = all.split("\n").find((l) => l.includes("changed outside edgeops"));
      expect(line, all).toContain(`<!date^${Math.floor(noticedAt / 1000)}^`);
      expect(line).toContain(
        `DDoS sensitivity changed outside edgeops: Low → High (noticed by the config watch in <#${CHANNEL}>)`,
      );
    },
  );

  it.skipIf(engine === "postgres" && !reachable)(
    "the watches' interval counts a config watch's three Edge calls per evaluation, a zone watch's one",
    async () => {
      const { h } = await setup(engine);
      expect(await h.store.watches.count("T0001", "config")).toBe(1);
      expect(await callsPerRound(h.deps, "T0001")).toBe(CALLS_PER_EVALUATION.config);
      expect(CALLS_PER_EVALUATION.config).toBe(CONFIG_CALLS);
      expect((await answerTo(h, `watch zone ${ZONE}`, BOB)).text).toContain("Watching");
      expect(await h.store.watches.count("T0001")).toBe(2);
      expect(await h.store.watches.count("T0001", "zone")).toBe(1);
      expect(await callsPerRound(h.deps, "T0001")).toBe(CONFIG_CALLS + 1);
      const { config } = h.deps;
      expect(await watchInterval(h.deps, "T0001")).toBe(
        stretchedInterval(CONFIG_CALLS + 1, {
          intervalMs: config.watches.intervalMs,
          ratePerSec: config.edge.ratePerSec,
          sharePercent: config.watches.sharePercent,
        }),
      );
    },
  );

  it.skipIf(engine === "postgres" && !reachable)(
    "a change made through edgeops is not drift, and Put it back goes through confirm, policy and approval exactly once",
    async () => {
      const { sim, h, tick, zone } = await setup(engine);

      // Through edgeops: /edge ddos, confirmed and approved. No drift post, and the snapshot follows.
      await tick();
      const typed = await answerTo(h, `ddos ${ZONE} high`, BOB);
      await h.click(typed.buttons.find((b) => b.action_id === ACTIONS.changeConfirm)!, { userId: BOB });
      const card = await h.slack.waitForCall("chat.postMessage", (c) =>
        findButtons(c.args.blocks).some((b) => b.text === "Approve"),
      );
      await h.click(button(card, "Approve"), { userId: CAROL });
      await h.slack.waitForCall("chat.update", (c) => text(c).includes("is in effect"));
      expect(zone().dDoSShieldSensitivity).toBe(3);
      await tick(2);
      expect(driftPosts(h).map(text)).toEqual([]);

      // In the dashboard: posted; Put it back asks for High again through the change flow.
      runSimCommand(sim, `dashboard ${ZONE} ddos off`);
      await tick(2);
      expect(driftPosts(h)).toHaveLength(1);
      const post = driftPosts(h)[0];
      expect(text(post)).toContain("DDoS sensitivity High → Off, not through edgeops");
      const putBack = button(post, "Put it back");
      expect((putBack.confirm as { title?: { text?: string } }).title?.text).toBe("Put it back?");
      const before = h.slack.callsTo("chat.postMessage").length;
      const asked = await h.click(putBack, {
        userId: BOB,
        channelId: CHANNEL,
        messageTs: "1.2",
        messageBlocks: post?.args.blocks as unknown[],
      });
      // The post loses Keep and Put it back: Keep would now record the value being put back.
      const askedPost = await h.slack.waitForResponse(
        asked.responseId,
        (r) => r.body.replace_original === true,
      );
      expect(blocksText(askedPost.body.blocks)).toContain("DDoS sensitivity High → Off, not through edgeops");
      expect(blocksText(askedPost.body.blocks)).toContain(`<@${BOB}> asked`);
      expect(blocksText(askedPost.body.blocks)).toContain("to put it back: waiting for approval on its card");
      expect(findButtons(askedPost.body.blocks)).toEqual([]);
      const waiting = await h.slack.waitForCall(
        "chat.postMessage",
        (c) =>
          h.slack.callsTo("chat.postMessage").indexOf(c) >= before &&
          text(c).includes("Set DDoS sensitivity"),
      );
      expect(zone().dDoSShieldSensitivity).toBe(0);
      // The outcome goes into the drift post's thread.
      await h.slack.waitForCall("chat.postMessage", (c) => c.args.thread_ts === "1.2");
      // The same click delivered again makes no second request.
      const again = await h.click(putBack, { userId: BOB, channelId: CHANNEL, messageTs: "1.2" });
      const answer = await h.slack.waitForResponse(again.responseId);
      expect(blocksText(answer.body.blocks)).toContain("This button was already used");
      await approveUntilInEffect(h, waiting);
      expect(zone().dDoSShieldSensitivity).toBe(3);
      const cards = h.slack
        .callsTo("chat.postMessage")
        .slice(before)
        .filter((c) => findButtons(c.args.blocks).some((b) => b.text === "Approve"));
      expect(cards).toHaveLength(1);
      // Put back through edgeops: no new drift post.
      await tick(2);
      expect(driftPosts(h)).toHaveLength(1);
    },
  );

  it.skipIf(engine === "postgres" && !reachable)(
    "where approvals are off, Put it back first shows the presser its impact and that it applies at once; its Confirm puts it back and the post loses its buttons",
    async () => {
      const { sim, h, tick, zone } = await setup(engine);
      await h.store.policies.setChannel("T0001", CHANNEL, { approvals: "off" });
      runSimCommand(sim, `dashboard ${ZONE} ddos off`);
      await tick(2);
      const post = driftPosts(h)[0];
      expect(text(post)).toContain("DDoS sensitivity Low → Off, not through edgeops");
      const asked = await h.click(button(post, "Put it back"), {
        userId: BOB,
        channelId: CHANNEL,
        messageTs: "1.3",
        messageBlocks: post?.args.blocks as unknown[],
      });
      const confirmation = await h.slack.waitForResponse(asked.responseId);
      expect(confirmation.body.replace_original).toBe(false);
      const said = blocksText(confirmation.body.blocks);
      expect(said).toContain("Approvals are off here: this applies at once.");
      expect(said).toMatch(/DDoS protection handled|Impact in the last hour: unknown/);
      await h.settled();
      expect(zone().dDoSShieldSensitivity).toBe(0);

      const confirmed = await h.click(button({ args: confirmation.body } as SlackCall, "Confirm"), {
        userId: BOB,
        channelId: CHANNEL,
        messageTs: "9.9",
      });
      const updated = await h.slack.waitForCall(
        "chat.update",
        (c) => c.args.ts === "1.3" && text(c).includes(`<@${BOB}> put it back`),
      );
      expect(findButtons(updated.args.blocks)).toEqual([]);
      await h.slack.waitForCall("chat.postMessage", (c) => c.args.thread_ts === "1.3");
      await h.slack.waitForResponse(confirmed.responseId, (r) => r.body.replace_original === true);
      expect(zone().dDoSShieldSensitivity).toBe(1);
    },
  );

  it.skipIf(engine === "postgres" && !reachable)(
    "a bot category is put back with its own change kind; a setting edgeops can't change offers Keep only",
    async () => {
      const { sim, h, tick, watch } = await setup(engine);
      const state = (await h.store.watches.get(watch.id))?.state as ConfigState;
      const snapshot = state.snapshot;
      const was = snapshot["bot:2"];
      expect(was === 0 || was === 1 || was === 2).toBe(true);
      const [wasWord, nowWord] = was === 1 ? ["Block", "allow"] : [was === 2 ? "Allow" : "None", "block"];
      expect(runSimCommand(sim, `dashboard ${ZONE} bot:aiscraper ${nowWord}`)).toContain(
        "bot category aiscraper",
      );
      expect(runSimCommand(sim, `dashboard ${ZONE} waf off`)).toContain("waf on → off");
      await tick(2);
      const posts = driftPosts(h);
      expect(posts.map(text).map((t) => t.split("\n")[0])).toEqual([
        expect.stringContaining(
          `Bot category AI scraper ${wasWord} → ${nowWord === "allow" ? "Allow" : "Block"}`,
        ),
        expect.stringContaining("WAF on → off, not through edgeops"),
      ]);
      expect(findButtons(posts[1]?.args.blocks).map((b) => b.text)).toEqual(["Keep"]);
      expect(text(posts[1])).toContain("edgeops can't change this setting");

      await h.click(button(posts[0], "Put it back"), { userId: BOB, channelId: CHANNEL, messageTs: "1.3" });
      const card = await h.slack.waitForCall(
        "chat.postMessage",
        (c) => text(c).includes("AI scraper") && findButtons(c.args.blocks).some((b) => b.text === "Approve"),
      );
      await approveUntilInEffect(h, card);
      const groups = () => [...sim.state.botCategoriesByKey.values(), sim.state.botCategories.get(ZONE)];
      const actions = groups()
        .flatMap((g) => g ?? [])
        .filter((g) => g.category === 2)
        .map((g) => g.categoryAction);
      expect(actions).toContain(was);
      await tick(2);
      expect(driftPosts(h)).toHaveLength(2);
    },
  );

  it.skipIf(engine === "postgres" && !reachable)(
    "a list edgeops creates is learned; its list turned off and a list of the customer's own are posted, Keep only",
    async () => {
      const { sim, h, tick } = await setup(engine);
      const typed = await answerTo(h, `block ${ZONE} 203.0.113.7`, BOB);
      await h.click(typed.buttons.find((b) => b.action_id === ACTIONS.changeConfirm)!, { userId: BOB });
      const card = await h.slack.waitForCall("chat.postMessage", (c) =>
        findButtons(c.args.blocks).some((b) => b.text === "Approve"),
      );
      const lists = () => sim.state.accessLists.get(ZONE) ?? [];
      // The approval card's impact preview searches the simulator's event log in this process first.
      await approveUntilInEffect(h, card);
      expect(lists().map((l) => l.name)).toContain("edgeops: blocked IPs");
      await tick(2);
      expect(driftPosts(h)).toHaveLength(0);

      const own = lists().find((l) => l.name === "edgeops: blocked IPs")!;
      own.isEnabled = false;
      lists().push({ ...own, id: own.id + 1000, name: "partners", isEnabled: true, action: 1 });
      await tick(2);
      const posts = driftPosts(h).map(text);
      expect(posts).toHaveLength(2);
      expect(posts[0]).toContain("Number of your own custom access lists 0 → 1, not through edgeops");
      expect(posts[1]).toContain(
        `edgeops' access list "edgeops: blocked IPs" on (Block) → off, not through edgeops`,
      );
      for (const p of driftPosts(h)) expect(findButtons(p.args.blocks).map((b) => b.text)).toEqual(["Keep"]);
    },
  );

  it.skipIf(engine === "postgres" && !reachable)(
    "edgeops' list answered under another spelling of its name is still edgeops' list: not counted as the customer's, no drift",
    async () => {
      const { sim, h, tick, watch } = await setup(engine);
      sim.setAdversary({ pin: { "access-lists.name-spelling": "padded" } });
      const typed = await answerTo(h, `block ${ZONE} 203.0.113.7`, BOB);
      await h.click(typed.buttons.find((b) => b.action_id === ACTIONS.changeConfirm)!, { userId: BOB });
      const card = await h.slack.waitForCall("chat.postMessage", (c) =>
        findButtons(c.args.blocks).some((b) => b.text === "Approve"),
      );
      await approveUntilInEffect(h, card);
      await tick(2);
      expect(driftPosts(h).map(text)).toEqual([]);
      const state = (await h.store.watches.get(watch.id))?.state as ConfigState;
      expect(state.snapshot.customLists).toBe(0);
      expect(state.snapshot["list:edgeops: blocked IPs"]).toEqual({ enabled: true, action: 2 });
    },
  );

  it.skipIf(engine === "postgres" && !reachable)(
    "of two lists with edgeops' name, the one edgeops writes to (lowest id) is compared, whatever order the API lists them in",
    async () => {
      const { sim, h, tick } = await setup(engine);
      const lists = sim.state.accessLists.get(ZONE) ?? [];
      sim.state.accessLists.set(ZONE, lists);
      // Two replicas made the list at once; a person turned the older one off.
      const made = { description: null, type: 0, content: "", action: 2, lastModified: 1 };
      lists.push(
        { ...made, id: 8_700, configurationId: 9_700, name: "edgeops: blocked IPs", isEnabled: false },
        { ...made, id: 8_701, configurationId: 9_701, name: "edgeops: blocked IPs", isEnabled: true },
      );
      await tick(2);
      sim.setAdversary({ pin: { "access-lists.order": "reverse" } });
      await tick(2);
      sim.setAdversary({});
      await tick(2);
      expect(driftPosts(h).map(text)).toEqual([]);
    },
  );
});

describe("/edge watch config and learning mode's end time (SQLite)", () => {
  /** Learning mode on until ten minutes after the snapshot; the zone answers its end as `form` reads it. */
  const learningForTenMinutes = (form: string) => (z: ShieldZone, sim: Simulator) => {
    z.learningMode = true;
    z.learningModeUntil = new Date(T0 + 10 * MIN).toISOString();
    sim.setAdversary({ pin: { "shield-settings.learning-expiry": form } });
  };

  it.each(["as-set", "off-until-kept", "off-until-cleared"])(
    "a learning period ending at its end time is not drift (the zone answers it %s)",
    async (form) => {
      const { h, tick } = await setup("sqlite", learningForTenMinutes(form));
      await tick(15);
      expect(driftPosts(h).map(text)).toEqual([]);
    },
  );

  it("learning mode turned off before its end time is drift", async () => {
    const { sim, h, tick } = await setup("sqlite", learningForTenMinutes("off-until-cleared"));
    await tick(3);
    runSimCommand(sim, `dashboard ${ZONE} learning off`);
    await tick(2);
    expect(driftPosts(h).map(text)).toEqual([
      expect.stringContaining("Learning mode on → off, not through edgeops"),
    ]);
  });
});

describe("/edge watch config and settings that move with edgeops' own PATCH (SQLite)", () => {
  it("settings the API resets with edgeops' PATCH (named on its card) are not posted as changed outside edgeops", async () => {
    const { sim, h, tick, zone } = await setup("sqlite", (z, s) => {
      z.learningMode = false;
      s.setAdversary({ pin: { "shield-settings.patch-absent": "reset" } });
    });
    await tick();
    const typed = await answerTo(h, `ddos ${ZONE} high`, BOB);
    await h.click(typed.buttons.find((b) => b.action_id === ACTIONS.changeConfirm)!, { userId: BOB });
    const card = await h.slack.waitForCall("chat.postMessage", (c) =>
      findButtons(c.args.blocks).some((b) => b.text === "Approve"),
    );
    await h.click(button(card, "Approve"), { userId: CAROL });
    const applied = await h.slack.waitForCall("chat.update", (c) => text(c).includes("is in effect"));
    expect(text(applied)).toContain("WAF execution mode: Block → Log");
    expect(zone().wafExecutionMode).toBe(0);
    await tick(2);
    expect(driftPosts(h).map(text)).toEqual([]);

    // A change in the dashboard afterwards is drift again.
    runSimCommand(sim, `dashboard ${ZONE} waf-mode block`);
    await tick(2);
    expect(driftPosts(h).map(text)).toEqual([
      expect.stringContaining("WAF execution mode Log → Block, not through edgeops"),
    ]);
  });
});

describe("/edge watch config and one visit to the dashboard (SQLite)", () => {
  it("several settings changed a minute apart are one post in the channel, the visit's later changes in its thread", async () => {
    const { sim, h, tick } = await setup("sqlite");
    await tick();
    // One visit: four settings, a minute apart, each noticed by its own check.
    for (const change of ["waf-mode log", "ddos high", "learning on", "waf off"]) {
      runSimCommand(sim, `dashboard ${ZONE} ${change}`);
      await tick();
    }
    await tick(2);
    const posts = channelPosts(h);
    expect(posts.map(text)).toEqual([expect.stringContaining("WAF execution mode Block → Log")]);
    const inThread = driftPosts(h).filter((c) => typeof c.args.thread_ts === "string");
    expect(inThread.map((c) => text(c).split("\n")[0])).toEqual([
      expect.stringContaining("DDoS sensitivity Low → High"),
      expect.stringContaining("Learning mode off → on"),
      expect.stringContaining("WAF on → off"),
    ]);
    // Each keeps its own buttons, in the thread of the visit's first post.
    expect(new Set(inThread.map((c) => c.args.thread_ts)).size).toBe(1);
    expect(findButtons(inThread[0]?.args.blocks).map((b) => b.text)).toEqual(["Put it back", "Keep"]);

    // A change long after the visit is a post of its own again.
    await tick(10);
    runSimCommand(sim, `dashboard ${ZONE} ddos medium`);
    await tick(3);
    expect(channelPosts(h).map(text)).toEqual([
      expect.stringContaining("WAF execution mode Block → Log"),
      // The snapshot still has Low: High was neither kept nor put back.
      expect.stringContaining("DDoS sensitivity Low → Medium"),
    ]);
  });
});
