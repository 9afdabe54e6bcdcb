import { describe, expect, it } from "vitest";
import { SIM_IDS } from "../../../tools/simulator/index.js";
import { answerTo } from "../../support/harness.js";
import { useHarness } from "../../support/use-harness.js";
import { BOB } from "../../support/users.js";

/** A word typed with a slip of a letter or two gets "did you mean …?" with the word it was near. */

const ZONE = SIM_IDS.zoneUnderAttack;

const h = useHarness();

describe("did you mean", () => {
  it("suggests the bot category, the action and the setting meant", async () => {
    const category = await answerTo(h, `bot ${ZONE} aiscrapr block`, BOB);
    expect(category.text).toContain('"aiscrapr" is not a bot category. Did you mean aiscraper?');

    const action = await answerTo(h, `bot ${ZONE} seo blok`, BOB);
    expect(action.text).toContain('"blok" is not an action. Did you mean block?');
    const missing = await answerTo(h, `bot ${ZONE} seo`, BOB);
    expect(missing.text).toContain("Say what to do: block, allow or clear");

    const ddos = await answerTo(h, `ddos ${ZONE} hgh`, BOB);
    expect(ddos.text).toContain('"hgh" is not a DDoS sensitivity. Did you mean high?');

    // Nothing near: no guess.
    const far = await answerTo(h, `bot ${ZONE} weather block`, BOB);
    expect(far.text).toContain('"weather" is not a bot category.');
    expect(far.text).not.toContain("Did you mean");
  });

  it("suggests the shield zone domain and the DNS zone domain meant, from the account's zones", async () => {
    const shield = await answerTo(h, "bots shop.acme-exampel.com", BOB);
    expect(shield.text).toContain(`Did you mean ${SIM_IDS.domainUnderAttack} (zone ${ZONE})?`);

    const dns = await answerTo(h, "dns bigcorp-exmaple.net", BOB);
    expect(dns.text).toContain(`Did you mean bigcorp-example.net (${SIM_IDS.dnsZoneLarge})?`);

    const far = await answerTo(h, "dns nothing-like-it.org", BOB);
    expect(far.text).toContain('No DNS zone has the domain "nothing-like-it.org"');
    expect(far.text).not.toContain("Did you mean");
  });
});
