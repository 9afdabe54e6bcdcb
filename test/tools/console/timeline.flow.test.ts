import { describe, expect, it } from "vitest";
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
});
