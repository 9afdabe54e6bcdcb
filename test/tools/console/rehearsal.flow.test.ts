/**
 * A 30-minute temporary block rehearsed in the console in seconds: an attack staged, its busiest address blocked
 * `for 30m` and approved, the simulator's event log showing that address blocked from the approval's minute,
 * then `/sim clock +30m`: the undo runs on the moved clock and the address's events come back unblocked.
 */
import { afterEach, describe, expect, it } from "vitest";
import { SIM_API_KEY, SIM_IDS, type Simulator } from "../../../tools/simulator/index.js";
import { buttonNumber, type ConsoleDriver, startConsole } from "./support.js";

const MIN = 60_000;
const ZONE = SIM_IDS.zoneUnderAttack;

let c: ConsoleDriver | undefined;
afterEach(async () => {
  await c?.close();
  c = undefined;
});
const sim = (): Simulator => {
  const s = c?.handle.sim;
  if (!s) throw new Error("the console should be running the simulator");
  return s;
};

async function search(body: Record<string, unknown>) {
  const res = await fetch(`${sim().url}/shield/event-logs/${ZONE}/search`, {
    method: "POST",
    headers: { AccessKey: SIM_API_KEY, "content-type": "application/json" },
    body: JSON.stringify({ pageSize: 500, ...body }),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { groups: Array<{ key: Record<string, string>; count: number }> }).groups;
}
/** The address's events over [from, to) by "feature/action". */
async function eventsOf(ip: string, from: number, to: number): Promise<Record<string, number>> {
  const groups = await search({
    from,
    to,
    filters: [{ field: "ip", op: "eq", value: [ip] }],
    groupBy: ["feature", "action"],
  });
  return Object.fromEntries(groups.map((g) => [`${g.key.feature}/${g.key.action}`, g.count]));
}
const underOtherFeatures = (counts: Record<string, number>) =>
  Object.entries(counts)
    .filter(([k]) => !k.startsWith("accessLists/"))
    .reduce((n, [, v]) => n + v, 0);
const minuteOf = (ms: number) => Math.floor(ms / MIN) * MIN;

describe("rehearsing a temporary block in the console", () => {
  it("blocks the attacker for 30 minutes, shows it blocked, and /sim clock +30m brings its events back", async () => {
    const began = Date.now();
    c = await startConsole();
    const now = () => c?.handle.deps.clock.now() ?? 0;
    await c.send("/in #incident");
    expect(await c.send(`/sim attack ${ZONE} 120`)).toContain("Attack staged");
    await c.send("/sim clock +5m");
    const attackFrom = minuteOf(now()) - 5 * MIN;
    const byIp = await search({ from: attackFrom, to: minuteOf(now()), groupBy: ["ip"] });
    const ip = byIp.filter((g) => g.key.ip?.includes(".")).sort((a, b) => b.count - a.count)[0]?.key.ip ?? "";
    expect(underOtherFeatures(await eventsOf(ip, attackFrom, minuteOf(now())))).toBeGreaterThan(50);

    await c.send("/as bob");
    const asked = await c.send(`/edge block ${ZONE} ${ip} for 30m`);
    const dialog = await c.send(String(buttonNumber(asked, "Confirm")));
    expect(/\[y\/N\]/.test(dialog) ? await c.send("y") : dialog).toContain("Approval needed");
    await c.send("/as alice");
    const clicked = await c.send(String(buttonNumber(c.output, "Approve")));
    const approved = /\[y\/N\]/.test(clicked) ? await c.send("y") : clicked;
    expect(approved).toMatch(/Applied|in effect/);
    const appliedMinute = minuteOf(now());

    await c.send("/sim clock +10m");
    const blocked = await eventsOf(ip, appliedMinute, appliedMinute + 10 * MIN);
    expect(Object.keys(blocked)).toEqual(["accessLists/block"]);
    expect(blocked["accessLists/block"]).toBeGreaterThan(50);

    // Thirty minutes after the approval the undo has run (on the moved clock) and the list no longer holds it.
    const beforeUndo = c.output.length;
    await c.send("/sim clock +25m");
    // The undo's Edge calls take real milliseconds while /sim clock moves in steps of 5 s, so its write may land
    // after the move; its card's redraw is printed once it has (an event to wake on).
    const blocking = () =>
      (sim().state.accessLists.get(ZONE) ?? []).some((l) => l.content.split("\n").includes(ip));
    await c.until(() => !blocking(), "the undo lifting the block", 30_000);
    // The card's redraw follows the write that lifted the block.
    await c.until(
      () => /undone|ended|lifted|removed/i.test(c?.output.slice(beforeUndo) ?? ""),
      "the undo's card",
      30_000,
    );
    const undoMinute = sim().state.configHistory.get(ZONE)?.at(-1)?.untilMinute ?? 0;
    expect(undoMinute * MIN).toBeGreaterThanOrEqual(appliedMinute + 30 * MIN);
    // Its write is dated by the console's clock: within the 35 minutes moved, or soon after them.
    expect(undoMinute * MIN).toBeLessThanOrEqual(appliedMinute + 40 * MIN);
    await c.send("/sim clock +5m");
    const back = await eventsOf(ip, undoMinute * MIN, undoMinute * MIN + 4 * MIN);
    expect(underOtherFeatures(back)).toBeGreaterThan(20);
    // … and the blocked minutes stay blocked.
    expect(await eventsOf(ip, appliedMinute, appliedMinute + 10 * MIN)).toEqual(blocked);
    // A rehearsal of 45 minutes of incident time took seconds.
    expect(Date.now() - began).toBeLessThan(60_000);
  }, 90_000);
});
