/**
 * Through the bot: `/edge block <ip>` asked, confirmed and approved in the world, and the simulator's event log
 * from the approval's minute on shows every event of that address handled by the access list (blocked), while
 * the minutes before it keep the address's events under the features that had them.
 */
import { describe, expect, it } from "vitest";
import { SIM_IDS, type Simulator } from "../../../tools/simulator/index.js";
import { askAndApprove } from "../../support/change-flow.js";
import { TEST_EDGE_KEY } from "../../support/harness.js";
import { useWorld } from "../../support/world.js";

const MIN = 60_000;
const ZONE = SIM_IDS.zoneUnderAttack;

async function search(sim: Simulator, body: Record<string, unknown>) {
  const res = await fetch(`${sim.url}/shield/event-logs/${ZONE}/search`, {
    method: "POST",
    headers: { AccessKey: TEST_EDGE_KEY, "content-type": "application/json" },
    body: JSON.stringify({ pageSize: 500, ...body }),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { groups: Array<{ key: Record<string, string>; count: number }> }).groups;
}

/** The address's events over [from, to) by "feature/action". */
async function eventsOf(sim: Simulator, ip: string, from: number, to: number) {
  const groups = await search(sim, {
    from,
    to,
    filters: [{ field: "ip", op: "eq", value: [ip] }],
    groupBy: ["feature", "action"],
  });
  return Object.fromEntries(groups.map((g) => [`${g.key.feature}/${g.key.action}`, g.count]));
}

describe("/edge block through the bot, read back from the simulator's traffic", () => {
  const w = useWorld();

  it("an approved block of the busiest attacker turns all of its events into access-list blocks from that minute", async () => {
    const start = Math.floor(w.clock.now() / MIN) * MIN;
    w.sim.stageAttack(ZONE, { startsAt: start, rampMinutes: 1, durationMinutes: 120, peakPerMinute: 2_000 });
    await w.clock.advance(10 * MIN);
    const byIp = await search(w.sim, { from: start, to: start + 10 * MIN, groupBy: ["ip"] });
    const ip = byIp.filter((g) => g.key.ip?.includes(".")).sort((a, b) => b.count - a.count)[0]?.key.ip ?? "";
    const before = await eventsOf(w.sim, ip, start, start + 10 * MIN);
    const elsewhere = (counts: Record<string, number>) =>
      Object.entries(counts)
        .filter(([k]) => !k.startsWith("accessLists/"))
        .reduce((n, [, v]) => n + v, 0);
    expect(elsewhere(before)).toBeGreaterThan(50);

    await askAndApprove(w, `block ${ZONE} ${ip}`, ip);
    const appliedMinute = Math.floor(w.clock.now() / MIN) * MIN;
    await w.clock.advance(10 * MIN);

    const after = await eventsOf(w.sim, ip, appliedMinute, appliedMinute + 10 * MIN);
    expect(Object.keys(after)).toEqual(["accessLists/block"]);
    // The attacker did not stop: about as many events a minute as before, all blocked by the list now.
    expect(after["accessLists/block"]).toBeGreaterThan(elsewhere(before) / 2);
    // The ten minutes before the approval read as they did.
    expect(await eventsOf(w.sim, ip, start, start + 10 * MIN)).toEqual(before);
  });
});
