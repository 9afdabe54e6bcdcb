import { describe, expect, it } from "vitest";
import { SIM_IDS } from "../../../tools/simulator/index.js";
import { answerTo } from "../../support/harness.js";
import { useHarness } from "../../support/use-harness.js";
import { BOB } from "../../support/users.js";

/** Each command's refusals and answers use its own verb and its own example, never another command's. */

const ZONE = SIM_IDS.zoneUnderAttack;

const h = useHarness();

describe("a command's own words", () => {
  it("/edge unblock asks what should be unblocked, with unblock examples", async () => {
    const missing = await answerTo(h, `unblock ${ZONE}`, BOB);
    expect(missing.text).toContain("What should be unblocked?");
    expect(missing.text).toContain("For example: /edge unblock 1234 203.0.113.7");
    expect(missing.text).not.toContain("/edge block");

    for (const bad of ["xyz", "1.2.3", "AS0", "ZZ", "10.0.0.0/33", "t13d_x_y"]) {
      const answer = await answerTo(h, `unblock ${ZONE} ${bad}`, BOB);
      expect(answer.text, bad).toContain("/edge unblock 1234");
      expect(answer.text, bad).not.toContain("/edge block");
    }
    const notZone = await answerTo(h, "unblock shop..example 203.0.113.7", BOB);
    expect(notZone.text).not.toContain("/edge block");

    // /edge block keeps its own.
    const block = await answerTo(h, `block ${ZONE}`, BOB);
    expect(block.text).toContain("What should be blocked?");
    expect(block.text).toContain("For example: /edge block 1234 203.0.113.7");
  });

  it("/edge unblock of an entry edgeops does not list says there is nothing to unblock, not that an unblock is in force", async () => {
    const answer = await answerTo(h, `unblock ${ZONE} 198.51.100.99`, BOB);
    expect(answer.text).toContain(
      `Nothing to unblock: IP 198.51.100.99 is in none of edgeops' block or challenge lists on shield zone ${ZONE}.`,
    );
    expect(answer.text).not.toContain("already in force");
    expect(answer.buttons.map((b) => b.text)).not.toContain("Confirm");
  });

  it("/edge timeline refuses an unknown window with its own default and example, not /edge incident's", async () => {
    const timeline = await answerTo(h, `timeline ${ZONE} 7d`, BOB);
    expect(timeline.text).toContain('"7d" is not a window. Use 15m, 1h, 6h, 24h (the default) or 72h');
    expect(timeline.text).toContain("/edge timeline 1234 6h");
    expect(timeline.text).not.toContain("/edge incident");

    const incident = await answerTo(h, `incident ${ZONE} 7d`, BOB);
    expect(incident.text).toContain('"7d" is not a window. Use 15m (the default), 1h, 6h, 24h or 72h');
    expect(incident.text).toContain("/edge incident 1234 1h");
  });
});

describe("numbers as typed", () => {
  it("a number too large is quoted as it was typed, never as JavaScript prints it", async () => {
    const huge = "100000000000000000000000";
    for (const [command, what] of [
      [`zones ${huge}`, "page number"],
      [`zones 99999999999`, "page number"],
      [`bots ${huge}`, "zone id"],
      [`incident 3000000000`, "zone id"],
      [`ratelimit 3000000000`, "rate-limit id"],
      [`dns ${huge}`, "DNS zone id"],
    ] as const) {
      const answer = await answerTo(h, command, BOB);
      const typed = command.split(" ")[1]!;
      expect(answer.text, command).toContain(`"${typed}" is too large for a ${what}`);
      expect(answer.text, command).not.toMatch(/e\+\d|\(got /);
    }
  });
});
