import { describe, expect, it } from "vitest";
import { blocksText, startHarness } from "../../support/harness.js";
import { useHarness } from "../../support/use-harness.js";

const MIB = 1024 * 1024;

describe("an Edge API answer over EDGE_API_MAX_BODY_BYTES (default 10 MiB)", () => {
  const h = useHarness({}, { resetEach: false });

  it("gets a sentence saying what to do, is read no further and not retried; the next answer is normal", async () => {
    expect(h.config.edge.maxBodyBytes).toBe(10 * MIB);
    h.sim.addFault({ path: "/shield/shield-zones", padToBytes: 11 * MIB, times: 1 });
    h.sim.clearRequests();
    const res = await h.command("zones");
    expect(res.status).toBe(200);
    const answer = await h.slack.waitForResponse(res.responseId);
    const text = blocksText(answer.body.blocks) || String(answer.body.text);
    expect(text).toContain("The Edge API's answer was larger than edgeops accepts");
    expect(text).toContain("EDGE_API_MAX_BODY_BYTES");
    expect(h.sim.requests.filter((r) => r.path === "/shield/shield-zones")).toHaveLength(1);
    expect(h.logs.text).toMatch(/"kind":"too_large"/);

    const again = await h.command("zones");
    const normal = await h.slack.waitForResponse(again.responseId);
    expect(blocksText(normal.body.blocks)).toMatch(/zone/i);
    expect(blocksText(normal.body.blocks)).not.toContain("larger than edgeops accepts");
  });

  it("a smaller limit applies as configured", async () => {
    const small = await startHarness({ env: { EDGE_API_MAX_BODY_BYTES: String(64 * 1024) }, sim: h.sim });
    try {
      small.sim.addFault({ path: "/mc/apps", padToBytes: 128 * 1024, times: 1 });
      const res = await small.command("apps");
      const answer = await small.slack.waitForResponse(res.responseId);
      expect(blocksText(answer.body.blocks) || String(answer.body.text)).toContain(
        "larger than edgeops accepts",
      );
    } finally {
      await small.close();
    }
  });
});
