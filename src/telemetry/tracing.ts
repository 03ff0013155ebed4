/**
 * Tracing and diagnostics_channel events for the call path: the one object
 * the gateway builds at start-up (`createTelemetry`) and the call path asks.
 *
 * Off (no `telemetry.traces`, nobody subscribed to an a2a-egress channel) the
 * whole cost on the hot path is reading `telemetry.active` once per call:
 *
 *     const trace = telemetry.active ? telemetry.startCall({ remote, binding, requestId, traceparent, tracestate, startTime }) : undefined;
 *     trace?.setCall(call);                                    // the caller codec made an A2ACall
 *     const attempt = trace?.upstreamStart({ attempt: n, binding, url, method });   // per attempt, before sending
 *     //   send attempt.traceparent / attempt.tracestate when set, instead of the caller's
 *     attempt?.end({ status }) | attempt?.end({ reason });     // response headers in, or transport failure
 *     const stream = trace?.streamStart();                     // the remote answered with an event stream
 *     stream?.event(outcome);                                  // each event relayed
 *     stream?.end({ ending, events, bytes });                  // the relay ended
 *     trace?.end(outcome);                                     // the reply (or a stream's final error) went out
 *
 * No OpenTelemetry module is loaded unless traces are configured; no context
 * manager or async_hooks is used even then (every span gets its parent
 * explicitly). Nothing here returns a promise to the call path or throws into
 * it; export happens in the background and a dead collector costs dropped
 * spans, never a slower call.
 */
import { CallTelemetry, type CallStart } from './call-telemetry.js';
import { CardFetchTelemetry, type CardFetchStart } from './card-telemetry.js';
import { callChannelsWatched, cardChannelsWatched } from './channels.js';
import type { TracesConfig } from '../config/traces.js';
import type { SpanSink } from './span-sink.js';

export type { CallStart, StreamEnd, UpstreamResult, UpstreamStart } from './call-telemetry.js';
export type { CallTelemetry, StreamTelemetry, UpstreamTelemetry } from './call-telemetry.js';
export type { CardFetchResult, CardFetchStart, CardFetchTelemetry } from './card-telemetry.js';

export interface TelemetryOptions {
  /** `service.version` of exported spans. */
  readonly serviceVersion?: string | undefined;
  /** An export batch was lost (collector down or refusing); for a log line or a counter. Must not throw. */
  readonly onExportFailure?: ((error: Error, spans: number) => void) | undefined;
}

export class Telemetry {
  /** Telemetry with trace export off: only diagnostics_channel subscribers make it active. */
  static readonly off = new Telemetry(undefined);

  private constructor(private readonly sink: SpanSink | undefined) {}

  /** @internal */
  static withSink(sink: SpanSink | undefined): Telemetry {
    return sink ? new Telemetry(sink) : Telemetry.off;
  }

  /** Spans are recorded and exported. */
  get tracing(): boolean {
    return this.sink !== undefined;
  }

  /** A call needs a handle: traces are on, or someone subscribes to a call channel. Read it once per call. */
  get active(): boolean {
    return this.sink !== undefined || callChannelsWatched();
  }

  /** A card fetch needs a handle: traces are on, or someone subscribes to a card channel. */
  get cardsActive(): boolean {
    return this.sink !== undefined || cardChannelsWatched();
  }

  /** A request for a call arrived. Call only when `active`. */
  startCall(start: CallStart): CallTelemetry {
    return new CallTelemetry(this.sink, start);
  }

  /** A card fetch is about to be sent. Call only when `cardsActive`. */
  startCardFetch(start: CardFetchStart): CardFetchTelemetry {
    return new CardFetchTelemetry(this.sink, start);
  }

  /** Exports what is queued (tests, and before a planned exit). */
  forceFlush(): Promise<void> {
    return this.sink?.forceFlush() ?? Promise.resolve();
  }

  /** Exports what is queued, then stops; bounded by the export timeout. For the gateway's close. */
  shutdown(): Promise<void> {
    return this.sink?.shutdown() ?? Promise.resolve();
  }
}

/** The gateway's telemetry for a resolved `telemetry.traces` (undefined: export off). */
export async function createTelemetry(traces: TracesConfig | undefined, options: TelemetryOptions = {}): Promise<Telemetry> {
  if (!traces) return Telemetry.off;
  const { createOtelSink } = await import('./otel-export.js');
  return Telemetry.withSink(createOtelSink(traces, { serviceVersion: options.serviceVersion ?? '0.0.0', onExportFailure: options.onExportFailure }));
}
