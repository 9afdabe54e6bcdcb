import { readFileSync } from "node:fs";
import { beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { planTypeLabel } from "../../../src/edge/schemas/shield.js";
import { createChangeSweeper } from "../../../src/jobs/change-sweeps.js";
import { NO_KEY_SENTENCE } from "../../../src/services/edge-access.js";
import { STEP_RETRY_MS, stepRequestId } from "../../../src/slack/functions/completion.js";
import { FUNCTIONS } from "../../../src/slack/ids.js";
import { storeInternals } from "../../../src/store/index.js";
import { SIM_IDS } from "../../../tools/simulator/index.js";
import { onPostgres, postgresTests } from "../../support/both-stores.js";
import { pendingCard } from "../../support/change-flow.js";
import type { FunctionCompletion } from "../../support/fake-slack.js";
import {
  BOT_TOKEN,
  blocksText,
  type Harness,
  type HarnessOptions,
  startHarness,
} from "../../support/harness.js";
import { useHarness } from "../../support/use-harness.js";
import { ALICE, BOB, CAROL } from "../../support/users.js";
import { startWorld } from "../../support/world.js";

/**
 * Workflow Builder steps, through the real receiver (signed function_executed events),
 * the fake Slack (functions.completeSuccess / completeError, one completion per execution as Slack
 * does) and the Edge API simulator. The request steps go through the same change flow as /edge.
 */

const CHANNEL = "C0001";
const ZONE = SIM_IDS.zoneByDomain.shieldZoneId;
const DOMAIN = SIM_IDS.zoneByDomain.domain;

interface Parameter {
  type: string;
}
interface FunctionDefinition {
  input_parameters: { properties: Record<string, Parameter>; required?: string[] };
  output_parameters: { properties: Record<string, Parameter>; required?: string[] };
}
const manifest = parse(readFileSync(new URL("../../../manifest.yml", import.meta.url), "utf8")) as {
  functions: Record<string, FunctionDefinition>;
};

/** What Slack checks when a step completes: only declared outputs, every required one, of its type. */
function expectOutputsMatchManifest(callbackId: string, outputs: Record<string, unknown>) {
  const def = manifest.functions[callbackId]!.output_parameters;
  for (const [name, value] of Object.entries(outputs)) {
    const declared = def.properties[name];
    expect(declared, `${callbackId} output ${name} is not in manifest.yml`).toBeDefined();
    const type = declared!.type;
    if (type === "integer") expect(Number.isInteger(value), `${name} is an integer`).toBe(true);
    else if (type === "boolean") expect(typeof value, name).toBe("boolean");
    else expect(typeof value, name).toBe("string");
  }
  for (const name of def.required ?? [])
    expect(outputs, `${callbackId} requires ${name}`).toHaveProperty(name);
}

const botPuts = (h: Harness) =>
  h.sim.requests.filter((r) => r.method === "PUT" && /bot-categorization\/categories/.test(r.path));
/** Put a bot category's action in the simulator, so a request is (or is not) already in force. */
function setCategory(h: Harness, category: number, action: number) {
  const group = h.sim.state.botCategories.get(ZONE)?.find((g) => g.category === category);
  if (!group) throw new Error(`the simulator has no category ${category} on zone ${ZONE}`);
  group.categoryAction = action;
}

const completionsOf = (h: Harness, executionId: string): FunctionCompletion[] =>
  h.slack.completions.filter((c) => c.executionId === executionId);

const botInputs = (over: Record<string, unknown> = {}) => ({
  zone: DOMAIN,
  category: "aiscraper",
  action: "block",
  channel: CHANNEL,
  requester: ranBy(BOB),
  ...over,
});

/** The "request a bot category change" step runs in a workflow, with botInputs overridden by `over`. */
const requestBotCategoryStep = (h: Harness, over: Record<string, unknown>) =>
  h.functionExecuted(FUNCTIONS.requestBotCategoryChange, botInputs(over));

/**
 * The requester input as Slack fills a `slack#/types/user_context`: the person who ran the workflow
 * (the workflow's author can't set it), with the secret Slack adds to it.
 */
const ranBy = (id: string) => ({ id, secret: `uctx-secret-of-${id}` });

/** The requesters are members of the channels their steps post in (request and DNS summary steps check it). */
function joinChannels(h: Harness) {
  for (const user of [ALICE, BOB, CAROL]) h.slack.memberships.set(user, [CHANNEL, "C0NOTIN", "C0DNS"]);
}

/** Let anything in flight land (a second completion would show up here): each bot quiet, not a pause. */
async function settle(...bots: Harness[]): Promise<void> {
  for (const bot of bots) await bot.settled();
}

describe("Workflow Builder steps", () => {
  const h = useHarness();
  beforeAll(async () => {
    joinChannels(h);
  });

  it("Request a bot category change: waits for another person's approval, applies once, completes once with the request id and final state", async () => {
    setCategory(h, 2, 0);
    h.sim.clearRequests();
    const run = await h.functionExecuted(FUNCTIONS.requestBotCategoryChange, botInputs());
    expect(run.status).toBe(200);
    const { approve } = await pendingCard(h, "Block AI scraper on shield zone");
    await settle(h);
    expect(completionsOf(h, run.executionId)).toEqual([]);
    expect(botPuts(h)).toHaveLength(0);

    // The requester can't approve their own request: still waiting.
    await h.click(approve, { userId: BOB });
    await settle(h);
    expect(completionsOf(h, run.executionId)).toEqual([]);
    expect(botPuts(h)).toHaveLength(0);

    await h.click(approve, { userId: CAROL });
    const done = await h.slack.waitForCompletion(run.executionId);
    expect(done.kind).toBe("success");
    expect(done.outputs).toMatchObject({
      request_id: stepRequestId(run.executionId),
      final_state: "applied",
      decided_by: CAROL,
    });
    expect(done.outputs!.summary).toContain(`Block AI scraper on shield zone ${ZONE}: applied`);
    expectOutputsMatchManifest(FUNCTIONS.requestBotCategoryChange, done.outputs!);
    // Completed with the execution's own token, as Bolt's complete() would.
    expect(done.token).toBe(run.token);
    expect(botPuts(h)).toHaveLength(1);
    expect(botPuts(h)[0]!.body).toEqual({ action: 1 });
    const request = await h.store.changeRequests.get(stepRequestId(run.executionId));
    expect(request).toMatchObject({
      state: "applied",
      requesterId: BOB,
      channelId: CHANNEL,
      decidedBy: CAROL,
    });

    // Neither the sweeper nor Slack delivering the same event again completes it a second time.
    await createChangeSweeper(h.app.env).sweep();
    await h.functionExecuted(FUNCTIONS.requestBotCategoryChange, botInputs(), {
      executionId: run.executionId,
    });
    await settle(h);
    expect(completionsOf(h, run.executionId)).toHaveLength(1);
    expect(botPuts(h)).toHaveLength(1);

    // The token was sealed: not in the logs, not in any stored row in the clear.
    expect(h.logs.text).not.toContain(run.token);
    const db = storeInternals(h.store).rawDb;
    const rows = await db.selectFrom("function_executions").selectAll().execute();
    expect(rows.length).toBeGreaterThan(0);
    expect(JSON.stringify(rows)).not.toContain(run.token);
  }, 20_000);

  it("the person who ran the workflow (user_context) is the requester: an approver who runs it can't approve it themselves", async () => {
    h.sim.clearRequests();
    const requester = ranBy(CAROL);
    const run = await h.functionExecuted(FUNCTIONS.requestBlock, {
      zone: String(ZONE),
      entry: "203.0.113.78",
      channel: CHANNEL,
      requester,
    });
    const { post, approve } = await pendingCard(h, "Block IP 203.0.113.78");

    const own = await h.click(approve, { userId: CAROL });
    const refusal = await h.slack.waitForResponse(own.responseId);
    expect(JSON.stringify(refusal.body)).toContain("someone else has to approve it");
    await settle(h);
    expect(completionsOf(h, run.executionId)).toEqual([]);
    expect(h.sim.requests.filter((r) => r.method !== "GET")).toEqual([]);
    expect(await h.store.changeRequests.get(stepRequestId(run.executionId))).toMatchObject({
      state: "pending",
      requesterId: CAROL,
    });

    await h.click(approve, { userId: ALICE });
    const done = await h.slack.waitForCompletion(run.executionId);
    expect(done.outputs).toMatchObject({ final_state: "applied", decided_by: ALICE });
    expect(h.sim.requests.filter((r) => r.method !== "GET").length).toBeGreaterThan(0);
    // The user_context's secret is Slack's, not something to show or keep.
    const stored = await h.store.changeRequests.get(stepRequestId(run.executionId));
    expect(JSON.stringify(stored)).not.toContain(requester.secret);
    expect(JSON.stringify(h.slack.calls)).not.toContain(requester.secret);
    expect(blocksText(post.args.blocks)).toContain(CAROL);
  }, 20_000);

  it("Request a block: a rejection completes the step with final state rejected, and nothing is blocked", async () => {
    h.sim.clearRequests();
    const run = await h.functionExecuted(FUNCTIONS.requestBlock, {
      zone: String(ZONE),
      entry: "203.0.113.77",
      channel: CHANNEL,
      requester: ranBy(BOB),
    });
    const { reject } = await pendingCard(h, "Block IP 203.0.113.77");
    await h.click(reject, { userId: CAROL });
    const done = await h.slack.waitForCompletion(run.executionId);
    expect(done.kind).toBe("success");
    expect(done.outputs).toMatchObject({ final_state: "rejected", decided_by: CAROL });
    expectOutputsMatchManifest(FUNCTIONS.requestBlock, done.outputs!);
    expect(h.sim.requests.filter((r) => r.method !== "GET")).toEqual([]);
  }, 20_000);

  it("a request nobody decides expires (the sweeper, with the clock moved on) and the step completes with expired", async () => {
    setCategory(h, 1, 0);
    const run = await h.functionExecuted(FUNCTIONS.requestBotCategoryChange, botInputs({ category: "seo" }));
    await pendingCard(h, "Block SEO");
    h.advanceClock(31 * 60_000);
    expect(await createChangeSweeper(h.app.env).sweep()).toBeGreaterThanOrEqual(1);
    const done = await h.slack.waitForCompletion(run.executionId);
    expect(done.outputs).toMatchObject({
      request_id: stepRequestId(run.executionId),
      final_state: "expired",
    });
    expect(done.outputs).not.toHaveProperty("decided_by");
    await settle(h);
    expect(completionsOf(h, run.executionId)).toHaveLength(1);
  }, 20_000);

  it("a completion Slack did not take is tried again by the sweeper, once", async () => {
    setCategory(h, 5, 0);
    const run = await h.functionExecuted(FUNCTIONS.requestBotCategoryChange, botInputs({ category: "ads" }));
    const { approve } = await pendingCard(h, "Block Ads");
    h.slack.addFault({ method: "functions.completeSuccess", error: "internal_error", times: 1 });
    await h.click(approve, { userId: CAROL });
    await h.slack.waitForCall("functions.completeSuccess");
    await settle(h);
    expect(completionsOf(h, run.executionId)).toEqual([]); // the fault answered before it was recorded
    const row = await h.store.functionExecutions.get(run.executionId);
    expect(row).toMatchObject({ state: "waiting", attempts: 1 });

    // Not before its retry time; then once.
    await createChangeSweeper(h.app.env).sweep();
    expect(completionsOf(h, run.executionId)).toEqual([]);
    h.advanceClock(STEP_RETRY_MS + 1_000);
    await createChangeSweeper(h.app.env).sweep();
    const done = await h.slack.waitForCompletion(run.executionId);
    expect(done.outputs).toMatchObject({ final_state: "applied" });
    await createChangeSweeper(h.app.env).sweep();
    await settle(h);
    expect(completionsOf(h, run.executionId)).toHaveLength(1);
    expect(await h.store.functionExecutions.get(run.executionId)).toMatchObject({ state: "completed" });
  }, 20_000);

  it("an apply the Edge API did not answer in time: the step waits for the reconciler's answer, then completes", async () => {
    // On a world: the Edge client's 2 s timeout passes when the test moves the one clock.
    const w = await startWorld();
    let release = () => {};
    try {
      joinChannels(w);
      setCategory(w, 7, 0);
      const run = await requestBotCategoryStep(w, { category: "social" });
      const { approve } = await pendingCard(w, "Block Social");
      // Each attempt of the PUT (it is safe to repeat: tried three times) reaches the simulator and is held
      // there past the client's timeout; the held PUTs are applied after.
      const isPut = (r: { method: string; path: string }) =>
        r.method === "PUT" && /bot-categorization/.test(r.path);
      w.sim.addFault({
        method: "PUT",
        path: /bot-categorization/,
        holdUntil: new Promise<void>((r) => (release = r)),
        times: 3,
      });
      await w.click(approve, { userId: CAROL });
      for (let attempt = 1; attempt <= 3; attempt++) {
        await w.sim.waitForRequest(() => w.sim.requests.filter(isPut).length >= attempt);
        await w.clock.advance(2_000);
      }
      await w.slack.waitForCall("chat.update", (c) => blocksText(c.args.blocks).includes("Not known yet"));
      await settle(w);
      expect(completionsOf(w, run.executionId)).toEqual([]);
      // The Edge API answers too late: the change is in force, and only the reconciler can tell.
      release();
      await settle(w);
      expect(w.sim.state.botCategories.get(ZONE)?.find((g) => g.category === 7)?.categoryAction).toBe(1);
      w.advanceClock(61_000);
      await createChangeSweeper(w.app.env).sweep();
      const done = await w.slack.waitForCompletion(run.executionId);
      expect(done.outputs).toMatchObject({ final_state: "applied", decided_by: CAROL });
      await settle(w);
      expect(completionsOf(w, run.executionId)).toHaveLength(1);
    } finally {
      release();
      await w.close();
    }
  }, 30_000);

  it("a step token Slack no longer accepts: completed with the workspace's bot token instead", async () => {
    setCategory(h, 3, 0);
    const run = await requestBotCategoryStep(h, { category: "aitool" });
    const { approve } = await pendingCard(h, "Block AI tool");
    h.slack.addFault({ method: "functions.completeSuccess", error: "token_expired", times: 1 });
    await h.click(approve, { userId: CAROL });
    const done = await h.slack.waitForCompletion(run.executionId);
    expect(done.outputs).toMatchObject({ final_state: "applied" });
    expect(done.token).toBe(BOT_TOKEN);
    const tried = h.slack.callsTo("functions.completeSuccess").map((c) => c.token);
    expect(tried).toEqual([run.token, BOT_TOKEN]);
  }, 20_000);

  it("a change already in force completes at once with final state unchanged, without a request", async () => {
    setCategory(h, 4, 1);
    const again = await requestBotCategoryStep(h, { category: "tool" });
    const done = await h.slack.waitForCompletion(again.executionId);
    expect(done.outputs).toMatchObject({ final_state: "unchanged" });
    expect(done.outputs!.summary).toContain("already in force");
    expectOutputsMatchManifest(FUNCTIONS.requestBotCategoryChange, done.outputs!);
    expect(await h.store.changeRequests.get(stepRequestId(again.executionId))).toBeUndefined();
  }, 20_000);

  it.each([
    [
      "no requester",
      FUNCTIONS.requestBotCategoryChange,
      botInputs({ requester: undefined }),
      /did not get the person who ran the workflow/,
    ],
    [
      "a requester given as a plain user id, not as who ran the workflow",
      FUNCTIONS.requestBotCategoryChange,
      botInputs({ requester: CAROL }),
      /did not get the person who ran the workflow/,
    ],
    [
      "a requester without its user id",
      FUNCTIONS.requestBlock,
      { zone: String(ZONE), entry: "203.0.113.9", channel: CHANNEL, requester: { secret: "s" } },
      /did not get the person who ran the workflow/,
    ],
    [
      "a requester whose id is not a Slack user id",
      FUNCTIONS.requestBotCategoryChange,
      botInputs({ requester: { id: "<!channel>", secret: "s" } }),
      /did not get the person who ran the workflow/,
    ],
    [
      "no channel",
      FUNCTIONS.requestBlock,
      { zone: "1", entry: "203.0.113.9", requester: ranBy(BOB) },
      /Choose the channel/,
    ],
    [
      "an unknown action",
      FUNCTIONS.requestBotCategoryChange,
      botInputs({ action: "nuke" }),
      /block, allow or clear/,
    ],
    [
      "an unknown category",
      FUNCTIONS.requestBotCategoryChange,
      botInputs({ category: "robots" }),
      /"robots" is not a bot category/,
    ],
    [
      "something that can't be blocked",
      FUNCTIONS.requestBlock,
      { zone: String(ZONE), entry: "not an ip", channel: CHANNEL, requester: ranBy(BOB) },
      /IP|ASN|country/,
    ],
    [
      "a domain no zone has",
      FUNCTIONS.requestBotCategoryChange,
      botInputs({ zone: "nosuch.example.org" }),
      /No shield zone has the domain or pull zone name "nosuch\.example\.org"/,
    ],
    ["a zone that does not exist", FUNCTIONS.zoneStatus, { zone: String(SIM_IDS.unknownShieldZone) }, /\S/],
    [
      "a window it does not know",
      FUNCTIONS.zoneStatus,
      { zone: String(ZONE), window: "2w" },
      /15m, 1h, 6h, 24h, 72h/,
    ],
    ["no DNS zone id", FUNCTIONS.dnsSummary, { channel: CHANNEL }, /DNS zone's id/],
  ])(
    "bad input (%s) completes the step with an error sentence, and asks for nothing",
    async (_l, id, inputs, sentence) => {
      const pendingBefore = (await h.store.changeRequests.countByState("T0001")).pending;
      const run = await h.functionExecuted(id, inputs as Record<string, unknown>);
      const done = await h.slack.waitForCompletion(run.executionId, 10_000);
      expect(done.kind).toBe("error");
      expect(done.error).toMatch(sentence);
      expect(done.error).not.toMatch(/Error:|at .*\.ts|ZodError|undefined/);
      expect((await h.store.changeRequests.countByState("T0001")).pending).toBe(pendingBefore);
      expect(h.slack.callsTo("chat.postMessage")).toEqual([]);
    },
    20_000,
  );

  it("an Edge API failure while reading the current value completes with an error, no request is left", async () => {
    h.sim.addFault({ method: "GET", path: /bot-categorization/, status: 500, body: "none" });
    const run = await requestBotCategoryStep(h, { category: "social" });
    const done = await h.slack.waitForCompletion(run.executionId, 15_000);
    expect(done.kind).toBe("error");
    expect(done.error).toMatch(/Edge API|bunny/i);
    expect(await h.store.changeRequests.get(stepRequestId(run.executionId))).toBeUndefined();
    await settle(h);
    expect(await h.store.functionExecutions.get(run.executionId)).toMatchObject({ state: "completed" });
  }, 20_000);

  it("an error Slack did not take (no request to wait on) is completed by the sweeper later, once", async () => {
    h.sim.addFault({ method: "GET", path: /bot-categorization/, status: 500, body: "none" });
    h.slack.addFault({ method: "functions.completeError", error: "internal_error", times: 1 });
    const run = await h.functionExecuted(FUNCTIONS.requestBotCategoryChange, botInputs({ category: "seo" }));
    await h.slack.waitForCall("functions.completeError", () => true, 15_000);
    await settle(h);
    expect(completionsOf(h, run.executionId)).toEqual([]);
    h.advanceClock(STEP_RETRY_MS + 1_000);
    await createChangeSweeper(h.app.env).sweep();
    const done = await h.slack.waitForCompletion(run.executionId);
    expect(done.kind).toBe("error");
    expect(done.error).toMatch(/Edge API|bunny/i);
    await createChangeSweeper(h.app.env).sweep();
    await settle(h);
    expect(completionsOf(h, run.executionId)).toHaveLength(1);
  }, 30_000);

  it("an approval channel the bot is not in: the request is cancelled and the step says what to do", async () => {
    setCategory(h, 6, 0);
    h.slack.addFault({ method: "chat.postMessage", channel: "C0NOTIN", error: "not_in_channel" });
    const run = await requestBotCategoryStep(h, { category: "preview", channel: "C0NOTIN" });
    const done = await h.slack.waitForCompletion(run.executionId);
    expect(done.kind).toBe("error");
    expect(done.error).toMatch(/invite|member|channel/i);
    expect(done.error).toContain("nothing changed");
    expect(await h.store.changeRequests.get(stepRequestId(run.executionId))).toMatchObject({
      state: "cancelled",
    });
  }, 20_000);

  it("a workspace without an Edge API key: the step says an admin can set one", async () => {
    // Its own harness: a single-token install answers only its token's workspace.
    const nokey = await startHarness({ seedKey: false });
    try {
      const run = await nokey.functionExecuted(FUNCTIONS.zoneStatus, { zone: String(ZONE) });
      const done = await nokey.slack.waitForCompletion(run.executionId);
      expect(done).toMatchObject({ kind: "error", error: NO_KEY_SENTENCE });
    } finally {
      await nokey.close();
    }
  }, 20_000);

  it("Get zone status: plan, WAF mode and attack counts of a zone found by domain", async () => {
    const run = await h.functionExecuted(FUNCTIONS.zoneStatus, { zone: DOMAIN, window: "1h" });
    const done = await h.slack.waitForCompletion(run.executionId, 15_000);
    expect(done.kind, done.error).toBe("success");
    const zone = h.sim.state.shieldZones.find((z) => z.shieldZoneId === ZONE)!;
    expect(done.outputs).toMatchObject({
      zone_id: ZONE,
      domain: DOMAIN,
      plan: planTypeLabel(zone.planType),
      window: "1h",
    });
    expect(["Log", "Block", "Off"]).toContain(done.outputs!.waf_mode);
    expectOutputsMatchManifest(FUNCTIONS.zoneStatus, done.outputs!);

    // The zone under attack shows far more than a quiet one.
    const quiet = await h.functionExecuted(FUNCTIONS.zoneStatus, { zone: String(SIM_IDS.zoneQuiet) });
    const calm = await h.slack.waitForCompletion(quiet.executionId, 15_000);
    const attacks = (o: Record<string, unknown>) => Number(o.waf) + Number(o.ddos) + Number(o.blocked);
    expect(attacks(done.outputs!)).toBeGreaterThan(attacks(calm.outputs!));
    expect(calm.outputs!.window).toBe("1h");
  }, 30_000);

  it("Post a DNS summary: the scheduler's summary, posted in the channel; outputs what it found", async () => {
    const run = await h.functionExecuted(FUNCTIONS.dnsSummary, {
      dns_zone_id: SIM_IDS.dnsZoneCompleted,
      channel: "C0DNS",
      requester: ranBy(BOB),
    });
    const done = await h.slack.waitForCompletion(run.executionId, 15_000);
    expect(done.kind, done.error).toBe("success");
    const post = h.slack.callsTo("chat.postMessage").find((c) => c.args.channel === "C0DNS")!;
    expect(blocksText(post.args.blocks)).toContain("DNS summary");
    expect(blocksText(post.args.blocks)).toContain("Posted by a workflow step");
    const scanned = h.sim.state.dnsZones.get(SIM_IDS.dnsZoneCompleted)?.records ?? [];
    expect(done.outputs).toMatchObject({
      dns_zone_id: SIM_IDS.dnsZoneCompleted,
      records: scanned.length,
      complete: true,
      message_ts: post ? expect.any(String) : "",
    });
    expect(Number(done.outputs!.records)).toBeGreaterThan(0);
    expectOutputsMatchManifest(FUNCTIONS.dnsSummary, done.outputs!);
  }, 30_000);

  it("function_executed is acknowledged at once even when the Edge API is slow", async () => {
    // The zone is given by id, so the first Edge API call is the slow one: held until the ack was seen.
    let release = () => {};
    h.sim.addFault({ path: "/shield", holdUntil: new Promise<void>((r) => (release = r)), times: 1 });
    const run = await h.functionExecuted(FUNCTIONS.zoneStatus, { zone: String(ZONE) });
    expect(run.status).toBe(200);
    expect(run.durationMs).toBeLessThan(3_000);
    await h.sim.waitForRequest((r) => r.path.startsWith("/shield"));
    expect(completionsOf(h, run.executionId)).toEqual([]);
    release();
    await h.slack.waitForCompletion(run.executionId, 20_000);
  }, 30_000);
});

if (!postgresTests)
  console.warn("*** PostgreSQL unreachable: the PostgreSQL workflow restart test is SKIPPED ***");

async function restartBetweenRequestAndApproval(options: HarnessOptions) {
  const first = await startHarness(options);
  const sim = first.sim;
  joinChannels(first);
  let second: Harness | undefined;
  try {
    setCategory(first, 3, 0);
    const run = await requestBotCategoryStep(first, { category: "aitool" });
    const { approve } = await pendingCard(first, "Block AI tool");
    await first.app.stop();
    await first.store.close();

    // Another process (a restart, or another replica on the same database) settles it.
    second = await startHarness({ ...options, dataDir: first.dataDir, sim, seedKey: false });
    await second.click(approve, { userId: CAROL });
    const done = await second.slack.waitForCompletion(run.executionId);
    expect(done.outputs).toMatchObject({
      final_state: "applied",
      request_id: stepRequestId(run.executionId),
    });
    // The token stored (sealed) before the restart is the one that completes it.
    expect(done.token).toBe(run.token);
    await settle(second);
    expect(second.slack.completions.filter((c) => c.executionId === run.executionId)).toHaveLength(1);
    expect(first.slack.completions).toEqual([]);
  } finally {
    await second?.close();
    await first.slack.close();
    await sim.close();
  }
}

/** Two replicas on one database: A receives the step, B receives the approval; both sweep. */
async function otherReplicaSettles(options: HarnessOptions) {
  const a = await startHarness(options);
  let b: Harness | undefined;
  joinChannels(a);
  try {
    b = await startHarness({ ...options, dataDir: a.dataDir, sim: a.sim, seedKey: false });
    setCategory(a, 6, 0);
    const run = await requestBotCategoryStep(a, { category: "preview" });
    const { approve } = await pendingCard(a, "Block Preview");
    await b.click(approve, { userId: CAROL });
    const done = await b.slack.waitForCompletion(run.executionId);
    expect(done.outputs).toMatchObject({ final_state: "applied" });
    await Promise.all([createChangeSweeper(a.app.env).sweep(), createChangeSweeper(b.app.env).sweep()]);
    await settle(a, b);
    const all = [...a.slack.completions, ...b.slack.completions].filter(
      (c) => c.executionId === run.executionId,
    );
    expect(all).toHaveLength(1);
  } finally {
    await b?.close();
    await a.close();
  }
}

describe.each([
  {
    title: "another replica settles the request",
    onSqlite: "on SQLite (one file): the step completes once",
    onPostgreSQL: "on PostgreSQL: the step completes once",
    run: otherReplicaSettles,
  },
  {
    title: "a restart between the request and its approval",
    onSqlite: "on SQLite: the step still completes, once",
    onPostgreSQL: "on PostgreSQL: the step still completes, once",
    run: restartBetweenRequestAndApproval,
  },
])("$title", ({ onSqlite, onPostgreSQL, run }) => {
  it(onSqlite, () => run({}), 30_000);
  it.runIf(postgresTests)(onPostgreSQL, () => onPostgres(run), 30_000);
});
