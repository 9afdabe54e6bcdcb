import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { CONSOLE_TEAM } from "../../../tools/console/world.js";
import { SIM_IDS } from "../../../tools/simulator/index.js";
import { consolePerTest } from "../../support/console-per-test.js";
import { buttonNumber } from "./support.js";

const startConsole = consolePerTest();

describe("/edge timeline in the local console", () => {
  it("tells a block asked, approved and applied, and Export posts the postmortem draft as a file", async () => {
    const c = await startConsole();
    const zone = SIM_IDS.customerAccessList.zoneId;
    await c.send("/as bob");
    const asked = await c.send(`/edge block ${zone} 203.0.113.7 for 30m`);
    await c.send(String(buttonNumber(asked, "Confirm")));
    await c.send("/as alice");
    await c.send(String(buttonNumber(c.output, "Approve")));
    await c.send("y");
    const story = await c.send(`/edge timeline ${zone}`);
    expect(story).toContain(`Timeline of shield zone ${zone}`);
    expect(story).toMatch(/bob asked for: Block IP 203\.0\.113\.7/);
    expect(story).toMatch(/alice approved: Block IP 203\.0\.113\.7/);
    expect(story).toMatch(/alice applied: Block IP 203\.0\.113\.7/);
    expect(story).toContain("Still in force:");
    const exported = await c.send(String(buttonNumber(story, "Export postmortem draft")));
    expect(exported).toContain(`postmortem-zone-${zone}-`);
    expect(exported).toContain("# Postmortem draft: shield zone");
    expect(exported).toContain("## Mitigations still in force");
    expect(exported).toContain("Posted the postmortem draft");
  }, 60_000);

  it("says when it shows only the start of a long draft, and where the full file is", async () => {
    const c = await startConsole();
    const zone = SIM_IDS.customerAccessList.zoneId;
    const { store } = c.handle.deps;
    // Forty requests asked in #general, as the engine writes them: a draft far longer than one message shows.
    for (let i = 0; i < 40; i++) {
      const params = { shieldZoneId: zone, type: "ip", value: `198.51.100.${i}`, state: "block" };
      const r = await store.changeRequests.create({
        kind: "access_block",
        teamId: CONSOLE_TEAM.id,
        channelId: "C0GENERAL",
        requesterId: "U0BOB",
        params,
        expiresAt: Date.now() + 3_600_000,
      });
      await store.audit.append({
        teamId: CONSOLE_TEAM.id,
        userId: "U0BOB",
        action: "access_block.request",
        target: `shield zone ${zone} / ip ${params.value}`,
        outcome: "pending",
        details: { requestId: r.id, channelId: "C0GENERAL", params },
      });
    }
    const story = await c.send(`/edge timeline ${zone}`);
    const exported = await c.send(String(buttonNumber(story, "Export postmortem draft")));
    expect(exported).toContain("# Postmortem draft");
    const cut =
      /Only the first ([\d,]+) of ([\d,]+) characters are shown: the full file is at (\S+\.md)/.exec(
        exported,
      );
    expect(cut, exported).not.toBeNull();
    const full = readFileSync(cut?.[3] ?? "", "utf8");
    expect(full.length).toBe(Number((cut?.[2] ?? "").replace(/,/g, "")));
    expect(full).toContain("## Open questions");
    expect(exported).not.toContain("## Open questions");
  }, 60_000);
});
