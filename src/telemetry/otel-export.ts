/**
 * The OpenTelemetry side of tracing: a private TracerProvider (never the
 * global one, so an embedder's own tracing stays untouched), a
 * BatchSpanProcessor with a bounded queue, the OTLP/HTTP protobuf exporter,
 * and W3C trace-context propagation. Loaded with a dynamic import only when
 * `telemetry.traces` is set: a gateway without traces loads no
 * OpenTelemetry code at all.
 *
 * Every span is started from an explicit parent context built here (the
 * caller's traceparent, or the call's span): no context manager, no
 * async_hooks. Ending a span only queues it; export runs on the processor's
 * timer, so a slow or dead collector never delays a call. When the queue is
 * full, new spans are dropped (the processor's rule), never waited for.
 */
import { randomUUID } from 'node:crypto';
import {
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  defaultTextMapGetter,
  defaultTextMapSetter,
  trace,
  type Attributes,
  type Context,
  type Span,
} from '@opentelemetry/api';
import { ExportResultCode, W3CTraceContextPropagator, type ExportResult } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { defaultResource, resourceFromAttributes } from '@opentelemetry/resources';
import {
  BatchSpanProcessor,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
  TracerProvider,
  type ReadableSpan,
  type SpanExporter,
} from '@opentelemetry/sdk-trace';
import type { TracesConfig } from '../config/traces.js';
import { MAX_ATTRIBUTE_LENGTH, SEMCONV } from './span-attributes.js';
import type { SpanSink, TraceHeaders } from './span-sink.js';

export interface ExportOptions {
  /** `service.version` of the spans (the gateway's version). */
  readonly serviceVersion: string;
  /**
   * An export request failed (collector down, refused, timed out) and its spans are lost. For a log line or a
   * counter; the error names the endpoint at most, never the headers. Must not throw.
   */
  readonly onExportFailure?: ((error: Error, spans: number) => void) | undefined;
}

export function createOtelSink(config: TracesConfig, options: ExportOptions): SpanSink {
  const exporter = new ReportingExporter(
    new OTLPTraceExporter({
      url: config.endpoint,
      headers: { ...config.headers.values() },
      timeoutMillis: config.timeoutMs,
      compression: config.compression as NonNullable<ConstructorParameters<typeof OTLPTraceExporter>[0]>['compression'],
    }),
    options.onExportFailure,
  );
  const root = new TraceIdRatioBasedSampler(config.sampleRatio);
  const provider = new TracerProvider({
    resource: defaultResource().merge(
      resourceFromAttributes({
        [SEMCONV.SERVICE_NAME]: config.serviceName,
        [SEMCONV.SERVICE_VERSION]: options.serviceVersion,
        [SEMCONV.SERVICE_INSTANCE_ID]: randomUUID(),
      }),
    ),
    sampler: config.parentBased ? new ParentBasedSampler({ root }) : root,
    spanLimits: {
      attributeValueLengthLimit: MAX_ATTRIBUTE_LENGTH,
      attributeCountLimit: 32,
      eventCountLimit: 8,
      attributePerEventCountLimit: 4,
      linkCountLimit: 0,
      attributePerLinkCountLimit: 0,
    },
    spanProcessors: [
      new BatchSpanProcessor({
        exporter,
        maxQueueSize: config.maxQueueSize,
        maxExportBatchSize: config.maxExportBatchSize,
        scheduledDelayMillis: config.scheduledDelayMs,
        exportTimeoutMillis: config.timeoutMs,
      }),
    ],
  });
  return new OtelSink(provider, config.timeoutMs);
}

class OtelSink implements SpanSink {
  private readonly tracer;
  private readonly propagator = new W3CTraceContextPropagator();

  constructor(
    private readonly provider: TracerProvider,
    private readonly flushTimeoutMs: number,
  ) {
    this.tracer = provider.getTracer('a2a-egress');
  }

  startServer(name: string, attributes: Attributes, startTime: number, traceparent: unknown, tracestate: unknown): Span {
    return this.tracer.startSpan(name, { kind: SpanKind.SERVER, attributes, startTime }, this.remoteParent(traceparent, tracestate));
  }

  startClient(name: string, attributes: Attributes, parent: Span | undefined, traceparent?: unknown, tracestate?: unknown): Span {
    const context = parent ? trace.setSpan(ROOT_CONTEXT, parent) : this.remoteParent(traceparent, tracestate);
    return this.tracer.startSpan(name, { kind: SpanKind.CLIENT, attributes }, context);
  }

  startInternal(name: string, attributes: Attributes, parent: Span): Span {
    return this.tracer.startSpan(name, { kind: SpanKind.INTERNAL, attributes }, trace.setSpan(ROOT_CONTEXT, parent));
  }

  traceHeaders(span: Span): TraceHeaders {
    const carrier: Record<string, string> = {};
    this.propagator.inject(trace.setSpan(ROOT_CONTEXT, span), carrier, defaultTextMapSetter);
    return { traceparent: carrier.traceparent, tracestate: carrier.tracestate };
  }

  fail(span: Span, message: string): void {
    span.setStatus({ code: SpanStatusCode.ERROR, message });
  }

  forceFlush(): Promise<void> {
    return this.provider.forceFlush();
  }

  shutdown(): Promise<void> {
    // Bounded: the provider waits for the last export at most its own timeout.
    return Promise.race([
      this.provider.shutdown(),
      new Promise<void>((resolve) => setTimeout(resolve, this.flushTimeoutMs + 1000).unref()),
    ]);
  }

  /** The caller's trace, when it sent a valid traceparent; else a new one. */
  private remoteParent(traceparent: unknown, tracestate: unknown): Context {
    if (traceparent === undefined) return ROOT_CONTEXT;
    return this.propagator.extract(ROOT_CONTEXT, { traceparent, tracestate }, defaultTextMapGetter);
  }
}

/** Passes spans through to the OTLP exporter and reports the batches it could not deliver. */
class ReportingExporter implements SpanExporter {
  constructor(
    private readonly inner: SpanExporter,
    private readonly onFailure: ((error: Error, spans: number) => void) | undefined,
  ) {}

  export(spans: ReadableSpan[], resultCallback: (result: ExportResult) => void): void {
    this.inner.export(spans, (result) => {
      if (result.code !== ExportResultCode.SUCCESS && this.onFailure) {
        try {
          this.onFailure(result.error ?? new Error('span export failed'), spans.length);
        } catch {
          // A reporting hook must never break the exporter.
        }
      }
      resultCallback(result);
    });
  }

  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }

  forceFlush(): Promise<void> {
    return this.inner.forceFlush?.() ?? Promise.resolve();
  }
}
