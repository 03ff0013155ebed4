/**
 * One agent card fetch: a client span (under the call that needed the card,
 * or continuing the trace of the caller who asked for it, or a new trace for
 * a background refresh) and the `a2a-egress:card:*` channel messages.
 */
import type { Reason } from '../envelope/codes.js';
import { gatewayErrors } from '../envelope/codes.js';
import type { CallTelemetry } from './call-telemetry.js';
import { channels, type CardFetchInfo, type Ending } from './channels.js';
import { A2A_ATTR, MAX_ATTRIBUTE_LENGTH, SEMCONV, portOf, safeUrl } from './span-attributes.js';
import type { Span, SpanSink } from './span-sink.js';

export interface CardFetchStart {
  readonly remote: string;
  /** The card URL (the span keeps origin and path only). */
  readonly url: URL;
  /** The call this fetch serves (its span becomes the parent). */
  readonly parent?: CallTelemetry | undefined;
  /** Without a parent call: the trace headers of the caller who asked for the card. */
  readonly traceparent?: string | readonly string[] | undefined;
  readonly tracestate?: string | readonly string[] | undefined;
}

export interface CardFetchResult {
  /** HTTP status of the answer, when one arrived. */
  readonly status?: number | undefined;
  /** Why no usable card came back (UPSTREAM_TIMEOUT, INVALID_AGENT_CARD, ...); undefined for a usable card. */
  readonly reason?: Reason | undefined;
}

export class CardFetchTelemetry {
  /** Send these with the fetch (undefined while traces are off). */
  readonly traceparent: string | undefined;
  readonly tracestate: string | undefined;
  private readonly info: CardFetchInfo;
  private readonly span: Span | undefined;
  private ended = false;

  constructor(
    private readonly sink: SpanSink | undefined,
    start: CardFetchStart,
  ) {
    const url = safeUrl(start.url);
    this.info = { remote: start.remote, url, call: start.parent?.info, startTime: performance.now() };
    if (sink) {
      const span = sink.startClient(
        `GET ${start.url.pathname}`.slice(0, MAX_ATTRIBUTE_LENGTH),
        {
          [A2A_ATTR.REMOTE]: start.remote,
          [SEMCONV.HTTP_REQUEST_METHOD]: 'GET',
          [SEMCONV.SERVER_ADDRESS]: start.url.hostname.slice(0, MAX_ATTRIBUTE_LENGTH),
          [SEMCONV.SERVER_PORT]: portOf(start.url),
          [SEMCONV.URL_FULL]: url,
        },
        start.parent?.span,
        start.traceparent,
        start.tracestate,
      );
      this.span = span;
      const headers = sink.traceHeaders(span);
      this.traceparent = headers.traceparent;
      this.tracestate = headers.tracestate;
    }
    if (channels.cardStart.hasSubscribers) channels.cardStart.publish({ fetch: this.info });
  }

  /** The fetch is over. Later calls are ignored. */
  end(result: CardFetchResult): void {
    if (this.ended) return;
    this.ended = true;
    const ending: Ending = result.reason ?? 'ok';
    const span = this.span;
    if (span && this.sink) {
      if (result.status !== undefined) span.setAttribute(SEMCONV.HTTP_RESPONSE_STATUS_CODE, result.status);
      span.setAttribute(A2A_ATTR.OUTCOME, ending);
      if (result.reason !== undefined) {
        span.setAttribute(SEMCONV.ERROR_TYPE, result.reason);
        this.sink.fail(span, gatewayErrors[result.reason].message);
      }
      span.end();
    }
    if (channels.cardEnd.hasSubscribers) {
      channels.cardEnd.publish({ fetch: this.info, ending, status: result.status, durationMs: performance.now() - this.info.startTime });
    }
  }
}
