/**
 * The console carries on after a restart on the same DATA_DIR: the simulator's state (an access-list entry an
 * approved /edge block wrote, with its dated effect; a staged attack), the channels' names and how far /sim clock
 * moved the time. A saved file that cannot be read starts that part fresh with one line, never a crash.
 */
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { SIM_IDS } from "../../../tools/simulator/index.js";
import { buttonNumber, type ConsoleDriver, startConsole } from "./support.js";

const MIN = 60_000;
const ZONE = SIM_IDS.zoneUnderAttack;
const IP = "192.0.2.77";

let running: ConsoleDriver[] = [];
let dataDir: string | undefined;
afterEach(async () => {
  for (const c of running.splice(0)) await c.close();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  dataDir = undefined;
});
async function start(dir?: string): Promise<ConsoleDriver> {
  const c = await startConsole({ keepDataDir: true, ...(dir ? { dataDir: dir } : {}) });
  running.push(c);
  dataDir = c.dataDir;
  return c;
}
async function stop(c: ConsoleDriver): Promise<void> {
  running = running.filter((r) => r !== c);
  await c.close();
}
const simOf = (c: ConsoleDriver) => {
  const s = c.handle.sim;
  if (!s) throw new Error("the console should be running the simulator");
  return s;
};
const edgeopsEntries = (c: ConsoleDriver) =>
  (simOf(c).state.accessLists.get(ZONE) ?? [])
    .filter((l) => l.id !== SIM_IDS.customerAccessList.listId)
    .map((l) => ({ content: l.content, isEnabled: l.isEnabled, action: l.action }));

/** bob asks for `/edge <text>` and confirms, alice approves: what the console printed for the approval. */
async function askAndApprove(c: ConsoleDriver, text: string): Promise<string> {
  await c.send("/as bob");
  const asked = await c.send(`/edge ${text}`);
  const dialog = await c.send(String(buttonNumber(asked, "Confirm")));
  const confirmed = /\[y\/N\]/.test(dialog) ? await c.send("y") : dialog;
  expect(confirmed).toContain("Approval needed");
  await c.send("/as alice");
  const approve = await c.send(String(buttonNumber(c.output, "Approve")));
  return /\[y\/N\]/.test(approve) ? await c.send("y") : approve;
}

describe("the console on the same DATA_DIR after a restart", () => {
  it("keeps the access-list entry, the staged attack, the channels' names and the clock's offset", async () => {
    const first = await start();
    await first.send("/in #war-room");
    expect(await first.send("/rename #war-room-2")).toContain("This channel is #war-room-2 now.");
    const warRoom = first.handle.world.channels.find((ch) => ch.name === "war-room-2");
    expect(await first.send(`/sim attack ${SIM_IDS.zoneQuiet} 45`)).toContain("Attack staged");
    const attacks = structuredClone(simOf(first).state.shieldTraffic.get(SIM_IDS.zoneQuiet)?.attacks);
    const approved = await askAndApprove(first, `block ${ZONE} ${IP}`);
    expect(approved).toMatch(/Applied|in effect/);
    const entries = edgeopsEntries(first);
    expect(entries.some((l) => l.content.includes(IP) && l.isEnabled && l.action === 2)).toBe(true);
    const history = simOf(first)
      .state.configHistory.get(ZONE)
      ?.map((e) => e.untilMinute);
    expect(history?.length).toBeGreaterThan(0);
    expect(await first.send("/sim clock +30m")).toContain("30 min ahead");
    await stop(first);

    const second = await start(first.dataDir);
    expect(second.output).toContain(`Carried on from ${first.dataDir}:`);
    expect(second.output).not.toContain("could not be read");
    expect(edgeopsEntries(second)).toEqual(entries);
    expect(
      simOf(second)
        .state.configHistory.get(ZONE)
        ?.map((e) => e.untilMinute),
    ).toEqual(history);
    expect(simOf(second).state.shieldTraffic.get(SIM_IDS.zoneQuiet)?.attacks).toEqual(attacks);
    expect(second.handle.world.channels.find((ch) => ch.name === "war-room-2")).toEqual(warRoom);
    const ahead = second.handle.deps.clock.now() - Date.now();
    expect(ahead).toBeGreaterThan(30 * MIN - 2_000);
    expect(ahead).toBeLessThan(30 * MIN + 2_000);
    expect(await second.send("/sim clock")).toContain("30 min ahead of this computer's clock");
    // The bot reads the restored state: the entry is in edgeops' list, so unblocking it is a change to ask for.
    await second.send("/as bob");
    expect(await second.send(`/edge unblock ${ZONE} ${IP}`)).not.toContain("Nothing to unblock");
  });

  it("starts a part fresh, saying so in one line, when its saved file cannot be read", async () => {
    const first = await start();
    await first.send("/in #war-room");
    await first.send(`/sim attack ${SIM_IDS.zoneQuiet} 45`);
    await stop(first);
    writeFileSync(join(first.dataDir, "console-simulator.json"), '{"format":1,"state":{"seed":1,"apps":');
    writeFileSync(join(first.dataDir, "console-channels.json"), JSON.stringify({ channels: [{ id: 7 }] }));

    const second = await start(first.dataDir);
    const notes = second.output.split("\n").filter((l) => l.includes("could not be read"));
    expect(notes).toHaveLength(2);
    expect(notes[0]).toMatch(
      /^The saved console-channels\.json in DATA_DIR could not be read \(.+\); that part starts fresh\.$/,
    );
    expect(notes[1]).toMatch(/^The saved console-simulator\.json in DATA_DIR could not be read \(not JSON/);
    expect(simOf(second).state.shieldTraffic.get(SIM_IDS.zoneQuiet)?.attacks).toEqual([]);
    expect(second.handle.world.channels.map((ch) => ch.name)).toEqual(["general"]);
    expect(await second.send("/edge help")).toContain("/edge");
  });
});
