/**
 * Bot detection's three objects are bare `$ref`s in the document, which Swashbuckle cannot mark nullable: the
 * API may answer one null. The rest of the answer is still read; the missing object's settings read "Not set".
 */
import { describe, expect, it } from "vitest";
import { SIM_IDS } from "../../../tools/simulator/index.js";
import { withReadings } from "../../support/adversary.js";
import { answerTo } from "../../support/harness.js";
import { incidentCard } from "../../support/incident-card.js";
import { useHarness } from "../../support/use-harness.js";

const h = useHarness({}, { resetEach: false });
const ZONE = SIM_IDS.zoneEnterprise;
const NOT_UNDERSTOOD = "could not understand";

describe("bot detection answered with its objects null", () => {
  it("/edge bots shows bot detection and the categories, the null objects' settings as not set", async () => {
    const { text } = await withReadings(h.sim, { "shield.null-objects": true }, () =>
      answerTo(h, `bots ${ZONE}`, "U0001"),
    );
    expect(text).not.toContain(NOT_UNDERSTOOD);
    expect(text).toContain(`Bot detection · shield zone ${ZONE}`);
    expect(text).toContain("*Browser fingerprint*\nNot set");
    expect(text).toContain("*Request integrity*\nNot set");
    expect(text).toContain("Execution mode");
  });

  it("the incident card's zone section reads bot detection too", async () => {
    const { text } = await withReadings(h.sim, { "shield.null-objects": true }, () =>
      incidentCard(h, ZONE, { userId: "U0001" }),
    );
    expect(text).not.toContain(NOT_UNDERSTOOD);
  });
});
