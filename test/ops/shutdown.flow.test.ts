import { afterEach, describe, expect, it } from "vitest";
import { RESTARTING_NEW, RESTARTING_UNFINISHED } from "../../src/ops/index.js";
import { BLOCKS, VIEWS } from "../../src/slack/ids.js";
import { SIGNING_SECRET } from "../support/harness.js";
import { type OpsBot, startOpsBot, waitFor } from "../support/ops-bot.js";
import { interactionBody, postSigned } from "../support/slack-signer.js";

let ob: OpsBot | undefined;
afterEach(async () => {
  await ob?.close();
  ob = undefined;
});

const listAppsCalls = (o: OpsBot) => o.sim.requests.filter((r) => r.path.includes("/apps")).length;

describe("graceful shutdown with a slow Edge API (startBot, real loopback HTTP)", () => {
  it("lets a command in flight finish within SHUTDOWN_TIMEOUT_MS, refuses new ones with a sentence, reports not ready", async () => {
    ob = await startOpsBot({ SHUTDOWN_TIMEOUT_MS: "5000" });
    const o = ob;
    o.sim.setLatency(700);
    const first = await o.command("apps");
    expect(first.status).toBe(200);
    await waitFor(() => listAppsCalls(o) === 1, 5000, "the Edge API call");

    const started = Date.now();
    const stopping = o.bot.stop();
    // While draining: readiness fails (load balancers stop sending), liveness holds, new work is refused.
    const ready = await o.get("/readyz");
    expect(ready.status).toBe(503);
    expect(JSON.parse(ready.body)).toMatchObject({ failing: ["shutdown"] });
    expect((await o.get("/healthz")).status).toBe(200);
    const late = await o.command("apps");
    expect(late.status).toBe(200);
    const refusal = await o.slack.waitForResponse(late.responseId);
    expect(refusal.body).toMatchObject({ response_type: "ephemeral", text: RESTARTING_NEW });
    // A modal submitted meanwhile stays open with the sentence on its field instead of closing unsaved.
    const submit = await postSigned(
      `${o.baseUrl}/slack/events`,
      interactionBody({
        type: "view_submission",
        team: { id: "T0001" },
        user: { id: "U0001", team_id: "T0001" },
        api_app_id: "A0001",
        view: {
          id: "V1",
          team_id: "T0001",
          callback_id: VIEWS.keyModal,
          state: { values: { [BLOCKS.keyInput]: {} } },
        },
      }),
      SIGNING_SECRET,
    );
    expect(JSON.parse(submit.body)).toEqual({
      response_action: "errors",
      errors: { [BLOCKS.keyInput]: "edgeops is restarting; submit again in a minute." },
    });

    await stopping;
    const took = Date.now() - started;
    expect(took).toBeGreaterThanOrEqual(400);
    expect(took).toBeLessThan(5000);
    // The command in flight got its real answer, and only that.
    const answers = o.slack.responsesTo(first.responseId);
    expect(answers).toHaveLength(1);
    expect(JSON.stringify(answers[0]?.body)).not.toContain("restarting");
    expect(JSON.stringify(answers[0]?.body)).toMatch(/app/i);
    // The refused command never reached the Edge API and got no other answer.
    expect(listAppsCalls(o)).toBe(1);
    expect(o.slack.responsesTo(late.responseId)).toHaveLength(1);
    // The store is closed.
    await expect(o.bot.deps.store.ping()).rejects.toThrow(/closed/);
    // The server is gone.
    await expect(fetch(`${o.baseUrl}/healthz`)).rejects.toThrow();
  });

  it("answers a command that cannot finish in time with a sentence, silences its late answer, and still stops", async () => {
    ob = await startOpsBot({ SHUTDOWN_TIMEOUT_MS: "300" });
    const o = ob;
    o.sim.setLatency(4000);
    const slow = await o.command("apps");
    expect(slow.status).toBe(200);
    await waitFor(() => listAppsCalls(o) === 1, 5000, "the Edge API call");

    const started = Date.now();
    await o.bot.stop();
    const took = Date.now() - started;
    expect(took).toBeGreaterThanOrEqual(250);
    expect(took).toBeLessThan(3000);

    const answers = await o.slack.waitForResponse(slow.responseId);
    expect(answers.body).toMatchObject({ response_type: "ephemeral", text: RESTARTING_UNFINISHED });
    // The aborted Edge call makes the listener finish with an error; that answer must not follow.
    await new Promise((r) => setTimeout(r, 300));
    expect(o.slack.responsesTo(slow.responseId)).toHaveLength(1);
    const metrics = await o.bot.deps.metrics.registry.getSingleMetricAsString(
      "edgeops_shutdown_abandoned_total",
    );
    expect(metrics).toMatch(/^edgeops_shutdown_abandoned_total 1$/m);
    expect(o.logs.text).toContain("shutdown timeout: work left unfinished");
  });

  it("stops at once when nothing is in flight", async () => {
    ob = await startOpsBot({ SHUTDOWN_TIMEOUT_MS: "10000" });
    const started = Date.now();
    await ob.bot.stop();
    expect(Date.now() - started).toBeLessThan(1500);
    expect(ob.logs.text).toContain("edgeops stopped");
  });
});
