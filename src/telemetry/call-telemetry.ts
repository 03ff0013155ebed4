/**
 * One call's telemetry handle: the server span, a client span per upstream
 * attempt, the stream span, and the same points on diagnostics_channel. The
 * call path drives it with plain method calls at the moments it already
 * knows (request in, call understood, attempt sent, answer or failure,
 * stream events, reply out); nothing here waits, throws or needs an async
 * context.
 *
 * A handle exists only while telemetry is active (see Telemetry.active); the
 * call path keeps `undefined` otherwise and every later step is one `?.`.
 */
import type { Operation } from '../a2a/operations.js';
import type { A2ACall, Binding } from '../core/call.js';
import type { Outcome, ResultOutcome } from '../core/outcome.js';
import { gatewayErrors, type Reason } from '../envelope/codes.js';
import { truncateUtf8 } from '../envelope/sanitize.js';
import { channels, type CallInfo, type Ending } from './channels.js';
import {
  A2A_ATTR,
  FIRST_EVENT,
  GRPC_CODE_NAMES,
  MAX_ATTRIBUTE_LENGTH,
  MAX_STATUS_MESSAGE_BYTES,
  SEMCONV,
  callSpanName,
  invokesAgent,
  portOf,
  rpcMethodOf,
  safeUrl,
} from './span-attributes.js';
import type { Attributes, Span, SpanSink } from './span-sink.js';
import { carriesTask, taskSummaryOf } from './task-summary.js';

/** What the call path knows when a request arrives. */
export interface CallStart {
  /** The configured remote's name, or `unknown`. */
  readonly remote: string;
  /** The caller's binding. */
  readonly binding: Binding;
  /** The gateway's request id. */
  readonly requestId: string;
  /** The caller's `traceparent` and `tracestate` (HTTP header or gRPC metadata values, as received). */
  readonly traceparent?: string | readonly string[] | undefined;
  readonly tracestate?: string | readonly string[] | undefined;
  /** `performance.now()` when the request arrived; default: now. */
  readonly startTime?: number | undefined;
}

/** One attempt to reach the remote (retries are further attempts). */
export interface UpstreamStart {
  /** 1-based. */
  readonly attempt: number;
  /** The binding spoken to the remote. */
  readonly binding: Binding;
  /** The request URL (the span keeps origin and path only). */
  readonly url: URL;
  /** HTTP method (HTTP bindings; default POST). */
  readonly method?: string | undefined;
}

/** How an attempt ended: the answer's status, or the transport failure. */
export interface UpstreamResult {
  readonly status?: number | undefined;
  readonly grpcStatus?: number | undefined;
  /** A transport-level failure (UPSTREAM_RESET, UPSTREAM_TIMEOUT, CALLER_CLOSED, ...). */
  readonly reason?: Reason | undefined;
}

export interface StreamEnd {
  /** `ok`, or why the gateway or the remote ended it (the relay's outcome; CALLER_CLOSED when the caller left). */
  readonly ending: Ending;
  /** Events relayed, when the relay counted them itself (else the number of `event()` calls). */
  readonly events?: number | undefined;
  /** Bytes written to the caller. */
  readonly bytes?: number | undefined;
}

const endingOf = (outcome: Outcome): Ending => (outcome.kind === 'result' ? 'ok' : outcome.reason);

/** The catalogue's fixed sentence for a reason: gateway text, safe for a span status. */
const reasonText = (reason: Ending): string => (reason === 'ok' || reason === 'REMOTE_ERROR' ? '' : gatewayErrors[reason].message);

export class CallTelemetry {
  readonly info: CallInfo;
  /** The server span; undefined when traces are off (channels only). */
  readonly span: Span | undefined;
  private operation: Operation | undefined;
  private taskId: string | undefined;
  private taskState: string | undefined;
  private streamEnding: Ending | undefined;
  private openAttempt: UpstreamTelemetry | undefined;
  private openStream: StreamTelemetry | undefined;
  private ended = false;

  constructor(
    private readonly sink: SpanSink | undefined,
    start: CallStart,
  ) {
    const startTime = start.startTime ?? performance.now();
    if (sink) {
      const attributes: Attributes = {
        [A2A_ATTR.REMOTE]: start.remote,
        [A2A_ATTR.BINDING]: start.binding,
        [SEMCONV.RPC_SYSTEM_NAME]: start.binding,
        [A2A_ATTR.REQUEST_ID]: start.requestId,
      };
      this.span = sink.startServer(callSpanName(undefined, start.binding), attributes, startTime, start.traceparent, start.tracestate);
    }
    this.info = {
      remote: start.remote,
      binding: start.binding,
      requestId: start.requestId,
      operation: undefined,
      generation: undefined,
      traceId: this.span?.spanContext().traceId,
      startTime,
    };
    if (channels.callStart.hasSubscribers) channels.callStart.publish({ call: this.info });
  }

