import { describe, expect, it } from "vitest";
import { SIM_IDS } from "../../../tools/simulator/index.js";
import { answerTo, blocksText, findButtons, type Harness } from "../../support/harness.js";
import { useHarness } from "../../support/use-harness.js";
import { BOB } from "../../support/users.js";

/**
 * `/edge dns <zone> <type>` pages a record type through the real receiver: every record of the scan is on
 * exactly one page, whole, however long the records are (pages are sized to Block Kit's limits, which the
 * fake Slack checks on every answer).
 */

const h = useHarness();
const ZONE = SIM_IDS.dnsZoneLarge;
const TXT = 3;

/** The scan's records of one type, as the simulator holds them. */
function scanRecords(sim: Harness["sim"], type: number) {
  const records = sim.state.dnsScans.get(ZONE)?.job.Records ?? [];
  return records.filter((r) => r.Type === type);
}

/** Every page of `/edge dns <zone> TXT`, by pressing Next page until there is none: each page's text. */
async function allPages(): Promise<string[]> {
  const first = await answerTo(h, `dns ${ZONE} TXT`, BOB);
  const pages = [first.text];
  let next = first.buttons.find((b) => b.text === "Next page");
  while (next) {
    expect(pages.length, "more pages than records").toBeLessThan(200);
    const click = await h.click(next, { userId: BOB });
    const page = await h.slack.waitForResponse(click.responseId, (r) => r.body.replace_original === true);
    pages.push(blocksText(page.body.blocks));
    next = findButtons(page.body.blocks).find((b) => b.text === "Next page");
  }
  return pages;
}

/** A record's line starts with its name in code and the value after the arrow (mrkdwn escapes &, < and >). */
const escaped = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
const lineOf = (r: { Name: string | null; Value: string | null }) =>
  `\`${escaped(r.Name || "@")}\` → ${escaped(r.Value ?? "")}`;

describe("/edge dns pages a record type", () => {
  it("puts every TXT record on exactly one page, whole, and names how many pages there are", async () => {
    const txt = scanRecords(h.sim, TXT);
    expect(txt.length).toBe(107);
    const pages = await allPages();
    // Each page says where it is: which records of the type, and which page of how many.
    let first = 1;
    for (const [i, page] of pages.entries()) {
      const shown = page.split("\n").filter((l) => l.includes(" → ")).length;
      expect(page).toContain("*TXT* (107)");
      expect(page).toContain(
        `TXT records ${first}–${first + shown - 1} of 107 · page ${i + 1} of ${pages.length}`,
      );
      first += shown;
    }
    expect(pages.join("\n")).not.toMatch(/more records/);
    const missing = txt.filter((r) => pages.filter((p) => p.includes(lineOf(r))).length !== 1);
    expect(missing.map(lineOf), `on no page or on two, of ${pages.length} pages`).toEqual([]);
    // Whole lines only: each record line ends with its TTL (and proxied), never cut mid-line.
    const lines = pages.flatMap((p) => p.split("\n").filter((l) => l.includes(" → ")));
    expect(lines.filter((l) => !/ · TTL (\d+|\?)( · :cloud: proxied)?$/.test(l))).toEqual([]);
    expect(lines).toHaveLength(107);
    expect(h.slack.violations).toEqual([]);
  });

  it("says nothing of records 'left out' on a paged view: the other types are a button away", async () => {
    const first = await answerTo(h, `dns ${ZONE}`, BOB);
    expect(first.text).toMatch(/A records 1–\d+ of \d+ · page 1 of \d+/);
    expect(first.text).not.toMatch(/more records/);
    expect(first.buttons.map((b) => b.text)).toContain("TXT (107)");
  });
});
