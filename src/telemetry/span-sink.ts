/**
 * What the call-path telemetry (./tracing.ts) needs from OpenTelemetry, as an
 * interface: the implementation (./otel-export.ts) is loaded only when traces
 * are on, and these types are erased at build time, so a gateway without
 * traces never loads an OpenTelemetry module.
 */
import type { Attributes, Span } from '@opentelemetry/api';

export type { Attributes, Span };

/** The W3C trace-context headers to send upstream (the gateway's client span as the remote's parent). */
export interface TraceHeaders {
  readonly traceparent: string | undefined;
  readonly tracestate: string | undefined;
}

export interface SpanSink {
  /** A server span continuing the caller's trace (its traceparent/tracestate header values), else a new trace. */
  startServer(name: string, attributes: Attributes, startTime: number, traceparent: unknown, tracestate: unknown): Span;
  /** A client span under `parent`, or (no parent) continuing the given trace headers. */
  startClient(name: string, attributes: Attributes, parent: Span | undefined, traceparent?: unknown, tracestate?: unknown): Span;
  startInternal(name: string, attributes: Attributes, parent: Span): Span;
  traceHeaders(span: Span): TraceHeaders;
  /** Marks the span failed with a description (already sanitized and bounded). */
  fail(span: Span, message: string): void;
  forceFlush(): Promise<void>;
  shutdown(): Promise<void>;
}