  /** The caller's request was understood: the call now has its operation. */
  setCall(call: Pick<A2ACall, 'operation' | 'generation'>): void {
    this.operation = call.operation;
    this.info.operation = call.operation.name;
    this.info.generation = call.generation;
    const span = this.span;
    if (!span) return;
    span.updateName(callSpanName(call.operation, this.info.binding));
    span.setAttribute(SEMCONV.RPC_METHOD, rpcMethodOf(call.operation));
    span.setAttribute(A2A_ATTR.OPERATION, call.operation.name);
    span.setAttribute(A2A_ATTR.PROTOCOL_VERSION, call.generation);
    if (invokesAgent(call.operation)) {
      span.setAttribute(SEMCONV.GEN_AI_OPERATION_NAME, 'invoke_agent');
      span.setAttribute(SEMCONV.GEN_AI_AGENT_NAME, this.info.remote);
    }
  }

  /** An attempt is about to be sent. Send its `traceparent`/`tracestate` (when set) instead of the caller's. */
  upstreamStart(start: UpstreamStart): UpstreamTelemetry {
    const attempt = new UpstreamTelemetry(this, this.sink, start, this.operation);
    this.openAttempt = attempt;
    return attempt;
  }

  /** The remote answered with an event stream and the relay starts. */
  streamStart(): StreamTelemetry {
    const stream = new StreamTelemetry(this, this.sink, this.operation);
    this.openStream = stream;
    return stream;
  }

  /**
   * The call is over. `outcome`: what the caller received (unary), or a streaming call's final error; undefined for a
   * stream that ended normally (its StreamTelemetry.end gave the ending). Later calls are ignored.
   */
  end(outcome?: Outcome): void {
    if (this.ended) return;
    this.ended = true;
    const ending: Ending = outcome ? endingOf(outcome) : (this.streamEnding ?? 'ok');
    if (outcome?.kind === 'result') this.noteTask(outcome.value);
    // A step the call path did not close (an exception between two calls) ends with the call.
    if (this.openStream) this.openStream.end({ ending });
    if (this.openAttempt) this.openAttempt.end({ reason: ending === 'ok' || ending === 'REMOTE_ERROR' ? undefined : ending });
    const code = outcome?.kind === 'error' ? outcome.code : undefined;
    const span = this.span;
    if (span && this.sink) {
      if (!this.operation) span.setAttribute(SEMCONV.RPC_METHOD, rpcMethodOf(undefined));
      span.setAttribute(A2A_ATTR.OUTCOME, ending);
      if (this.taskId !== undefined) span.setAttribute(A2A_ATTR.TASK_ID, this.taskId);
      if (this.taskState !== undefined) span.setAttribute(A2A_ATTR.TASK_STATE, this.taskState);
      if (ending !== 'ok') {
        span.setAttribute(SEMCONV.ERROR_TYPE, ending);
        if (code !== undefined) span.setAttribute(SEMCONV.RPC_STATUS_CODE, String(code));
        // The message a caller got: already sanitized, redacted and bounded; cut again for the span.
        const message = outcome?.kind === 'error' ? outcome.message : reasonText(ending);
        this.sink.fail(span, truncateUtf8(message, MAX_STATUS_MESSAGE_BYTES).text);
      }
      span.end();
    }
    if (channels.callEnd.hasSubscribers) {
      channels.callEnd.publish({
        call: this.info,
        ending,
        code,
        outcome,
        taskId: this.taskId,
        taskState: this.taskState,
        durationMs: performance.now() - this.info.startTime,
      });
    }
  }

  /** @internal A result or event of this call named a task: the last id and state win. */
  noteTask(value: unknown): void {
    if (!carriesTask(this.operation?.name)) return;
    const summary = taskSummaryOf(value);
    if (!summary) return;
    if (summary.id !== undefined) this.taskId = summary.id;
    if (summary.state !== undefined) this.taskState = summary.state;
  }

  /** @internal */
  streamEnded(stream: StreamTelemetry, ending: Ending): void {
    this.streamEnding = ending;
    if (this.openStream === stream) this.openStream = undefined;
  }

  /** @internal */
  attemptEnded(attempt: UpstreamTelemetry): void {
    if (this.openAttempt === attempt) this.openAttempt = undefined;
  }
}

export class UpstreamTelemetry {
  /** Send these upstream in place of the caller's (undefined while traces are off: forward the caller's). */
  readonly traceparent: string | undefined;
  readonly tracestate: string | undefined;
  private readonly span: Span | undefined;
  private readonly startTime = performance.now();
  private ended = false;

