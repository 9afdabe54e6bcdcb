import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createEdgeApi, type EdgeApi, type EdgeClient, RETRY_FAST } from "../../src/edge/client.js";
import { EdgeApiError } from "../../src/edge/errors.js";
import { SIM_API_KEY, SIM_IDS, type Simulator, startSimulator } from "../../src/edge/simulator/index.js";
import { silentLogger } from "../../src/log.js";
import { readEntryState, setEntryState } from "../../src/services/access-lists.js";

let sim: Simulator;
let api: EdgeApi;
let client: EdgeClient;
const ZONE = SIM_IDS.zoneQuiet;

beforeAll(async () => {
  sim = await startSimulator();
  api = createEdgeApi({
    baseUrl: sim.url,
    timeoutMs: 2000,
    ratePerSec: 1000,
    concurrency: 8,
    maxQueue: 100,
    logger: silentLogger,
    retry: RETRY_FAST,
  });
  client = api.forKey(SIM_API_KEY);
});
afterAll(async () => {
  await api.close();
  await sim.close();
});
beforeEach(() => {
  sim.clearRequests();
  sim.clearFaults();
});

async function rejection(p: Promise<unknown>): Promise<EdgeApiError> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(EdgeApiError);
  return e as EdgeApiError;
}

describe("custom access lists: client and edgeops' lists against the simulator", () => {
  it("bad arguments are refused before any request", async () => {
    const calls = [
      client.listCustomAccessLists(0),
      client.getCustomAccessList(ZONE, -1),
      client.createCustomAccessList(ZONE, { name: "", type: 0, content: "" }),
      client.createCustomAccessList(ZONE, { name: "x", type: 9, content: "" }),
      client.setCustomAccessListContent(ZONE, 1, 42 as never),
      client.configureAccessList(ZONE, 1, { isEnabled: "yes" as never, action: 2 }),
      client.configureAccessList(ZONE, 1, { isEnabled: true, action: 6 }),
    ];
    for (const c of calls) expect((await rejection(c)).kind).toBe("invalid_argument");
    expect(sim.requests).toHaveLength(0);
  });

  it("a POST that fails is not repeated (it could make two lists); a content PATCH is", async () => {
    sim.addFault({ method: "POST", path: /\/access-lists$/, status: 500, body: "none", times: 3 });
    await rejection(client.createCustomAccessList(ZONE, { name: "x", type: 0, content: "" }));
    expect(sim.requests.filter((r) => r.method === "POST")).toHaveLength(1);
  });

  it("block, move and lift an entry: one list per type and action, the API's content the only state", async () => {
    const entry = { type: "cidr" as const, value: "203.0.113.0/24" };
    expect(await readEntryState(client, ZONE, entry)).toBe("none");
    await setEntryState(client, ZONE, entry, "block");
    expect(await readEntryState(client, ZONE, entry)).toBe("block");
    // Set again: nothing to write.
    sim.clearRequests();
    await setEntryState(client, ZONE, entry, "block");
    expect(sim.requests.filter((r) => r.method !== "GET")).toHaveLength(0);
    await setEntryState(client, ZONE, entry, "challenge");
    expect(await readEntryState(client, ZONE, entry)).toBe("challenge");
    const lists = await client.listCustomAccessLists(ZONE);
    expect(lists.map((l) => [l.name, l.type, l.action, l.isEnabled, l.entryCount])).toEqual([
      ["edgeops: blocked IP ranges", 1, 2, true, 0],
      ["edgeops: challenged IP ranges", 1, 3, true, 1],
    ]);
    await setEntryState(client, ZONE, entry, "none");
    expect(await readEntryState(client, ZONE, entry)).toBe("none");
  });

  it("an entry the API refuses (the plan's entry limit) is an Edge API error, not a silent success", async () => {
    const lists = sim.state.accessLists.get(ZONE)!;
    const full = lists.find((l) => l.name === "edgeops: blocked IP ranges")!;
    full.content = Array.from({ length: 1000 }, (_, i) => `10.${i >> 8}.${i & 255}.0/24`).join("\n");
    const e = await rejection(
      setEntryState(client, ZONE, { type: "cidr", value: "198.51.100.0/24" }, "block"),
    );
    expect(e.status).toBe(400);
  });
});
