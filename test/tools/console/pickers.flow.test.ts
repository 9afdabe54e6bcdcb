import { describe, expect, it } from "vitest";
import { SIM_IDS } from "../../../tools/simulator/index.js";
import { consolePerTest } from "../../support/console-per-test.js";
import { buttonNumber } from "./support.js";

/** Pickers in the local console: type to filter, pick by number. */

const startConsole = consolePerTest();

describe("local console pickers", () => {
  it("/edge bots without a zone: press the menu, type to filter, pick by number, and the command runs", async () => {
    const c = await startConsole();
    const asked = await c.send("/edge bots");
    expect(asked).toContain("Which shield zone?");
    const menu = buttonNumber(asked, "Type part of a domain or pull zone name");
    await c.send(String(menu));
    // From a pipe, a prompt is echoed with the line that answers it.
    const listed = await c.send("nothing-like-this");
    expect(listed).toContain("Type part of a name to search");
    expect(listed).toContain("No matches");
    const found = await c.send("shop.acme");
    expect(found).toMatch(new RegExp(`1\\) shop\\.acme-example\\.com · zone ${SIM_IDS.zoneUnderAttack}`));
    const answer = await c.send("1");
    expect(answer).toMatch(/bot/i);
    expect(answer).toContain(String(SIM_IDS.zoneUnderAttack));
    expect(answer).not.toContain("Which shield zone?");
  });

  it("/edge restart without an app lists applications by status, failing first", async () => {
    const c = await startConsole();
    const asked = await c.send("/edge restart");
    const menu = buttonNumber(asked, "Type part of an application name");
    await c.send(String(menu));
    const listed = await c.send("");
    expect(listed.indexOf("Failing")).toBeGreaterThan(-1);
    expect(listed.indexOf("Failing")).toBeLessThan(listed.indexOf("Active"));
    const confirm = await c.send("1");
    expect(confirm).toContain("Confirm");
  });
});
