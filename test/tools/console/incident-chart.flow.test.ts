import { readFileSync } from "node:fs";
import { PNG } from "pngjs";
import { describe, expect, it } from "vitest";
import { SIM_IDS } from "../../../tools/simulator/index.js";
import { consolePerTest } from "../../support/console-per-test.js";

const startConsole = consolePerTest();

describe("the incident chart in the local console", () => {
  it("is saved to a file whose path is printed where the card shows it", async () => {
    const c = await startConsole();
    const from = c.output.length;
    await c.send(`/edge incident ${SIM_IDS.zoneUnderAttack} 1h`);
    // The chart is drawn after the last Edge call (CPU, no I/O): the prompt may come back before the card.
    await c.until(
      () => c.output.includes("[image: Picture saved at", from),
      "the card with its chart",
      30_000,
    );
    const card = c.output.slice(from);
    expect(card).toContain(`Incident picture · shield zone ${SIM_IDS.zoneUnderAttack}`);
    const path = /\[image: Picture saved at (\S+\.png): Chart of threats per minute/.exec(card)?.[1];
    expect(path, card).toBeDefined();
    const png = PNG.sync.read(readFileSync(path!));
    expect(png.width).toBeGreaterThan(1440);
    expect(png.height).toBeGreaterThan(520);
  }, 60_000);
});
