/**
 * The console's Edge API (the simulator for its own key, the configured service for others) keeps what a client is
 * made for: a change's abort signal and its fence before writes, and background work as background.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { systemClock } from "../../../src/clock.js";
import { loadConfig } from "../../../src/config.js";
import { DEFAULT_MAX_BACKGROUND, RETRY_FAST } from "../../../src/edge/queue.js";
import { silentLogger } from "../../../src/log.js";
import { type ConsoleEdge, startConsoleEdge } from "../../../tools/console/edge.js";
import { SIM_API_KEY, SIM_IDS } from "../../../tools/simulator/index.js";
import { TEST_ENCRYPTION_KEY } from "./support.js";

describe("the console's Edge API", () => {
  let dataDir: string;
  let edge: ConsoleEdge;

  beforeEach(async () => {
    dataDir = mkdtempSync(join(tmpdir(), "edgeops-console-edge-"));
    const config = loadConfig({
      DATA_DIR: dataDir,
      ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
      EDGE_API_MAX_QUEUE: String(DEFAULT_MAX_BACKGROUND + 10),
    });
    edge = await startConsoleEdge({ config, logger: silentLogger, clock: systemClock, retry: RETRY_FAST });
  });

  afterEach(async () => {
    await edge.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const sim = () => {
    if (!edge.sim) throw new Error("the console should simulate the Edge API without EDGE_API_KEY");
    return edge.sim;
  };

  it("counts a zone check's reads as background work, refused once too many wait", async () => {
    let release = () => {};
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    sim().addFault({ path: "/shield/shield-zones", holdUntil: released });
    const checks = edge.edge.forKey(SIM_API_KEY, { background: "optional" });
    const waiting = Array.from({ length: DEFAULT_MAX_BACKGROUND }, () =>
      checks.listShieldZones({ page: 1, perPage: 10 }).catch(() => undefined),
    );
    expect(edge.edge.backgroundFull()).toBe(true);
    await expect(checks.listShieldZones({ page: 1, perPage: 10 })).rejects.toMatchObject({ kind: "busy" });
    // A person's read is not background work: it waits its turn instead.
    const person = edge.edge.forKey(SIM_API_KEY).listShieldZones({ page: 1, perPage: 10 });
    release();
    await expect(person).resolves.toMatchObject({ page: 1 });
    await edge.edge.close(0);
    await Promise.all(waiting);
  });

  it("sends nothing for a client whose signal is aborted", async () => {
    const abort = new AbortController();
    abort.abort(new Error("the change's lease ended"));
    const client = edge.edge.forKey(SIM_API_KEY, { signal: abort.signal });
    await expect(client.listShieldZones({ page: 1, perPage: 10 })).rejects.toThrow();
    expect(sim().requests.filter((r) => r.path.startsWith("/shield/shield-zones"))).toEqual([]);
  });

  it("runs a client's fence before its writes, and sends no write the fence refuses", async () => {
    let fenced = 0;
    const client = edge.edge.forKey(SIM_API_KEY, {
      beforeWrite: async () => {
        fenced++;
        throw new Error("the target's lock was lost");
      },
    });
    await expect(client.setBotCategoryAction(SIM_IDS.firstShieldZone, 2, 1)).rejects.toThrow(
      "the target's lock was lost",
    );
    expect(fenced).toBe(1);
    expect(sim().requests.filter((r) => r.method === "PUT")).toEqual([]);
  });
});
