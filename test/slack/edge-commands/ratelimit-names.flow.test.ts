import { describe, expect, it } from "vitest";
import { SIM_IDS } from "../../../tools/simulator/index.js";
import { answerTo, blocksText } from "../../support/harness.js";
import { incidentCard } from "../../support/incident-card.js";
import { choose, pickerIn } from "../../support/picker.js";
import { useHarness } from "../../support/use-harness.js";

/**
 * Rate limits carry their names (GET /shield/rate-limits/{zone}) wherever they are
 * listed, escaped for Slack, and `/edge ratelimit` alone offers a shield-zone picker.
 */

const ZONE = SIM_IDS.zoneUnderAttack; // shop.acme-example.com
const FIRST_RULE = SIM_IDS.rateLimitRulesUnderAttack[0];
// The simulator names that rule "Login <burst> & retries": Slack's control characters, escaped once.
const ESCAPED_NAME = "Login &lt;burst&gt; &amp; retries";

const h = useHarness({}, { resetEach: false });

describe("rate limits by name", () => {
  it("/edge ratelimit alone picks a shield zone, then lists its rules by name with the zone's domain", async () => {
    const typed = await answerTo(h, "ratelimit", "U0002");
    const picker = pickerIn(typed.body.blocks);
    expect(picker?.actionId).toBe("edge.pick.shield");
    expect(typed.text).toContain("/edge ratelimit zone &lt;shield zone&gt;");

    h.sim.clearRequests();
    const chosen = await choose(h, picker!, String(ZONE));
    const text = blocksText(chosen.body.blocks);
    expect(h.sim.requests.some((r) => r.path === `/shield/rate-limits/${ZONE}`)).toBe(true);
    expect(text).toContain(`shop.acme-example.com (zone ${ZONE})`);
    expect(text).toMatch(
      // A rule may come without a metrics row ("rate-limits.metrics-missing"): its breaches are then —.
      new RegExp(`${ESCAPED_NAME} · rate limit ${FIRST_RULE} · ([\\d,]+|—) breaches in 28 days`),
    );
    for (const id of SIM_IDS.rateLimitRulesUnderAttack) expect(text).toContain(`rate limit ${id}`);
    expect(text).not.toContain("<burst>");
    expect(h.slack.violations).toEqual([]);
  });

  it("/edge ratelimit zone <domain> lists the same rules; a rate-limit id still shows its days", async () => {
    const byDomain = await answerTo(h, "ratelimit zone shop.acme-example.com", "U0002");
    expect(byDomain.text).toContain(`${ESCAPED_NAME} · rate limit ${FIRST_RULE}`);
    const one = await answerTo(h, `ratelimit ${SIM_IDS.rateLimitIds[0]}`, "U0002");
    expect(one.text).toContain("Past 28 days");
  });

  it("/edge ratelimit <id> names the rule and its zone", async () => {
    const one = await answerTo(h, `ratelimit ${FIRST_RULE}`, "U0002");
    expect(one.text).toContain(
      `${ESCAPED_NAME} · rate limit ${FIRST_RULE} on shop.acme-example.com (zone ${ZONE})`,
    );
    expect(one.text).toContain("Past 28 days");
  });

  it("/edge ratelimit <name> finds a rule by its name in any case, and says which when none or several match", async () => {
    // "Everything else" is the fifth rule of the zone under attack alone.
    const [, , , , last] = SIM_IDS.rateLimitRulesUnderAttack;
    const found = await answerTo(h, "ratelimit EVERYTHING else", "U0002");
    expect(found.text).toContain(
      `Everything else · rate limit ${last} on shop.acme-example.com (zone ${ZONE})`,
    );
    expect(found.text).toContain("Past 28 days");

    // Every zone with rules has a login rule: which one is meant is asked, with ids to give.
    const several = await answerTo(h, "ratelimit login", "U0002");
    expect(several.text).toMatch(/\d+ rate-limit rules have names containing "login": /);
    expect(several.text).toContain(
      `${ESCAPED_NAME} · rate limit ${FIRST_RULE} on shop.acme-example.com (zone ${ZONE})`,
    );
    expect(several.text).toContain("Give the one you mean by its id");

    const none = await answerTo(h, "ratelimit nosuchrule", "U0002");
    expect(none.text).toContain(
      `No rate-limit rule's name is or contains "nosuchrule" (${SIM_IDS.shieldZoneCount} shield zones searched)`,
    );
  });

  it("the incident card names its rate limits, escaped", async () => {
    // The card lists the rules that have counters: this one keeps its metrics row, on any seed.
    const seed = h.sim.adversary.seed;
    h.sim.setAdversary({ seed, pin: { "rate-limits.metrics-missing": false } });
    const { text } = await incidentCard(h, ZONE).finally(() => h.sim.setAdversary({ seed }));
    expect(text).toContain(`Rate limit ${FIRST_RULE} · ${ESCAPED_NAME} · `);
    expect(text).not.toContain("<burst>");
  });
});
