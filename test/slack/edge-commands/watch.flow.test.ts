import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SIM_IDS } from "../../../tools/simulator/index.js";
import { steppedClock } from "../../support/clock.js";
import { answerTo, type Harness, startHarness } from "../../support/harness.js";

/** /edge watch over signed HTTP: creation, caps, list, mute, remove, and a sentence for every bad input. */

let h: Harness;
const clock = Date.parse("2026-03-27T12:00:00Z");
const ZONE = SIM_IDS.zoneEnterprise;

beforeAll(async () => {
  h = await startHarness({
    clock: steppedClock(() => clock),
    env: { WATCHES_PER_CHANNEL: "2", WATCHES_PER_WORKSPACE: "3" },
  });
});
afterAll(async () => {
  await h?.close();
});

const watch = (text: string, userId = "U0001", channelId = "C0001") =>
  answerTo(h, `watch ${text}`, userId, channelId);
const idIn = (text: string) => /`(w[a-z0-9]{7})`/.exec(text)?.[1];

describe("/edge watch", () => {
  it("zone by id or domain, once per channel; apps; list; caps per channel and workspace", async () => {
    const z = await watch(`zone ${ZONE} sensitivity high`);
    expect(z.text).toContain(`Watching shield zone ${ZONE}, sensitivity high in this channel`);
    expect(z.body.response_type).toBe("ephemeral");
    const id = idIn(z.text)!;
    expect(await h.store.watches.get(id)).toMatchObject({
      kind: "zone",
      target: String(ZONE),
      options: { sensitivity: "high" },
      createdBy: "U0001",
      nextPollAt: clock,
    });
    expect((await watch(`zone ${ZONE}`)).text).toContain("This channel already watches");
    expect((await watch("apps failing deploying")).text).toContain("Watching apps (failing, progressing)");
    expect((await watch("apps")).text).toContain("already watches");
    expect((await watch(`zone ${SIM_IDS.zoneUnderAttack}`)).text).toContain(
      "This channel already has 2 watches, the most allowed here",
    );
    expect((await watch(`zone ${SIM_IDS.zoneUnderAttack}`, "U0001", "C0002")).text).toContain("Watching");
    expect((await watch("apps", "U0001", "C0003")).text).toContain(
      "This workspace already has 3 watches, the most allowed",
    );
    const list = await watch("list");
    expect(list.text).toContain("Watches in this channel (2)");
    expect(list.text).toContain(id);
    expect(list.text).toContain("not checked yet");
    expect((await watch("list", "U0001", "C0009")).text).toContain("Nothing is watched in this channel");
  });

  it("mute and remove: the creator or an admin; others are told who can", async () => {
    const [w] = await h.store.watches.list("T0001", "C0001");
    const id = w!.id;
    expect((await watch(`mute ${id} 2h`, "U0002")).text).toContain(
      `Only the person who created watch ${id} or a workspace admin can mute it`,
    );
    expect((await watch(`mute ${id} 2h`)).text).toContain("muted until");
    expect((await h.store.watches.get(id))?.mutedUntil).toBe(clock + 2 * 3_600_000);
    expect((await watch(`list`)).text).toContain("muted until");
    expect((await watch(`mute ${id} off`)).text).toContain("no longer muted");
    expect((await h.store.watches.get(id))?.mutedUntil).toBeNull();
    expect((await watch(`remove ${id}`, "U0002")).text).toContain("can remove it");
    // U0003 is an owner: an admin may remove anyone's watch.
    expect((await watch(`remove ${id}`, "U0003")).text).toContain(`Removed \`${id}\``);
    expect(await h.store.watches.get(id)).toBeUndefined();
    expect((await watch(`remove ${id}`)).text).toContain(`There is no watch ${id} in this workspace`);
    const audit = await h.store.audit.list("T0001", 20);
    expect(audit.map((a) => `${a.action}:${a.outcome}`)).toEqual(
      expect.arrayContaining(["watch.create:ok", "watch.mute:ok", "watch.mute:refused", "watch.remove:ok"]),
    );
  });

  it.each([
    ["", "What should I watch?"],
    ["zonez 1", '"zonez" is not something /edge watch does'],
    ["zone", "Which shield zone?"],
    ["zone <!channel>", "is neither a zone id nor a domain"],
    [`zone ${ZONE} sensitivity`, "Which sensitivity?"],
    [`zone ${ZONE} sensitivity extreme`, '"extreme" is not a sensitivity'],
    [`zone ${ZONE} high low`, "is not a sensitivity"],
    ["zone 999999999", "Shield zone 999999999 was n"],
    ["apps exploding", '"exploding" is not an app status'],
    ["remove", "Which watch?"],
    ["remove w1 w2", "Too many words after the watch id"],
    ["remove <@U1>", "is not a watch id"],
    ["mute w1234567", "For how long?"],
    ["mute w1234567 forever", '"forever" is not a mute duration'],
    ["mute w1234567 8d", "is not a mute duration"],
    ["mute w1234567 2h", "There is no watch w1234567"],
    ["list everything", "Too many words"],
  ])("/edge watch %s → a sentence that says what to do", async (args, expected) => {
    const a = await watch(args);
    expect(a.text).toContain(expected);
    expect(a.text).not.toMatch(/Error:|at .*\.ts:\d+|undefined/);
    expect(a.text).not.toContain("<!channel>");
  });
});

