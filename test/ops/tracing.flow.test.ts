import {
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
  type SpanProcessor,
} from "@opentelemetry/sdk-trace-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { keyId } from "../../src/edge/queue.js";
import { createPoller } from "../../src/jobs/alerts.js";
import { silentLogger } from "../../src/log.js";
import { startSpan, startTracing, stopTracing } from "../../src/ops/tracing.js";
import { ACTIONS, BLOCKS, KEY_INPUT_ACTION, VIEWS } from "../../src/slack/ids.js";
import { SIM_IDS } from "../../tools/simulator/index.js";
import { openHome } from "../support/app-home.js";
import { onPostgres, postgresTests } from "../support/both-stores.js";
import { askAndApprove } from "../support/change-flow.js";
import { eventWaiter } from "../support/event-waiter.js";
import { eventsHandled } from "../support/events-handled.js";
import {
  answerTo,
  BOT_TOKEN,
  blocksText,
  commandAnswer,
  SIGNING_SECRET,
  startHarness,
  TEST_EDGE_KEY,
  TEST_ENCRYPTION_KEY,
} from "../support/harness.js";
import { callTool, inProcessAgent, mintToken } from "../support/mcp-client.js";
import { useHarness } from "../support/use-harness.js";
import { ALICE } from "../support/users.js";
import { viewSubmission } from "../support/view-submission.js";

/**
 * OpenTelemetry traces (src/ops/tracing.ts) through the real receiver, the fake Slack and the simulator,
 * with the SDK's in-memory exporter: the span tree of a slash command, of an approval that applies and
 * reads back, and of an alert poll; and no span carries a token, a key or a message's text.
 */

const exporter = new InMemorySpanExporter();
beforeAll(async () => {
  const on = await startTracing({
    settings: { endpoint: undefined, tracesEndpoint: undefined },
    logger: silentLogger,
    spanProcessors: [counting, new SimpleSpanProcessor(exporter)],
  });
  expect(on).toBe(true);
});
afterAll(() => stopTracing());

const spanId = (s: ReadableSpan) => s.spanContext().spanId;
const parentId = (s: ReadableSpan) => s.parentSpanContext?.spanId;

/** The finished spans of the one trace whose root is named `rootName` (the last such trace). */
function traceOf(rootName: string | RegExp) {
  const spans = exporter.getFinishedSpans();
  const roots = spans.filter(
    (s) =>
      !s.parentSpanContext && (typeof rootName === "string" ? s.name === rootName : rootName.test(s.name)),
  );
  const root = roots.at(-1);
  if (!root)
    throw new Error(
      `no trace named ${rootName}; roots: ${spans.filter((s) => !s.parentSpanContext).map((s) => s.name)}`,
    );
  const inTrace = spans.filter((s) => s.spanContext().traceId === root.spanContext().traceId);
  const children = (of: ReadableSpan) => inTrace.filter((s) => parentId(s) === spanId(of));
  const named = (name: string | RegExp) =>
    inTrace.filter((s) => (typeof name === "string" ? s.name === name : name.test(s.name)));
  /** Whether `s` is inside `ancestor` (follows the parents up). */
  const within = (s: ReadableSpan, ancestor: ReadableSpan): boolean => {
    const byId = new Map(inTrace.map((x) => [spanId(x), x]));
    for (let p = byId.get(parentId(s) ?? ""); p; p = byId.get(parentId(p) ?? ""))
      if (p === ancestor) return true;
    return false;
  };
  return { root, spans: inTrace, children, named, within };
}

/** Resolves once the root span named `rootName` has ended (the listener or tick is over). */
/** Spans started and not yet ended: the bot being quiet does not mean its last span has ended yet. */
let open = 0;
const spansEnded = eventWaiter();
const counting: SpanProcessor = {
  onStart: () => {
    open++;
  },
  onEnd: () => {
    open--;
    spansEnded.notify();
  },
  forceFlush: async () => undefined,
  shutdown: async () => undefined,
};

/** The trace named `rootName` once the bot is quiet and every span begun has ended (its root too). */
async function rootEnded(h: { settled(): Promise<void> }, rootName: string | RegExp) {
  await h.settled();
  await spansEnded.until(
    () => open === 0,
    () => `${open} spans to end`,
  );
  return traceOf(rootName);
}

