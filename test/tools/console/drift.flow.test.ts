/**
 * `/edge watch config` in the local console: a change staged with `/sim dashboard` is posted in the channel
 * with Put it back and Keep, and Keep (pressed by its number) makes it the snapshot.
 */
import { describe, expect, it } from "vitest";
import { SIM_IDS } from "../../../tools/simulator/index.js";
import { createManualClock } from "../../support/clock.js";
import { consolePerTest } from "../../support/console-per-test.js";
import { consoleQuiet } from "./support.js";

const openConsole = consolePerTest();

describe("/edge watch config in the local console", () => {
  it("posts a dashboard change with Put it back and Keep; Keep answers who kept it", async () => {
    // On a manual clock: the watch polls when the test moves time, not every real second.
    const clock = createManualClock(Date.now());
    const c = await openConsole({ env: { WATCH_INTERVAL_MS: "1000" }, clock });
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
      ((await c.handle.deps.store.watches.get(watch!.id))?.state ?? null) !== null;
    // The first poll takes the snapshot: one watch interval, its reads answered and stored.
    await clock.advance(1_000);
    await consoleQuiet(c);
    expect(await snapshotTaken()).toBe(true);
    expect(await c.send(`/sim dashboard ${zone} waf-mode log`)).toContain("block → log");
    // A later poll notices the change and posts it in the channel: the watch's interval, moved a second at a
    // time (the alerts job ticks each second here), each tick's work let to end.
    const noticed = () => c.output.includes("not through edgeops, noticed");
    for (let second = 0; second < 120 && !noticed(); second++) {
      await clock.advance(1_000);
      await consoleQuiet(c);
    }
    await c.until(() => c.output.includes("not through edgeops, noticed"), "the drift notice");
    const out = c.output;
    expect(out).toContain(`WAF execution mode Block → Log, not through edgeops, noticed`);
    const keep = /\[(\d+)\] Keep/.exec(out.slice(out.lastIndexOf("not through edgeops, noticed")));
    expect(keep).not.toBeNull();
    expect(out.slice(out.lastIndexOf("not through edgeops, noticed"))).toContain("Put it back");
    await c.send(keep![1]!);
    await c.until(() => c.output.includes("kept it"), "who kept it");
    const state = (await c.handle.deps.store.watches.get(watch!.id))?.state as {
      snapshot: { wafMode: number };
    };
    expect(state.snapshot.wafMode).toBe(0);
  }, 60_000);
});