describe("/edge watch zone <id> sensitivity <s> on a zone the channel already watches", () => {
  it("changes that watch's sensitivity and says so: its creator or an admin; others are told who can", async () => {
    const own = await startHarness({ clock: steppedClock(() => clock) });
    try {
      own.slack.users.set("U0004", { id: "U0004", name: "dave" });
      const created = await answerTo(own, `watch zone ${ZONE}`, "U0002", "C0001");
      const id = idIn(created.text)!;
      expect((await own.store.watches.get(id))?.options.sensitivity).toBe("normal");

      // Dave neither created it nor is an admin: refused, with who can.
      const refused = await answerTo(own, `watch zone ${ZONE} sensitivity high`, "U0004", "C0001");
      expect(refused.text).toContain(
        `Only the person who created watch ${id} or a workspace admin can change it`,
      );
      expect((await own.store.watches.get(id))?.options.sensitivity).toBe("normal");

      // Bob, its creator: changed, and said so.
      const changed = await answerTo(own, `watch zone ${ZONE} sensitivity high`, "U0002", "C0001");
      expect(changed.text).toContain(
        `The watch \`${id}\` of shield zone ${ZONE} is now at sensitivity *high* (was normal)`,
      );
      expect((await own.store.watches.get(id))?.options.sensitivity).toBe("high");
      // Alice, an admin: changed again.
      expect((await answerTo(own, `watch zone ${ZONE} sensitivity low`, "U0001", "C0001")).text).toContain(
        "is now at sensitivity *low* (was high)",
      );
      expect((await own.store.watches.get(id))?.options.sensitivity).toBe("low");
      const audit = await own.store.audit.list("T0001", 50);
      expect(audit.filter((a) => a.action === "watch.sensitivity").map((a) => [a.userId, a.details])).toEqual(
        expect.arrayContaining([
          ["U0002", expect.objectContaining({ from: "normal", to: "high" })],
          ["U0001", expect.objectContaining({ from: "high", to: "low" })],
        ]),
      );

      // Without a sensitivity, or the one it has: nothing changes, it says the channel watches it already.
      expect((await answerTo(own, `watch zone ${ZONE}`, "U0002", "C0001")).text).toContain(
        "This channel already watches",
      );
      expect((await own.store.watches.get(id))?.options.sensitivity).toBe("low");
      expect(await own.store.watches.list("T0001")).toHaveLength(1);
    } finally {
      await own.close();
    }
  });
});
