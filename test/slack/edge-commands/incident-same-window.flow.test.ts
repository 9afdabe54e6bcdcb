/**
 * One incident card, one window: the event-log sections (top offenders) end where the traffic section ends,
 * at the last whole slot, so early in an attack no offender outnumbers every threat counted. `/edge incident`
 * through the real receiver against the simulator, on one controlled clock.
 */
import { describe, expect, it } from "vitest";
import { SIM_IDS } from "../../../tools/simulator/index.js";
import { usePollerRig } from "../../jobs/alert-poller-support.js";
import { incidentCard, textRowsOnly } from "../../support/incident-card.js";

const ZONE = SIM_IDS.zoneEnterprise;
/** 10:31:30 UTC: a minute and a half into the two-minute slot 10:30–10:32, the slot in progress. */
const MID_SLOT = Date.UTC(2026, 7, 20, 10, 31, 30);

const rig = usePollerRig();

describe("/edge incident early in an attack", () => {
  it("counts the event log over the traffic section's whole slots: no top offender outnumbers every threat counted", async () => {
    rig.now = MID_SLOT;
    const { sim, h } = await rig.start();
    textRowsOnly(h);
    // The attack began with the slot in progress: the traffic section does not count it yet.
    sim.stageAttack(ZONE, {
      startsAt: MID_SLOT - 90_000,
      rampMinutes: 0,
      durationMinutes: 60,
      peakPerMinute: 20_000,
    });
    const text = (await incidentCard(h, `${ZONE} 15m`)).text;
    const rows = [...text.matchAll(/^(?:```)?[A-Za-z][A-Za-z ]*?\s+([\d,]+)\s+[▁▂▃▄▅▆▇█]+/gm)].map((m) =>
      Number((m[1] ?? "").replaceAll(",", "")),
    );
    expect(rows, text).toHaveLength(6);
    // Every row of the traffic table together: more than anything the event log counts over the same slots.
    const threats = rows.reduce((a, b) => a + b, 0);
    const ja4 = text.slice(text.indexOf("*JA4 fingerprints*"));
    const busiestJa4 = Number((/` ([\d,]+) ·/.exec(ja4)?.[1] ?? "").replaceAll(",", ""));
    expect(busiestJa4, text).toBeGreaterThan(0);
    expect(busiestJa4, text).toBeLessThanOrEqual(threats);
    // Both sections say where they end: the same whole slot.
    const trafficEnd = /\*Traffic and threats\*.* to (<!date\^\d+)/.exec(text)?.[1];
    expect(trafficEnd).toBeTruthy();
    expect(/^\*Top offenders\*.*$/m.exec(text)?.[0]).toContain(trafficEnd);
  });
});