describe("traces (OpenTelemetry, in-memory exporter)", () => {
  const events = eventsHandled();
  const h = useHarness({ middleware: [events.middleware] });
  /** Every text typed or shown in Slack during these tests, to look for in the spans afterwards. */
  const shown: string[] = [];

  it("/edge apps: one trace, the listener and its ack inside it, the Edge call with its template, status, retries and queue wait, the answer to response_url", async () => {
    const answer = await commandAnswer(h, "apps");
    expect(answer.text).toContain("Serving traffic normally");
    shown.push(answer.text);
    const t = await rootEnded(h, "slack command /edge");

    expect(t.root.attributes["slack.command"]).toBe("/edge");
    const [listener, ...others] = t.children(t.root);
    expect(others).toEqual([]);
    expect(listener?.name).toBe("slack listener");
    const ack = t.named("slack ack");
    expect(ack).toHaveLength(1);
    expect(parentId(ack[0]!)).toBe(spanId(listener!));
    expect(ack[0]!.attributes["slack.ack.by"]).toBe("front thread");

    const edge = t.named("GET /mc/apps");
    expect(edge.length).toBeGreaterThanOrEqual(1);
    const call = edge[0]!;
    expect(t.within(call, listener!)).toBe(true);
    expect(call.attributes).toMatchObject({
      "http.request.method": "GET",
      "url.template": "/mc/apps",
      "edge.operation": "listApps",
      "http.response.status_code": 200,
      "edge.retry_count": 0,
    });
    const wait = t.children(call).filter((s) => s.name === "edge queue wait");
    expect(wait).toHaveLength(1);
    expect(wait[0]!.attributes["edge.queue.priority"]).toBe("normal");

    // The workspace's key is read from the store inside the same trace.
    expect(t.named(/^store /).length).toBeGreaterThan(0);
    const answered = t.named("slack response_url");
    expect(answered).toHaveLength(1);
    expect(answered[0]!.attributes["http.response.status_code"]).toBe(200);
    // One tree: every span of the trace hangs from the root.
    for (const s of t.spans) if (s !== t.root) expect(t.within(s, t.root), s.name).toBe(true);
  });

  it("an Edge call answered 500 and then 200 is one span with its retry count and last status, and a queue wait per attempt", async () => {
    h.sim.addFault({ path: "/mc/apps", status: 500, times: 1 });
    await commandAnswer(h, "apps");
    const t = await rootEnded(h, "slack command /edge");
    const [call, ...more] = t.named("GET /mc/apps");
    expect(more).toEqual([]);
    expect(call?.attributes).toMatchObject({
      "http.response.status_code": 200,
      "edge.attempts": 2,
      "edge.retry_count": 1,
    });
    expect(t.children(call!).filter((s) => s.name === "edge queue wait")).toHaveLength(2);
  });

  it("an agent's MCP tool call is one trace: the tool's span at the root, its Edge calls and store reads inside", async () => {
    const token = await mintToken(h, ALICE, "tracer");
    const agent = await inProcessAgent(h, token);
    try {
      const zones = await callTool(agent, "list_zones");
      expect(zones.isError).toBe(false);
    } finally {
      await agent.close();
    }
    const t = await rootEnded(h, "mcp tool list_zones");
    expect(t.root.attributes).toMatchObject({ "mcp.tool": "list_zones", "slack.team.id": "T0001" });
    const edge = t.named(/^GET \/shield\//);
    expect(edge.length).toBeGreaterThan(0);
    expect(t.named(/^store /).length).toBeGreaterThan(0);
    for (const s of t.spans) if (s !== t.root) expect(t.within(s, t.root), s.name).toBe(true);
    shown.push(token);
  });

  it("log lines written inside a traced request carry its trace id", async () => {
    await commandAnswer(h, "apps");
    const t = await rootEnded(h, "slack command /edge");
    const traceId = t.root.spanContext().traceId;
    const lines = h.logs.lines.map((l) => JSON.parse(l) as { trace_id?: string; msg?: string });
    const traced = lines.filter((l) => l.trace_id === traceId);
    expect(traced.map((l) => l.msg)).toContain("edge request");
  });

  it("an approval that applies and reads back: the click's trace has the engine's moves, the write, the read-back, a store transaction and the card's update", async () => {
    const ZONE = SIM_IDS.zoneUnderAttack;
    const zone = h.sim.state.shieldZones.find((z) => z.shieldZoneId === ZONE)!;
    zone.dDoSShieldSensitivity = 1;
    const typedCommand = `ddos ${ZONE} challenge`;
    const { typed, text } = await askAndApprove(h, typedCommand, "DDoS sensitivity");
    shown.push(typedCommand, typed.text, text);
    const t = await rootEnded(h, `slack block_actions ${ACTIONS.approve}`);

    const moves = t.named(/^change move /);
    const won = moves
      .filter((m) => m.attributes["change.won"] === true)
      .map((m) => m.attributes["change.to"]);
    expect(won).toEqual(expect.arrayContaining(["approved", "applied"]));
    const applied = moves.find((m) => m.attributes["change.to"] === "applied" && m.attributes["change.won"])!;
    expect(applied.attributes["change.kind"]).toBe("ddos_sensitivity");
    expect(typeof applied.attributes["change.request_id"]).toBe("string");
    expect(applied.attributes["change.from"]).toBeInstanceOf(Array);

    const write = t.named("PATCH /shield/shield-zone");
    expect(write).toHaveLength(1);
    expect(write[0]!.attributes["http.response.status_code"]).toBe(200);
    // Spans are exported as they end: the read-back is a GET of the zone that ended after the write.
    const readBack = t.spans
      .slice(t.spans.indexOf(write[0]!) + 1)
      .filter((s) => s.name === "GET /shield/shield-zone/{shieldZoneId}");
    expect(readBack.length).toBeGreaterThanOrEqual(1);
    expect(t.spans.slice(0, t.spans.indexOf(write[0]!)).map((s) => s.name)).toContain(
      "GET /shield/shield-zone/{shieldZoneId}",
    );
    // The ids are the path's values, never its template.
    for (const s of t.named(/^(GET|PUT|POST|PATCH) /))
      expect(String(s.attributes["url.template"])).not.toMatch(/\d{3,}/);

    expect(t.named("store transaction").length).toBeGreaterThanOrEqual(1);
    const update = t.named("slack chat.update");
    expect(update.length).toBeGreaterThanOrEqual(1);
    expect(update[0]!.attributes["http.response.status_code"]).toBe(200);
  });

  it("an alert poll is one trace per tick: its store reads and each Edge call inside it", async () => {
    const ZONE = SIM_IDS.zoneEnterprise;
    const typedCommand = `watch zone ${ZONE} sensitivity normal`;
    const created = await answerTo(h, typedCommand, "U0001");
    expect(created.text).toContain(`Watching shield zone ${ZONE}`);
    shown.push(typedCommand, created.text);
    const poller = createPoller({ deps: h.deps, clientFor: h.app.env.clientFor, clock: h.clock });
    try {
      expect(await poller.tick()).toBeGreaterThanOrEqual(1);
    } finally {
      await poller.stop();
    }
    const t = traceOf("job tick alert poller");
    expect(t.root.attributes["job.name"]).toBe("alert poller");
    const calls = t.named(/^GET \/shield\//);
    expect(calls.length).toBeGreaterThanOrEqual(1);
    for (const c of calls) {
      expect(c.attributes["edge.background"]).toBe(true);
      expect(t.children(c).map((s) => s.name)).toContain("edge queue wait");
    }
    expect(t.named(/^store /).length).toBeGreaterThan(0);
  });

  it("a view submission (an admin saves the Edge key in its modal) is one trace, acknowledged by its listener, with the key's check and its store writes", async () => {
    const submitted = viewSubmission({
      userId: "U0001",
      callbackId: VIEWS.keyModal,
      title: "Edge API key",
      privateMetadata: JSON.stringify({ teamId: "T0001" }),
      values: {
        [BLOCKS.keyInput]: { [KEY_INPUT_ACTION]: { type: "plain_text_input", value: TEST_EDGE_KEY } },
      },
    });
    const res = await h.interact(submitted);
    expect((JSON.parse(res.body) as { response_action?: string }).response_action).toBe("update");
    const t = await rootEnded(h, `slack view_submission ${VIEWS.keyModal}`);
    expect(t.root.attributes).toMatchObject({
      "slack.request.type": "view_submission",
      "slack.team.id": "T0001",
    });
    // Slack waits for a modal's answer: it is the listener's own ack, not the front thread's.
    expect(t.named("slack ack").map((s) => s.attributes["slack.ack.by"])).toEqual(["listener"]);
    expect(t.named(/^(GET|PUT|POST|PATCH) /).length).toBeGreaterThanOrEqual(1);
    expect(t.named(/^store (insert|update) api_keys$|^store transaction$/).length).toBeGreaterThanOrEqual(1);
  });

  it("an Events API event is one trace: its listener and the Web API call it makes (views.publish)", async () => {
    const home = await openHome(h, "U0001");
    shown.push(home);
    await events.handled("app_home_opened");
    const t = await rootEnded(h, "slack event app_home_opened");
    expect(t.root.attributes).toMatchObject({
      "slack.request.type": "event_callback",
      "slack.team.id": "T0001",
    });
    expect(t.children(t.root).map((s) => s.name)).toEqual(["slack listener"]);
    const publish = t.named("slack views.publish");
    expect(publish).toHaveLength(1);
    expect(publish[0]!.attributes).toMatchObject({
      "slack.method": "views.publish",
      "http.response.status_code": 200,
    });
    expect(publish[0]!.attributes["slack.error"]).toBeUndefined();
  });

  it("a Web API call Slack answers ok:false (HTTP 200) carries Slack's error code", async () => {
    h.slack.addFault({ method: "views.publish", error: "internal_error", times: 1 });
    await openHome(h, "U0002");
    await events.handled("app_home_opened", (e) => e.user === "U0002");
    const t = await rootEnded(h, "slack event app_home_opened");
    const [publish] = t.named("slack views.publish");
    expect(publish?.attributes).toMatchObject({
      "http.response.status_code": 200,
      "slack.error": "internal_error",
    });
  });

  it("no span carries a token, the Edge key (or its hash), the signing secret, a response_url or a message's text", async () => {
    const spans = exporter.getFinishedSpans();
    expect(spans.length).toBeGreaterThan(50);
    const posted = h.slack.calls.map((c) => blocksText(c.args.blocks));
    const texts = [...shown, ...posted]
      .flatMap((t) => t.split("\n"))
      .map((l) => l.trim())
      // Lines of words, not a lone label that a span name could share ("Apps").
      .filter((l) => l.length >= 16);
    expect(texts.length).toBeGreaterThan(10);
    const secrets = [BOT_TOKEN, TEST_EDGE_KEY, keyId(TEST_EDGE_KEY), SIGNING_SECRET, TEST_ENCRYPTION_KEY];
    /** Every span name, status, attribute and event value that contains a secret, a text shown or a response_url. */
    const leaks = (all: readonly ReadableSpan[]) =>
      all.flatMap((span) =>
        [
          span.name,
          span.status.message ?? "",
          ...Object.values(span.attributes),
          ...span.events.flatMap((e) => [e.name, ...Object.values(e.attributes ?? {})]),
        ]
          .map(String)
          .filter((v) => [...secrets, ...texts, "/response/"].some((s) => v.includes(s)))
          .map((v) => `${span.name}: ${v}`),
      );
    expect(leaks(spans)).toEqual([]);
    // The scan sees a leak where there is one (it is not vacuous).
    exporter.reset();
    startSpan("leaky", { "edge.key": TEST_EDGE_KEY, "slack.text": texts[0] }).end();
    expect(leaks(exporter.getFinishedSpans())).toHaveLength(2);
  });
});

describe("traces on PostgreSQL", () => {
  it.runIf(postgresTests)(
    "the move to applied and its target's owner row are one statement, one span and no transaction; the other statements are spans of their own",
    () =>
      onPostgres(async (options) => {
        const h = await startHarness(options);
        try {
          const ZONE = SIM_IDS.zoneUnderAttack;
          h.sim.state.shieldZones.find((z) => z.shieldZoneId === ZONE)!.dDoSShieldSensitivity = 1;
          await askAndApprove(h, `ddos ${ZONE} challenge`, "DDoS sensitivity");
          const t = await rootEnded(h, `slack block_actions ${ACTIONS.approve}`);
          const applied = t
            .named("change move applied")
            .find(
              (m) =>
                m.attributes["change.won"] === true && m.attributes["change.kind"] === "ddos_sensitivity",
            );
          expect(applied).toBeDefined();
          // On PostgreSQL the move and the owner's insert are one data-modifying WITH (store/change-requests.ts).
          const statements = t.children(applied!);
          expect(statements.map((s) => s.name)).toEqual(["store select moved"]);
          expect(statements[0]!.attributes["db.system.name"]).toBe("postgresql");
          const update = t.named("store update approval_requests");
          expect(update.length).toBeGreaterThanOrEqual(1);
          expect(update[0]!.attributes["db.system.name"]).toBe("postgresql");
        } finally {
          await h.close();
        }
      }),
    60_000,
  );
});
