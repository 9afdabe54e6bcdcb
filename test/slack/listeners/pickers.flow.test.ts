import type { AnyMiddlewareArgs, Middleware } from "@slack/bolt";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { ZONE_DIRECTORY_TTL_MS } from "../../../src/services/zone-lookup.js";
import { PICKER_NOTICE_VALUE, pickerOptions } from "../../../src/slack/blocks/pickers.js";
import { ACTIONS } from "../../../src/slack/ids.js";
import { SUGGESTION_BUDGET_MS } from "../../../src/slack/listeners/options/picker-suggestions.js";
import { SIM_IDS, type Simulator } from "../../../tools/simulator/index.js";
import { startBotWithAnotherAccount } from "../../support/another-account.js";
import { answerTo, blocksText, findButtons, type Harness } from "../../support/harness.js";
import { choose, pickerIn } from "../../support/picker.js";
import { startWorld, type World } from "../../support/world.js";

/**
 * Commands typed without their id answer with a picker (an external_select); its
 * suggestions come from the workspace key's cache, fast with a slow Edge API, and never from another
 * workspace's account; a choice runs the command (a change goes on to the generic confirm).
 */

const ZONE = SIM_IDS.zoneUnderAttack; // shop.acme-example.com
const OTHER_KEY = "sim-other-account-key-91c2";
const OTHER_TEAM = "T0002";
const OTHER_DOMAIN = "other-secret.example";

interface Option {
  text: { text: string };
  value: string;
}
interface OptionsAnswer {
  options?: Option[];
  option_groups?: { label: { text: string }; options: Option[] }[];
}

const allOptions = (a: OptionsAnswer): Option[] => [
  ...(a.options ?? []),
  ...(a.option_groups ?? []).flatMap((g) => g.options),
];

async function suggest(
  h: Harness,
  picker: { blockId: string; actionId: string },
  value: string,
  teamId = "T0001",
) {
  const res = await h.interact({
    type: "block_suggestion",
    user: { id: "U0002", name: "bob", team_id: teamId },
    container: { type: "message", message_ts: "1700000000.000100", channel_id: "C0001", is_ephemeral: true },
    api_app_id: "A0001",
    token: "legacy",
    action_id: picker.actionId,
    block_id: picker.blockId,
    value,
    team: { id: teamId, domain: "acme" },
    channel: { id: "C0001", name: "incident-42" },
  });
  expect(res.status).toBe(200);
  return { answer: JSON.parse(res.body) as OptionsAnswer, durationMs: res.durationMs };
}

describe("picker options", () => {
  const choices = (n: number, grouped: boolean) =>
    Array.from({ length: n }, (_, i) => ({
      value: String(1000 + i),
      label: `${"very-long-domain-name-".repeat(4)}${i}.example.com · zone ${1000 + i}`,
      ...(grouped ? { group: i % 2 ? "Failing" : "Active" } : {}),
    }));

  it("never more than 100 options, each label within 75 characters; the last says how many more match", () => {
    for (const grouped of [false, true]) {
      const answer = pickerOptions({ choices: choices(100, grouped), total: 340 });
      const all = "options" in answer ? answer.options : answer.option_groups.flatMap((g) => g.options);
      expect(all).toHaveLength(100);
      expect(all.every((o) => o.text.text.length <= 75)).toBe(true);
      expect(all.at(-1)).toMatchObject({ value: PICKER_NOTICE_VALUE });
      expect(all.at(-1)!.text.text).toContain("241 more");
    }
    const few = pickerOptions({ choices: choices(3, false), total: 3 });
    expect("options" in few && few.options.map((o) => o.value)).toEqual(["1000", "1001", "1002"]);
  });
});

