/**
 * The commands render any answer the documents allow without an internal error. Each
 * command's Edge API answers are replaced by ones generated from the documented 200 schemas (the
 * seeded generator of test/support/answer-generator.ts) and the reply is read as a user would.
 */
import { describe, expect, it } from "vitest";
import { exactPath, SIM_IDS } from "../../../tools/simulator/index.js";
import { documented, type Family, type Mode, rng, sample } from "../../support/answer-generator.js";
import { blocksText } from "../../support/harness.js";
import { useHarness } from "../../support/use-harness.js";

const h = useHarness({}, { resetEach: false });

const Z = SIM_IDS.zoneQuiet;
type Answer = [Family, "get" | "post", string, string | RegExp];
const shield = (template: string, path: string | RegExp): Answer => ["shield", "get", template, path];

const COMMANDS: Array<{ text: string; answers: Answer[]; card?: boolean }> = [
  { text: "zones", answers: [shield("/shield/shield-zones", exactPath("/shield/shield-zones"))] },
  { text: "apps", answers: [["mc", "get", "/apps", exactPath("/mc/apps")]] },
  {
    text: `bots ${Z}`,
    answers: [
      shield(
        "/shield/shield-zone/{shieldZoneId}/bot-detection",
        exactPath(`/shield/shield-zone/${Z}/bot-detection`),
      ),
      shield(
        "/shield/shield-zone/{shieldZoneId}/bot-categorization",
        exactPath(`/shield/shield-zone/${Z}/bot-categorization`),
      ),
    ],
  },
  {
    text: "ratelimit 7001",
    answers: [shield("/shield/metrics/rate-limit/{id}", exactPath("/shield/metrics/rate-limit/7001"))],
  },
  {
    text: `waf ${Z} 942100`,
    answers: [
      shield(
        "/shield/waf/rules/review-triggered/ai-recommendation/{shieldZoneId}/{ruleId}",
        /\/ai-recommendation\//,
      ),
    ],
  },
  {
    text: `incident ${Z}`,
    card: true,
    answers: [
      shield("/shield/shield-zone/{shieldZoneId}", exactPath(`/shield/shield-zone/${Z}`)),
      shield("/shield/metrics/overview/{shieldZoneId}", exactPath(`/shield/metrics/overview/${Z}`)),
      shield(
        "/shield/metrics/overview/{shieldZoneId}/detailed",
        exactPath(`/shield/metrics/overview/${Z}/detailed`),
      ),
      [
        "shield",
        "post",
        "/shield/event-logs/{shieldZoneId}/search",
        exactPath(`/shield/event-logs/${Z}/search`),
      ],
      shield(
        "/shield/waf/rules/review-triggered/{shieldZoneId}",
        exactPath(`/shield/waf/rules/review-triggered/${Z}`),
      ),
      shield("/shield/metrics/rate-limits/{shieldZoneId}", exactPath(`/shield/metrics/rate-limits/${Z}`)),
      shield(
        "/shield/shield-zone/{shieldZoneId}/access-lists",
        exactPath(`/shield/shield-zone/${Z}/access-lists`),
      ),
    ],
  },
];

const MODES: Mode[] = ["nulls", "absent", "full", "limits", "random"];

describe("commands over generated answers", () => {
  for (const command of COMMANDS) {
    it(`/edge ${command.text}`, { timeout: 120_000 }, async () => {
      for (const mode of MODES)
        for (let seed = 1; seed <= (command.card ? 1 : 3); seed++) {
          h.sim.clearFaults();
          for (const [family, method, template, path] of command.answers)
            h.sim.addFault({
              path,
              status: 200,
              body:
                sample(family, documented(family, method, template), mode, rng(seed * 7919), 0, seed) ?? {},
            });
          const res = await h.command(command.text, { userId: "U0001" });
          expect(res.status).toBe(200);
          const answer = command.card
            ? await h.slack.waitForResponse(res.responseId, (r) => r.body.replace_original === true, 30_000)
            : await h.slack.waitForResponse(res.responseId);
          const text = blocksText(answer.body.blocks);
          expect([mode, seed, text]).not.toEqual([
            mode,
            seed,
            expect.stringContaining("Something went wrong"),
          ]);
          expect(text.length).toBeGreaterThan(0);
        }
      h.sim.clearFaults();
      expect(h.slack.violations).toEqual([]);
    });
  }
});
