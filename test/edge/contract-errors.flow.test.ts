/** Error sentences for every operation, account-bound 403s, and access-list writes that read the API's answer. */
import { describe, expect, it } from "vitest";
import { describeEdgeError } from "../../src/edge/errors.js";
import { readEntryState, setEntryState } from "../../src/services/access-lists.js";
import { exactPath, SIM_IDS } from "../../tools/simulator/index.js";
import { ACCESS_CONFIGURATION_OFFSET } from "../../tools/simulator/seed.js";
import { EVERY_OPERATION } from "../support/every-operation.js";
import { rejection, useSimulatorClient } from "../support/sim-client.js";

const s = useSimulatorClient();
const ZONE = SIM_IDS.zoneQuiet;

describe("error sentences", () => {
  it("a 403 names what every operation was doing (never 'not allowed to do that')", async () => {
    s.sim.addFault({ path: /./, status: 403, body: "none" });
    for (const [operation, call] of Object.entries(EVERY_OPERATION)) {
      const e = await rejection(call(s.client));
      expect(e.operation).toBe(operation);
      const sentence = describeEdgeError(e);
      expect([operation, sentence]).not.toEqual([operation, expect.stringContaining("do that")]);
      expect(sentence).toMatch(
        /^This workspace's Edge API key is not allowed to \w+ .+: an admin can set a key/,
      );
    }
  });

  it("a Magic Containers restart refused for the account (card declined, suspended) is not called a key problem", async () => {
    for (const detail of ["Your card was declined.", "The account has been suspended."]) {
      s.sim.clearFaults();
      s.sim.addFault({
        path: /\/restart$/,
        status: 403,
        body: { title: "Forbidden", status: 403, detail },
      });
      const sentence = describeEdgeError(await rejection(s.client.restartApp("mc-1")));
      expect(sentence).toContain(`The Edge API refused to restart Magic Containers apps: ${detail}`);
      expect(sentence).toContain("bunny.net account");
      expect(sentence).not.toContain("/edge key");
    }
    // A 403 that is about the key still says so.
    s.sim.clearFaults();
    s.sim.addFault({
      path: /\/restart$/,
      status: 403,
      body: { title: "Forbidden", detail: "The API key lacks permission." },
    });
    expect(describeEdgeError(await rejection(s.client.restartApp("mc-1")))).toContain("/edge key");
  });
});

describe("edgeops' access lists", () => {
  it("a new list is found by the id the create answer gave, even when the listing names it otherwise", async () => {
    const id = s.sim.state.nextAccessListId;
    const listing = {
      managedLists: [],
      customLists: [
        {
          listId: id,
          configurationId: id + ACCESS_CONFIGURATION_OFFSET,
          // The listing leaves the name out (AccessListDetails.name is nullable); a respelled name is still
          // found by name (test/services/access-lists.flow.test.ts).
          name: null,
          isEnabled: false,
          type: 1,
          action: 0,
          entryCount: 0,
        },
      ],
      error: null,
    };
    s.sim.addFault({
      method: "GET",
      path: exactPath(`/shield/shield-zone/${ZONE}/access-lists`),
      status: 200,
      body: listing,
      times: 2,
    });
    const entry = { type: "cidr" as const, value: "192.0.2.0/24" };
    await setEntryState(s.client, ZONE, entry, "block");
    const list = s.sim.state.accessLists.get(ZONE)?.find((l) => l.id === id);
    expect(list?.content).toBe("192.0.2.0/24");
    expect(list?.action).toBe(2);
    expect(s.sim.requests.filter((r) => r.method === "POST")).toHaveLength(1);
  });

  it("a content write that failed is tried again from a fresh read, never with the content computed before", async () => {
    const entry = { type: "ip" as const, value: "198.51.100.77" };
    await setEntryState(s.client, ZONE, entry, "challenge");
    s.sim.clearRequests();
    const other = { type: "ip" as const, value: "198.51.100.78" };
    s.sim.addFault({ method: "PATCH", path: /\/access-lists\/\d+$/, status: 503, body: "none", times: 1 });
    await setEntryState(s.client, ZONE, other, "challenge");
    const steps = s.sim.requests.filter((r) => /\/access-lists\/\d+$/.test(r.path)).map((r) => r.method);
    // PATCH (503), then the list read again (twice: read, then the guard) before the next PATCH.
    expect(steps).toEqual(["GET", "GET", "PATCH", "GET", "GET", "PATCH"]);
    expect(await readEntryState(s.client, ZONE, entry)).toBe("challenge");
    expect(await readEntryState(s.client, ZONE, other)).toBe("challenge");
  });
});
