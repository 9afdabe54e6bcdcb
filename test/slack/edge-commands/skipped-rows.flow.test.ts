/** A row without a field the document leaves optional is left out, and the answer says how many. */
import { describe, expect, it } from "vitest";
import { exactPath, SIM_IDS } from "../../../tools/simulator/index.js";
import { answerTo } from "../../support/harness.js";
import { incidentCard } from "../../support/incident-card.js";
import { useHarness } from "../../support/use-harness.js";

const h = useHarness({}, { resetEach: false });

describe("rows the API sent without an id", () => {
  it("/edge zones lists the others and says how many were left out", async () => {
    h.sim.addFault({
      path: exactPath("/shield/shield-zones"),
      status: 200,
      times: 1,
      body: {
        data: [{ shieldZoneId: 5, planType: 1 }, { pullZoneId: 9 }],
        page: { currentPage: 1, totalCount: 2 },
      },
    });
    const { text } = await answerTo(h, "zones", "U0001");
    expect(text).toContain("1 shield zone came without a shieldZoneId and is left out.");
  });

  it("/edge apps lists the others and says how many were left out", async () => {
    h.sim.addFault({
      path: exactPath("/mc/apps"),
      status: 200,
      times: 1,
      body: {
        items: [{ name: "x" }, { name: "y" }, { id: "mc-1", name: "ok", status: "active" }],
        cursor: null,
      },
    });
    const { text } = await answerTo(h, "apps", "U0001");
    expect(text).toContain("2 applications came without an id and are left out.");
    expect(text).toContain("ok");
  });

  it("the incident card's rate limits list the others and say how many were left out", async () => {
    const zone = SIM_IDS.zoneUnderAttack;
    h.sim.addFault({
      path: exactPath(`/shield/metrics/rate-limits/${zone}`),
      status: 200,
      times: 1,
      body: {
        data: [
          {
            ratelimitId: 77,
            overview: { totalBreaches: 40, blockedBreaches: 40, challengedBreaches: 0, loggedBreaches: 0 },
          },
          { overview: { totalBreaches: 9 } },
        ],
        error: null,
      },
    });
    const { text } = await incidentCard(h, zone);
    expect(text).toContain("Rate limit 77");
    expect(text).toContain("1 rate limit came without a ratelimitId and is left out.");
  });
});
