/** A Basic plan's bot detection is a 202 `invalid_plan_type.bot_detection`, read as the plan sentence. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SIM_IDS } from "../../../tools/simulator/index.js";
import { answerTo, blocksText, type Harness, startHarness, TEST_EDGE_KEY } from "../../support/harness.js";

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.close();
});

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
    const res = await h.command(`incident ${BASIC}`);
    const card = await h.slack.waitForResponse(
      res.responseId,
      (r) => r.body.replace_original === true,
      15_000,
    );
    expect(blocksText(card.body.blocks)).toContain(`Bot detection: ${PLAN}`);
  });
});