  constructor(
    private readonly call: CallTelemetry,
    private readonly sink: SpanSink | undefined,
    private readonly start: UpstreamStart,
    operation: Operation | undefined,
  ) {
    if (sink && call.span) {
      const { url, binding, attempt } = start;
      const attributes: Attributes = {
        [SEMCONV.RPC_SYSTEM_NAME]: binding,
        [SEMCONV.RPC_METHOD]: rpcMethodOf(operation),
        [A2A_ATTR.REMOTE]: call.info.remote,
        [A2A_ATTR.BINDING]: binding,
        [SEMCONV.SERVER_ADDRESS]: url.hostname.slice(0, MAX_ATTRIBUTE_LENGTH),
        [SEMCONV.SERVER_PORT]: portOf(url),
        [SEMCONV.URL_FULL]: safeUrl(url),
      };
      if (binding !== 'grpc') attributes[SEMCONV.HTTP_REQUEST_METHOD] = start.method ?? 'POST';
      if (attempt > 1) attributes[SEMCONV.HTTP_REQUEST_RESEND_COUNT] = attempt - 1;
      this.span = sink.startClient(callSpanName(operation, binding), attributes, call.span);
      const headers = sink.traceHeaders(this.span);
      this.traceparent = headers.traceparent;
      this.tracestate = headers.tracestate;
    }
    if (channels.upstreamStart.hasSubscribers) {
      channels.upstreamStart.publish({ call: call.info, attempt: start.attempt, binding: start.binding, url: safeUrl(start.url) });
    }
  }

  /** Response headers arrived (`status`), or the attempt failed (`reason`). Later calls are ignored. */
  end(result: UpstreamResult): void {
    if (this.ended) return;
    this.ended = true;
    this.call.attemptEnded(this);
    const { status, grpcStatus, reason } = result;
    const span = this.span;
    if (span && this.sink) {
      if (status !== undefined) span.setAttribute(SEMCONV.HTTP_RESPONSE_STATUS_CODE, status);
      const grpcName = grpcStatus !== undefined ? (GRPC_CODE_NAMES[grpcStatus] ?? String(grpcStatus)) : undefined;
      if (grpcName !== undefined) span.setAttribute(SEMCONV.RPC_STATUS_CODE, grpcName);
      // HTTP client convention: a 4xx or 5xx answer is an error of this span, named by its status.
      const errorType = reason ?? (status !== undefined && status >= 400 ? String(status) : grpcStatus ? grpcName : undefined);
      if (errorType !== undefined) {
        span.setAttribute(SEMCONV.ERROR_TYPE, errorType);
        this.sink.fail(span, reason ? reasonText(reason) : '');
      }
      span.end();
    }
    if (channels.upstreamEnd.hasSubscribers) {
      channels.upstreamEnd.publish({
        call: this.call.info,
        attempt: this.start.attempt,
        status,
        grpcStatus,
        reason,
        durationMs: performance.now() - this.startTime,
      });
    }
  }
}

export class StreamTelemetry {
  private readonly span: Span | undefined;
  private readonly startTime = performance.now();
  private readonly readsTasks: boolean;
  private events = 0;
  private ended = false;

  constructor(
    private readonly call: CallTelemetry,
    private readonly sink: SpanSink | undefined,
    operation: Operation | undefined,
  ) {
    this.readsTasks = carriesTask(operation?.name);
    if (sink && call.span) {
      this.span = sink.startInternal(`${callSpanName(operation, call.info.binding)} stream`, { [A2A_ATTR.REMOTE]: call.info.remote }, call.span);
    }
    if (channels.streamStart.hasSubscribers) channels.streamStart.publish({ call: call.info });
  }

  /** One event was relayed to the caller. */
  event(outcome: ResultOutcome): void {
    if (this.ended) return;
    this.events++;
    if (this.events === 1) this.span?.addEvent(FIRST_EVENT);
    if (this.readsTasks) this.call.noteTask(outcome.value);
    if (channels.streamEvent.hasSubscribers) channels.streamEvent.publish({ call: this.call.info, index: this.events, outcome });
  }

  /** The relay ended (normally, by a limit, the remote, the caller or shutdown). Later calls are ignored. */
  end(end: StreamEnd): void {
    if (this.ended) return;
    this.ended = true;
    this.call.streamEnded(this, end.ending);
    const events = end.events ?? this.events;
    const span = this.span;
    if (span && this.sink) {
      span.setAttribute(A2A_ATTR.STREAM_EVENTS, events);
      if (end.bytes !== undefined) span.setAttribute(A2A_ATTR.STREAM_BYTES, end.bytes);
      span.setAttribute(A2A_ATTR.OUTCOME, end.ending);
      if (end.ending !== 'ok') {
        span.setAttribute(SEMCONV.ERROR_TYPE, end.ending);
        this.sink.fail(span, reasonText(end.ending));
      }
      span.end();
    }
    if (channels.streamEnd.hasSubscribers) {
      channels.streamEnd.publish({
        call: this.call.info,
        ending: end.ending,
        events,
        bytes: end.bytes,
        durationMs: performance.now() - this.startTime,
      });
    }
  }
}
