import { describe, expect, it } from "vitest";
import { SIM_IDS } from "../../../tools/simulator/index.js";
import { consolePerTest } from "../../support/console-per-test.js";
import { buttonNumber } from "./support.js";

const openConsole = consolePerTest();

describe("the impact preview in the local console", () => {
  it("a block's confirmation and its approval card show the last hour's events it matched", async () => {
    const c = await openConsole();
    const zone = SIM_IDS.zoneUnderAttack;
    await c.send("/as bob");
    await c.send(`/edge block ${zone} CN challenge`);
    // The confirmation is filled in place once the preview is read: wait for it to be printed.
    const matched = /`?CN`? matched [\d,]+ events?/;
    await c.until(() => matched.test(c.output), "the confirmation's preview");
    expect(c.output).toMatch(matched);
    expect(c.output).toContain("security events only");
    await c.send(String(buttonNumber(c.output, "Confirm")));
    const card = () => c.output.split("Approval needed").at(-1) ?? "";
    await c.until(() => /CN`? matched [\d,]+ events?/.test(card()), "the approval card's preview");
    expect(card()).toMatch(/CN`? matched [\d,]+ events?/);
  }, 60_000);
});
