/**
 * The incident card tells the truth about its numbers: `/edge incident` through the real
 * receiver against the simulator, on one controlled clock, during a steady attack.
 */
import { describe, expect, it } from "vitest";
import { SIM_IDS } from "../../../tools/simulator/index.js";
import { MIN, usePollerRig } from "../../jobs/alert-poller-support.js";
import { incidentCard, textRowsOnly } from "../../support/incident-card.js";

const ZONE = SIM_IDS.zoneEnterprise;
/** 10:31:30 UTC: a minute and a half into the two-minute slot 10:30–10:32 (its first minute is over). */
const MID_SLOT = Date.UTC(2026, 7, 20, 10, 31, 30);

const rig = usePollerRig();

async function cardDuringSteadyAttack(window: string): Promise<string> {
  rig.now = MID_SLOT;
  const { sim, h } = await rig.start();
  textRowsOnly(h);
  // Steady since well before both windows.
  sim.stageAttack(ZONE, {
    startsAt: MID_SLOT - 5 * 60 * MIN,
    rampMinutes: 0,
    durationMinutes: 600,
    peakPerMinute: 3000,
  });
  return (await incidentCard(h, `${ZONE} ${window}`)).text;
}

/** The DDoS row of the traffic table: its sparkline and its change against the window before. */
function ddosRow(text: string): { spark: string; change: string } {
  const m = /^DDoS\s+[\d,]+\s+([▁▂▃▄▅▆▇█]+)\s+(.+)$/m.exec(text);
  if (!m) throw new Error(`no DDoS row in ${text}`);
  return { spark: m[1] ?? "", change: m[2] ?? "" };
}

describe("/edge incident during a steady attack", () => {
  it("every sparkline bucket is a whole slot (no false drop at the end), and the change against the window before is like for like", async () => {
    const text = await cardDuringSteadyAttack("15m");
    const { spark, change } = ddosRow(text);
    // The slot in progress is left out: a steady attack draws a steady line to its last bucket.
    expect(
      [...spark].every((c) => "▆▇█".includes(c)),
      spark,
    ).toBe(true);
    expect(spark).toHaveLength(8);
    const percent = /[▲▼] (\d+)%/.exec(change)?.[1];
    expect(change === "= same" || Number(percent) <= 15, change).toBe(true);
    expect(text).toContain("16 min in whole 2 min slots");
    expect(text).toContain("the slot in progress is left out");
  });
});

describe("/edge incident's traffic rows", () => {
  it("say 'steady' for a series that never moves, and how many times for a surge past ten times the window before", async () => {
    rig.now = MID_SLOT;
    const { sim, h } = await rig.start();
    textRowsOnly(h);
    // No threat events at all on the zone (the simulator's background noise off): every row is flat at 0.
    const traffic = sim.state.shieldTraffic.get(ZONE);
    if (!traffic) throw new Error("no traffic model for the zone");
    const baseline = traffic.baselinePerMinute;
    traffic.baselinePerMinute = 0;
    const flat = (await incidentCard(h, `${ZONE} 15m`)).text;
    expect(flat).toMatch(/^```Blocked\s+0\s+steady\s+= same$/m);
    expect(flat).not.toMatch(/^DDoS\s+0\s+[▁▂▃▄▅▆▇█]/m);

    // The usual background, then an attack over the last minutes: thousands of times the window before.
    traffic.baselinePerMinute = baseline;
    sim.stageAttack(ZONE, {
      startsAt: MID_SLOT - 8 * MIN,
      rampMinutes: 0,
      durationMinutes: 600,
      peakPerMinute: 3000,
    });
    const surge = (await incidentCard(h, `${ZONE} 15m`)).text;
    const { change } = ddosRow(surge);
    expect(change).toMatch(/^▲ ×[\d,]+$/);
    expect(Number(change.slice(3).replaceAll(",", ""))).toBeGreaterThan(10);
    expect(surge).not.toMatch(/▲ [\d,]{5,}%/);
  });
});

describe("/edge incident's triggered WAF rules", () => {
  it("say they are the WAF review's own counts, which the window does not bound: the same at 15m and 72h", async () => {
    const short = await cardDuringSteadyAttack("15m");
    const waf = (text: string) => /^\*Triggered WAF rules\*.*$/m.exec(text)?.[0] ?? "";
    expect(waf(short)).toContain("the WAF review's own counts, not this window's");
    expect(waf(short)).toContain("the Edge API gives no period for them");
    const long = await cardDuringSteadyAttack("72h");
    expect(waf(long)).toBe(waf(short));
  });
});
