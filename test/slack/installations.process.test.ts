import { describe, expect, it } from "vitest";
import { NOT_CONNECTED_SENTENCE, OTHER_WORKSPACE_SENTENCE } from "../../src/slack/transport/connection.js";
import { waitFor } from "../ops/process-support.js";
import { blocksText, startHarness } from "../support/harness.js";
import { BOB } from "../support/users.js";

/**
 * A single-token install whose token check Slack has not answered yet. On the process floor because the
 * bot itself waits in real time here (src/slack/transport/connection.ts: the token check and a request's
 * wait for its first answer, AUTHORIZE_WAIT_MS, run on the real clock, on Slack's sockets), and the fake
 * Slack's slow auth.test is real time too: a request must find auth.test still unanswered after that wait.
 */

describe("a single-token install before Slack named its token's workspace", () => {
  it("serves no request until auth.test answers, then only its own workspace", async () => {
    const h = await startHarness({
      env: { EDGE_API_KEY: "sim-deployment-key-0000" },
      slackFaults: [{ method: "auth.test", latencyMs: 4_000, times: 1 }],
    });
    try {
      const sentenceOf = async (teamId: string) => {
        const res = await h.command("zones", { teamId, userId: BOB });
        expect(res.status).toBe(200);
        const answer = await h.slack.waitForResponse(res.responseId, () => true, 10_000);
        return answer.body.text ?? blocksText(answer.body.blocks);
      };
      expect(h.app.problem()).toBeDefined();
      expect(await sentenceOf("T0OTHER")).toBe(NOT_CONNECTED_SENTENCE);
      expect(h.sim.requests).toEqual([]);

      await waitFor(() => h.app.problem() === undefined, 10_000);
      expect(await sentenceOf("T0OTHER")).toBe(OTHER_WORKSPACE_SENTENCE);
      expect(h.sim.requests).toEqual([]);
      expect(await sentenceOf("T0001")).toBe("Shield zones, page 1");
      expect(h.sim.requests.length).toBeGreaterThan(0);
    } finally {
      await h.close();
    }
  }, 30_000);
});