describe("pickers", () => {
  let sim: Simulator;
  let h: Harness;
  beforeAll(async () => {
    ({ sim, h } = await startBotWithAnotherAccount({
      otherTeam: OTHER_TEAM,
      otherKey: OTHER_KEY,
      // Another bunny.net account: one shield zone with its own domain, and none of acme's.
      shapeOther: (state) => {
        const keep = state.shieldZones.find((z) => z.shieldZoneId === SIM_IDS.zoneWithoutBotPlan)!;
        state.shieldZones = [keep];
        const pull = state.pullZones.find((p) => p.Id === keep.pullZoneId)!;
        pull.Name = "other-secret";
        for (const host of pull.Hostnames)
          host.Value = host.IsSystemHostname ? "other-secret.b-cdn.net" : OTHER_DOMAIN;
        state.pullZones = [pull];
        state.apps = [];
        state.dnsZones = new Map();
      },
    }));
  });
  afterEach(() => {
    sim.clearFaults();
    h.slack.clear();
  });
  afterAll(async () => {
    await h.close();
    await sim.close();
  });

  it("a command typed without its zone answers with a picker that shows the command it will run", async () => {
    const typed = await answerTo(h, "ddos high for 30m", "U0002");
    const picker = pickerIn(typed.body.blocks);
    expect(picker?.actionId).toBe("edge.pick.shield");
    // (escaped for Slack, which shows it as /edge ddos <shield zone> high for 30m)
    expect(typed.text).toContain("/edge ddos &lt;shield zone&gt; high for 30m");
    for (const [text, source] of [
      ["bots", "shield"],
      ["incident 1h", "shield"],
      ["bot aiscraper block", "shield"],
      ["block 203.0.113.7 challenge", "shield"],
      ["dns", "dns"],
      ["schedule dns weekdays 09:00", "dns"],
      ["restart", "app"],
      ["purge", "pull"],
    ] as const) {
      const answer = await answerTo(h, text, "U0002");
      expect(pickerIn(answer.body.blocks)?.actionId, text).toBe(`edge.pick.${source}`);
    }
    const schedule = await answerTo(h, "schedule dns weekdays 09:00", "U0002");
    expect(schedule.text).toContain("/edge schedule dns &lt;DNS zone&gt; weekdays 09:00");
    // With the zone typed, no picker: the command runs.
    const direct = await answerTo(h, `bots ${ZONE}`, "U0002");
    expect(pickerIn(direct.body.blocks)).toBeUndefined();
  });

  it("suggests the workspace's zones by name, the ones starting with the text first, at most 100", async () => {
    const typed = await answerTo(h, "bots", "U0002");
    const picker = pickerIn(typed.body.blocks)!;
    const { answer } = await suggest(h, picker, "SHOP.acme");
    const options = allOptions(answer);
    expect(options[0]).toMatchObject({ value: String(ZONE) });
    expect(options[0]!.text.text).toContain("shop.acme-example.com");
    const everything = allOptions((await suggest(h, picker, "")).answer);
    expect(everything.length).toBe(SIM_IDS.shieldZoneCount);
    expect(everything.every((o) => o.text.text.length <= 75 && o.value.length <= 150)).toBe(true);
  });

  it("groups applications by status for /edge restart, and DNS zones come from GET /dnszone", async () => {
    const apps = pickerIn((await answerTo(h, "restart", "U0002")).body.blocks)!;
    const grouped = (await suggest(h, apps, "")).answer;
    expect(grouped.option_groups?.[0]?.label.text).toBe("Failing");
    expect(allOptions(grouped).length).toBe(SIM_IDS.appCount);
    const dns = pickerIn((await answerTo(h, "dns", "U0002")).body.blocks)!;
    const zones = allOptions((await suggest(h, dns, "")).answer);
    expect(zones.map((o) => o.value)).toContain(String(SIM_IDS.dnsZoneCompleted));
  });

  /**
   * A world whose suggestions can be awaited as they reach their listener: `entered(n)` resolves once the
   * n-th block_suggestion has entered its listener, whose 1.5 s budget (a timer on the world's clock) is
   * set in that same turn, so the test can then move the clock past it.
   */
  async function slowWorld() {
    let count = 0;
    const waiters = new Set<() => void>();
    const middleware: Middleware<AnyMiddlewareArgs> = async ({ body, next }) => {
      const running = next();
      if ((body as { type?: string }).type === "block_suggestion") {
        count++;
        for (const wake of [...waiters]) wake();
      }
      await running;
    };
    const world = await startWorld({ middleware: [middleware] });
    const entered = (n: number) =>
      new Promise<void>((resolve) => {
        const check = () => {
          if (count < n) return;
          waiters.delete(check);
          // The listener's synchronous start (and its timer) ends within this turn of the event loop.
          setImmediate(resolve);
        };
        waiters.add(check);
        check();
      });
    return Object.assign(world, { entered });
  }

  /** Hold the zone directory's two lists at the simulator; the returned function answers them. */
  function holdLists(slow: World): () => void {
    let release = () => {};
    const held = new Promise<void>((r) => (release = r));
    slow.sim.addFault({ path: "/shield/shield-zones", holdUntil: held });
    slow.sim.addFault({ path: "/pullzone", holdUntil: held });
    return () => {
      slow.sim.clearFaults();
      release();
    };
  }

  /**
   * `body` on a fresh slowWorld; its `holdLists()` holds the zone directory's lists and returns what answers
   * them. Whatever is still held is answered at the end, and the world closed once it has settled.
   */
  async function onSlowWorld(
    body: (slow: Awaited<ReturnType<typeof slowWorld>>, holdLists: () => () => void) => Promise<void>,
  ) {
    const slow = await slowWorld();
    let release = () => {};
    try {
      await body(slow, () => {
        release = holdLists(slow);
        return release;
      });
    } finally {
      release();
      await slow.settled();
      await slow.close();
    }
  }

  it("answers within 3 s with a slow Edge API: the picker's list loads once, then every keystroke is served from the cache", async () => {
    // A fresh workspace key's cache is empty; the directory's two lists are held at the simulator (on a
    // world, so the suggestion's 1.5 s budget passes when the test moves the one clock).
    await onSlowWorld(async (slow, holdLists) => {
      const typed = await answerTo(slow, "bots", "U0002");
      const picker = pickerIn(typed.body.blocks)!;
      let release = holdLists();
      const pending = suggest(slow, picker, "shop");
      await slow.entered(1);
      await slow.clock.advance(SUGGESTION_BUDGET_MS);
      const first = await pending;
      expect(first.durationMs).toBeLessThan(3000);
      expect(allOptions(first.answer)[0]?.value).toBe(PICKER_NOTICE_VALUE);
      // The list loads behind (two lists in parallel); once it has, answers are immediate.
      release();
      await slow.settled();
      expect(allOptions((await suggest(slow, picker, "shop")).answer)[0]?.value).toBe(String(ZONE));
      const listCalls = () => slow.sim.requests.filter((r) => r.path === "/shield/shield-zones").length;
      const calls = listCalls();
      const timings: number[] = [];
      for (const text of ["s", "sh", "sho", "shop", "shop.", "acme"])
        timings.push((await suggest(slow, picker, text)).durationMs);
      expect(Math.max(...timings)).toBeLessThan(1000);
      expect(listCalls()).toBe(calls);
      // Past the TTL the old list still answers at once (the new one held), and a fresh one loads behind it.
      release = holdLists();
      slow.advanceClock(ZONE_DIRECTORY_TTL_MS + 1);
      const stale = await suggest(slow, picker, "shop");
      expect(stale.durationMs).toBeLessThan(1000);
      expect(allOptions(stale.answer)[0]?.value).toBe(String(ZONE));
      await slow.sim.waitForRequest(() => listCalls() > calls);
      expect(listCalls()).toBeGreaterThan(calls);
    });
  }, 40_000);

  it("while the list is still loading, the menu says so within 3 s instead of leaving Slack without an answer", async () => {
    await onSlowWorld(async (slow, holdLists) => {
      const typed = await answerTo(slow, "bots", "U0002");
      holdLists();
      const pending = suggest(slow, pickerIn(typed.body.blocks)!, "shop");
      await slow.entered(1);
      await slow.clock.advance(SUGGESTION_BUDGET_MS);
      const { answer, durationMs } = await pending;
      expect(durationMs).toBeLessThan(3000);
      expect(allOptions(answer)).toEqual([expect.objectContaining({ value: PICKER_NOTICE_VALUE })]);
      expect(allOptions(answer)[0]!.text.text).toContain("Still loading");
    });
  }, 30_000);

  it("never suggests another workspace's zones: each workspace sees only its own key's account", async () => {
    const mine = pickerIn((await answerTo(h, "bots", "U0002")).body.blocks)!;
    const theirs = mine; // the same block: only the workspace in the payload differs
    const acme = allOptions((await suggest(h, mine, "")).answer).map((o) => o.text.text);
    const other = allOptions((await suggest(h, theirs, "", OTHER_TEAM)).answer).map((o) => o.text.text);
    expect(acme.some((t) => t.includes("shop.acme-example.com"))).toBe(true);
    expect(acme.some((t) => t.includes(OTHER_DOMAIN))).toBe(false);
    expect(other).toEqual([`${OTHER_DOMAIN} · zone ${SIM_IDS.zoneWithoutBotPlan}`]);
    expect(allOptions((await suggest(h, mine, "other-secret")).answer)).toEqual([]);
    expect(allOptions((await suggest(h, theirs, "acme", OTHER_TEAM)).answer)).toEqual([]);
    // A workspace without a key is told what to do, not shown anything.
    const none = allOptions((await suggest(h, mine, "", "T0NOKEY")).answer);
    expect(none).toHaveLength(1);
    expect(none[0]!.text.text).toContain("/edge key");
  });

  it("choosing a zone runs the command: a mitigation goes on to the generic confirm, then the approval card", async () => {
    const typed = await answerTo(h, "ddos high", "U0002");
    const picker = pickerIn(typed.body.blocks)!;
    const answer = await choose(h, picker, String(ZONE));
    expect(answer.body.replace_original).toBe(true);
    const text = blocksText(answer.body.blocks);
    expect(text).toContain("DDoS sensitivity");
    const confirm = findButtons(answer.body.blocks).find((b) => b.action_id === ACTIONS.changeConfirm);
    expect(confirm, text).toBeDefined();
    await h.click(confirm!, { userId: "U0002" });
    const card = await h.slack.waitForCall("chat.postMessage", (c) =>
      blocksText(c.args.blocks).includes("DDoS sensitivity"),
    );
    expect(findButtons(card.args.blocks).some((b) => b.action_id === ACTIONS.approve)).toBe(true);
  });

  it("/edge watch zone without a zone offers the zones; choosing one creates the watch with the sensitivity typed", async () => {
    const typed = await answerTo(h, "watch zone sensitivity high", "U0002");
    const picker = pickerIn(typed.body.blocks)!;
    expect(picker.actionId).toBe("edge.pick.shield");
    expect(typed.text).toContain("/edge watch zone &lt;shield zone&gt; sensitivity high");
    const answer = await choose(h, picker, String(ZONE));
    expect(blocksText(answer.body.blocks)).toContain("Watching");
    const watches = await h.store.watches.list("T0001", "C0001");
    expect(watches.map((w) => [w.target, w.options.sensitivity])).toContainEqual([String(ZONE), "high"]);
    // `watch apps` and `watch list` take no zone: no picker.
    expect(pickerIn((await answerTo(h, "watch list", "U0002")).body.blocks)).toBeUndefined();
  });

  it("a command asked in the channel (public) answers there once a choice is made, and the private picker goes", async () => {
    const picker = pickerIn((await answerTo(h, "bots public", "U0002")).body.blocks)!;
    const first = await choose(h, picker, String(ZONE));
    expect(first.body.response_type).toBe("in_channel");
    expect(blocksText(first.body.blocks)).toMatch(/bot/i);
    const deleted = await h.slack.waitForResponse(first.id, (r) => r.body.delete_original === true);
    expect(deleted).toBeDefined();
  });

  it("choosing runs read commands too, and a bad or tampered choice gets a sentence, not a crash", async () => {
    const bots = pickerIn((await answerTo(h, "bots", "U0002")).body.blocks)!;
    const answer = await choose(h, bots, String(ZONE));
    expect(blocksText(answer.body.blocks)).toMatch(/bot/i);
    const notice = await choose(h, bots, PICKER_NOTICE_VALUE);
    expect(blocksText(notice.body.blocks)).toContain("pick one of the results");
    const stale = await choose(h, { ...bots, blockId: "pick:{broken" }, String(ZONE));
    expect(blocksText(stale.body.blocks)).toContain("type the command again");
    const unknown = await choose(h, bots, "99999999");
    expect(unknown.body.replace_original).toBe(false);
    expect(blocksText(unknown.body.blocks)).toMatch(/zone/i);
  });
});
