import { afterEach, describe, expect, it } from "vitest";
import { RESTARTING_NEW, RESTARTING_UNFINISHED } from "../../src/ops/index.js";
import { BLOCKS, VIEWS } from "../../src/slack/ids.js";
import { createManualClock } from "../support/clock.js";
import { SIGNING_SECRET } from "../support/harness.js";
import { type OpsBot, startOpsBot } from "../support/ops-bot.js";
import { interactionBody, postSigned } from "../support/slack-signer.js";

let ob: OpsBot | undefined;
afterEach(async () => {
  await ob?.close();
  ob = undefined;
});

const listAppsCalls = (o: OpsBot) => o.sim.requests.filter((r) => r.path.includes("/apps")).length;

/**
 * Resolves once nothing is open at the simulator or the fake Slack, and nothing new was
 * recorded, over five turns of the event loop in a row: "and nothing more happens", without waiting out time.
 */
async function quiet(o: OpsBot): Promise<void> {
  let quietTurns = 0;
  let seen = "";
  for (let turn = 0; turn < 5_000; turn++) {
    await new Promise((resolve) => setImmediate(resolve));
    const now = `${o.slack.calls.length}/${o.slack.responses.length}/${o.sim.requests.length}`;
    const open = o.sim.inFlight() + o.slack.inFlight() + o.bot.deps.edge.queueStats().inFlight;
    quietTurns = open === 0 && now === seen ? quietTurns + 1 : 0;
    seen = now;
    if (quietTurns >= 5) return;
  }
  throw new Error("the bot did not go quiet");
}

/**
 * `/edge apps` in flight, held at the Edge API until `answer()`; then the bot's stop begins (`started`, on
 * `now`), and `stopped()` says whether it has ended.
 */
async function stopWithCommandInFlight(o: OpsBot, now: () => number) {
  let answer = () => {};
  o.sim.addFault({ path: "/mc/apps", holdUntil: new Promise<void>((r) => (answer = r)), times: 1 });
  const command = await o.command("apps");
  expect(command.status).toBe(200);
  await o.sim.waitForRequest((r) => r.path.includes("/apps"));

  const started = now();
  let stopped = false;
  const stopping = o.bot.stop().then(() => {
    stopped = true;
  });
  return { command, answer, started, stopping, stopped: () => stopped };
}

describe("graceful shutdown with a slow Edge API (startBot, real loopback HTTP)", () => {
  it("lets a command in flight finish within SHUTDOWN_TIMEOUT_MS, refuses new ones with a sentence, reports not ready", async () => {
    ob = await startOpsBot({ SHUTDOWN_TIMEOUT_MS: "5000" });
    const o = ob;
    // The Edge API answers the command in flight when the test says (after the drain has been checked).
    const { command: first, answer, started, stopping, stopped } = await stopWithCommandInFlight(o, Date.now);
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

    // Still draining, after all those round trips: the stop waits for the command in flight.
    expect(stopped()).toBe(false);
    answer();
    await stopping;
    const took = Date.now() - started;
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
    // The bot on a manual clock: its shutdown deadline passes as the test moves time.
    const clock = createManualClock(Date.UTC(2026, 7, 20, 10, 0, 30));
    ob = await startOpsBot({ SHUTDOWN_TIMEOUT_MS: "300" }, { clock });
    const o = ob;
    // The Edge API does not answer the command before the deadline (held until after the stop).
    const { command: slow, answer, started, stopping, stopped } = await stopWithCommandInFlight(o, clock.now);
    // Up to a millisecond before its 300 ms deadline the stop still waits for the command in flight.
    await clock.advance(299);
    expect(stopped()).toBe(false);
    // At the deadline it gives up on it and stops; what is left (answering it, closing) needs no more time.
    await clock.advance(1);
    for (let turn = 0; turn < 10_000 && !stopped(); turn++) await clock.advance(0);
    await stopping;
    expect(clock.now() - started).toBe(300);

    const answers = await o.slack.waitForResponse(slow.responseId);
    expect(answers.body).toMatchObject({ response_type: "ephemeral", text: RESTARTING_UNFINISHED });
    // The aborted Edge call makes the listener finish with an error; that answer must not follow, even
    // once the Edge API answers after all.
    answer();
    await quiet(o);
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
