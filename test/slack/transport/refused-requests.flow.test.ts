import { afterEach, describe, expect, it } from "vitest";
import { createWorkTracker } from "../../../src/ops/shutdown.js";
import { FUNCTIONS } from "../../../src/slack/ids.js";
import { STEP_REFUSED_SHUTDOWN } from "../../../src/slack/refused.js";
import { OTHER_WORKSPACE_SENTENCE } from "../../../src/slack/transport/connection.js";
import { NOT_INSTALLED_SENTENCE } from "../../../src/store/installations.js";
import { type Harness, SIGNING_SECRET, startHarness } from "../../support/harness.js";
import { postSigned, slashCommandBody } from "../../support/slack-signer.js";

/**
 * The HTTP front thread acknowledges at once; a request then refused (authorization,
 * shutdown) is logged and counted in /metrics, and a workflow step is completed with a sentence.
 */

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

async function refusedCount(harness: Harness, reason: string, kind: string): Promise<number> {
  const metric = (await harness.deps.metrics.registry.getMetricsAsJSON()).find(
    (m) => m.name === "edgeops_slack_refused_total",
  );
  const values = (metric?.values ?? []) as { value: number; labels: Record<string, string> }[];
  return values.find((v) => v.labels.reason === reason && v.labels.kind === kind)?.value ?? 0;
}

const refusalLogs = (harness: Harness) =>
  harness.logs.lines
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .filter((l) => l.msg === "an acknowledged Slack request was refused");

describe("a workflow step refused after its ack completes with a sentence", () => {
  it("from a workspace the single bot token does not serve", async () => {
    h = await startHarness();
    const harness = h;
    // The token check (auth.test) is done: the single token's workspace is known.
    await h.slack.waitForCall("auth.test");
    await harness.settled();
    expect(harness.app.problem()).toBeUndefined();
    const run = await h.functionExecuted(FUNCTIONS.zoneStatus, { zone: "1" }, { teamId: "T0OTHER" });
    expect(run.status).toBe(200);
    const done = await h.slack.waitForCompletion(run.executionId);
    expect(done).toMatchObject({ kind: "error", error: OTHER_WORKSPACE_SENTENCE, token: run.token });
    expect(await refusedCount(h, "authorization", "function_executed")).toBe(1);
    expect(refusalLogs(h)).toEqual([
      expect.objectContaining({
        reason: "authorization",
        kind: "function_executed",
        functionExecutionId: run.executionId,
      }),
    ]);
    // The step's token is never logged.
    expect(h.logs.text).not.toContain(run.token);
  });

  it("from a workspace with no installation (OAuth)", async () => {
    h = await startHarness({ oauth: true });
    const run = await h.functionExecuted(FUNCTIONS.zoneStatus, { zone: "1" }, { teamId: "T0GONE" });
    const done = await h.slack.waitForCompletion(run.executionId);
    expect(done).toMatchObject({ kind: "error", error: NOT_INSTALLED_SENTENCE });
    expect(await refusedCount(h, "authorization", "function_executed")).toBe(1);
  });

  it("while shutting down; a refused command is counted too", async () => {
    let tracker: ReturnType<typeof createWorkTracker> | undefined;
    const middleware = async (args: Parameters<ReturnType<typeof createWorkTracker>["middleware"]>[0]) =>
      tracker!.middleware(args);
    h = await startHarness({ middleware: [middleware] });
    const harness = h;
    tracker = createWorkTracker({ logger: h.deps.logger, metrics: h.deps.metrics, clock: h.deps.clock });
    tracker.onRefused((body) => harness.app.refused(body, "shutdown", STEP_REFUSED_SHUTDOWN));
    tracker.beginStop();
    const run = await h.functionExecuted(FUNCTIONS.zoneStatus, { zone: "1" });
    const done = await h.slack.waitForCompletion(run.executionId);
    expect(done).toMatchObject({ kind: "error", error: STEP_REFUSED_SHUTDOWN });
    expect(await refusedCount(h, "shutdown", "function_executed")).toBe(1);
    const cmd = await h.command("help");
    await h.slack.waitForResponse(cmd.responseId);
    await harness.settled();
    expect(refusalLogs(harness)).toHaveLength(2);
    expect(await refusedCount(h, "shutdown", "command")).toBe(1);
  });
});

describe("the front thread bounds what it hands to the main thread", () => {
  it("a signed body over 1 MiB is answered 413 and never runs", async () => {
    h = await startHarness();
    const responseUrl = h.slack.responseUrl("huge");
    const body = slashCommandBody({ text: `help ${"x".repeat(1024 * 1024)}`, responseUrl });
    const res = await postSigned(h.eventsUrl, body, SIGNING_SECRET);
    expect(res.status).toBe(413);
    const small = await h.command("help");
    await h.slack.waitForResponse(small.responseId);
    expect(h.slack.responsesTo("huge")).toEqual([]);
  });
});
