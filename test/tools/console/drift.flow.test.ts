/**
 * `/edge watch config` in the local console: a change staged with `/sim dashboard` is posted in the channel
 * with Put it back and Keep, and Keep (pressed by its number) makes it the snapshot.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, describe, expect, it } from "vitest";
import { SIM_IDS } from "../../../tools/simulator/index.js";
import { type ConsoleDriver, startConsole } from "./support.js";

let c: ConsoleDriver | undefined;
afterEach(async () => {
  await c?.close();
  c = undefined;
});

async function until(check: () => boolean, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out; the console printed:\n${c?.output}`);
    await sleep(100);
  }
}

describe("/edge watch config in the local console", () => {
  it("posts a dashboard change with Put it back and Keep; Keep answers who kept it", async () => {
    c = await startConsole({ env: { WATCH_INTERVAL_MS: "1000" } });
    const zone = SIM_IDS.zoneUnderAttack;
    const sim = c.handle.sim!;
    const shieldZone = sim.state.shieldZones.find((z) => z.shieldZoneId === zone)!;
    shieldZone.wafExecutionMode = 1;
    await c.send("/in #incident");
    expect(await c.send(`/edge watch config ${zone}`)).toContain(
      `Watching the settings of shield zone ${zone}`,
    );
    const [watch] = await c.handle.deps.store.watches.list("T0CONSOLE", "C0INCIDENT");
    expect(watch?.kind).toBe("config");
    const snapshotTaken = async () =>
      ((await c?.handle.deps.store.watches.get(watch!.id))?.state ?? null) !== null;
    for (let i = 0; i < 100 && !(await snapshotTaken()); i++) await sleep(100);
    expect(await c.send(`/sim dashboard ${zone} waf-mode log`)).toContain("block → log");
    await until(() => (c?.output ?? "").includes("not through edgeops, noticed"));
    const out = c.output;
    expect(out).toContain(`WAF execution mode Block → Log, not through edgeops, noticed`);
    const keep = /\[(\d+)\] Keep/.exec(out.slice(out.lastIndexOf("not through edgeops, noticed")));
    expect(keep).not.toBeNull();
    expect(out.slice(out.lastIndexOf("not through edgeops, noticed"))).toContain("Put it back");
    await c.send(keep![1]!);
    await until(() => (c?.output ?? "").includes("kept it"));
    const state = (await c.handle.deps.store.watches.get(watch!.id))?.state as {
      snapshot: { wafMode: number };
    };
    expect(state.snapshot.wafMode).toBe(0);
  }, 60_000);
});
