import { trace } from "@opentelemetry/api";
import { afterAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import { createLogger, silentLogger } from "../../src/log.js";
import { activeTraceIds, inSpan, startTracing, stopTracing, tracingOn } from "../../src/ops/tracing.js";
import { LogCapture } from "../support/harness.js";
import { startCollector } from "../support/otlp-collector.js";

/**
 * Tracing's switch and its way out: off without an OTLP endpoint (no SDK, the API's no-op spans), and
 * with OTEL_EXPORTER_OTLP_ENDPOINT the real OTLP/HTTP protobuf exporter posting to a collector on
 * loopback, the last spans sent by stopTracing (the graceful stop's last step).
 */

describe("tracing's switch and OTLP export", () => {
  afterAll(() => stopTracing());

  it("is off without an endpoint: no SDK starts, spans are the API's no-op and log lines get no trace id", async () => {
    const config = loadConfig({});
    expect(config.tracing).toEqual({ endpoint: undefined, tracesEndpoint: undefined });
    expect(await startTracing({ settings: config.tracing, logger: silentLogger })).toBe(false);
    expect(tracingOn()).toBe(false);
    const seen = await inSpan("probe", { a: 1 }, async (span) => ({
      recording: span.isRecording(),
      ids: activeTraceIds(),
      active: trace.getActiveSpan(),
    }));
    expect(seen).toEqual({ recording: false, ids: undefined, active: undefined });
  });

  it("refuses an endpoint that is not an http(s) URL, naming the variable", () => {
    expect(() => loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: "collector:4318" })).toThrow(
      /OTEL_EXPORTER_OTLP_ENDPOINT must be a URL starting with http:\/\/ or https:\/\//,
    );
  });

  it("with OTEL_EXPORTER_OTLP_ENDPOINT, posts OTLP protobuf to its /v1/traces, the last spans on stop", async () => {
    const collector = await startCollector();
    try {
      const config = loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: `${collector.url}/` });
      expect(await startTracing({ settings: config.tracing, logger: silentLogger })).toBe(true);
      const ids = await inSpan("probe-span-otlp", { "edge.operation": "listApps" }, async () =>
        inSpan("probe-child-otlp", undefined, async () => activeTraceIds()),
      );
      expect(ids?.traceId).toMatch(/^[0-9a-f]{32}$/);
      const arrived = collector.next();
      await stopTracing();
      await arrived;
      expect(collector.received).toHaveLength(1);
      const [post] = collector.received;
      expect(post?.path).toBe("/v1/traces");
      expect(post?.contentType).toBe("application/x-protobuf");
      // Protobuf keeps strings as UTF-8 bytes: the spans, their trace and the service are in the body.
      for (const text of ["probe-span-otlp", "probe-child-otlp", "listApps", "edgeops"])
        expect(post?.body.includes(Buffer.from(text)), text).toBe(true);
      expect(post?.body.includes(Buffer.from(ids?.traceId ?? "", "hex"))).toBe(true);
      expect(tracingOn()).toBe(false);
    } finally {
      await collector.close();
    }
  });

  it("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is used as it is, wins over the base endpoint, and its password is not logged", async () => {
    const collector = await startCollector();
    try {
      const withPassword = collector.url.replace("http://", "http://otel:collector-pass-42@");
      const config = loadConfig({
        OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:9/",
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${withPassword}/custom/traces`,
      });
      const logs = new LogCapture();
      expect(
        await startTracing({ settings: config.tracing, logger: createLogger({ destination: logs }) }),
      ).toBe(true);
      // The log says where traces go, never the password in that URL.
      expect(logs.text).toContain(`"tracesUrl":"${collector.url}/custom/traces"`);
      expect(logs.text).not.toContain("collector-pass-42");
      await inSpan("probe-traces-endpoint", undefined, async () => undefined);
      const arrived = collector.next();
      await stopTracing();
      await arrived;
      expect(collector.received.map((r) => r.path)).toEqual(["/custom/traces"]);
    } finally {
      await collector.close();
    }
  });
});
