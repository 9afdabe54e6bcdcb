import { createRequire } from "node:module";
import {
  type Attributes,
  type AttributeValue,
  type Context,
  context,
  INVALID_SPAN_CONTEXT,
  propagation,
  ROOT_CONTEXT,
  type Span,
  SpanStatusCode,
  trace,
} from "@opentelemetry/api";
import type { SpanProcessor } from "@opentelemetry/sdk-trace-node";
import type { Logger } from "pino";

export type { Context, Span } from "@opentelemetry/api";

/**
 * OpenTelemetry traces: one trace per Slack request and per job tick, with spans for the ack, the
 * listener, each Edge API call and its wait in the key's queue, each store transaction, each Slack Web API
 * call and each move of the change engine. Off unless OTEL_EXPORTER_OTLP_ENDPOINT (or
 * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is set: then no SDK is loaded, and every helper below runs on the
 * API's no-op tracer (a non-recording span, no context kept).
 *
 * Span times come from the SDK's own clock (performance.timeOrigin + performance.now), not `deps.clock`:
 * they only measure, nothing in edgeops decides by them, and a manual clock in a test would make every
 * span last 0 ms.
 *
 * Attributes carry names, ids, states, methods, path templates and status codes: never a token, an Edge
 * API key (nor its hash), a signing secret, a URL with a response_url's secret path, or anything a person
 * typed (test/ops/tracing.flow.test.ts scans every attribute of every span for them).
 */

const require = createRequire(import.meta.url);
const pkg = require("../../package.json") as { version?: string };
const TRACER_NAME = "edgeops";
const VERSION = pkg.version ?? "0.0.0";

export interface TracingSettings {
  /** OTEL_EXPORTER_OTLP_ENDPOINT: the collector's base URL (traces go to its /v1/traces). */
  endpoint: string | undefined;
  /** OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: the full traces URL; wins over `endpoint`. */
  tracesEndpoint: string | undefined;
}

/** Where spans are sent, or undefined when tracing is off. */
export function tracesUrl(settings: TracingSettings): string | undefined {
  if (settings.tracesEndpoint) return settings.tracesEndpoint;
  if (settings.endpoint) return `${settings.endpoint.replace(/\/+$/, "")}/v1/traces`;
  return undefined;
}

interface Provider {
  register(): void;
  forceFlush(): Promise<void>;
  shutdown(): Promise<void>;
}

let running: Provider | undefined;

export interface StartTracingOptions {
  settings: TracingSettings;
  logger: Pick<Logger, "info" | "warn">;
  /** Instead of the OTLP exporter (tests: an in-memory exporter behind a SimpleSpanProcessor). */
  spanProcessors?: SpanProcessor[];
}

/**
 * Start the SDK when a collector is configured (or span processors are given): a tracer provider with the
 * service's resource, registered globally with an AsyncLocalStorage context manager. Returns whether
 * tracing is on. The sampler is the SDK's, read from OTEL_TRACES_SAMPLER / OTEL_TRACES_SAMPLER_ARG
 * (default: every trace, parent-based).
 */
export async function startTracing(o: StartTracingOptions): Promise<boolean> {
  if (running) return true;
  const url = tracesUrl(o.settings);
  if (!url && !o.spanProcessors) return false;
  const [{ BatchSpanProcessor, NodeTracerProvider }, resources, semconv] = await Promise.all([
    import("@opentelemetry/sdk-trace-node"),
    import("@opentelemetry/resources"),
    import("@opentelemetry/semantic-conventions"),
  ]);
  let spanProcessors = o.spanProcessors;
  if (!spanProcessors && url) {
    const { OTLPTraceExporter } = await import("@opentelemetry/exporter-trace-otlp-proto");
    spanProcessors = [new BatchSpanProcessor(new OTLPTraceExporter({ url }))];
  }
  // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES (the env detector) win over edgeops' own name.
  const resource = resources
    .defaultResource()
    .merge(
      resources.resourceFromAttributes({
        [semconv.ATTR_SERVICE_NAME]: TRACER_NAME,
        [semconv.ATTR_SERVICE_VERSION]: VERSION,
      }),
    )
    .merge(resources.detectResources({ detectors: [resources.envDetector] }));
  const provider = new NodeTracerProvider({ resource, spanProcessors: spanProcessors ?? [] });
  provider.register();
  running = provider;
  // Where, without any user:password the URL may carry.
  if (url) o.logger.info({ tracesUrl: withoutCredentials(url) }, "OpenTelemetry tracing is on");
  return true;
}

