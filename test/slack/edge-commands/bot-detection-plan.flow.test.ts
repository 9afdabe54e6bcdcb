/** A Basic plan's bot detection is a 202 `invalid_plan_type.bot_detection`, read as the plan sentence. */
import { describe, expect, it } from "vitest";
import { SIM_IDS } from "../../../tools/simulator/index.js";
import { answerTo, TEST_EDGE_KEY } from "../../support/harness.js";
import { incidentCard } from "../../support/incident-card.js";
import { useHarness } from "../../support/use-harness.js";

const h = useHarness({}, { resetEach: false });

const BASIC = SIM_IDS.zoneWithoutBotPlan;
const PLAN = "This shield zone's plan does not include bot detection: upgrade the zone's Shield plan";

describe("bot detection on a Basic plan", () => {
  it("the simulator answers 202 with invalid_plan_type.bot_detection, and the client reads it as the plan", async () => {
    const res = await fetch(`${h.sim.url}/shield/shield-zone/${BASIC}/bot-detection`, {
      headers: { AccessKey: TEST_EDGE_KEY },
    });
    expect(res.status).toBe(202);
    const body = (await res.json()) as { data: unknown; error: { errorKey: string } };
    expect(body.data).toBeNull();
    expect(body.error.errorKey).toBe("invalid_plan_type.bot_detection");
    const e = await h.deps.edge
      .forKey(TEST_EDGE_KEY)
      .getBotDetection(BASIC)
      .catch((err: unknown) => err);
    expect(e).toMatchObject({ kind: "plan_not_eligible", errorKey: "invalid_plan_type.bot_detection" });
  });

  it("/edge bots says the plan lacks bot detection", async () => {
    const { text } = await answerTo(h, `bots ${BASIC}`, "U0001");
    expect(text).toContain(PLAN);
  });

  it("the incident card's zone section says the plan lacks bot detection", async () => {
    const { text } = await incidentCard(h, BASIC);
    expect(text).toContain(`Bot detection: ${PLAN}`);
  });
});
