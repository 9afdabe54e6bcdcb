import { describe, expect, it } from "vitest";
import { readEntryState, setEntryState } from "../../src/services/access-lists.js";
import { SIM_IDS } from "../../tools/simulator/index.js";
import { rejection, useSimulatorClient } from "../support/sim-client.js";

const env = useSimulatorClient();
const ZONE = SIM_IDS.zoneQuiet;

describe("custom access lists: client and edgeops' lists against the simulator", () => {
  it("bad arguments are refused before any request", async () => {
    const calls = [
      env.client.listCustomAccessLists(0),
      env.client.getCustomAccessList(ZONE, -1),
      env.client.createCustomAccessList(ZONE, { name: "", type: 0, content: "" }),
      env.client.createCustomAccessList(ZONE, { name: "x", type: 9, content: "" }),
      env.client.setCustomAccessListContent(ZONE, 1, 42 as never),
      env.client.configureAccessList(ZONE, 1, { isEnabled: "yes" as never, action: 2 }),
      env.client.configureAccessList(ZONE, 1, { isEnabled: true, action: 6 }),
    ];
    for (const c of calls) expect((await rejection(c)).kind).toBe("invalid_argument");
    expect(env.sim.requests).toHaveLength(0);
  });

  it("a POST that fails is not repeated (it could make two lists)", async () => {
    env.sim.addFault({ method: "POST", path: /\/access-lists$/, status: 500, body: "none", times: 3 });
    await rejection(env.client.createCustomAccessList(ZONE, { name: "x", type: 0, content: "" }));
    expect(env.sim.requests.filter((r) => r.method === "POST")).toHaveLength(1);
  });

  it("block, move and lift an entry: one list per type and action, the API's content the only state", async () => {
    const entry = { type: "cidr" as const, value: "203.0.113.0/24" };
    expect(await readEntryState(env.client, ZONE, entry)).toBe("none");
    await setEntryState(env.client, ZONE, entry, "block");
    expect(await readEntryState(env.client, ZONE, entry)).toBe("block");
    // Set again: nothing to write.
    env.sim.clearRequests();
    await setEntryState(env.client, ZONE, entry, "block");
    expect(env.sim.requests.filter((r) => r.method !== "GET")).toHaveLength(0);
    await setEntryState(env.client, ZONE, entry, "challenge");
    expect(await readEntryState(env.client, ZONE, entry)).toBe("challenge");
    // As stored: the API may answer the lists in any order and their names in another spelling.
    const lists = env.sim.state.accessLists.get(ZONE) ?? [];
    expect(lists.map((l) => [l.name, l.type, l.action, l.isEnabled, l.content])).toEqual([
      ["edgeops: blocked IP ranges", 1, 2, true, ""],
      ["edgeops: challenged IP ranges", 1, 3, true, entry.value],
    ]);
    await setEntryState(env.client, ZONE, entry, "none");
    expect(await readEntryState(env.client, ZONE, entry)).toBe("none");
  });

  it("an entry the API refuses (the plan's entry limit) is an Edge API error, not a silent success", async () => {
    const lists = env.sim.state.accessLists.get(ZONE)!;
    const full = lists.find((l) => l.name === "edgeops: blocked IP ranges")!;
    full.content = Array.from({ length: 1000 }, (_, i) => `10.${i >> 8}.${i & 255}.0/24`).join("\n");
    const e = await rejection(
      setEntryState(env.client, ZONE, { type: "cidr", value: "198.51.100.0/24" }, "block"),
    );
    expect(e.status).toBe(400);
  });
});