function withoutCredentials(url: string): string {
  const u = new URL(url);
  return `${u.origin}${u.pathname}`;
}

/** Send the spans still buffered and stop the SDK (graceful stop; a test's end). No-op when off. */
export async function stopTracing(): Promise<void> {
  const provider = running;
  if (!provider) return;
  running = undefined;
  await provider.shutdown();
  trace.disable();
  context.disable();
  propagation.disable();
}

export function tracingOn(): boolean {
  return running !== undefined;
}

function tracer() {
  return trace.getTracer(TRACER_NAME, VERSION);
}

export type SpanAttributes = Record<string, AttributeValue | undefined>;

function defined(attrs: SpanAttributes | undefined): Attributes | undefined {
  if (!attrs) return undefined;
  const out: Attributes = {};
  for (const [k, v] of Object.entries(attrs)) if (v !== undefined) out[k] = v;
  return out;
}

/**
 * A failed span says what failed by type only (an EdgeApiError's kind, an error's name): an error's
 * message can quote what a person typed or an answer's text.
 */
export function markFailed(span: Span, err: unknown): void {
  const e = err as { kind?: unknown; name?: unknown } | null;
  const type = typeof e?.kind === "string" ? e.kind : typeof e?.name === "string" ? e.name : typeof err;
  span.setAttribute("error.type", type);
  span.setStatus({ code: SpanStatusCode.ERROR, message: type });
}

export interface InSpanOptions {
  /** Start a new trace (a Slack request, a job tick) whatever span is active. */
  root?: boolean;
  /** Only inside a trace: with no span active, `fn` runs without one (a store statement at start-up). */
  childOnly?: boolean;
}

/** Whether a span is active here (a trace is being recorded). */
export function inTrace(): boolean {
  return trace.getActiveSpan()?.isRecording() === true;
}

/** Run `fn` inside a new active span, ended when `fn` settles; a throw marks it failed and goes on. */
export function inSpan<T>(
  name: string,
  attrs: SpanAttributes | undefined,
  fn: (span: Span) => Promise<T>,
  options: InSpanOptions = {},
): Promise<T> {
  if (options.childOnly && !inTrace()) return fn(trace.wrapSpanContext(INVALID_SPAN_CONTEXT));
  const attributes = defined(attrs);
  const parent = options.root ? ROOT_CONTEXT : context.active();
  return tracer().startActiveSpan(name, attributes ? { attributes } : {}, parent, async (span) => {
    try {
      return await fn(span);
    } catch (err) {
      markFailed(span, err);
      throw err;
    } finally {
      span.end();
    }
  });
}

/**
 * A span that is not made active: begun here, ended by the caller (a queue wait, a transaction). With
 * `childOnly` and no trace active, a non-recording span.
 */
export function startSpan(name: string, attrs?: SpanAttributes, options: InSpanOptions = {}): Span {
  if (options.childOnly && !inTrace()) return trace.wrapSpanContext(INVALID_SPAN_CONTEXT);
  const attributes = defined(attrs);
  return tracer().startSpan(name, attributes ? { attributes } : {});
}

/** The active context, to run later work (a queued task) in the trace that asked for it. */
export function activeContext(): Context {
  return context.active();
}

export function withContext<T>(ctx: Context, fn: () => T): T {
  return context.with(ctx, fn);
}

/** The active span's trace and span ids, for log lines; nothing when no span records. */
export function activeTraceIds(): { traceId: string; spanId: string } | undefined {
  const span = trace.getActiveSpan();
  if (!span?.isRecording()) return undefined;
  const { traceId, spanId } = span.spanContext();
  return { traceId, spanId };
}
