/**
 * The node's tracer: OpenTelemetry spans exported over OTLP/HTTP (JSON) when `[telemetry] otlp_endpoint`
 * is set, and the API's no-op tracer otherwise (no SDK, no exporter, no context manager: spans cost a
 * function call and record nothing).
 *
 * Each node has a provider of its own (never registered globally), so several nodes in one process
 * (tests) export under their own `service.instance.id`. What is process-wide is the context manager
 * (AsyncLocalStorage), installed once by the first node that traces: it is what carries the active
 * span from an HTTP request through its awaits down to the proposal.
 */
import { context, trace, INVALID_SPAN_CONTEXT, SpanKind, SpanStatusCode, type Attributes, type Context, type Span, type SpanOptions, type TextMapPropagator, type Tracer } from '@opentelemetry/api';
import type { BasicTracerProvider } from '@opentelemetry/sdk-trace-base';
import type { Config } from '../config';

type Headers = Record<string, string | string[] | undefined>;

/**
 * The SDK, the OTLP exporter and the rest are required only by a node that traces (Tracing.start with
 * an endpoint): loaded at every start they took about a tenth of a node's module loading, for what is
 * off by default. Only @opentelemetry/api (small: the no-op tracer and the context API) loads always.
 */
function sdk() {
  return {
    ...(require('@opentelemetry/context-async-hooks') as typeof import('@opentelemetry/context-async-hooks')),
    ...(require('@opentelemetry/core') as typeof import('@opentelemetry/core')),
    ...(require('@opentelemetry/exporter-trace-otlp-http') as typeof import('@opentelemetry/exporter-trace-otlp-http')),
    ...(require('@opentelemetry/resources') as typeof import('@opentelemetry/resources')),
    ...(require('@opentelemetry/sdk-trace-base') as typeof import('@opentelemetry/sdk-trace-base')),
    ...(require('@opentelemetry/semantic-conventions') as typeof import('@opentelemetry/semantic-conventions')),
  };
}

/** W3C trace context (traceparent/tracestate), made with the SDK by the first node that traces. */
let propagator: TextMapPropagator | null = null;
const headerGetter = {
  keys: (carrier: Headers) => Object.keys(carrier),
  get: (carrier: Headers, key: string) => carrier[key.toLowerCase()],
};
const headerSetter = { set: (carrier: Record<string, string>, key: string, value: string) => void (carrier[key] = value) };

let contextManagerInstalled = false;

/** The OTLP/HTTP traces URL of an endpoint: a base URL gets `/v1/traces`; a URL already ending so is kept. */
export function tracesUrl(endpoint: string): string {
  const base = endpoint.replace(/\/+$/, '');
  return base.endsWith('/v1/traces') ? base : `${base}/v1/traces`;
}

/** The trace and span ids of a span that records, for log lines; empty when tracing is off. */
export function traceIds(span: Span | undefined): { trace_id?: string; span_id?: string } {
  if (!span || !span.isRecording()) return {};
  const { traceId, spanId } = span.spanContext();
  return { trace_id: traceId, span_id: spanId };
}

export class Tracing {
  private constructor(
    readonly tracer: Tracer,
    /** true when spans are recorded and exported */
    readonly enabled: boolean,
    private readonly provider: BasicTracerProvider | null,
  ) {}

  static start(config: Pick<Config, 'telemetry' | 'cluster'>): Tracing {
    const endpoint = config.telemetry.otlp_endpoint;
    if (!endpoint) return new Tracing(trace.getTracer('strata'), false, null);
    const { AsyncLocalStorageContextManager, W3CTraceContextPropagator, OTLPTraceExporter, resourceFromAttributes, BasicTracerProvider, BatchSpanProcessor, ATTR_SERVICE_INSTANCE_ID, ATTR_SERVICE_NAME } = sdk();
    propagator ??= new W3CTraceContextPropagator();
    if (!contextManagerInstalled) {
      // false when the embedding process installed one already: theirs carries the context just as well
      context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
      contextManagerInstalled = true;
    }
    const provider = new BasicTracerProvider({
      resource: resourceFromAttributes({
        [ATTR_SERVICE_NAME]: config.telemetry.service_name,
        [ATTR_SERVICE_INSTANCE_ID]: String(config.cluster.node_id),
      }),
      // batched off the request path; OTEL_BSP_* variables (e.g. OTEL_BSP_SCHEDULE_DELAY) tune it
      spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: tracesUrl(endpoint) }))],
    });
    return new Tracing(provider.getTracer('strata'), true, provider);
  }

  /**
   * Runs `fn` in a new active span that ends when `fn` settles; an exception marks the span as failed
   * and is thrown on. With tracing off the span is the no-op one.
   */
  span<T>(name: string, options: SpanOptions, fn: (span: Span) => Promise<T>, parent?: Context): Promise<T> {
    if (!this.enabled) return fn(trace.wrapSpanContext(INVALID_SPAN_CONTEXT));
    return this.tracer.startActiveSpan(name, options, parent ?? context.active(), async (span) => {
      try {
        return await fn(span);
      } catch (err) {
        failed(span, err);
        throw err;
      } finally {
        span.end();
      }
    });
  }

  /**
   * A span already over: from `start` to `end` (`performance.now()` readings, which the SDK moves onto
   * its own clock like the times it takes itself), under `parent` (default: the active context).
   */
  record(name: string, start: number, end: number, attributes: Attributes, parent?: Context): void {
    if (!this.enabled) return;
    this.tracer.startSpan(name, { startTime: start, attributes }, parent ?? context.active()).end(end);
  }

  /** The context of an incoming request's `traceparent`/`tracestate` headers (the active one if none). */
  extract(headers: Headers): Context {
    return this.enabled && propagator ? propagator.extract(context.active(), headers, headerGetter) : context.active();
  }

  /** Headers carrying the active span's context to another node (empty with tracing off). */
  inject(): Record<string, string> {
    const out: Record<string, string> = {};
    if (this.enabled && propagator) propagator.inject(context.active(), out, headerSetter);
    return out;
  }

  /** A client span around one call to another node, with the headers that make the callee's spans its children. */
  client<T>(name: string, attributes: Attributes, fn: (headers: Record<string, string>) => Promise<T>): Promise<T> {
    return this.span(name, { kind: SpanKind.CLIENT, attributes }, () => fn(this.inject()));
  }

  /** Exports what is buffered, then stops (node shutdown). */
  async shutdown(): Promise<void> {
    await this.provider?.shutdown();
  }
}

/** Marks a span as failed by an error (its message and type; the stack stays in the logs). */
export function failed(span: Span, err: unknown): void {
  span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
  const code = (err as { code?: unknown }).code;
  span.setAttribute('error.type', typeof code === 'string' ? code : err instanceof Error ? err.name : 'error');
}

/** The monotonic clock of span times recorded after the fact (Tracing.record) and of stage durations. */
export function nowMs(): number {
  return performance.now();
}
