import { afterEach, describe, expect, it } from "vitest";
import { startCollector } from "../support/otlp-collector.js";
import { type ProcessWorld, startProcessWorld, waitUntilReady } from "./process-support.js";

/**
 * The bot as a process with OTEL_EXPORTER_OTLP_ENDPOINT set: src/app/run.ts starts tracing, a command's
 * trace reaches the collector (here a loopback stand-in) at the latest when SIGTERM's graceful stop sends
 * the last spans, and the command's log lines carry the trace id found in those spans.
 */

let world: ProcessWorld | undefined;
let collector: Awaited<ReturnType<typeof startCollector>> | undefined;
afterEach(async () => {
  await world?.close();
  await collector?.close();
  world = undefined;
  collector = undefined;
});

describe("OpenTelemetry from the running bot", () => {
  it("/edge apps is one trace sent to OTEL_EXPORTER_OTLP_ENDPOINT, its log lines carry its trace id, and SIGTERM still exits 0", async () => {
    collector = await startCollector();
    world = await startProcessWorld();
    const w = world;
    const bot = w.spawn(process.execPath, ["--import", "tsx", "src/main.ts"], {
      env: w.env({ OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, LOG_LEVEL: "debug" }),
    });
    await waitUntilReady(`http://127.0.0.1:${await bot.port()}`, 10_000);
    expect(bot.logs.some((l) => l.msg === "OpenTelemetry tracing is on")).toBe(true);
    const cmd = await bot.command("apps");
    expect(cmd.status).toBe(200);
    await w.slack.waitForResponse(cmd.responseId);

    bot.child.kill("SIGTERM");
    expect((await bot.exited).code).toBe(0);
    const bodies = Buffer.concat(collector.received.map((r) => r.body));
    expect(collector.received.every((r) => r.path === "/v1/traces")).toBe(true);
    for (const name of [
      "slack command /edge",
      "slack listener",
      "slack ack",
      "GET /mc/apps",
      "edge queue wait",
    ])
      expect(bodies.includes(Buffer.from(name)), name).toBe(true);

    const edgeLine = bot.logs.find((l) => l.msg === "edge request" && l.op === "listApps");
    const traceId = edgeLine?.trace_id;
    expect(traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(bodies.includes(Buffer.from(String(traceId), "hex"))).toBe(true);
  }, 60_000);
});
